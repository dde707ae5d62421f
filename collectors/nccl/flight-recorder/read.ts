/**
 * A Flight Recorder dump file's bytes → FrDump, or a one-line reason it cannot be read (corrupt,
 * truncated, too large, over its budget, not a dump). Never throws for any input. Which rank wrote
 * it: the dump's own `rank` key where it has one, else the file name (`<TORCH_FR_DUMP_TEMP_FILE><rank>`).
 * The work and memory it may cost are bounded by one budget per dump (budget.ts), from the pickle's
 * first opcode to the last entry converted. The agent calls it in a worker (isolated.ts).
 */
import { Budget, OverBudget } from "./budget.js";
import { dumpOf } from "./convert.js";
import { rankFromName } from "./ranks.js";
import type { FrOverLimit, FrRead } from "./types.js";
import { looksLikePickle, unpickle } from "./unpickle.js";

/**
 * Does a file that starts with these bytes hold a Flight Recorder dump? A pickle of protocol 2-5
 * (PROTO 0x80 and the protocol) whose value is a dict: EMPTY_DICT `}` or MARK `(` next, or first a
 * FRAME (0x95, protocol 4+). No log line starts so: 0x80 is never the first byte of UTF-8 text.
 */
export function looksLikeFrDump(b: Uint8Array): boolean {
  return looksLikePickle(b) && b.length >= 3 && (b[2] === 0x7d || b[2] === 0x28 || b[2] === 0x95);
}

/** Larger dumps are not read (a 20,000-entry buffer with stacks is a few MB). */
export const MAX_FR_DUMP_BYTES = 64 * 1024 * 1024;

export interface ReadOptions {
  /**
   * Keep, per process group, only the entries of its last this many collectives (trim.ts): what
   * the analysis needs, for a job of thousands of ranks. Default: all.
   */
  entriesPerGroup?: number;
}

/** `bytes` read from the file `name` (its base name, or any name that ends in the rank). */
export function readFrDump(bytes: Uint8Array, name: string, opts: ReadOptions = {}): FrRead {
  const fileRank = rankFromName(name);
  const fail = (error: string, over?: FrOverLimit): FrRead => ({
    ok: false,
    source: name,
    ...(fileRank !== undefined ? { rank: fileRank } : {}),
    error,
    ...(over !== undefined ? { over } : {}),
  });
  if (bytes.length > MAX_FR_DUMP_BYTES) return fail(`too large: over ${MAX_FR_DUMP_BYTES / (1024 * 1024)} MiB`);
  const budget = new Budget();
  const raw = unpickle(bytes, budget);
  if (!raw.ok) return fail(raw.error, raw.overBudget ? "budget" : undefined);
  let got: ReturnType<typeof dumpOf>;
  try {
    got = dumpOf(raw.value, name, budget, opts.entriesPerGroup);
  } catch (err) {
    if (err instanceof OverBudget) return fail(err.message, "budget");
    // A hostile pickle can make objects that only look like dicts (a Map's prototype swapped).
    return fail(`corrupt: ${err instanceof Error ? err.message.slice(0, 120) : "unreadable structure"}`);
  }
  if (typeof got === "string") return fail(got);
  const rank = got.rank ?? fileRank;
  const dump = got.dump;
  return { ok: true, dump: { ...dump, ...(rank !== undefined ? { rank, rankFrom: got.rank !== undefined ? "dump" : "file_name" } : {}) } };
}
