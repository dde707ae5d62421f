/**
 * Do the ranks' records of one collective agree? The checks and their order are torchfrtrace's
 * (torch/distributed/flight_recorder/components/types.py, Op.match): collective type
 * (COLLECTIVE_TYPE_MISMATCH), then input and output sizes and the size rules of all_reduce,
 * all_gather and reduce_scatter (SIZE_OR_SYNTAX_MISMATCH), then dtypes (COLLECTIVE_DTYPE_MISMATCH),
 * then state (COLLECTIVE_STATE_MISMATCH). Unlike torchfrtrace, which blames every rank that differs
 * from the first one it reads, the reference here is what most ranks recorded.
 */
import type { FrEntry } from "./types.js";

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
  set("inputSizes", cat((e) => e.inputSizes));
  set("outputSizes", cat((e) => e.outputSizes));
  set("inputDtypes", cat((e) => e.inputDtypes));
  set("outputDtypes", cat((e) => e.outputDtypes));
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
