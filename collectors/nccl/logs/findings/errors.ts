/**
 * Offline findings from NCCL's failure lines: network errors (by the peer they point at), size
 * mismatches (a collective_mismatch and the nccl_error of the process that hit it), other NCCL
 * errors, and error-return chains with no WARN to tell. One nccl_error per process and message; a
 * process's return-code chain is told in the first finding that names the process, and a chain
 * alone makes one nccl_error per process. A network error next to a CUDA failure of another
 * process of the same host names that failure as the likely root cause.
 */
import type { TrackedState } from "../detect/verdict.js";
import type { ProcessState, RetcodeChain, WarningRecord } from "../state/model.js";
import { ranksOf, who } from "./procs.js";
import { type Finding, uniq } from "../../verdict/report.js";
import { chainText, isFailure } from "./retcode.js";

const NETWORK_KINDS = new Set(["connection_reset", "connection_closed", "connect_failed", "ib_completion_error", "net_completion_error"]);
const ERROR_KINDS = new Set(["internal_error", "system_error", "bootstrap_error", "timeout", "cuda_error", "net_plugin_error"]);
const MAX_ERRORS = 10;

/** IB work-completion status numbers (ibv_wc_status) that come up in NCCL reports. */
const IB_STATUS: Record<number, string> = {
  4: "local protection error",
  5: "work request flushed (the QP went to error state earlier)",
  10: "remote access error",
  12: "transport retry counter exceeded: the peer stopped answering (link down, peer crashed, or a fabric problem)",
  13: "RNR retry counter exceeded",
};

interface Item {
  w: WarningRecord;
  p?: ProcessState;
}

/** Tells each process's chain once: in the first finding that names the process. */
class Chains {
  private readonly told = new Set<string>();

  /** ` NCCL returned ...` for p, preferring a chain right after one of `wheres`; "" when none or already told. */
  tell(p: ProcessState | undefined, wheres: readonly string[]): string {
    if (!p || this.told.has(p.key)) return "";
    const after = p.chains.filter((c) => c.afterWarn !== undefined && wheres.includes(c.afterWarn));
    const c = longest(after.length > 0 ? after : p.chains.filter(isFailure));
    if (!c) return "";
    this.told.add(p.key);
    return ` NCCL returned ${chainText(c)}.`;
  }

  has(key: string): boolean {
    return this.told.has(key);
  }

  claim(key: string): void {
    this.told.add(key);
  }
}

function longest(cs: readonly RetcodeChain[]): RetcodeChain | undefined {
  return cs.reduce<RetcodeChain | undefined>((a, c) => (a === undefined || c.frameCount > a.frameCount ? c : a), undefined);
}

function peerText(w: WarningRecord): string {
  return w.peer === undefined ? "" : `${w.peer}${w.peerPort !== undefined ? `<${w.peerPort}>` : ""}`;
}

export function errorFindings(state: TrackedState, orphans: readonly WarningRecord[]): Finding[] {
  const procs = [...state.processes.values()];
  const all: Item[] = [...procs.flatMap((p) => p.warnings.map((w) => ({ w, p }))), ...orphans.map((w) => ({ w }))];
  const chains = new Chains();
  return [
    ...networkFindings(state, all, chains),
    ...sizeMismatchFindings(state, all, chains),
    ...warnErrorFindings(state, all, chains),
    ...chainFindings(state, procs, chains),
  ];
}

/** Network errors, grouped by the peer they point at. */
function networkFindings(state: TrackedState, all: readonly Item[], chains: Chains): Finding[] {
  const byPeer = new Map<string, Item[]>();
  for (const x of all) {
    if (!NETWORK_KINDS.has(x.w.kind)) continue;
    const k = x.w.peer ?? "";
    byPeer.set(k, [...(byPeer.get(k) ?? []), x]);
  }
  const cuda = all.filter((x) => x.w.kind === "cuda_error" && x.p !== undefined);
  const out: Finding[] = [];
  for (const [peer, list] of byPeer) {
    const first = list[0]?.w;
    if (!first) continue;
    const procs = uniq(list.map((x) => x.p).filter((p): p is ProcessState => p !== undefined));
    const seenBy = uniq(list.map((x) => (x.p ? who(x.p.key, x.w.cudaDev) : x.w.rank !== undefined ? `rank ${x.w.rank}` : undefined)).filter((s): s is string => s !== undefined));
    const kinds = uniq(list.map((x) => x.w.kind)).join(", ");
    const ib = list.find((x) => x.w.ibStatus !== undefined)?.w;
    const ibText = ib ? ` IB completion status ${ib.ibStatus}${ib.vendorErr !== undefined ? ` vendor err ${ib.vendorErr}` : ""}${IB_STATUS[ib.ibStatus ?? -1] ? `: ${IB_STATUS[ib.ibStatus ?? -1]}` : ""}.` : "";
    const said = list.find((x) => x.w.error !== undefined)?.w;
    const errText = said ? ` The ${said.kind === "net_completion_error" ? "net plugin" : "system"} said: ${said.error}${said.rc !== undefined ? ` (RC ${said.rc}${said.rc === 113 ? ", no route to host" : ""})` : ""}.` : "";
    const chainTexts = list.map((x) => chains.tell(x.p, list.map((y) => y.w.where))).join("");
    // A CUDA failure of another process on the same host (or on the peer itself) comes first.
    const hosts = new Set(procs.map((p) => p.host));
    const root = cuda.find((c) => c.p && !procs.includes(c.p) && (hosts.has(c.p.host) || c.p.host === peer));
    const rootText = root?.p ? `Likely fallout of the CUDA failure on ${who(root.p.key, root.w.cudaDev)} ("${root.w.message}"), ${hosts.has(root.p.host) ? "a process of the same host" : "the peer"}: ` : "";
    const where = seenBy.length > 0 ? ` on ${seenBy.slice(0, 4).join(", ")}` : "";
    const head = peer !== "" ? `Network error${list.length > 1 ? "s" : ""} at peer ${peerText(first)}${where}` : `Network error${list.length > 1 ? "s" : ""}${where}`;
    out.push({
      kind: "network_error",
      severity: "critical",
      summary:
        `${rootText}${head}: ${kinds} (${list.length} line${list.length > 1 ? "s" : ""}).${ibText}${errText}${chainTexts} ` +
        (root?.p ? `Fix the GPU failure of ${root.p.key} first.` : `Check that node's processes, its HCA port (ringwatch_infiniband_*) and the link between.`),
      ranks: uniq([...ranksOf(state, procs), ...list.map((x) => (x.p ? undefined : x.w.rank)).filter((r): r is number => r !== undefined)]).sort((a, b) => a - b),
      processes: procs.map((p) => p.key),
      comm_id: null,
      evidence: list.map((x) => x.w.where).slice(0, 5),
      ...(peer !== "" ? { peer } : {}),
      count: list.length,
    });
  }
  return out;
}

/** How many bytes, in words: `65536 bytes`. */
function bytes(n: number | undefined): string {
  return n === undefined ? "an unknown size" : `${n} bytes`;
}

/**
 * A size mismatch on a data connection: the ranks issued different collectives or sizes
 * (collective_mismatch), and the process that hit it failed (nccl_error), one pair per process and peer.
 */
function sizeMismatchFindings(state: TrackedState, all: readonly Item[], chains: Chains): Finding[] {
  const seen = new Set<string>();
  const out: Finding[] = [];
  for (const { w, p } of all) {
    if (w.sizeMismatch !== "data") continue;
    const key = `${p?.key ?? ""}|${w.peer ?? ""}`;
    if (seen.has(key) || seen.size >= MAX_ERRORS) continue;
    seen.add(key);
    const here = p ? who(p.key, w.cudaDev) : "the logging process (no host:pid in the line)";
    const peer = w.peer !== undefined ? `peer ${peerText(w)}` : "its peer";
    const ib = w.message.startsWith("NET/IB");
    const net = ib ? "NET/IB" : w.message.startsWith("NET/Socket") ? "NET/Socket" : "the network transport";
    const known = w.localSize !== undefined && w.remoteSize !== undefined;
    const sizes = !known
      ? `a message from ${peer} did not fit what ${here} posted`
      : ib
        ? `${here} sent ${bytes(w.localSize)} where ${peer} had posted ${bytes(w.remoteSize)}`
        : `${peer} sent ${bytes(w.remoteSize)} where ${here} had posted ${bytes(w.localSize)}`;
    const sizesShort = known ? ` (${bytes(w.localSize)} here, ${bytes(w.remoteSize)} from the peer)` : "";
    const procs = p ? [p] : [];
    const ranks = p ? ranksOf(state, procs) : w.rank !== undefined ? [w.rank] : [];
    out.push({
      kind: "collective_mismatch",
      severity: "critical",
      summary:
        `The ranks issued different collectives or sizes: ${sizes} (${net}). ` +
        `Compare the collective calls (op, count, datatype) of the two ranks before this point, and check that NCCL_PROTO / NCCL_ALGO and the NCCL version are the same on every rank.`,
      ranks,
      processes: procs.map((x) => x.key),
      comm_id: null,
      evidence: [w.where],
      ...(w.peer !== undefined ? { peer: w.peer } : {}),
    });
    out.push({
      kind: "nccl_error",
      severity: "critical",
      summary: `NCCL failed on ${here}: ${net} size mismatch with ${peer}${sizesShort}, "${w.message.slice(0, 160)}".${chains.tell(p, [w.where])} The cause is the collective_mismatch above.`,
      ranks,
      processes: procs.map((x) => x.key),
      comm_id: null,
      evidence: [w.where],
      ...(w.peer !== undefined ? { peer: w.peer } : {}),
    });
  }
  return out;
}

function errorSummary(w: WarningRecord, p: ProcessState | undefined, chainText: string): string {
  const here = p ? who(p.key, w.cudaDev) : "the logging process (no host:pid in the line)";
  if (w.kind === "cuda_error") {
    return `A CUDA call inside NCCL failed on ${here}: "${w.message}". This process's GPU is the root cause (${/memory/i.test(w.message) ? "memory exhausted: another process on the GPU, or the job's own allocations" : "a fault or a wrong build"}); network errors of its peers follow from it.${chainText}`;
  }
  if (w.sizeMismatch === "bootstrap") {
    return `NCCL's bootstrap failed on ${here}: a setup message of ${bytes(w.remoteSize)} arrived where ${bytes(w.localSize)} were expected, so the ranks disagree on the setup exchange (different NCCL versions, mismatched init calls, or two jobs on one NCCL_COMM_ID / port).${chainText}`;
  }
  if (w.kind === "net_plugin_error") {
    return `The net plugin failed to initialize on ${here}: "${w.message}".${chainText} NCCL goes on with another network, often NET/Socket (see socket_transport); check the plugin's libraries and devices (EFA, libfabric) in the job's container.`;
  }
  return `NCCL ${w.kind.replace("_", " ")} on ${here}: "${w.message}".${chainText}`;
}

/** Other NCCL errors and NCCL's own mismatch detection (`Mismatched collective detected ... rank 39`). */
function warnErrorFindings(state: TrackedState, all: readonly Item[], chains: Chains): Finding[] {
  // One finding per process and message: a failure NCCL repeats on every call is one failure.
  const errors = new Map<string, Item & { wheres: string[] }>();
  for (const x of all) {
    if (x.w.sizeMismatch === "data" || (!ERROR_KINDS.has(x.w.kind) && x.w.kind !== "collective_mismatch")) continue;
    // A plugin's failed init says so in several WARNs (endpoint, plugin, NCCL's net init): one failure.
    const key = `${x.p?.key ?? ""}|${x.w.kind}|${x.w.kind === "net_plugin_error" ? "" : x.w.message}`;
    const e = errors.get(key);
    if (e) e.wheres.push(x.w.where);
    else if (errors.size < MAX_ERRORS) errors.set(key, { ...x, wheres: [x.w.where] });
  }
  const out: Finding[] = [];
  for (const { w, p, wheres } of errors.values()) {
    const mismatch = w.kind === "collective_mismatch";
    out.push({
      kind: mismatch ? "collective_mismatch" : "nccl_error",
      severity: "critical",
      summary: mismatch
        ? `NCCL detected mismatched collectives${w.mismatchRank !== undefined ? ` at and around rank ${w.mismatchRank}` : ""}: "${w.message}". The ranks' code issued different collectives (or sizes); look at the collective calls of rank ${w.mismatchRank ?? "?"} and its neighbours.`
        : errorSummary(w, p, chains.tell(p, wheres)),
      ranks: w.mismatchRank !== undefined ? [w.mismatchRank] : p ? ranksOf(state, [p]) : w.rank !== undefined ? [w.rank] : [],
      processes: p ? [p.key] : [],
      comm_id: null,
      evidence: wheres.slice(0, 5),
      ...(wheres.length > 1 ? { count: wheres.length } : {}),
    });
  }
  return out;
}

/** Processes whose chain shows a failure that no finding above told: one nccl_error each. */
function chainFindings(state: TrackedState, procs: readonly ProcessState[], chains: Chains): Finding[] {
  const out: Finding[] = [];
  for (const p of procs) {
    if (chains.has(p.key)) continue;
    const failed = p.chains.filter(isFailure);
    const c = longest(failed);
    if (!c) continue;
    chains.claim(p.key);
    const warn = c.afterWarn !== undefined ? p.warnings.find((w) => w.where === c.afterWarn) : undefined;
    const why = warn ? ` after WARN "${warn.message}"` : "; no WARN line in the excerpt says why (look earlier in this process's log, or run with NCCL_DEBUG=INFO)";
    out.push({
      kind: "nccl_error",
      severity: "critical",
      summary: `NCCL failed on ${who(p.key, c.cudaDev ?? warn?.cudaDev)}: ${chainText(c)}${why}.`,
      ranks: ranksOf(state, [p]),
      processes: [p.key],
      comm_id: null,
      evidence: uniq([...(warn ? [warn.where] : []), c.firstWhere, c.lastWhere, ...failed.filter((x) => x !== c).map((x) => x.firstWhere)]).slice(0, 5),
      ...(failed.length > 1 ? { count: failed.length } : {}),
    });
  }
  return out;
}
