/**
 * Gloo's check that a message fits the buffer posted for it: `[enforce fail at
 * .../gloo/transport/tcp/pair.cc:446] op.preamble.length <= op.nbytes. 128 vs 8` (gloo::EnforceNotMet,
 * nccl-pasted 695). A peer sent 128 bytes where this rank expected 8: the two ranks were in
 * different operations of the Gloo group (another collective, or another size) at the same point,
 * as NCCL's size mismatch WARN tells for NCCL's connections. Only after Gloo's own `enforce fail at
 * ...pair.cc:N]` (a comment or a title that quotes the words is none). Each rank's first line is kept
 * (first-per-rank.ts); cut at fixed words.
 */
import { knownRanks } from "../marked-lines.js";
import { parsePrefix } from "../parse/prefix.js";
import { readInt, pos } from "../parse/scan.js";
import { FirstPerRank } from "./first-per-rank.js";
import { collectiveMismatch } from "../../verdict/finding.js";
import type { Finding } from "../../verdict/report.js";
import { collectiveMismatchWords } from "../../verdict/words.js";

const MARK = "op.preamble.length <= op.nbytes";
const ENFORCE = "enforce fail at ";
/** A line without this is no size check (evidence.ts gates the readers on it). */
export const GLOO_MISMATCH_MARKS: readonly string[] = [MARK];

export interface GlooSizeMismatch {
  /** The launcher prefix's rank (`[rank4]:`), where the line has one. */
  rank?: number;
  /** The bytes the peer sent, and those this rank's buffer holds; undefined where the line was cut. */
  sent?: number;
  expected?: number;
  where: string;
}

/** `... op.preamble.length <= op.nbytes. 128 vs 8` → the sizes; undefined otherwise. */
export function glooSizeMismatch(s: string, where: string): GlooSizeMismatch | undefined {
  const k = s.indexOf(MARK);
  if (k < 0) return undefined;
  // Gloo's own enforce before the words (`[enforce fail at .../pair.cc:446] `): prose that quotes them is none.
  const at = s.lastIndexOf(ENFORCE, k);
  if (at < 0 || s.indexOf("pair.cc:", at) > k || s.indexOf("pair.cc:", at) < 0 || k - at > 300) return undefined;
  const out: GlooSizeMismatch = { where };
  let i = k + MARK.length;
  if (s.charCodeAt(i) === 46 /* . */) i++;
  while (s.charCodeAt(i) === 32) i++;
  const sent = readInt(s, i, Math.min(s.length, i + 20));
  if (sent !== undefined && s.startsWith(" vs ", pos)) {
    const expected = readInt(s, pos + 4, Math.min(s.length, pos + 24));
    if (expected !== undefined) {
      out.sent = sent;
      out.expected = expected;
    }
  }
  const rank = parsePrefix(s, 0, k, true).launcher?.rank;
  if (rank !== undefined) out.rank = rank;
  return out;
}

/** Each rank's first such line, in a log named `source`. */
export function glooMismatchReader(source: string): FirstPerRank<GlooSizeMismatch> {
  return new FirstPerRank(source, MARK, glooSizeMismatch);
}

/** One critical collective_mismatch for all of them: the ranks that got more than they posted for, and the sizes. */
export function glooMismatchFindings(all: readonly GlooSizeMismatch[]): Finding[] {
  if (all.length === 0) return [];
  const ranks = knownRanks(all);
  const sized = all.find((f) => f.sent !== undefined);
  return [
    collectiveMismatch({
      summary: collectiveMismatchWords.gloo({ ranks, sent: sized?.sent, expected: sized?.expected, count: all.length }),
      ranks,
      processes: [],
      comm_id: null,
      evidence: all.slice(0, 5).map((f) => f.where),
    }),
  ];
}
