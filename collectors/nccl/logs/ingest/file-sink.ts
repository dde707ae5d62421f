/**
 * Where the lines of one followed file go: COLL lines of the file's writer straight from the read
 * buffer (coll-bytes.ts), every other line through parseLine. Both feed the tracker in file order
 * and count line numbers for evidence (`file:line`).
 */
import type { LineSink } from "../../../follow/follower.js";
import { CollByteMatcher } from "./coll-bytes.js";
import { parseLine } from "../parse/line.js";
import type { CollTarget, LineContext, Tracker } from "../state/tracker.js";

/** Comm pointers remembered per file (a process has a handful of communicators). */
const MAX_TARGETS = 64;

/**
 * Chunks opened closer together than this are one read pass of the file (a read split into
 * chunks, or requeued after its byte budget). Passes of a file being written come HOT_MS (500 ms)
 * apart (collectors/follow/change-watch.ts), polled files further. Taking two passes for one only
 * makes a line's "not before" time earlier, which is the safe side for arrival times.
 */
const PASS_GAP_MS = 250;

export class FileSink implements LineSink {
  /** Lines of this file handed to the tracker so far. */
  lineNo = 0;
  private readonly ctx: Required<LineContext> = { source: "", lineNo: 0, readMs: 0, sinceMs: -Infinity, historical: false, mtimeMs: 0, owner: -1 };
  /** Everything this file held at this time (ms) has been read: a read pass began, or a look found nothing new. */
  private readToMs = -Infinity;
  /** sinceMs of the chunks of the current read pass, and when its last chunk was opened (ms). */
  private passSinceMs = -Infinity;
  private lastOpenMs = -Infinity;
  private readonly matcher = new CollByteMatcher();
  private writerPrefix: string | undefined;
  private processKey: string | undefined;
  /** Comm pointer → what its COLL lines count towards, for the tracker epoch they were resolved in. */
  private readonly targets = new Map<string, CollTarget>();
  private targetsEpoch = -1;
  /** The same targets by the pointer's numeric key: (key, length) pairs in `keys`, in order. */
  private readonly keyed: CollTarget[] = [];
  private readonly keys: number[] = [];

  constructor(
    private readonly tracker: Tracker,
    private readonly onError: (err: unknown, where: string) => void,
  ) {}

  /**
   * Before each chunk: where it comes from and when it was read. Its lines were written after the
   * last time the file had been read to its end (the previous pass began, or a look found nothing
   * new: sinceMs) and before this chunk was opened (readMs).
   */
  open(source: string, readMs: number, historical: boolean, mtimeMs: number, owner = -1): this {
    const c = this.ctx;
    c.owner = owner;
    if (readMs - this.lastOpenMs >= PASS_GAP_MS) {
      this.passSinceMs = this.readToMs;
      this.readToMs = readMs;
    }
    this.lastOpenMs = readMs;
    c.source = source;
    c.readMs = readMs;
    c.sinceMs = this.passSinceMs;
    c.historical = historical;
    c.mtimeMs = mtimeMs;
    return this;
  }

  /** A look at the file found nothing new (the follower's onLook). */
  looked(atMs: number): void {
    if (atMs > this.readToMs) this.readToMs = atMs;
  }

  lineAt(buf: Buffer, s: number, end: number, max: number): number {
    if (this.processKey === undefined) return -1;
    const nl = this.matcher.matchLine(buf, s, end, max);
    return nl >= 0 && this.count(buf) ? nl : -1;
  }

  bytes(buf: Buffer, s: number, e: number): boolean {
    return this.processKey !== undefined && this.matcher.match(buf, s, e) && this.count(buf);
  }

  /** Counts the COLL line the matcher just accepted; false when its pointer is unknown here. */
  private count(buf: Buffer): boolean {
    const m = this.matcher;
    const t = m.ptrKey >= 0 ? this.keyedTarget(buf) : this.textTarget(m.comm(buf));
    if (t === undefined) return false; // unknown pointer: the full parse keeps what it says
    const tr = this.tracker;
    this.ctx.lineNo = ++this.lineNo;
    tr.countTarget(t, m.fields.op, m.fields.opCount, this.ctx);
    return true;
  }

  /** The target of the matched line's pointer by its numeric key (no string on a hit). */
  private keyedTarget(buf: Buffer): CollTarget | undefined {
    const m = this.matcher;
    const epoch = this.tracker.epoch;
    const keys = this.keys;
    for (let i = 0; i < this.keyed.length; i++) {
      const t = this.keyed[i] as CollTarget;
      if (keys[2 * i] === m.ptrKey && keys[2 * i + 1] === m.ptrChars && t.epoch === epoch) return t;
    }
    const t = this.textTarget(m.comm(buf));
    if (t === undefined) return undefined;
    if (this.keyed.length >= MAX_TARGETS) {
      this.keyed.length = 0;
      keys.length = 0;
    }
    this.keyed.push(t);
    keys.push(m.ptrKey, m.ptrChars);
    return t;
  }

  /** The target of a comm pointer given as text (cached per tracker epoch). */
  private textTarget(comm: string): CollTarget | undefined {
    const tr = this.tracker;
    let t = this.targets.get(comm);
    if (t !== undefined && t.epoch === tr.epoch) return t;
    if (this.targetsEpoch !== tr.epoch) {
      this.targets.clear();
      this.keyed.length = 0;
      this.keys.length = 0;
      this.targetsEpoch = tr.epoch;
    }
    t = tr.collTarget(this.processKey as string, comm);
    if (t === undefined) return undefined;
    if (this.targets.size >= MAX_TARGETS) this.targets.clear();
    this.targets.set(comm, t);
    return t;
  }

  line(text: string): void {
    const c = this.ctx;
    c.lineNo = ++this.lineNo;
    try {
      const ev = parseLine(text);
      if (!ev) return;
      this.tracker.ingest(ev, c);
      if (ev.host === undefined || ev.pid === undefined || ev.torn) return;
      const prefix = `${ev.host}:${ev.pid}:`;
      if (prefix === this.writerPrefix || !text.startsWith(prefix)) return;
      // The writer of the file as its own plain lines name it: the byte path matches its COLL lines.
      this.writerPrefix = prefix;
      this.processKey = `${ev.host}:${ev.pid}`;
      this.targets.clear();
      this.keyed.length = 0;
      this.keys.length = 0;
      this.matcher.setWriter(prefix);
    } catch (err) {
      this.onError(err, `${c.source}:${c.lineNo}`);
    }
  }
}
