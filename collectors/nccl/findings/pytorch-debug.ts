/**
 * Findings from PyTorch's TORCH_DISTRIBUTED_DEBUG=DETAIL fingerprint mismatches and monitoredBarrier
 * failures (parse/pytorch-debug.ts). A mismatch names the two ranks and what differs: the sequence
 * number (the lower rank is behind: it skipped or has not reached a collective), the op, the tensor
 * shape or the dtype. A rank that fails monitoredBarrier never reached the barrier: it is behind,
 * and the job hangs there.
 */
import type { PtFingerprint } from "../parse/types-pytorch.js";
import type { Tracker } from "../state/tracker.js";
import { rankList, type Finding } from "./report.js";

const fpText = (f: PtFingerprint | undefined): string =>
  f === undefined ? "?" : [f.seq !== undefined ? `#${f.seq}` : undefined, f.op, f.shape !== undefined ? `shape [${f.shape}]` : undefined, f.dtype].filter((x) => x !== undefined).join(" ");

export function pytorchDebugFindings(t: Tracker): Finding[] {
  const out: Finding[] = [];
  const seen = new Set<string>();
  for (const ev of t.ptDebug) {
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
  return out;
}
