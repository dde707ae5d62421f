/** Offline findings about communicators: who never entered collective #N, mismatched collectives. */
import { lastCollWhere, type CommState, type ProcessState, type RankState } from "../state/model.js";
import type { TrackedState } from "../detect/verdict.js";
import { ranksBehind } from "../detect/verdict.js";
import { rankList, type Finding } from "../../verdict/report.js";

function opAt(comm: CommState, seq: number): string | undefined {
  return comm.seqOps.get(seq)?.op;
}

export function commFindings(state: TrackedState): Finding[] {
  const out: Finding[] = [];
  for (const comm of state.comms.values()) {
    // Offline, ranks aborted after a timeout still show where they stood; only a clean Destroy ends a rank.
    const ranks = [...comm.ranks.values()].filter((r) => r.tornDownHow !== "destroy");
    if (comm.mismatch) {
      const m = comm.mismatch;
      out.push({
        kind: "collective_mismatch",
        severity: "critical",
        summary:
          `Collective mismatch on communicator ${comm.key} at collective #${m.seq}: rank ${m.rankA} issued ${m.opA}, rank ${m.rankB} issued ${m.opB}. ` +
          `The ranks' code took different paths; NCCL will wait forever. Compare what each rank does before collective #${m.seq}.`,
        ranks: [m.rankA, m.rankB],
        processes: [comm.ranks.get(m.rankA)?.processKey, comm.ranks.get(m.rankB)?.processKey].filter((p): p is string => p !== undefined),
        comm_id: comm.key,
        evidence: [m.where].filter((w): w is string => w !== undefined),
        seq: m.seq,
        op: m.opA,
        other_op: m.opB,
      });
    }
    if (ranks.length < 2 || comm.maxCollectives < 1) continue;
    const behind = ranksBehind(ranks);
    if (behind.length === 0) continue;
    const ahead = ranks.filter((r) => !behind.includes(r.rank));
    const seq = comm.maxCollectives;
    const op = opAt(comm, seq) ?? ahead[0]?.lastOp;
    const behindRanks = ranks.filter((r) => behind.includes(r.rank));
    const lastOf = (rs: RankState[]): string[] => rs.map(lastCollWhere).filter((w): w is string => w !== undefined);
    out.push({
      kind: "rank_behind",
      severity: "critical",
      summary:
        `Rank ${rankList(behind)} (${behindRanks.map((r) => r.processKey).join(", ")}) never entered collective #${seq}${op ? ` (${op})` : ""} of communicator ${comm.key}; ` +
        `rank ${rankList(ahead.map((r) => r.rank))} entered it and wait there. ` +
        `Look at what rank ${rankList(behind)} was doing instead (py-spy dump of that process): it is stuck or took another code path.`,
      ranks: behind,
      processes: behindRanks.map((r) => r.processKey),
      comm_id: comm.key,
      evidence: [...lastOf(behindRanks), ...lastOf(ahead).slice(0, 3)],
      seq,
      ...(op ? { op } : {}),
    });
    out.push({
      kind: "hang_suspected",
      severity: "critical",
      summary: `Communicator ${comm.key} is stuck in collective #${seq}${op ? ` (${op})` : ""}: ${ahead.length} of ${ranks.length} ranks seen wait in it for rank ${rankList(behind)}.`,
      ranks: ahead.map((r) => r.rank).sort((a, b) => a - b),
      processes: ahead.map((r) => r.processKey),
      comm_id: comm.key,
      evidence: lastOf(ahead).slice(0, 5),
      seq,
      ...(op ? { op } : {}),
    });
  }
  return out.concat(unresolvedMismatches(state));
}

/**
 * Excerpts without Init lines: COLL lines whose comm pointer cannot be tied to a commId. Pointers of
 * different processes with the same nranks are compared by opCount (same sequence on every rank):
 * different ops at one opCount is a mismatch.
 */
function unresolvedMismatches(state: TrackedState): Finding[] {
  const byNranks = new Map<number, { proc: ProcessState; ptr: string; cudaDev?: number; ops: Map<string, { op: string; where: string }> }[]>();
  for (const p of state.processes.values()) {
    for (const u of p.unresolved.values()) {
      if (u.nranks === undefined) continue;
      const list = byNranks.get(u.nranks) ?? [];
      list.push({ proc: p, ptr: u.ptr, cudaDev: u.cudaDev, ops: u.opsByOpCount });
      byNranks.set(u.nranks, list);
    }
  }
  const out: Finding[] = [];
  for (const [nranks, group] of byNranks) {
    if (group.length < 2) continue;
    const first = group[0];
    if (!first) continue;
    for (const [opCount, a] of first.ops) {
      const other = group.slice(1).find((g) => {
        const b = g.ops.get(opCount);
        return b !== undefined && b.op !== a.op;
      });
      const b = other?.ops.get(opCount);
      if (!other || !b) continue;
      const who = (g: typeof first): string => `${g.proc.key}${g.cudaDev !== undefined ? ` (cudaDev ${g.cudaDev})` : ""}`;
      out.push({
        kind: "collective_mismatch",
        severity: "critical",
        summary:
          `Collective mismatch at opCount 0x${opCount} of a ${nranks}-rank communicator: ${who(first)} issued ${a.op}, ${who(other)} issued ${b.op}. ` +
          `(No Init lines in these logs, so ranks are named by process.)`,
        ranks: [],
        processes: [first.proc.key, other.proc.key],
        comm_id: null,
        evidence: [a.where, b.where],
        op_count: opCount,
        op: a.op,
        other_op: b.op,
      });
      break;
    }
  }
  return out;
}
