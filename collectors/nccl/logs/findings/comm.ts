/** Offline findings about communicators: who never entered collective #N, mismatched collectives, init that never completed (init.ts). */
import { lastCollWhere, sameCollective, type CommState, type ProcessState, type RankState } from "../state/model.js";
import type { TrackedState } from "../detect/verdict.js";
import { initFindings } from "./init.js";
import { ranksBehind } from "../detect/verdict.js";
import type { Finding } from "../../verdict/report.js";
import { collectiveMismatch, hangSuspected, rankBehind } from "../../verdict/finding.js";
import { collectiveMismatchWords, hangSuspectedWords, rankBehindWords } from "../../verdict/words.js";

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
      out.push(
        collectiveMismatch({
          summary: collectiveMismatchWords.logs({ comm: comm.key, seq: m.seq, rankA: m.rankA, opA: m.opA, rankB: m.rankB, opB: m.opB }),
          ranks: [m.rankA, m.rankB],
          processes: [comm.ranks.get(m.rankA)?.processKey, comm.ranks.get(m.rankB)?.processKey].filter((p): p is string => p !== undefined),
          comm_id: comm.key,
          evidence: [m.where].filter((w): w is string => w !== undefined),
          seq: m.seq,
          op: m.opA,
          other_op: m.opB,
        }),
      );
    }
    if (ranks.length < 2 || comm.maxCollectives < 1) continue;
    const behind = ranksBehind(ranks);
    if (behind.length === 0) continue;
    const ahead = ranks.filter((r) => !behind.includes(r.rank));
    const behindRanks = ranks.filter((r) => behind.includes(r.rank));
    // The collective the ranks ahead wait in: the first one a rank behind never entered (NCCL's
    // collective #N is the communicator's Nth COLL line, opCount N-1, which is PyTorch's SeqNum N
    // where each collective of the process group is one NCCL call); the ranks ahead may have
    // enqueued more after it (up to comm.maxCollectives).
    const seq = Math.min(...behindRanks.map((r) => r.collectives)) + 1;
    const op = opAt(comm, seq) ?? (seq === comm.maxCollectives ? ahead[0]?.lastOp : undefined);
    const lastOf = (rs: RankState[]): string[] => rs.map(lastCollWhere).filter((w): w is string => w !== undefined);
    const processes = behindRanks.map((r) => r.processKey);
    out.push(
      rankBehind({
        summary: rankBehindWords.logs({ comm: comm.key, behind, processes, ahead: ahead.map((r) => r.rank), seq, op, reached: comm.maxCollectives }),
        ranks: behind,
        processes,
        comm_id: comm.key,
        evidence: [...lastOf(behindRanks), ...lastOf(ahead).slice(0, 3)],
        seq,
        ...(op ? { op } : {}),
      }),
    );
    out.push(
      hangSuspected({
        summary: hangSuspectedWords.logs({ comm: comm.key, seq, op, waiting: ahead.length, seen: ranks.length, behind, reached: comm.maxCollectives }),
        ranks: ahead.map((r) => r.rank).sort((a, b) => a - b),
        processes: ahead.map((r) => r.processKey),
        comm_id: comm.key,
        evidence: lastOf(ahead).slice(0, 5),
        seq,
        ...(op ? { op } : {}),
      }),
    );
  }
  return out.concat(unresolvedMismatches(state), initFindings(state));
}

/**
 * Whether two comm pointers seen without Init lines can be ranks of one communicator: those of two
 * processes can; two of one process only where they drive different GPUs (ncclCommInitAll, one
 * process for all GPUs); two pointers of one process on the same GPU are two communicators.
 */
function mayShareComm(a: { proc: ProcessState; cudaDev?: number }, b: { proc: ProcessState; cudaDev?: number }): boolean {
  if (a.proc !== b.proc) return true;
  return a.cudaDev !== undefined && b.cudaDev !== undefined && a.cudaDev !== b.cudaDev;
}

/**
 * Excerpts without Init lines: COLL lines whose comm pointer cannot be tied to a commId. Pointers
 * with the same nranks that may be one communicator (mayShareComm) are compared by opCount (same
 * sequence on every rank): different collectives at one opCount is a mismatch (a Send facing a
 * Recv is the pair that matches, sameCollective).
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
        return b !== undefined && !sameCollective(b.op, a.op) && mayShareComm(first, g);
      });
      const b = other?.ops.get(opCount);
      if (!other || !b) continue;
      out.push(
        collectiveMismatch({
          summary: collectiveMismatchWords.unresolved({
            opCount,
            nranks,
            a: { process: first.proc.key, cudaDev: first.cudaDev, op: a.op },
            b: { process: other.proc.key, cudaDev: other.cudaDev, op: b.op },
          }),
          ranks: [],
          processes: [first.proc.key, other.proc.key],
          comm_id: null,
          evidence: [a.where, b.where],
          op_count: opCount,
          op: a.op,
          other_op: b.op,
        }),
      );
      break;
    }
  }
  return out;
}
