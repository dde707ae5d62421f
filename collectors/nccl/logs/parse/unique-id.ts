/**
 * PyTorch's ncclUniqueId fetch from the store, as its errors name it: `[14] is setting up NCCL
 * communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but
 * store->get('0') got error: Connection reset by peer` (PyTorch 1.x spelled it `retreiving`). The
 * numbers are the process group's ranks (`[0]` is its rank 0, words of PyTorch's source). Key `'0'`
 * is a group's first communicator (PyTorch counts them per group, each group under its own store
 * prefix): they are read as global ranks there, as they are for the default group, whose first
 * communicator most jobs set up at their first collective; a subgroup's first communicator has key
 * `'0'` too, and there they are that group's (a limit: the line does not tell the two apart). A later
 * communicator's numbers are not read. Cut at fixed words.
 */
import { find, pos, readInt } from "./scan.js";

/** The words after the verb; the line holds them or is no fetch. */
export const UNIQUE_ID = " ncclUniqueId from [";
const SETTING_UP = "] is setting up NCCL communicator and ";

export interface UniqueIdFetch {
  /** Read as global ranks (store key '0'): the rank that asked, and the rank whose id it asked for. */
  self?: number;
  peer?: number;
  /** Where the fetch's words end (after `from [N]`), for the error after them. */
  end: number;
}

/** The fetch a line names between i and end; undefined where it names none. Ranks only for key '0'. */
export function uniqueIdFetch(s: string, i: number, end: number): UniqueIdFetch | undefined {
  const k = find(s, UNIQUE_ID, i, end);
  if (k < 0) return undefined;
  const set = s.lastIndexOf(SETTING_UP, k);
  if (set < i || k - set > SETTING_UP.length + 12) return undefined;
  const out: UniqueIdFetch = { end: k + UNIQUE_ID.length };
  if (find(s, "by key '0'", k, end) < 0) return out;
  const open = s.lastIndexOf("[", set);
  const self = open >= i ? readInt(s, open + 1, set) : undefined;
  if (self !== undefined && pos === set) out.self = self;
  const peer = readInt(s, k + UNIQUE_ID.length, end);
  if (peer !== undefined && s.charCodeAt(pos) === 93 /* ] */) {
    out.peer = peer;
    out.end = pos + 1;
  }
  return out;
}
