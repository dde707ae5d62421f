/**
 * Gloo's own timeout, as PyTorch raises it from a collective of a Gloo process group (a CPU barrier,
 * the `gloo:` side groups): `[rank2]: RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/
 * unbound_buffer.cc:81] Timed out waiting 1800000ms for recv operation to complete` (nccl-pasted
 * 495: `torch.distributed.barrier()` at a checkpoint save). The rank waited that long for a peer that
 * never came to the same collective: a hang, which NCCL's lines and PyTorch's NCCL watchdog never
 * show. Also as a logger records it (Ray's trainer, nccl-pasted 754). Each rank's first such line is
 * kept (first-per-rank.ts); cut at fixed words, no regular expression.
 */
import { parsePrefix } from "../parse/prefix.js";
import { FirstPerRank } from "./first-per-rank.js";
import { hangSuspected } from "../../verdict/finding.js";
import type { Finding } from "../../verdict/report.js";
import { hangSuspectedWords } from "../../verdict/words.js";

const MARK = "Timed out waiting ";
/** A line without this is no Gloo timeout (evidence.ts gates the readers on it). */
export const GLOO_TIMEOUT_MARKS: readonly string[] = [MARK];
const GLOO = "gloo/transport/";

export interface GlooTimeout {
  /** The launcher prefix's rank (`[rank2]:`), where the line has one. */
  rank?: number;
  ms: number;
  /** `recv` or `send`. */
  op: string;
  where: string;
}

/** `... gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv operation to complete` → the timeout. */
export function glooTimeout(s: string, where: string): GlooTimeout | undefined {
  const k = s.indexOf(MARK);
  if (k < 0) return undefined;
  const g = s.lastIndexOf(GLOO, k);
  if (g < 0) return undefined;
  let i = k + MARK.length;
  let ms = 0;
  const start = i;
  while (i < s.length && i - start < 12 && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) ms = ms * 10 + (s.charCodeAt(i++) - 48);
  if (i === start || !s.startsWith("ms for ", i)) return undefined;
  const opEnd = s.indexOf(" operation", i + 7);
  if (opEnd < 0 || opEnd - (i + 7) > 8) return undefined;
  const out: GlooTimeout = { ms, op: s.slice(i + 7, opEnd), where };
  // Raised: the exception's name (`RuntimeError: [.../gloo/...`) opens the line, after blanks or a launcher's
  // tag (`[rank2]: `); or a logger's record of it (Ray's `WARNING torch_trainer.py:413 -- [.../gloo/...`,
  // nccl-pasted 754); not prose that quotes it.
  const lb = s.lastIndexOf("[", g);
  if (lb >= 3 && s.startsWith(" -- ", lb - 4) && loggedAtLevel(s, lb - 4)) {
    const rank = parsePrefix(s, 0, lb, true).launcher?.rank;
    if (rank !== undefined) out.rank = rank;
    return out;
  }
  if (lb < 2 || !s.startsWith(": ", lb - 2)) return undefined;
  const ws = s.lastIndexOf(" ", lb - 3) + 1;
  const name = s.slice(ws, lb - 2);
  if (!name.endsWith("Error") || !isName(name)) return undefined;
  const pre = parsePrefix(s, 0, ws, true);
  for (let b = pre.end; b < ws; b++) if (s.charCodeAt(b) !== 32 && s.charCodeAt(b) !== 9) return undefined;
  const rank = pre.launcher?.rank;
  if (rank !== undefined) out.rank = rank;
  return out;
}

/** A logger's level word (` WARNING `, ` ERROR `) before `end`: the line is a logger's record. */
function loggedAtLevel(s: string, end: number): boolean {
  const w = s.lastIndexOf(" WARNING ", end);
  const e = s.lastIndexOf(" ERROR ", end);
  return (w >= 0 && end - w < 80) || (e >= 0 && end - e < 80);
}

/** Each rank's first Gloo timeout, in a log named `source`. */
export function glooTimeoutReader(source: string): FirstPerRank<GlooTimeout> {
  return new FirstPerRank(source, MARK, glooTimeout);
}

/**
 * One hang_suspected for all of them: the ranks that waited, and how long. Critical alone; a
 * warning where the logs hold a failure already (`behind`): the ranks then wait for a rank that
 * failed, and that failure is the verdict.
 */
export function glooTimeoutFindings(all: readonly GlooTimeout[], behind = false): Finding[] {
  if (all.length === 0) return [];
  const ranks = [...new Set(all.map((t) => t.rank).filter((r): r is number => r !== undefined))].sort((a, b) => a - b);
  return [
    hangSuspected({
      severity: behind ? "warning" : "critical",
      summary: hangSuspectedWords.glooTimeout({ ranks, ms: Math.max(...all.map((t) => t.ms)), ops: [...new Set(all.map((t) => t.op))], behind }),
      ranks,
      processes: [],
      comm_id: null,
      evidence: all.slice(0, 5).map((t) => t.where),
    }),
  ];
}

/** `RuntimeError`, `torch.distributed.DistBackendError`: letters, digits, dots and underscores. */
function isName(w: string): boolean {
  for (let i = 0; i < w.length; i++) {
    const c = w.charCodeAt(i);
    if (!((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 46 || c === 95)) return false;
  }
  return w.length > 0;
}
