/**
 * One input of `ringwatch analyze`, fed its (decompressed) bytes piece by piece, told apart by its
 * first block (SNIFF_BYTES):
 * - a pickled dict (looksLikeFrDump) is a Flight Recorder dump, kept whole up to one byte past
 *   MAX_FR_DUMP_BYTES for the worker thread that reads it (a larger one is not held, and the
 *   analysis says it is too large);
 * - what is no log (analyze-sniff.ts) is skipped, with why;
 * - a document that starts like JSON may be a RAS report (`ncclras -f json`): kept whole up to
 *   MAX_RAS_JSON_BYTES and parsed at the end; JSON that parses but is no RAS report is skipped,
 *   anything else (JSON lines, a larger file) is read as lines after all;
 * - anything else is read line by line. Lines are cut from the bytes (the follower's LineSplitter),
 *   so a character split by a piece boundary stays whole, CRLF counts as one line end and a line of
 *   more than MAX_LINE bytes (garbage: no log line is that long) is skipped without being held whole.
 * The bytes handed to push() are never kept: what is held is copied.
 */
import { LineSplitter } from "../collectors/follow/line-splitter.js";
import type { LogAnalysis } from "../collectors/nccl/analyze/analyze.js";
import { MAX_FR_DUMP_BYTES, looksLikeFrDump } from "../collectors/nccl/flight-recorder/read.js";
import { MAX_RAS_JSON_BYTES, looksLikeJson } from "../collectors/nccl/ras/parse-json.js";
import { SNIFF_BYTES, notALog } from "./analyze-sniff.js";

const MAX_LINE = 16 * 1024 * 1024;

/** What one input gave. */
export interface Ingested {
  lines: number;
  /** Why it was not read: no log. */
  skipped?: string;
  /** A Flight Recorder dump's bytes, for the worker thread. */
  dump?: Buffer;
}

type Mode = "head" | "lines" | "json" | "dump" | "skip";

export class FileIngest {
  private mode: Mode = "head";
  private parts: Buffer[] = [];
  private held = 0;
  private skipped: string | undefined;
  private splitter: LineSplitter | undefined;
  private lines: ReturnType<LogAnalysis["lines"]> | undefined;

  constructor(
    private readonly analysis: LogAnalysis,
    private readonly path: string,
  ) {}

  /** The next bytes of the input; false when no more are wanted (a dump at its limit, no log). */
  push(b: Buffer): boolean {
    if (b.length === 0) return this.mode !== "skip";
    switch (this.mode) {
      case "head":
        this.hold(b);
        if (this.held >= SNIFF_BYTES) this.decide();
        break;
      case "dump":
        this.hold(b.subarray(0, Math.max(0, MAX_FR_DUMP_BYTES + 1 - this.held)));
        break;
      case "json":
        if (this.held + b.length <= MAX_RAS_JSON_BYTES) this.hold(b);
        else {
          this.toLines();
          this.feed(b);
        }
        break;
      case "lines":
        this.feed(b);
        break;
      case "skip":
        break;
    }
    return this.mode !== "skip" && !(this.mode === "dump" && this.held > MAX_FR_DUMP_BYTES);
  }

  /** The input ended (or no more is read of it). */
  end(): Ingested {
    if (this.mode === "head") this.decide();
    if (this.mode === "skip") return { lines: 0, skipped: this.skipped ?? "" };
    if (this.mode === "dump") return { lines: 0, dump: Buffer.concat(this.parts, this.held) };
    if (this.mode === "json") {
      const text = Buffer.concat(this.parts, this.held).toString("utf8");
      if (this.analysis.rasDocument(this.path, text)) {
        let count = 0;
        for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) count++;
        return { lines: text.length > 0 && !text.endsWith("\n") ? count + 1 : count };
      }
      if (parses(text)) return { lines: 0, skipped: "JSON, not a RAS report" };
      this.toLines();
    }
    const splitter = this.splitter;
    const lines = this.lines;
    if (splitter === undefined || lines === undefined) return { lines: 0 };
    // The last line may lack its newline.
    if (splitter.partial().length > 0) splitter.pushTo(Buffer.from("\n"), 0, 1, lines);
    return { lines: lines.count };
  }

  private hold(b: Buffer): void {
    if (b.length === 0) return;
    this.parts.push(Buffer.from(b));
    this.held += b.length;
  }

  /** What the input is, from what is held (its first block, or all of a small input). */
  private decide(): void {
    const head = Buffer.concat(this.parts, this.held);
    this.parts = head.length > 0 ? [head] : [];
    if (looksLikeFrDump(head)) {
      this.mode = "dump";
      if (head.length > MAX_FR_DUMP_BYTES + 1) this.parts = [head.subarray(0, MAX_FR_DUMP_BYTES + 1)];
      this.held = Math.min(head.length, MAX_FR_DUMP_BYTES + 1);
      return;
    }
    const why = notALog(head.subarray(0, SNIFF_BYTES));
    if (why !== undefined) {
      this.mode = "skip";
      this.skipped = why;
      this.parts = [];
      return;
    }
    if (looksLikeJson(head.toString("utf8", 0, Math.min(head.length, 4096))) && head.length <= MAX_RAS_JSON_BYTES) {
      this.mode = "json";
      return;
    }
    this.toLines();
  }

  /** Reads what is held as lines, and what comes after. */
  private toLines(): void {
    this.mode = "lines";
    const held = this.parts;
    this.parts = [];
    this.held = 0;
    for (const part of held) this.feed(part);
  }

  private feed(b: Buffer): void {
    this.splitter ??= new LineSplitter(MAX_LINE);
    this.lines ??= this.analysis.lines(this.path);
    const splitter = this.splitter;
    const skipped = splitter.tooLong;
    splitter.pushTo(b, 0, b.length, this.lines);
    this.lines.skip(splitter.tooLong - skipped);
  }
}

/** Whether text is one JSON document (a byte-order mark before it allowed). */
function parses(text: string): boolean {
  try {
    JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    return true;
  } catch {
    return false;
  }
}
