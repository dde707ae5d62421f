/**
 * `ringwatch analyze [--json] [--fail-on=S] FILE|DIR|GLOB|- ...`: reads logs in bounded chunks
 * (never a whole multi-GB file in memory; .gz and .zst decompressed as a stream,
 * analyze-decompress.ts), and PyTorch Flight Recorder dumps (pickles) whole up to their limit,
 * prints the verdict. Which paths are read: analyze-input.ts (folders with their subfolders, globs);
 * what is no log is skipped (analyze-sniff.ts); how each input is told apart and read:
 * analyze-ingest.ts. Exit 0 when the input could be read, whatever was found (1 when --fail-on's
 * severity was reached, analyze-args.ts); 2 when it could not (no input, nothing readable, bad
 * flag). What it prints holds no raw control character from the logs (control-chars.ts).
 */
import { FR_ENTRIES_PER_GROUP, LogAnalysis } from "../collectors/nccl/analyze/analyze.js";
import { IsolatedFrReader, type IsolationLimits } from "../collectors/nccl/flight-recorder/isolated.js";
import { formatReport } from "../collectors/nccl/verdict/format.js";
import { HELP, USAGE, exitCodeFor, parseAnalyzeArgs } from "./analyze-args.js";
import { compressionOf, decompress } from "./analyze-decompress.js";
import { FileIngest } from "./analyze-ingest.js";
import { Lister, open, type Found, type Input, type Listed } from "./analyze-input.js";
import { KernelLines } from "./analyze-kernel.js";
import { Progress } from "./analyze-progress.js";
import { escapeControls, jsonWithoutControls } from "./control-chars.js";

/** Bytes read at a time from a file: never a whole multi-GB file in memory. */
const CHUNK = 4 * 1024 * 1024;
/** Compressed bytes read at a time. */
const COMPRESSED_CHUNK = 1024 * 1024;

export interface AnalyzeIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  /** Show progress on stderr for large inputs (default: when stderr is a terminal). */
  progress?: boolean;
}

/** A Flight Recorder dump's bytes, read after the logs in a worker thread (readDumps). */
interface PendingDump {
  path: string;
  bytes: Buffer;
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
 * Reads one opened input into ingest: its bytes as they are, or decompressed when its first bytes
 * say gzip or zstd. Returns why reading stopped early (a zip bomb, corrupt data), if it did.
 */
async function readInput(input: Input, ingest: FileIngest, progress: Progress): Promise<string | undefined> {
  const buf = Buffer.allocUnsafe(CHUNK);
  const n = input.read(buf, CHUNK);
  progress.add(Math.max(0, n));
  if (n <= 0) return undefined;
  const kind = compressionOf(buf.subarray(0, n));
  if (kind === undefined) {
    let more = ingest.push(buf.subarray(0, n));
    while (more) {
      const m = input.read(buf, CHUNK);
      if (m <= 0) break;
      progress.add(m);
      more = ingest.push(buf.subarray(0, m));
    }
    return undefined;
  }
  // The compressed bytes are handed on to a stream that may hold them: a buffer each.
  const next = (): Buffer | undefined => {
    const b = Buffer.allocUnsafe(COMPRESSED_CHUNK);
    const m = input.read(b, COMPRESSED_CHUNK);
    if (m <= 0) return undefined;
    progress.add(m);
    return b.subarray(0, m);
  };
  return decompress(kind, Buffer.from(buf.subarray(0, n)), next, (b) => ingest.push(b));
}

export async function runAnalyze(argv: readonly string[], io: AnalyzeIo): Promise<number> {
  const args = parseAnalyzeArgs(argv);
  if (args === "help") {
    io.stdout(HELP);
    return 0;
  }
  if ("error" in args) {
    io.stderr(`ringwatch: analyze: ${escapeControls(args.error)}\n`);
    return 2;
  }
  if (args.paths.length === 0) {
    io.stderr(`ringwatch: analyze: no log files given (${USAGE})\n`);
    return 2;
  }
  const analysis = new LogAnalysis(new KernelLines());
  const dumps: PendingDump[] = [];
  let files = 0;
  let lines = 0;
  const progress = new Progress(io.stderr, io.progress ?? process.stderr.isTTY === true);
  // A path is a job's file name: its controls are escaped like the rest of the output.
  const say = (line: string): void => {
    progress.clear();
    io.stderr(`ringwatch: analyze: ${escapeControls(line)}\n`);
  };
  const told = (l: Listed): void => {
    if ("stopped" in l) say(l.stopped);
    else if ("skipped" in l) say(`skipped ${l.path}: ${l.skipped}`);
    else if ("error" in l) say(`cannot read ${l.path}: ${l.error}`);
  };
  // Everything is listed first (nothing opened), so that the progress display knows the total.
  const lister = new Lister();
  const found: Found[] = [];
  for (const arg of args.paths) {
    for (const l of lister.list(arg)) {
      if ("found" in l) found.push(l.found);
      else told(l);
    }
  }
  progress.start(sum(found), found.length);
  for (const f of found) {
    progress.nextFile();
    const e = open(f);
    if (!("input" in e)) {
      told(e);
      continue;
    }
    const ingest = new FileIngest(analysis, e.input.path);
    try {
      const stopped = await readInput(e.input, ingest, progress);
      if (stopped !== undefined) say(`${e.input.path}: ${stopped}`);
    } catch (err) {
      say(`cannot read ${e.input.path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
      continue;
    } finally {
      e.input.close();
    }
    const got = ingest.end();
    if (got.skipped !== undefined) {
      say(`skipped ${e.input.path}: ${got.skipped}`);
      continue;
    }
    if (got.dump !== undefined) dumps.push({ path: e.input.path, bytes: got.dump });
    lines += got.lines;
    files++;
  }
  progress.clear();
  if (files === 0) {
    io.stderr("ringwatch: analyze: none of the inputs could be read\n");
    return 2;
  }
  await readDumps(analysis, dumps, io.stderr);
  const report = analysis.report();
  io.stdout(
    args.json
      ? jsonWithoutControls(JSON.stringify(report, null, 2)) + "\n"
      : escapeControls(formatReport(report, { files, lines, dumps: analysis.dumpCount }), true),
  );
  return exitCodeFor(report.findings, args.failOn);
}

function sum(found: readonly Found[]): number {
  let total = 0;
  for (const f of found) total += f.size;
  return total;
}
