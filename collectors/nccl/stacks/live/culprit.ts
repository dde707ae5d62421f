/**
 * The culprit among one communicator's ranks on this node, from their live stacks: the rank the
 * verdict names behind where it has a stack, else (as ByteRobust localizes) the first outlier
 * against the stack most ranks share inside a collective. Its frames as one log line and one
 * series (the job's own innermost frame, and the innermost of all). Pure.
 */
import { normalizeFile } from "../../verdict/python-file.js";
import { frameText, isAddressFrame, isCollectiveFrame, isLibraryFrame } from "../frames.js";
import { groupStacks, keyThread, type RankStack } from "../group.js";
import type { StackFrame, StackThread } from "../types.js";

/** Frames shown in the log line, innermost ones. */
const INNER = 3;
/** Characters kept of a label value. */
const MAX_LABEL = 200;

export interface Culprit {
  rank: number;
  /** Its process as the stacks were placed (the pid the logs give it). */
  process: string | undefined;
  /** Why this rank: the verdict named it behind, or its stack is not where the others wait. */
  why: "behind" | "outlier";
  /** The job's own innermost frame, else the innermost frame. */
  frame: StackFrame;
  /** The innermost frame of all (`queue.py:180 get`). */
  innermost: StackFrame;
  /** `train.py:88 next_batch -> ... -> queue.py:180 get -> threading.py:324 wait`, innermost last. */
  chain: string;
}

export interface StackVerdict {
  /** Ranks with a stack. */
  ranks: number;
  culprit?: Culprit;
  /** `torch/distributed/distributed_c10d.py:2501 all_reduce`: the innermost collective frame the ranks most share wait in. */
  waitingAt?: string;
  waiting: number[];
}

function cut(s: string): string {
  return s.length > MAX_LABEL ? s.slice(0, MAX_LABEL) : s;
}

function chainOf(frames: readonly StackFrame[]): { frame: StackFrame; chain: string } | undefined {
  const fs = frames.filter((f) => !isAddressFrame(f));
  const first = fs[0];
  if (first === undefined) return undefined;
  const job = fs.findIndex((f) => !isLibraryFrame(f));
  const inner = fs.slice(0, INNER).reverse();
  const shown = job >= INNER ? [fs[job] as StackFrame, ...inner] : inner;
  const texts = shown.map(frameText);
  const chain = job > INNER ? `${texts[0] ?? ""} -> ... -> ${texts.slice(1).join(" -> ")}` : texts.join(" -> ");
  return { frame: job >= 0 ? (fs[job] as StackFrame) : first, chain };
}

function culpritOf(rank: number, process: string | undefined, t: StackThread, why: Culprit["why"]): Culprit | undefined {
  const c = chainOf(t.frames);
  const innermost = t.frames.find((f) => !isAddressFrame(f));
  if (c === undefined || innermost === undefined) return undefined;
  return { rank, process, why, frame: c.frame, innermost, chain: c.chain };
}

/** The stacks of one communicator's ranks here, and the ranks the verdict names behind. */
export function judgeStacks(stacks: readonly RankStack[], behind: readonly number[]): StackVerdict {
  const g = groupStacks(stacks);
  const out: StackVerdict = { ranks: g.ranks, waiting: g.dominant?.ranks ?? [] };
  if (g.dominant !== undefined) {
    const at = g.dominant.thread.frames.find(isCollectiveFrame);
    out.waitingAt = frameText(at ?? (g.dominant.thread.frames[0] as StackFrame));
  }
  const processOf = (rank: number): string | undefined => stacks.find((s) => s.rank === rank)?.process;
  for (const r of [...behind].sort((a, b) => a - b)) {
    const s = [...stacks].reverse().find((x) => x.rank === r);
    const t = s !== undefined ? keyThread(s.dump) : undefined;
    const c = t !== undefined ? culpritOf(r, s?.process, t, "behind") : undefined;
    if (c !== undefined) return { ...out, culprit: c };
  }
  const o = g.outliers[0];
  const r = o?.ranks[0];
  if (o !== undefined && r !== undefined) {
    const c = culpritOf(r, processOf(r), o.thread, "outlier");
    if (c !== undefined) out.culprit = c;
  }
  return out;
}

/** The culprit series' labels (besides comm_id). */
export function culpritLabels(c: Culprit, source: string): Record<string, string> {
  return {
    rank: String(c.rank),
    pid: c.process ?? "",
    function: cut(c.frame.function),
    file: cut(normalizeFile(c.frame.file)),
    line: c.frame.line !== undefined ? String(c.frame.line) : "",
    innermost: cut(frameText(c.innermost)),
    source,
    why: c.why,
  };
}
