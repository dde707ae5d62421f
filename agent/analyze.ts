/**
 * `ringwatch analyze [--json] FILE|DIR|- ...`: reads logs in bounded chunks (never a whole
 * multi-GB file in memory), and PyTorch Flight Recorder dumps (pickles) whole up to their limit,
 * prints the verdict. Which paths are read, and how: analyze-input.ts. Exit 0 when the input could
 * be read, whatever was found; 2 when it could not (no input, nothing readable, bad flag). What it
 * prints holds no raw control character from the logs (control-chars.ts).
 */
import { LineSplitter } from "../collectors/follow/line-splitter.js";
import { FR_ENTRIES_PER_GROUP, LogAnalysis } from "../collectors/nccl/analyze/analyze.js";
import { IsolatedFrReader, type IsolationLimits } from "../collectors/nccl/flight-recorder/isolated.js";
import { MAX_FR_DUMP_BYTES, looksLikeFrDump } from "../collectors/nccl/flight-recorder/read.js";
import { formatReport } from "../collectors/nccl/verdict/format.js";
import { MAX_RAS_JSON_BYTES, looksLikeJson } from "../collectors/nccl/ras/parse-json.js";
import { entries, type Input } from "./analyze-input.js";
import { KernelLines } from "./analyze-kernel.js";
import { escapeControls, jsonWithoutControls } from "./control-chars.js";

const CHUNK = 4 * 1024 * 1024;
const MAX_LINE = 16 * 1024 * 1024;

export interface AnalyzeIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
}

/** A Flight Recorder dump's bytes, read after the logs in a worker thread (readDumps). */
interface PendingDump {
  path: string;
  bytes: Buffer;
}

/**
 * The rest of a Flight Recorder dump whose first `n` bytes are in `first`, kept whole for
 * readDumps. Reading stops one byte past MAX_FR_DUMP_BYTES: a larger file is not held, and the
 * analysis says it is too large.
 */
function ingestDump(input: Input, first: Buffer, n: number, dumps: PendingDump[]): void {
  const parts: Buffer[] = [Buffer.from(first.subarray(0, n))];
  let total = n;
  const buf = Buffer.allocUnsafe(CHUNK);
  while (total <= MAX_FR_DUMP_BYTES) {
    const got = input.read(buf, MAX_FR_DUMP_BYTES + 1 - total);
    if (got <= 0) break;
    parts.push(Buffer.from(buf.subarray(0, got)));
    total += got;
  }
  dumps.push({ path: input.path, bytes: Buffer.concat(parts, total) });
}

/**
 * The limits of analyze's dump reader: a worker thread, so that a hostile dump (one the budget of
 * flight-recorder/budget.ts lets through, yet too big for memory) ends its read, not the command.
 * More heap than the agent's (a 64 MiB dump needs about 1 GB), and more time.
 */
const ANALYZE_DUMP_LIMITS: IsolationLimits = { heapMb: 2048, timeMs: 300_000, idleMs: 1_000 };

/** Reads the dumps in a worker thread, in the order given; one stderr line per dump that cannot be read. */
async function readDumps(analysis: LogAnalysis, dumps: readonly PendingDump[], warn: (s: string) => void): Promise<void> {
  if (dumps.length === 0) return;
  const reader = new IsolatedFrReader(ANALYZE_DUMP_LIMITS);
  try {
    for (const d of dumps) {
      const r = await reader.read(d.bytes, d.path, { entriesPerGroup: FR_ENTRIES_PER_GROUP });
      analysis.flightRecorderRead(r);
      if (!r.ok) warn(`ringwatch: analyze: ${escapeControls(`${d.path}: not a readable Flight Recorder dump: ${r.error}`)}\n`);
    }
  } finally {
    await reader.close();
  }
}

/**
 * Reads one input (a file, or stdin for `-`) line by line into the analysis; returns lines read.
 * A file that starts like a pickled dict (looksLikeFrDump) is a Flight Recorder dump: 0 lines. Lines are
 * cut from the bytes (the follower's LineSplitter), so a character split by a read boundary stays
 * whole, CRLF counts as one line end and a line of more than MAX_LINE bytes (garbage: no log line
 * is that long) is skipped without being held whole.
 */
function ingestFile(analysis: LogAnalysis, input: Input, dumps: PendingDump[]): number {
  const path = input.path;
  const buf = Buffer.allocUnsafe(CHUNK);
  const splitter = new LineSplitter(MAX_LINE);
  const lines = analysis.lines(path);
  const push = (b: Buffer, n: number): void => {
    const skipped = splitter.tooLong;
    splitter.pushTo(b, 0, n, lines);
    lines.skip(splitter.tooLong - skipped);
  };
  // A file that starts like JSON may be a RAS report from `ncclras -f json`: a document, kept whole
  // (up to MAX_RAS_JSON_BYTES) and parsed at the end; anything else is read as lines after all.
  let json: Buffer[] | undefined;
  let jsonBytes = 0;
  let first = true;
  try {
    for (;;) {
      const n = input.read(buf, CHUNK);
      if (n <= 0) break;
      if (first && looksLikeFrDump(buf.subarray(0, n))) {
        ingestDump(input, buf, n, dumps);
        return 0;
      }
      if (first && looksLikeJson(buf.toString("utf8", 0, Math.min(n, 4096)))) json = [];
      first = false;
      if (json !== undefined) {
        if (jsonBytes + n <= MAX_RAS_JSON_BYTES) {
          json.push(Buffer.from(buf.subarray(0, n)));
          jsonBytes += n;
          continue;
        }
        for (const part of json) push(part, part.length);
        json = undefined;
      }
      push(buf, n);
    }
    if (json !== undefined) {
      if (analysis.rasDocument(path, Buffer.concat(json, jsonBytes).toString("utf8"))) {
        let count = 0;
        for (const part of json) for (let i = part.indexOf(10); i >= 0; i = part.indexOf(10, i + 1)) count++;
        const last = json[json.length - 1];
        return last !== undefined && last.length > 0 && last[last.length - 1] !== 10 ? count + 1 : count;
      }
      for (const part of json) push(part, part.length);
    }
    // The last line may lack its newline.
    const tail = splitter.partial();
    if (tail.length > 0) splitter.pushTo(Buffer.from("\n"), 0, 1, lines);
  } finally {
    input.close();
  }
  return lines.count;
}

export async function runAnalyze(argv: readonly string[], io: AnalyzeIo): Promise<number> {
  let json = false;
  const args: string[] = [];
  for (const a of argv) {
    if (a === "--json") json = true;
    else if (a === "-h" || a === "--help") {
      io.stdout(
        "usage: ringwatch analyze [--json] FILE|DIR|- ...\n  Reads NCCL_DEBUG / PyTorch logs, PyTorch Flight Recorder dumps and kernel logs (dmesg, journalctl -k) of any number of ranks and nodes and prints the verdict.\n",
      );
      return 0;
    } else if (a.startsWith("--")) {
      io.stderr(`ringwatch: analyze: unknown flag ${a} (usage: ringwatch analyze [--json] FILE...)\n`);
      return 2;
    } else args.push(a);
  }
  if (args.length === 0) {
    io.stderr("ringwatch: analyze: no log files given (usage: ringwatch analyze [--json] FILE...)\n");
    return 2;
  }
  const analysis = new LogAnalysis(new KernelLines());
  const dumps: PendingDump[] = [];
  let files = 0;
  let lines = 0;
  // A path is a job's file name: its controls are escaped like the rest of the output.
  const say = (line: string): void => io.stderr(`ringwatch: analyze: ${escapeControls(line)}\n`);
  for (const arg of args) {
    for (const e of entries(arg)) {
      if ("skipped" in e) say(`skipped ${e.path}: ${e.skipped}`);
      else if ("error" in e) say(`cannot read ${e.path}: ${e.error}`);
      else {
        try {
          lines += ingestFile(analysis, e.input, dumps);
          files++;
        } catch (err) {
          say(`cannot read ${e.input.path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
        }
      }
    }
  }
  if (files === 0) {
    io.stderr("ringwatch: analyze: none of the inputs could be read\n");
    return 2;
  }
  await readDumps(analysis, dumps, io.stderr);
  const report = analysis.report();
  io.stdout(
    json
      ? jsonWithoutControls(JSON.stringify(report, null, 2)) + "\n"
      : escapeControls(formatReport(report, { files, lines, dumps: analysis.dumpCount }), true),
  );
  return 0;
}
