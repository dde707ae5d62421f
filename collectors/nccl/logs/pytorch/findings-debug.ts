/**
 * Findings from PyTorch's TORCH_DISTRIBUTED_DEBUG=DETAIL fingerprint mismatches and monitoredBarrier
 * failures (parse/pytorch-debug.ts). A mismatch names the two ranks and what differs: the sequence
 * number (the lower rank is behind: it skipped or has not reached a collective), the op, the tensor
 * shape or the dtype. The second fingerprint may be the decoded length check (decodedLength): then
 * it says nothing of that rank's sequence number or op. A rank that fails monitoredBarrier never reached the barrier: it is behind,
 * and the job hangs there.
 */
import type { PytorchLog } from "./log.js";
import type { PtFingerprint } from "./types.js";
import { uniq, type Finding } from "../../verdict/report.js";
import { collectiveMismatch, hangSuspected, rankBehind } from "../../verdict/finding.js";
import { collectiveMismatchWords, fingerprintText, hangSuspectedWords, rankBehindWords } from "../../verdict/words.js";

/**
 * Whether the second fingerprint of a mismatch is PyTorch's decoding of the other rank's length
 * check rather than its collective (ProcessGroupWrapper.cpp: CollectiveFingerPrint::verify first
 * allgathers the length of each rank's serialized fingerprint; when the lengths differ,
 * deserialize_fingerprint reads the one-element length tensor as a fingerprint: OpType = the
 * length, SequenceNumber = 0, no tensors, printed `SequenceNumber=0OpType=X`). The lengths are equal
 * only when both sides have no tensors and the same op, so a tensorless `SequenceNumber=0` beside a
 * fingerprint with tensors, or beside a tensorless one of another op, says neither the other rank's
 * sequence number nor its op: no evidence that it is behind.
 */
export function decodedLength(a: PtFingerprint | undefined, b: PtFingerprint | undefined): boolean {
  if (b?.seq !== 0 || b.tensors !== false || a === undefined) return false;
  return a.tensors === true || (a.tensors === false && a.op !== undefined && b.op !== undefined && a.op !== b.op);
}

/**
 * Whether two ranks' sequence numbers at the first mismatch DETAIL reports show one of them behind.
 * The wrapper compares the ranks' fingerprints at every collective, so they agreed one collective
 * before: a rank that skipped a collective, or has not reached it, is exactly one behind. Numbers
 * further apart counted apart before the check: point-to-point sends and receives, which the
 * wrapper does not compare, advance a rank's number alone (nccl-pasted 262, SGLang: BARRIER 17 vs
 * 45), and Gloo before PyTorch 2.1 started each group at a random number (pytorch/pytorch#101422:
 * 1977865401 vs 54090078, reported at a healthy job's first broadcast). Those name no rank behind.
 */
function oneBehind(a: number, b: number): boolean {
  return Math.abs(a - b) === 1;
}

export function pytorchDebugFindings(t: Pick<PytorchLog, "debug" | "running">): Finding[] {
  const out: Finding[] = [];
  const seen = new Set<string>();
  for (const ev of t.debug) {
    if (ev.kind === "pt_mismatch") {
      const { rankA: a, rankB: b } = ev;
      const key = `m|${a ?? "?"}|${b ?? "?"}|${fingerprintText(ev.a)}|${fingerprintText(ev.b)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const ranks = [a, b].filter((r): r is number => r !== undefined);
      const A = ev.a ?? {};
      const B = ev.b ?? {};
      const lengthOnly = decodedLength(ev.a, ev.b);
      out.push(
        collectiveMismatch({
          summary: collectiveMismatchWords.detail({ rankA: a, a: ev.a, rankB: b, b: ev.b }),
          ranks,
          processes: [],
          comm_id: null,
          evidence: [ev.where],
          ...(A.seq !== undefined ? { seq: A.seq } : {}),
          ...(A.op !== undefined ? { op: A.op } : {}),
          ...(B.op !== undefined && B.op !== A.op && !lengthOnly ? { other_op: B.op } : {}),
        }),
      );
      if (!lengthOnly && A.seq !== undefined && B.seq !== undefined && oneBehind(A.seq, B.seq) && a !== undefined && b !== undefined) {
        const [lo, hi, loSeq, hiSeq] = A.seq < B.seq ? [a, b, A.seq, B.seq] : [b, a, B.seq, A.seq];
        out.push(
          rankBehind({
            summary: rankBehindWords.detailSeq({ rank: lo, seq: loSeq, other: hi, otherSeq: hiSeq }),
            ranks: [lo],
            processes: [],
            comm_id: null,
            evidence: [ev.where],
            seq: loSeq + 1,
          }),
        );
      }
    } else if (ev.form === "errors") {
      const key = `e|${ev.ranks.join(",")}|${ev.reporter ?? "?"}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(
        hangSuspected({
          summary: hangSuspectedWords.barrierErrors({ ranks: ev.ranks, reporter: ev.reporter }),
          ranks: uniq([...ev.ranks, ...(ev.reporter !== undefined ? [ev.reporter] : [])]),
          processes: [],
          comm_id: null,
          evidence: [ev.where],
        }),
      );
    } else {
      const key = `b|${ev.ranks.join(",")}|${ev.reporter ?? "?"}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(
        rankBehind({
          summary: rankBehindWords.monitoredBarrier({ ranks: ev.ranks, reporter: ev.reporter, timeoutMs: ev.timeoutMs }),
          ranks: [...ev.ranks].sort((x, y) => x - y),
          processes: [],
          comm_id: null,
          evidence: [ev.where],
        }),
      );
      out.push(
        hangSuspected({
          summary: hangSuspectedWords.barrier({ ranks: ev.ranks }),
          ranks: ev.reporter !== undefined ? [ev.reporter] : [],
          processes: [],
          comm_id: null,
          evidence: [ev.where],
        }),
      );
    }
  }
  const behind = runningBehind(t);
  if (behind !== undefined) out.push(behind);
  return out;
}

/**
 * The last `Running collective` of each rank (DETAIL logs every collective): where the log stops,
 * the ranks at a lower sequence number have not reached the collective the others run. Ranks one
 * collective apart are normal while the job runs; at the end of a log of a job that stopped, the
 * lowest are the ones behind.
 */
function runningBehind(t: Pick<PytorchLog, "running">): Finding | undefined {
  const last = [...t.running].filter(([, r]) => r.fp.seq !== undefined);
  if (last.length < 2) return undefined;
  const seqs = last.map(([, r]) => r.fp.seq as number);
  const min = Math.min(...seqs);
  const max = Math.max(...seqs);
  if (min === max) return undefined;
  const behind = last
    .filter(([, r]) => r.fp.seq === min)
    .map(([rank]) => rank)
    .sort((a, b) => a - b);
  const ahead = last
    .filter(([, r]) => r.fp.seq === max)
    .map(([rank]) => rank)
    .sort((a, b) => a - b);
  const op = last.find(([, r]) => r.fp.seq === max)?.[1].fp.op;
  // A guess (the job may have gone on): a warning.
  return rankBehind({
    severity: "warning",
    summary: rankBehindWords.detailRunning({ behind, seq: min, ahead, aheadSeq: max, op }),
    ranks: behind,
    // The ranks that ran the next collective already: if the job hung here, they wait in it.
    waiting_ranks: ahead,
    processes: [],
    comm_id: null,
    evidence: last
      .filter(([, r]) => r.fp.seq === min || r.fp.seq === max)
      .map(([, r]) => r.where)
      .slice(0, 5),
    seq: min + 1,
    ...(op !== undefined ? { op } : {}),
  });
}
