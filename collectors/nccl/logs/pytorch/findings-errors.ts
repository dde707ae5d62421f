/**
 * PyTorch's error lines, one finding per rank (they come in bursts: DistBackendError, its reason,
 * the NCCL error name, `Last error:` and the error on the next row). The kind says where to look:
 * - network_error: ncclRemoteError, "remote process exited or there was a network error", or a
 *   last error that names a peer;
 * - nccl_error otherwise, and a watchdog thread that died on a CUDA error says so first: a GPU
 *   fault in that process (an illegal address, a kernel bug), not the network.
 */
import type { PtErrorRecord, PytorchLog } from "./log.js";
import { uniq, type Finding } from "../../verdict/report.js";

type PtError = PtErrorRecord;

const REMOTE = ["ncclRemoteError", "remote process exited or there was a network error"];

const textOf = (e: PtError): string =>
  e.what === "last_error" ? (e.text !== undefined ? `last error: ${e.text}` : "") : (e.text ?? e.what.replace(/_/g, " "));

function oneRank(rank: string, es: readonly PtError[]): Finding {
  const texts = uniq(es.map(textOf).filter((x) => x !== ""));
  const peer = es.find((e) => e.peer)?.peer;
  const remote = peer !== undefined || es.some((e) => e.text !== undefined && REMOTE.some((r) => e.text?.includes(r)));
  const cuda = es.find((e) => e.what === "watchdog_exception" && e.text?.startsWith("CUDA error") === true);
  const pg = es.find((e) => e.pgLabel !== undefined)?.pgLabel;
  const on = `${rank !== "?" ? ` on rank ${rank}` : ""}${pg !== undefined ? ` (${pg})` : ""}`;
  let summary: string;
  if (cuda !== undefined) {
    summary =
      `A CUDA error stopped PyTorch's NCCL watchdog${on}: ${cuda.text ?? ""}. The fault is on that rank's GPU (a kernel's bad memory access, or the GPU itself: look at the kernel log for an Xid), not in the network; ` +
      "the other ranks then wait for it. Rerun with CUDA_LAUNCH_BLOCKING=1 to find the kernel.";
  } else if (remote) {
    summary = `NCCL${on} lost a peer: ${texts.join("; ")}${peer ? ` (the last error points at peer ${peer})` : ""}. A remote process died or the network failed; the first rank to fail is the one to look at.`;
  } else {
    summary = `PyTorch reported an NCCL failure${on}: ${texts.join("; ")}.`;
  }
  return {
    kind: remote && cuda === undefined ? "network_error" : "nccl_error",
    severity: "critical",
    summary,
    ranks: rank !== "?" ? [Number(rank)] : [],
    processes: uniq(es.map((e) => e.processKey).filter((p): p is string => p !== undefined)),
    comm_id: null,
    evidence: es.map((e) => e.where).slice(0, 5),
    ...(peer ? { peer } : {}),
    ...(pg !== undefined ? { process_group: pg } : {}),
  };
}

export function pytorchErrorFindings(t: Pick<PytorchLog, "errors">): Finding[] {
  const byRank = new Map<string, PtError[]>();
  for (const e of t.errors) byRank.set(String(e.rank ?? "?"), [...(byRank.get(String(e.rank ?? "?")) ?? []), e]);
  return [...byRank].map(([rank, es]) => oneRank(rank, es));
}
