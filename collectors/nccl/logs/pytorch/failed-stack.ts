/**
 * The Python stack PyTorch prints from its Flight Recorder when the watchdog times out (PyTorch
 * 2.5+, with a trace buffer): `[rank0]:[E1124 ...] ... Stack trace of the failed collective: `
 * then one row per frame, innermost first, `#0 all_reduce from /path/distributed_c10d.py:3068`
 * (ProcessGroupNCCL writes `#<i> <function> from <file>:<line>`). The reader keeps each block's
 * rank (the `[rankN]:` prefix) and frames, bounded; withFailedStacks() hands them to the timeout
 * finding of that rank, as `stacks`, so that the verdict says where the rank called the collective.
 */
import { isDigit, readInt } from "../parse/scan.js";
import type { Finding, FindingStack } from "../../verdict/report.js";
import { watchdogTimeout } from "../../verdict/finding.js";
import { watchdogTimeoutWords } from "../../verdict/words.js";

const MARK = "Stack trace of the failed collective:";
const MAX_BLOCKS = 256;
const MAX_FRAMES = 64;

export interface FailedStack {
  /** The global rank of the `[rankN]:` prefix, where the line has one. */
  rank?: number;
  frames: FindingStack["frames"];
  /** `file:line` of the opening line. */
  where: string;
}

/** `#0 all_reduce from /x/distributed_c10d.py:3068` → the frame; undefined for any other row. */
export function stackFrame(s: string): FindingStack["frames"][number] | undefined {
  let i = 0;
  while (i < s.length && (s.charCodeAt(i) === 32 || s.charCodeAt(i) === 9)) i++;
  if (s.charCodeAt(i) !== 35 /* # */ || !isDigit(s.charCodeAt(i + 1))) return undefined;
  const sp = s.indexOf(" ", i);
  const from = s.indexOf(" from ", sp);
  if (sp < 0 || from < 0) return undefined;
  const colon = s.lastIndexOf(":");
  if (colon <= from + 6) return undefined;
  const line = readInt(s, colon + 1, s.length);
  if (line === undefined) return undefined;
  return { function: s.slice(sp + 1, from), file: s.slice(from + 6, colon), line };
}

/** The `[rankN]:` prefix's rank, where the line starts with one (after any wrapper). */
function prefixRank(s: string, end: number): number | undefined {
  const r = s.indexOf("[rank");
  return r >= 0 && r < end ? readInt(s, r + 5, end) : undefined;
}

export class FailedStackReader {
  readonly stacks: FailedStack[] = [];
  private open: FailedStack | undefined;

  /** `source`: the log's name in evidence (`source:line`). */
  constructor(private readonly source: string) {}

  line(text: string, lineNo: number): void {
    if (this.open !== undefined) {
      const f = stackFrame(text);
      if (f !== undefined) {
        if (this.open.frames.length < MAX_FRAMES) this.open.frames.push(f);
        return;
      }
      this.open = undefined;
    }
    const m = text.indexOf(MARK);
    if (m < 0 || this.stacks.length >= MAX_BLOCKS) return;
    const rank = prefixRank(text, m);
    this.open = { ...(rank !== undefined ? { rank } : {}), frames: [], where: `${this.source}:${lineNo}` };
    this.stacks.push(this.open);
  }
}

/**
 * The timeout findings with the stacks their ranks printed: a block goes to the watchdog_timeout
 * that names its rank (a block with no rank: to the only timeout, where there is one). Where the
 * lines hold no timeout at all, the blocks are one: the watchdog prints them only for a collective
 * it found failed (its timeout or error line cut from the paste, nccl-pasted 740), so they make a
 * watchdog_timeout of their own, per rank.
 */
export function withFailedStacks(findings: readonly Finding[], stacks: readonly FailedStack[]): Finding[] {
  const timeouts = findings.filter((f) => f.kind === "watchdog_timeout");
  if (timeouts.length === 0) return [...findings, ...stacksAlone(stacks)];
  const add = new Map<Finding, FailedStack[]>();
  for (const st of stacks) {
    if (st.frames.length === 0) continue;
    const f = st.rank !== undefined ? timeouts.find((t) => t.ranks.includes(st.rank as number)) : timeouts.length === 1 ? timeouts[0] : undefined;
    if (f !== undefined) add.set(f, [...(add.get(f) ?? []), st]);
  }
  return findings.map((f) => {
    const sts = add.get(f);
    if (sts === undefined) return f;
    const mine: FindingStack[] = sts.map((s) => ({ ranks: s.rank !== undefined ? [s.rank] : [], frames: s.frames }));
    return { ...f, stacks: [...(f.stacks ?? []), ...mine], evidence: [...f.evidence, ...sts.map((s) => s.where)] };
  });
}

/** The failed collectives the blocks show where no timeout line does: one watchdog_timeout per rank (one for the blocks with none). */
function stacksAlone(stacks: readonly FailedStack[]): Finding[] {
  const byRank = new Map<number | undefined, FailedStack[]>();
  for (const st of stacks) if (st.frames.length > 0) byRank.set(st.rank, [...(byRank.get(st.rank) ?? []), st]);
  return [...byRank].map(([rank, sts]) => {
    const first = sts[0] as FailedStack;
    const call = first.frames[0] as FindingStack["frames"][number];
    const caller = first.frames.find((f) => !f.file.includes("/torch/"));
    return watchdogTimeout({
      summary: watchdogTimeoutWords.stackAlone({
        rank,
        op: call.function,
        caller: caller !== undefined ? `${caller.function} (${caller.file}:${caller.line})` : undefined,
      }),
      ranks: rank !== undefined ? [rank] : [],
      processes: [],
      comm_id: null,
      evidence: sts.slice(0, 5).map((s) => s.where),
      stacks: sts.map((s) => ({ ranks: s.rank !== undefined ? [s.rank] : [], frames: s.frames })),
    });
  });
}
