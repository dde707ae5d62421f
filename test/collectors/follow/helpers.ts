/** Shared pieces of the follower tests: a recording handler, followers stopped after each test, eventually(). */
import { basename } from "node:path";
import { afterEach } from "vitest";
import { Follower, type FollowedFile, type FollowerHandlers, type FollowerOptions } from "../../../collectors/follow/follower.js";

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export { eventually } from "../../helpers/eventually.js";

export interface Got {
  file: string;
  ino: number;
  generation: number;
  line: string;
  historical: boolean;
}

export class Recorder implements FollowerHandlers {
  readonly got: Got[] = [];
  readonly events: string[] = [];
  readonly added: FollowedFile[] = [];
  readonly removed: FollowedFile[] = [];
  readonly truncated: FollowedFile[] = [];
  batches = 0;

  onLines(file: FollowedFile, lines: string[], meta: { historical: boolean; mtimeMs: number }): void {
    this.batches++;
    for (const line of lines) {
      this.got.push({ file: basename(file.path), ino: file.ino, generation: file.generation, line, historical: meta.historical });
    }
  }
  onFileAdded(f: FollowedFile): void {
    this.added.push(f);
    this.events.push(`added ${basename(f.path)} g${f.generation}`);
  }
  onFileRemoved(f: FollowedFile): void {
    this.removed.push(f);
    this.events.push(`removed ${basename(f.path)} g${f.generation}`);
  }
  onTruncated(f: FollowedFile): void {
    this.truncated.push(f);
    this.events.push(`truncated ${basename(f.path)} g${f.generation}`);
  }

  /** Lines read from files with this base name (as currently named), in order. */
  lines(file?: string): string[] {
    return this.got.filter((g) => file === undefined || g.file === file).map((g) => g.line);
  }
  /** How often a line text was delivered. */
  count(line: string): number {
    return this.got.filter((g) => g.line === line).length;
  }
}

export interface Mode {
  name: string;
  opts: Partial<FollowerOptions>;
}

/**
 * Key cases run under both change sources, with the safety sweep slowed down so that it cannot
 * do the work: inotify (one-shot watches, hot files looked at every 250 ms) and polling (no
 * watches; the poll loop stats files and rereads directories every pollIntervalMs).
 */
export const MODES: Mode[] = [
  { name: "inotify", opts: { usePolling: false, pollIntervalMs: 60_000, sweepIntervalMs: 60_000 } },
  { name: "polling", opts: { usePolling: true, pollIntervalMs: 50, sweepIntervalMs: 60_000 } },
];

const followers: Follower[] = [];

afterEach(async () => {
  await Promise.all(followers.splice(0).map((f) => f.stop()));
});

/** Starts a follower (stopped after the test). */
export async function follow(opts: FollowerOptions, rec = new Recorder()): Promise<{ f: Follower; rec: Recorder }> {
  const f = new Follower({ removeGraceMs: 200, ...opts }, rec);
  followers.push(f);
  await f.start();
  return { f, rec };
}
