/**
 * Where the lines of one followed file go: COLL lines of the file's writer straight from the read
 * buffer (coll-bytes.ts), every other line through parseLine. Both feed the tracker in file order
 * and count line numbers for evidence (`file:line`).
 */
import type { LineSink } from "./follow/follower.js";
import { CollByteMatcher } from "./coll-bytes.js";
import { parseLine } from "./parse-line.js";
import type { CollTarget, LineContext, Tracker } from "./state/tracker.js";

/** Comm pointers remembered per file (a process has a handful of communicators). */
const MAX_TARGETS = 64;

export class FileSink implements LineSink {
  /** Lines of this file handed to the tracker so far. */
  lineNo = 0;
  private readonly ctx: Required<LineContext> = { source: "", lineNo: 0, readMs: 0, historical: false, mtimeMs: 0 };
  private readonly matcher = new CollByteMatcher();
  private writerPrefix: string | undefined;
  private processKey: string | undefined;
  /** Comm pointer → what its COLL lines count towards, for the tracker epoch they were resolved in. */
  private readonly targets = new Map<string, CollTarget>();
  private targetsEpoch = -1;

  constructor(
    private readonly tracker: Tracker,
    private readonly onError: (err: unknown, where: string) => void,
  ) {}

  /** Before each chunk: where it comes from and when it was read. */
  open(source: string, readMs: number, historical: boolean, mtimeMs: number): this {
    const c = this.ctx;
    c.source = source;
    c.readMs = readMs;
    c.historical = historical;
    c.mtimeMs = mtimeMs;
    return this;
  }

  bytes(buf: Buffer, s: number, e: number): boolean {
    const key = this.processKey;
    if (key === undefined || !this.matcher.match(buf, s, e)) return false;
    const f = this.matcher.fields;
    const tr = this.tracker;
    // Pointer strings come from the matcher's cache, so a hit is usually the very same string.
    let t = this.targets.get(f.comm);
    if (t === undefined || t.epoch !== tr.epoch) {
      if (this.targetsEpoch !== tr.epoch) {
        this.targets.clear();
        this.targetsEpoch = tr.epoch;
      }
      t = tr.collTarget(key, f.comm);
      if (t === undefined) return false; // unknown pointer: the full parse keeps what it says
      if (this.targets.size >= MAX_TARGETS) this.targets.clear();
      this.targets.set(f.comm, t);
    }
    this.ctx.lineNo = ++this.lineNo;
    tr.countTarget(t, f.op, f.opCount, this.ctx);
    return true;
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
      this.matcher.setWriter(prefix);
    } catch (err) {
      this.onError(err, `${c.source}:${c.lineNo}`);
    }
  }
}
