/**
 * Offline findings about communicator init: ranks that logged `Init START` and no `Init COMPLETE`.
 * Where other ranks of the communicator completed init and entered a collective, those ranks wait
 * for the ones still in init: rank_behind. Where no rank went on to a collective, the logs may just
 * end during init (an excerpt, a job still starting), so it is said at info, named as such, never as
 * a hang on its own.
 */
import type { TrackedState } from "../detect/verdict.js";
import type { CommState, InitStart } from "../state/model.js";
import { uniq, type Finding } from "../../verdict/report.js";
import { hangSuspected, rankBehind } from "../../verdict/finding.js";
import { hangSuspectedWords, rankBehindWords } from "../../verdict/words.js";

interface Started extends InitStart {
  process: string;
}

/** The communicator a start belongs to: its commId, else the process's own pointer (no commId: nothing joins it across processes). */
function startKey(process: string, ptr: string, s: InitStart): string {
  return s.commId ?? `${process}/${ptr}`;
}

function commOf(state: TrackedState, commId: string | undefined): CommState | undefined {
  if (commId === undefined) return undefined;
  for (const c of state.comms.values()) if (c.commId === commId) return c;
  return undefined;
}

export function initFindings(state: TrackedState): Finding[] {
  const byComm = new Map<string, Started[]>();
  for (const p of state.processes.values()) {
    for (const [ptr, s] of p.initStarts) {
      const key = startKey(p.key, ptr, s);
      const list = byComm.get(key);
      if (list === undefined) byComm.set(key, [{ ...s, process: p.key }]);
      else list.push({ ...s, process: p.key });
    }
  }
  const out: Finding[] = [];
  for (const [key, starts] of byComm) {
    const comm = commOf(state, starts[0]?.commId);
    const stuck = uniq(starts.map((s) => s.rank).filter((r): r is number => r !== undefined && comm?.ranks.has(r) !== true)).sort((a, b) => a - b);
    if (stuck.length === 0 && starts.every((s) => s.rank !== undefined)) continue;
    const processes = uniq(starts.map((s) => s.process));
    const evidence = starts.map((s) => s.where).slice(0, 5);
    const completed = comm ? [...comm.ranks.keys()].sort((a, b) => a - b) : [];
    const commName = comm?.key ?? starts[0]?.commId ?? key;
    const ahead = comm ? [...comm.ranks.values()].filter((r) => r.collectives > 0) : [];
    if (comm && ahead.length > 0) {
      // They wait in the communicator's first collective, which the ranks still in init never enter.
      const op = comm.seqOps.get(1)?.op;
      out.push(
        rankBehind({
          summary: rankBehindWords.initNeverCompleted({ comm: commName, behind: stuck, processes, ahead: ahead.map((r) => r.rank), seq: 1, op }),
          ranks: stuck,
          processes,
          comm_id: comm.key,
          evidence,
          seq: 1,
          ...(op !== undefined ? { op } : {}),
        }),
      );
      continue;
    }
    const nranks = starts.find((s) => s.nranks !== undefined)?.nranks;
    out.push(
      hangSuspected({
        severity: "info",
        summary: hangSuspectedWords.initIncomplete({ comm: commName, ranks: stuck, processes, nranks, completed }),
        ranks: stuck,
        processes,
        comm_id: comm?.key ?? starts[0]?.commId ?? null,
        evidence,
      }),
    );
  }
  return out;
}
