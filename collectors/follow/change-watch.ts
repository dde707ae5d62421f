/**
 * When to read a followed file. Node's fs.watch turns every write into a JS callback (a
 * line-buffered writer: one per line), which alone costs several % of a core at 20,000 lines/s,
 * and chokidar's per-event stat and timers cost over half a core. So a watch is one-shot:
 *  - idle file: a watch is armed. Its first event closes it and makes the file hot.
 *  - hot file: looked at (fstat, read) every HOT_MS without any watch, however often it is
 *    written; after IDLE_LOOKS looks that found nothing new the watch is armed again, followed by
 *    one more look (a write between the last look and the arming raised no event).
 * A file whose watch cannot be had (ENOSPC: no inotify watches left, EMFILE) or that lives on a
 * file system without inotify is `polled`: the poll loop looks at it instead.
 */
import { watch } from "node:fs";
import type { Tail } from "./tail-state.js";

/** Interval between looks at a file that is being written: 500 ms keeps the agent under 5 % of a core at 20,000 lines/s (4.5 % measured; 250 ms: 5.7-6.3 %), and verdicts take minutes anyway. */
export const HOT_MS = 500;
/** Empty looks before a hot file goes back to waiting for an event. */
export const IDLE_LOOKS = 2;

export interface ChangeSink {
  /** Read t (queue it). */
  enqueue(t: Tail): void;
  /** An event came (a write, or a rename/unlink/attribute change): check what t's paths name now. */
  verify(t: Tail): void;
  /** No watch could be had for t (it is polled from now on). */
  watchFailed(t: Tail, err: unknown): void;
  /** Whether path's mount does not answer: inotify_add_watch looks the path up on the main thread, so it is polled instead. */
  notAnswering?(path: string): boolean;
}

export class ChangeWatcher {
  constructor(
    private readonly sink: ChangeSink,
    /** false: nothing is watched (polling mode), every file is polled. */
    private readonly enabled: boolean,
  ) {}

  /**
   * Arms t's one-shot watch (t is idle). The watch follows the inode its path names now; with
   * check, the path is verified afterwards (it may name a newer file already, e.g. after a rename
   * not seen yet), and pathGone() moves the watch if it does.
   */
  arm(t: Tail, check = false): void {
    if (!this.enabled) t.polled = true;
    if (t.polled || t.watch !== null || t.removed) return;
    const path = t.paths.values().next().value;
    if (path === undefined) return;
    if (this.sink.notAnswering?.(path) === true) {
      t.polled = true;
      return;
    }
    try {
      const w = watch(path, () => this.fired(t));
      w.on("error", () => this.fired(t));
      t.watch = w;
      t.watchPath = path;
    } catch (e) {
      t.polled = true;
      this.sink.watchFailed(t, e);
      return;
    }
    if (check) this.sink.verify(t);
  }

  disarm(t: Tail): void {
    if (t.watch !== null) t.watch.close();
    t.watch = null;
    t.watchPath = null;
  }

  /** path no longer names t: a watch armed through it may be on another file now. */
  pathGone(t: Tail, path: string): void {
    if (t.watchPath !== path) return;
    this.disarm(t);
    this.schedule(t); // looked at while hot; re-armed through a current path once quiet
  }

  /** Stops everything for t (removed, or the follower stops). */
  forget(t: Tail): void {
    this.disarm(t);
    if (t.hotTimer !== null) clearTimeout(t.hotTimer);
    t.hotTimer = null;
  }

  /** After a read of t: keep looking while it moves; arm the watch again once it has been quiet. */
  afterRead(t: Tail, progressed: boolean): void {
    if (t.removed || t.polled || t.watch !== null) return;
    if (progressed) {
      t.quiet = 0;
      this.schedule(t);
    } else if (++t.quiet < IDLE_LOOKS) {
      this.schedule(t);
    } else {
      t.quiet = 0;
      this.arm(t, true);
      this.sink.enqueue(t);
    }
  }

  private fired(t: Tail): void {
    this.disarm(t);
    if (t.removed) return;
    // "change" also covers IN_ATTRIB, which is all a file sees of its unlink: verify either way
    // (one stat per idle-to-hot transition, not per write).
    this.sink.verify(t);
    this.schedule(t);
  }

  private schedule(t: Tail): void {
    if (t.hotTimer !== null || t.removed) return;
    t.hotTimer = setTimeout(() => {
      t.hotTimer = null;
      this.sink.enqueue(t);
    }, HOT_MS);
  }
}
