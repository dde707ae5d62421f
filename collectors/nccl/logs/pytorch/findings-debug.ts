/**
 * Findings from PyTorch's TORCH_DISTRIBUTED_DEBUG=DETAIL fingerprint mismatches and monitoredBarrier
 * failures (parse/pytorch-debug.ts). A mismatch names the two ranks and what differs: the sequence
 * number (the lower rank is behind: it skipped or has not reached a collective), the op, the tensor
 * shape or the dtype. A rank that fails monitoredBarrier never reached the barrier: it is behind,
 * and the job hangs there.
 */
import type { PtFingerprint } from "./types.js";
import type { PytorchLog } from "./log.js";
import { rankList, uniq, type Finding } from "../../verdict/report.js";

const fpText = (f: PtFingerprint | undefined): string =>
  f === undefined ? "?" : [f.seq !== undefined ? `#${f.seq}` : undefined, f.op, f.shape !== undefined ? `shape [${f.shape}]` : undefined, f.dtype].filter((x) => x !== undefined).join(" ");

export function pytorchDebugFindings(t: Pick<PytorchLog, "debug" | "running">): Finding[] {
  const out: Finding[] = [];
  const seen = new Set<string>();
  for (const ev of t.debug) {
    if (ev.kind === "pt_mismatch") {
      const { rankA: a, rankB: b } = ev;
      const key = `m|${a ?? "?"}|${b ?? "?"}|${fpText(ev.a)}|${fpText(ev.b)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const ranks = [a, b].filter((r): r is number => r !== undefined);
      const diffs: string[] = [];
      const A = ev.a ?? {};
      const B = ev.b ?? {};
      if (A.seq !== undefined && B.seq !== undefined && A.seq !== B.seq) diffs.push(`sequence number ${A.seq} vs ${B.seq}`);
      if (A.op !== undefined && B.op !== undefined && A.op !== B.op) diffs.push(`op ${A.op} vs ${B.op}`);
      if (A.shape !== undefined && B.shape !== undefined && A.shape !== B.shape) diffs.push(`tensor shape [${A.shape}] vs [${B.shape}]`);
      if (A.dtype !== undefined && B.dtype !== undefined && A.dtype !== B.dtype) diffs.push(`dtype ${A.dtype} vs ${B.dtype}`);
      const what = diffs.length > 0 ? diffs.join(", ") : "the rest of the line was cut";
      out.push({
        kind: "collective_mismatch",
        severity: "critical",
        summary: `PyTorch (TORCH_DISTRIBUTED_DEBUG=DETAIL) found the ranks running different collectives: rank ${a ?? "?"} runs ${fpText(ev.a)}, rank ${b ?? "?"} runs ${fpText(ev.b)} (${what}). Their code diverged: a collective in a data-dependent branch, or tensors of different sizes.`,
        ranks,
        processes: [],
        comm_id: null,
        evidence: [ev.where],
        ...(A.seq !== undefined ? { seq: A.seq } : {}),
        ...(A.op !== undefined ? { op: A.op } : {}),
        ...(B.op !== undefined && B.op !== A.op ? { other_op: B.op } : {}),
      });
      if (A.seq !== undefined && B.seq !== undefined && A.seq !== B.seq && a !== undefined && b !== undefined) {
        const [lo, hi, loSeq, hiSeq] = A.seq < B.seq ? [a, b, A.seq, B.seq] : [b, a, B.seq, A.seq];
        out.push({
          kind: "rank_behind",
          severity: "critical",
          summary: `Rank ${lo} is at collective #${loSeq} while rank ${hi} is at #${hiSeq}: rank ${lo} skipped a collective or has not reached it. Look at rank ${lo}'s code path (py-spy dump its process).`,
          ranks: [lo],
          processes: [],
          comm_id: null,
          evidence: [ev.where],
          seq: loSeq + 1,
        });
      }
    } else if (ev.form === "errors") {
      const key = `e|${ev.ranks.join(",")}|${ev.reporter ?? "?"}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({
        kind: "hang_suspected",
        severity: "critical",
        summary:
          `Rank ${rankList(ev.ranks)} failed or died: ${ev.reporter !== undefined ? `rank ${ev.reporter}` : "a rank"} reached monitoredBarrier but got errors waiting for it. ` +
          `The job stops there; rank ${rankList(ev.ranks)}'s own log has the first error.`,
        ranks: uniq([...ev.ranks, ...(ev.reporter !== undefined ? [ev.reporter] : [])]),
        processes: [],
        comm_id: null,
        evidence: [ev.where],
      });
    } else {
      const key = `b|${ev.ranks.join(",")}|${ev.reporter ?? "?"}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const by = ev.reporter !== undefined ? ` (rank ${ev.reporter} waited${ev.timeoutMs !== undefined ? ` ${ev.timeoutMs} ms` : ""})` : "";
      out.push({
        kind: "rank_behind",
        severity: "critical",
        summary: `Rank ${rankList(ev.ranks)} failed to pass monitoredBarrier${by}: ${ev.ranks.length === 1 ? "it" : "they"} never reached the barrier the others wait at. Look at what ${ev.ranks.length === 1 ? "that rank does" : "those ranks do"} before it (py-spy dump).`,
        ranks: [...ev.ranks].sort((x, y) => x - y),
        processes: [],
        comm_id: null,
        evidence: [ev.where],
      });
      out.push({
        kind: "hang_suspected",
        severity: "critical",
        summary: `The job hangs at a monitoredBarrier: every rank but ${rankList(ev.ranks)} reached it.`,
        ranks: ev.reporter !== undefined ? [ev.reporter] : [],
        processes: [],
        comm_id: null,
        evidence: [ev.where],
      });
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
  const behind = last.filter(([, r]) => r.fp.seq === min).map(([rank]) => rank).sort((a, b) => a - b);
  const ahead = last.filter(([, r]) => r.fp.seq === max).map(([rank]) => rank).sort((a, b) => a - b);
  const op = last.find(([, r]) => r.fp.seq === max)?.[1].fp.op;
  return {
    kind: "rank_behind",
    severity: "warning",
    summary:
      `Where the log stops, rank ${rankList(behind)} last ran collective #${min} while ${ahead.length === 1 ? "rank" : "ranks"} ${rankList(ahead)} already ran #${max}${op ? ` (${op})` : ""} (TORCH_DISTRIBUTED_DEBUG=DETAIL): ` +
      `if the job hung here, rank ${rankList(behind)} never reached #${min + 1} and the others wait for it (py-spy dump its process).`,
    ranks: behind,
    processes: [],
    comm_id: null,
    evidence: last.filter(([, r]) => r.fp.seq === min || r.fp.seq === max).map(([, r]) => r.where).slice(0, 5),
    seq: min + 1,
    ...(op !== undefined ? { op } : {}),
  };
}
