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
import { ncclError, networkError } from "../../verdict/finding.js";
import { ncclErrorWords, networkErrorWords, pytorchErrorText } from "../../verdict/words.js";
import { resultOfWords } from "../findings/retcode.js";
import { classifyWarn } from "../parse/warn.js";
import type { WarnDetail } from "../parse/event-base.js";

type PtError = PtErrorRecord;

const REMOTE = ["ncclRemoteError", "remote process exited or there was a network error"];

function oneRank(rank: string, es: readonly PtError[]): Finding {
  const texts = uniq(es.map((e) => pytorchErrorText(e.what, e.text)).filter((x) => x !== ""));
  const peer = es.find((e) => e.peer)?.peer;
  const remote = peer !== undefined || es.some((e) => e.text !== undefined && REMOTE.some((r) => e.text?.includes(r)));
  const cuda = es.find((e) => e.what === "watchdog_exception" && e.text?.startsWith("CUDA error") === true);
  const pg = es.find((e) => e.pgLabel !== undefined)?.pgLabel;
  const work = es.find((e) => e.seq !== undefined);
  const where = { rank: rank !== "?" ? rank : undefined, group: pg };
  const summary =
    cuda !== undefined
      ? ncclErrorWords.pytorchCuda({ ...where, error: cuda.text ?? "" })
      : remote
        ? networkErrorWords.pytorch({ ...where, texts, peer })
        : ncclErrorWords.pytorch({ ...where, texts, seq: work?.seq, op: work?.op, by: es.some((e) => e.by === "xla") ? "XLA" : "PyTorch" });
  const build = remote && cuda === undefined ? networkError : ncclError;
  return build({
    summary,
    ranks: rank !== "?" ? [Number(rank)] : sharedGpuRanks(es),
    processes: uniq(es.map((e) => e.processKey).filter((p): p is string => p !== undefined)),
    comm_id: null,
    evidence: es.map((e) => e.where).slice(0, 5),
    ...(peer ? { peer } : {}),
    ...(pg !== undefined ? { process_group: pg } : {}),
    ...(work?.seq !== undefined ? { seq: work.seq } : {}),
    ...(work?.op !== undefined ? { op: work.op } : {}),
  });
}

/**
 * Lines of no rank whose last error is NCCL's `Duplicate GPU detected : rank 3 and rank 0 both on
 * CUDA device f000` (nccl-pasted 395, Megatron's interleaved tracebacks): the ranks it names.
 */
function sharedGpuRanks(es: readonly PtError[]): number[] {
  const out = new Set<number>();
  for (const e of es) {
    const t = e.text ?? "";
    const k = t.indexOf("Duplicate GPU detected");
    if (k < 0) continue;
    // The WARN's own reader (warn-kinds.ts, invalid_usage): NCCL's rank first, then the other one on its GPU.
    const d: WarnDetail = { warnKind: "other" };
    classifyWarn(t, k, t.length, d);
    for (const r of [d.selfRank, d.sharedGpuRank]) if (r !== undefined) out.add(r);
  }
  return [...out].sort((x, y) => x - y);
}

/** `Some NCCL operations have failed or timed out` and `we are taking the entire process down`: what follows any failure the watchdog saw. */
export const AFTERMATH: ReadonlySet<string> = new Set(["ops_failed", "taking_down"]);

/**
 * `timedOut`: the logs hold a watchdog timeout (a `Watchdog caught collective operation timeout`
 * line, or a status line naming the work that failed). Then a rank whose only error lines are the
 * aftermath (ProcessGroupNCCL prints them after the timeout it handles) has no NCCL error of its own.
 */
export function pytorchErrorFindings(t: Pick<PytorchLog, "errors">, timedOut = false): Finding[] {
  return [...errorsByRank(t)].filter(([, es]) => !timedOut || es.some((e) => !AFTERMATH.has(e.what))).map(([rank, es]) => oneRank(rank, es));
}

function errorsByRank(t: Pick<PytorchLog, "errors">): Map<string, PtError[]> {
  const byRank = new Map<string, PtError[]>();
  for (const e of t.errors) byRank.set(String(e.rank ?? "?"), [...(byRank.get(String(e.rank ?? "?")) ?? []), e]);
  return byRank;
}

/** The ranks whose only error lines are the aftermath of a failure their watchdog saw, with those lines. */
export function aftermathOnly(t: Pick<PytorchLog, "errors">): { rank: number; where: string[] }[] {
  return [...errorsByRank(t)]
    .filter(([rank, es]) => rank !== "?" && es.every((e) => AFTERMATH.has(e.what)))
    .map(([rank, es]) => ({ rank: Number(rank), where: es.map((e) => e.where) }));
}

/**
 * The NCCL results PyTorch's NCCL error lines say the job's NCCL calls returned (`NCCL error in:
 * ..., unhandled cuda error, NCCL version ...`, also as a DistBackendError); not the watchdog's
 * exceptions or `Last error:` rows, whose words (a CUDA `invalid argument`) are no NCCL result.
 */
export function reportedResults(t: Pick<PytorchLog, "errors">): Set<number> {
  const out = new Set<number>();
  for (const e of t.errors) {
    if (e.what !== "nccl_error" && e.what !== "dist_backend_error") continue;
    const code = e.text !== undefined ? resultOfWords(e.text) : undefined;
    if (code !== undefined) out.add(code);
  }
  return out;
}
