/** Rank lists and rank numbers as Flight Recorder dumps and their file names carry them. */
import type { Budget } from "./budget.js";

/** A group larger than this is not listed rank by rank (its size is still known). */
export const MAX_GROUP_RANKS = 131_072;

/**
 * pg_config's `ranks`: the string `"[0, 1, 2]"` (2.x), or a list of integers (1.x). Undefined when
 * it is neither, holds something else than non-negative integers, or lists more than MAX_GROUP_RANKS.
 * One pass over the characters, no regular expression.
 */
export function parseRanks(v: unknown): number[] | undefined {
  if (Array.isArray(v)) {
    if (v.length > MAX_GROUP_RANKS) return undefined;
    const out: number[] = [];
    for (const x of v) {
      if (typeof x !== "number" || !Number.isSafeInteger(x) || x < 0) return undefined;
      out.push(x);
    }
    return sortedUnique(out);
  }
  if (typeof v !== "string") return undefined;
  const s = v.trim();
  if (s.length < 2 || s[0] !== "[" || s[s.length - 1] !== "]") return undefined;
  const out: number[] = [];
  let cur = -1;
  for (let i = 1; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      cur = (cur < 0 ? 0 : cur * 10) + (c - 48);
      if (cur > Number.MAX_SAFE_INTEGER / 10) return undefined;
    } else if (c === 44) {
      if (cur < 0) return undefined;
      out.push(cur);
      cur = -1;
      if (out.length > MAX_GROUP_RANKS) return undefined;
    } else if (c !== 32 && c !== 9 && c !== 10 && c !== 13) return undefined;
  }
  if (cur >= 0) out.push(cur);
  else if (out.length > 0) return undefined; // a trailing comma
  return out.length > MAX_GROUP_RANKS ? undefined : sortedUnique(out);
}

/**
 * The rank lists of one dump, each parsed once: a job's groups often share one list (the pickle
 * then refers to one string, or one list, from every group), and equal strings parse alike. The
 * same array is handed to every group that names it, so it must not be changed. Every group still
 * counts its ranks against the budget (what the analysis goes through per group); a list's
 * characters count once, when it is parsed.
 */
export class RankLists {
  private readonly parsed = new Map<unknown, number[] | undefined>();

  constructor(private readonly budget: Budget) {}

  ranksOf(v: unknown): number[] | undefined {
    if (typeof v !== "string" && !Array.isArray(v)) return undefined;
    let ranks: number[] | undefined;
    if (this.parsed.has(v)) ranks = this.parsed.get(v);
    else {
      if (typeof v === "string") this.budget.spend("chars", v.length);
      else this.budget.spend("values", v.length);
      ranks = parseRanks(v);
      this.parsed.set(v, ranks);
    }
    if (ranks !== undefined) this.budget.spend("ranks", ranks.length);
    return ranks;
  }
}

function sortedUnique(xs: number[]): number[] {
  xs.sort((a, b) => a - b);
  return xs.filter((x, i) => i === 0 || xs[i - 1] !== x);
}

const EXTENSIONS = [".pkl", ".pickle"];

/**
 * The rank in a dump's file name: PyTorch writes `<TORCH_FR_DUMP_TEMP_FILE><rank>`
 * (`nccl_trace_rank_3`); a copy named `...3.pkl` keeps it too. Undefined without trailing digits.
 */
export function rankFromName(name: string): number | undefined {
  let base = name.slice(Math.max(name.lastIndexOf("/"), name.lastIndexOf("\\")) + 1);
  for (const ext of EXTENSIONS) if (base.toLowerCase().endsWith(ext)) base = base.slice(0, -ext.length);
  let i = base.length;
  while (i > 0 && base.charCodeAt(i - 1) >= 48 && base.charCodeAt(i - 1) <= 57) i--;
  if (i === base.length || base.length - i > 9) return undefined;
  return Number(base.slice(i));
}
