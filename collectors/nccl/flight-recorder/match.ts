/**
 * Do the ranks' records of one collective agree? The checks and their order are torchfrtrace's
 * (torch/distributed/flight_recorder/components/types.py, Op.match): collective type
 * (COLLECTIVE_TYPE_MISMATCH), then input and output sizes and the size rules of all_reduce,
 * all_gather and reduce_scatter (SIZE_OR_SYNTAX_MISMATCH), then dtypes (COLLECTIVE_DTYPE_MISMATCH),
 * then state (COLLECTIVE_STATE_MISMATCH). Unlike torchfrtrace, which blames every rank that differs
 * from the first one it reads, the reference here is what most ranks recorded. mismatchesOf applies
 * the checks to a group's last 64 collectives up to the one its ranks wait in.
 */
import type { RankInGroup } from "./groups.js";
import { stacksOf, type FrStack } from "./stacks.js";
import type { FrEntry, FrFrame } from "./types.js";

/** Collectives compared across ranks per group: the latest ones, up to the one the ranks wait in. */
const MAX_COMPARED_SEQS = 64;
/** Mismatches reported per group (the earliest first: later ones are often its consequence). */
const MAX_MISMATCHES = 8;

export type FrMismatchClass = "op" | "size" | "dtype" | "state";

/** One rank's record of one collective: its entries at that collective_seq_id, merged (coalesced groups have several). */
export interface FrCall {
  op: string;
  inputSizes?: number[][];
  outputSizes?: number[][];
  inputDtypes?: string[];
  outputDtypes?: string[];
  state?: string;
}

export function callOf(entries: readonly FrEntry[]): FrCall {
  const first = entries[0];
  if (entries.length === 1 && first !== undefined) return first;
  const cat = <T>(pick: (e: FrEntry) => T[] | undefined): T[] | undefined => {
    const out: T[] = [];
    for (const e of entries) {
      const v = pick(e);
      if (v === undefined) return undefined;
      out.push(...v);
    }
    return out;
  };
  const call: FrCall = { op: entries.map((e) => e.op).join("+") };
  const set = <K extends keyof FrCall>(k: K, v: FrCall[K] | undefined): void => {
    if (v !== undefined) call[k] = v;
  };
  set(
    "inputSizes",
    cat((e) => e.inputSizes),
  );
  set(
    "outputSizes",
    cat((e) => e.outputSizes),
  );
  set(
    "inputDtypes",
    cat((e) => e.inputDtypes),
  );
  set(
    "outputDtypes",
    cat((e) => e.outputDtypes),
  );
  set("state", entries[entries.length - 1]?.state);
  return call;
}

const ALL_TO_ALL = new Set(["all_to_all", "all_to_all_single", "all_to_all_v_single", "alltoall", "alltoall_base"]);
const ALL_GATHER = new Set(["all_gather", "all_gather_base", "_all_gather_base", "all_gather_into_tensor_coalesced"]);
const REDUCE_SCATTER = new Set(["reduce_scatter", "_reduce_scatter_base", "reduce_scatter_tensor_coalesced"]);

const sizesText = (s: readonly (readonly number[])[] | undefined): string => JSON.stringify(s ?? []);
const same = (a: readonly (readonly number[])[] | undefined, b: readonly (readonly number[])[] | undefined): boolean =>
  a === undefined || b === undefined || sizesText(a) === sizesText(b);
const numel = (s: readonly number[] | undefined): number => (s ?? []).reduce((p, d) => p * d, 1);
const dtypeSet = (d: readonly string[] | undefined): string => [...new Set(d ?? [])].sort().join(",");
const hasData = (s: readonly (readonly number[])[] | undefined): boolean => s !== undefined && s.length > 0 && s[0] !== undefined;

/** How a call looks for one class of mismatch (what the summary shows as expected and found). */
export function describeCall(c: FrCall, kind: FrMismatchClass): string {
  switch (kind) {
    case "op":
      return c.op;
    case "size":
      return `input ${sizesText(c.inputSizes)} output ${sizesText(c.outputSizes)}`;
    case "dtype":
      return `input ${dtypeSet(c.inputDtypes) || "?"} output ${dtypeSet(c.outputDtypes) || "?"}`;
    case "state":
      return c.state ?? "?";
  }
}

function dtypeMismatch(a: FrCall, b: FrCall): boolean {
  const inA = dtypeSet(a.inputDtypes);
  const outA = dtypeSet(a.outputDtypes);
  if (a.inputDtypes === undefined || b.inputDtypes === undefined) return false;
  if (!["scatter", "gather", "broadcast"].includes(a.op) && inA !== outA && hasData(a.inputSizes) && hasData(a.outputSizes)) return true;
  if (!["scatter", "broadcast"].includes(a.op) && inA !== dtypeSet(b.inputDtypes) && hasData(a.inputSizes) && hasData(b.inputSizes)) return true;
  return a.op !== "gather" && outA !== dtypeSet(b.outputDtypes) && hasData(a.outputSizes) && hasData(b.outputSizes);
}

/** The first class in which `other` differs from the reference `ref`, or undefined when it matches. */
export function mismatchClass(ref: FrCall, other: FrCall, groupSize: number | undefined): FrMismatchClass | undefined {
  if (ref.op !== other.op) return "op";
  const op = ref.op;
  if (!ALL_TO_ALL.has(op) && op !== "scatter" && !same(ref.inputSizes, other.inputSizes)) return "size";
  if (!ALL_TO_ALL.has(op) && op !== "gather" && !same(ref.outputSizes, other.outputSizes)) return "size";
  if ((op === "all_reduce" || op === "allreduce_coalesced") && !same(ref.inputSizes, other.outputSizes)) return "size";
  if (groupSize !== undefined && hasData(ref.inputSizes) && hasData(other.outputSizes)) {
    if (ALL_GATHER.has(op) && numel(other.outputSizes?.[0]) !== numel(ref.inputSizes?.[0]) * groupSize) return "size";
  }
  if (groupSize !== undefined && hasData(ref.outputSizes) && hasData(other.inputSizes)) {
    if (REDUCE_SCATTER.has(op) && numel(other.inputSizes?.[0]) !== numel(ref.outputSizes?.[0]) * groupSize) return "size";
  }
  if (dtypeMismatch(ref, other)) return "dtype";
  if (ref.state !== undefined && other.state !== undefined && ref.state !== other.state) return "state";
  return undefined;
}

/** A key that is equal for calls that agree in every class. */
export const callKey = (c: FrCall): string =>
  `${c.op}|${sizesText(c.inputSizes)}|${sizesText(c.outputSizes)}|${dtypeSet(c.inputDtypes)}|${dtypeSet(c.outputDtypes)}|${c.state ?? ""}`;

export interface FrMismatch {
  seq: number;
  kind: FrMismatchClass;
  /** What most ranks recorded (the lowest rank's record on a tie), and those ranks. */
  expected: { value: string; ranks: number[]; stacks: FrStack[] };
  /** The ranks that recorded something else, by what they recorded. */
  found: { value: string; ranks: number[]; stacks: FrStack[] }[];
  /** The operation most ranks recorded (in an `op` mismatch, `found[].value` are the others'). */
  op: string;
}

/** Collectives recorded by two or more ranks whose records differ, the earliest first. */
export function mismatchesOf(members: readonly RankInGroup[], size: number | undefined, upTo: number | undefined): FrMismatch[] {
  const seqs = new Set<number>();
  for (const m of members) for (const s of m.bySeq.keys()) if (upTo === undefined || s <= upTo) seqs.add(s);
  const window = [...seqs].sort((a, b) => a - b).slice(-MAX_COMPARED_SEQS);
  const out: FrMismatch[] = [];
  for (const seq of window) {
    const calls: { rank: number; call: FrCall; key: string; frames: readonly FrFrame[] }[] = [];
    for (const m of members) {
      const list = m.bySeq.get(seq);
      if (!list || list.length === 0) continue;
      const call = callOf(list);
      calls.push({ rank: m.rank, call, key: callKey(call), frames: list[0]?.frames ?? [] });
    }
    if (calls.length < 2) continue;
    // The reference: the record most ranks share (members are in rank order, so a tie keeps the lowest rank's).
    const counts = new Map<string, number>();
    for (const c of calls) counts.set(c.key, (counts.get(c.key) ?? 0) + 1);
    let refKey = "";
    let best = 0;
    for (const c of calls) {
      const n = counts.get(c.key) ?? 0;
      if (n > best) [refKey, best] = [c.key, n];
    }
    if (best === calls.length) continue;
    const ref = calls.filter((c) => c.key === refKey);
    const refCall = (ref[0] as (typeof calls)[number]).call;
    const byKind = new Map<FrMismatchClass, Map<string, typeof calls>>();
    for (const c of calls) {
      if (c.key === refKey) continue;
      const kind = mismatchClass(refCall, c.call, size);
      if (kind === undefined) continue;
      const value = describeCall(c.call, kind);
      const groups = byKind.get(kind) ?? new Map<string, typeof calls>();
      byKind.set(kind, groups);
      groups.set(value, [...(groups.get(value) ?? []), c]);
    }
    for (const [kind, found] of byKind) {
      out.push({
        seq,
        kind,
        op: refCall.op,
        expected: { value: describeCall(refCall, kind), ranks: ref.map((c) => c.rank), stacks: stacksOf(ref) },
        found: [...found].map(([value, cs]) => ({ value, ranks: cs.map((c) => c.rank), stacks: stacksOf(cs) })),
      });
      if (out.length >= MAX_MISMATCHES) return out;
    }
  }
  return out;
}
