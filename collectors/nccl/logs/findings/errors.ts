/**
 * Offline findings from NCCL's failure lines: network errors (by the peer they point at; a queue
 * pair that could not connect, by the HCA port it names), the HCA's async events (hca_error,
 * hardware.ts ncclAsyncEventFindings), size
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
import { collectiveMismatch, ncclError, networkError } from "../../verdict/finding.js";
import { collectiveMismatchWords, ncclErrorWords, ncclReturned, networkErrorWords, peerAddress, type SizeMismatchFacts } from "../../verdict/words.js";
import { chainText, isFailure } from "./retcode.js";
import { ncclAsyncEventFindings } from "./hardware.js";
import { skippedDevice, unopenedHcaFindings } from "./unopened-hca.js";
import { ibQpDevice } from "../parse/warn.js";

const NETWORK_KINDS = new Set(["connection_reset", "connection_closed", "connect_failed", "ib_completion_error", "net_completion_error", "ib_qp_error"]);
/** The network errors of a socket (bootstrap, NET/Socket, the proxy's connections). */
const SOCKET_KINDS = new Set(["connection_reset", "connection_closed", "connect_failed"]);
const ERROR_KINDS = new Set(["internal_error", "system_error", "bootstrap_error", "timeout", "cuda_error", "net_plugin_error", "invalid_usage", "nvml_error"]);
const MAX_ERRORS = 10;

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
    return ncclReturned(chainText(c));
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

/**
 * `reported`: the results another source says an NCCL call of the job returned (PyTorch's `NCCL
 * error in: ..., unhandled cuda error`): a chain of that result right after a WARN is that failure,
 * however few frames the excerpt kept of it.
 */
export function errorFindings(state: TrackedState, orphans: readonly WarningRecord[], reported: ReadonlySet<number> = new Set()): Finding[] {
  const procs = [...state.processes.values()];
  const all: Item[] = [...procs.flatMap((p) => p.warnings.map((w) => ({ w, p }))), ...orphans.map((w) => ({ w }))];
  const chains = new Chains();
  const fallout = new Map<Finding, Fallout>();
  const network = networkFindings(state, all, chains, fallout);
  // A proxy's failed operation, or the failed call to it (`Proxy Call to rank 14 failed (Connect)`),
  // in a process with a network error is part of that error.
  const withNetworkError = new Set(network.flatMap((f) => f.processes));
  const proxyOfNetworkError = (x: Item): boolean =>
    x.p !== undefined && withNetworkError.has(x.p.key) && (proxyFailure(x.w.message) !== undefined || proxyCallFailed(x.w.message));
  return withFallout(
    [
      ...network,
      ...ncclAsyncEventFindings(
        state,
        all.filter((x) => x.w.kind === "ib_async_event"),
      ),
      ...sizeMismatchFindings(state, all, chains),
      ...unopenedHcaFindings(state, all),
      ...warnErrorFindings(state, all, chains, (x) => proxyOfNetworkError(x) || skippedDevice(x)),
      ...chainFindings(state, procs, chains, socketFailures(all), reported),
    ],
    fallout,
  );
}

/**
 * Network errors that followed a CUDA failure of another process of the same host (or of the peer)
 * are that failure's fallout: they join its nccl_error (their lines among its evidence), one
 * incident with its cause first, not a second critical finding.
 */
/** A network finding that is the fallout of a CUDA failure: the root's process, and the ranks of its own processes (not its peers'). */
interface Fallout {
  root: string;
  ownRanks: readonly number[];
}

function withFallout(findings: Finding[], fallout: ReadonlyMap<Finding, Fallout>): Finding[] {
  const out: Finding[] = [];
  const merged = new Set<Finding>();
  for (const [f, { root, ownRanks }] of fallout) {
    const i = findings.findIndex((c) => c.kind === "nccl_error" && c.processes.includes(root));
    const c = findings[i];
    if (c === undefined) continue;
    findings[i] = {
      ...c,
      // The root's own process: the ranks the network error named are its ranks.
      ranks: f.processes.length > 0 && f.processes.every((p) => c.processes.includes(p)) ? uniq([...c.ranks, ...ownRanks]).sort((a, b) => a - b) : c.ranks,
      summary: `${c.summary} ${networkErrorWords.fallout({ processes: f.processes, peer: f.peer })}`,
      evidence: uniq([...c.evidence, ...f.evidence]).slice(0, 8),
    };
    merged.add(f);
  }
  for (const f of findings) if (!merged.has(f)) out.push(f);
  return out;
}

/** The ranks of p, else the rank its proxy names as its own (`Failed to execute operation Connect from rank 10`: nccl-pasted 302). */
function ownRanks(state: TrackedState, p: ProcessState, w: WarningRecord): number[] {
  const ranks = ranksOf(state, [p]);
  if (ranks.length > 0) return ranks;
  const proxy = proxyFailure(w.message);
  if (proxy !== undefined) return [proxy];
  // The rank the line gives its own process (`Duplicate GPU detected : rank 2 and rank 0 ...`).
  return w.kind === "invalid_usage" && w.rank !== undefined ? [w.rank] : [];
}

/**
 * Whether a peer's address names this host: NCCL's header cuts the host name at its first dot, the
 * peer's address keeps its domain (`node.cm.cluster<40031>` is host `node`, nccl-pasted 377).
 */
function isHost(peer: string, host: string): boolean {
  if (peer === host) return true;
  const dot = peer.indexOf(".");
  return dot > 0 && peer.slice(0, dot) === host && !isDigitsAndDots(peer);
}

function isDigitsAndDots(s: string): boolean {
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k);
    if (c !== 46 && (c < 48 || c > 57)) return false;
  }
  return true;
}

/** Whether warning a was logged before b: by their lines in one log, else by their times where both have one. */
function before(a: WarningRecord, b: WarningRecord): boolean {
  const [fa, la] = splitWhere(a.where);
  const [fb, lb] = splitWhere(b.where);
  if (fa === fb) return la < lb;
  return a.atMs > 0 && b.atMs > 0 && a.atMs <= b.atMs;
}

/** `file:line` → [file, line]. */
function splitWhere(where: string): [string, number] {
  const c = where.lastIndexOf(":");
  return [where.slice(0, c), Number(where.slice(c + 1))];
}

/** `[Proxy Service 1] Failed to execute operation Connect from rank 1, retcode 2`: the rank (this process's) whose operation failed. */
function proxyFailure(message: string): number | undefined {
  const i = message.indexOf("Failed to execute operation");
  if (i < 0) return undefined;
  const r = message.indexOf(" from rank ", i);
  if (r < 0) return undefined;
  let n = 0;
  let j = r + 11;
  for (; j < message.length; j++) {
    const c = message.charCodeAt(j);
    if (c < 48 || c > 57) break;
    n = n * 10 + (c - 48);
  }
  return j > r + 11 ? n : undefined;
}

/** `Proxy Call to rank 14 failed (Connect)` (proxy.cc): this process's call to a proxy thread failed. */
function proxyCallFailed(message: string): boolean {
  return message.startsWith("Proxy Call to rank ") && message.indexOf(" failed", 19) > 0;
}

/**
 * Where a network error points: its peer; else, for a queue pair that could not connect, the HCA
 * port NCCL 2.24+ names (`on dev mlx5_0:1`); else nothing.
 */
function target(w: WarningRecord): { key: string; peer?: string; hca?: string; hcaPort?: number } {
  if (w.peer !== undefined) return { key: `peer ${w.peer}`, peer: w.peer };
  if (w.kind === "ib_qp_error") {
    const d = ibQpDevice(w.message);
    if (d.hca !== undefined) return { key: `dev ${d.hca}:${d.hcaPort ?? ""}`, ...d };
  }
  return { key: "" };
}

/** Network errors, grouped by the peer they point at (a failed queue pair with no peer: by its HCA port). */
function networkFindings(state: TrackedState, all: readonly Item[], chains: Chains, fallout: Map<Finding, Fallout>): Finding[] {
  const byPeer = new Map<string, Item[]>();
  for (const x of all) {
    if (!NETWORK_KINDS.has(x.w.kind)) continue;
    const k = target(x.w).key;
    byPeer.set(k, [...(byPeer.get(k) ?? []), x]);
  }
  const cuda = all.filter((x) => x.w.kind === "cuda_error" && x.p !== undefined);
  const out: Finding[] = [];
  for (const list of byPeer.values()) {
    const first = list[0]?.w;
    if (!first) continue;
    const t = target(first);
    const peer = t.peer ?? "";
    const procs = uniq(list.map((x) => x.p).filter((p): p is ProcessState => p !== undefined));
    // The processes that logged them, else the launcher's rank of a line that names no process.
    const seenBy = uniq(list.map((x) => (x.p ? who(x.p.key, x.w.cudaDev) : x.w.rank)).filter((s): s is string | number => s !== undefined));
    const ib = list.find((x) => x.w.ibStatus !== undefined)?.w;
    const said = list.find((x) => x.w.error !== undefined)?.w;
    const chainTexts = list
      .map((x) =>
        chains.tell(
          x.p,
          list.map((y) => y.w.where),
        ),
      )
      .join("");
    // A CUDA failure of another process on the same host (or on the peer itself) comes first; so
    // does the process's own, where the peer that closed is on its own host (its proxy, a local
    // rank: nccl-pasted 266, out of memory at setup, then `Connection closed by remote peer node2`).
    const hosts = new Set(procs.map((p) => p.host));
    const root = cuda.find((c) => c.p && (procs.includes(c.p) ? isHost(peer, c.p.host) && before(c.w, first) : hosts.has(c.p.host) || isHost(peer, c.p.host)));
    // The rank a process's proxy names when the operation the network failed was its own.
    const proxyRanks = procs.flatMap((p) => p.warnings.map((w) => proxyFailure(w.message)).filter((r): r is number => r !== undefined));
    const procRanks = ranksOf(state, procs);
    const proxyWheres = procs.flatMap((p) => p.warnings.filter((w) => proxyFailure(w.message) !== undefined).map((w) => w.where));
    const finding = networkError({
      summary: networkErrorWords.logs({
        peer: peer !== "" ? peerAddress(first.peer, first.peerPort) : undefined,
        seenBy,
        kinds: uniq(list.map((x) => x.w.kind)),
        lines: list.length,
        ib: ib?.ibStatus !== undefined ? { status: ib.ibStatus, vendorErr: ib.vendorErr } : undefined,
        said: said?.error !== undefined ? { byPlugin: said.kind === "net_completion_error", error: said.error, rc: said.rc } : undefined,
        chains: chainTexts,
        peerRanks: uniq(list.map((x) => x.w.peerRank).filter((r): r is number => r !== undefined)),
        root: root?.p ? { process: who(root.p.key, root.w.cudaDev), key: root.p.key, message: root.w.message, sameHost: hosts.has(root.p.host) } : undefined,
      }),
      ranks: uniq([
        ...(procRanks.length > 0 ? procRanks : proxyRanks),
        ...list.map((x) => (x.p ? undefined : x.w.rank)).filter((r): r is number => r !== undefined),
        // The rank at the other end, where the line names it.
        ...list.map((x) => x.w.peerRank).filter((r): r is number => r !== undefined),
      ]).sort((a, b) => a - b),
      processes: procs.map((p) => p.key),
      comm_id: null,
      evidence: uniq([...list.map((x) => x.w.where), ...proxyWheres]).slice(0, 5),
      ...(peer !== "" ? { peer } : {}),
      ...(t.hca !== undefined ? { device: t.hca } : {}),
      count: list.length,
    });
    out.push(finding);
    if (root?.p !== undefined) fallout.set(finding, { root: root.p.key, ownRanks: procRanks.length > 0 ? procRanks : proxyRanks });
  }
  return out;
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
    const facts: SizeMismatchFacts = {
      process: p ? who(p.key, w.cudaDev) : undefined,
      peer: w.peer !== undefined ? peerAddress(w.peer, w.peerPort) : undefined,
      transport: w.message.startsWith("NET/IB") ? "NET/IB" : w.message.startsWith("NET/Socket") ? "NET/Socket" : undefined,
      localSize: w.localSize,
      remoteSize: w.remoteSize,
    };
    const procs = p ? [p] : [];
    const ranks = p ? ranksOf(state, procs) : w.rank !== undefined ? [w.rank] : [];
    const fields = { ranks, processes: procs.map((x) => x.key), comm_id: null, evidence: [w.where], ...(w.peer !== undefined ? { peer: w.peer } : {}) };
    out.push(collectiveMismatch({ summary: collectiveMismatchWords.sizes(facts), ...fields }));
    out.push(ncclError({ summary: ncclErrorWords.sizeMismatch({ ...facts, message: w.message, chain: chains.tell(p, [w.where]) }), ...fields }));
  }
  return out;
}

function errorSummary(w: WarningRecord, p: ProcessState | undefined, chain: string): string {
  const f = { process: p ? who(p.key, w.cudaDev) : undefined, message: w.message, chain };
  if (w.kind === "cuda_error") return ncclErrorWords.cuda(f);
  if (w.sizeMismatch === "bootstrap") return ncclErrorWords.bootstrap({ ...f, localSize: w.localSize, remoteSize: w.remoteSize });
  if (w.kind === "net_plugin_error") return ncclErrorWords.netPlugin(f);
  if (w.duplicateRank !== undefined) return ncclErrorWords.duplicateRank({ ...f, rank: w.duplicateRank });
  if (w.kind === "invalid_usage" && w.message.startsWith("Duplicate GPU")) return ncclErrorWords.sharedGpu(f);
  if (w.kind === "nvml_error" && w.message.startsWith("No NVML device handle")) return ncclErrorWords.nvml(f);
  return ncclErrorWords.other({ ...f, kind: w.kind });
}

/**
 * A WARN of NCCL's RAS service (2.24+, `ras/*.cc`): its thread's own sockets, which no communicator
 * uses (nccl-pasted 261: `ras/client_support.cc:160 NCCL WARN Call to bind failed: Address already in use`).
 */
function rasService(w: WarningRecord): boolean {
  return w.source !== undefined && w.source.startsWith("ras/");
}

/** Other NCCL errors and NCCL's own mismatch detection (`Mismatched collective detected ... rank 39`). */
function warnErrorFindings(state: TrackedState, all: readonly Item[], chains: Chains, partOfNetworkError: (x: Item) => boolean): Finding[] {
  // One finding per process and message: a failure NCCL repeats on every call is one failure.
  const errors = new Map<string, Item & { wheres: string[] }>();
  for (const x of all) {
    if (x.w.sizeMismatch === "data" || (!ERROR_KINDS.has(x.w.kind) && x.w.kind !== "collective_mismatch") || partOfNetworkError(x)) continue;
    // A plugin's failed init says so in several WARNs (endpoint, plugin, NCCL's net init): one failure.
    const key = `${x.p?.key ?? ""}|${x.w.kind}|${x.w.kind === "net_plugin_error" ? "" : x.w.message}`;
    const e = errors.get(key);
    if (e) {
      e.wheres.push(x.w.where);
      // A failed call during the plugin's init, then its `initialization failed`: the finding says the init failed.
      if (x.w.kind === "net_plugin_error" && x.w.message.includes("nitializ") && !e.w.message.includes("nitializ")) e.w = x.w;
    } else if (errors.size < MAX_ERRORS) errors.set(key, { ...x, wheres: [x.w.where] });
  }
  const out: Finding[] = [];
  for (const { w, p, wheres } of errors.values()) {
    if (rasService(w)) {
      out.push(
        ncclError({
          severity: "info",
          summary: ncclErrorWords.rasService({ process: p ? who(p.key, w.cudaDev) : undefined, message: w.message }),
          ranks: p ? ranksOf(state, [p]) : w.rank !== undefined ? [w.rank] : [],
          processes: p ? [p.key] : [],
          comm_id: null,
          evidence: wheres.slice(0, 5),
        }),
      );
      continue;
    }
    const mismatch = w.kind === "collective_mismatch";
    const build = mismatch ? collectiveMismatch : ncclError;
    out.push(
      build({
        // No NVML handle for the topology: NCCL goes on (without NVLink detection), slower: a warning. NVML's own
        // call failing (misc/nvmlwrap.cc) may end init: as critical as any NCCL error.
        ...(w.kind === "nvml_error" && w.message.startsWith("No NVML device handle") ? { severity: "warning" as const } : {}),
        summary: mismatch ? collectiveMismatchWords.ncclDetected({ rank: w.mismatchRank, message: w.message }) : errorSummary(w, p, chains.tell(p, wheres)),
        ranks:
          (w.mismatchRank ?? w.duplicateRank) !== undefined
            ? [(w.mismatchRank ?? w.duplicateRank) as number]
            : withSharedGpu(p ? ownRanks(state, p, w) : w.rank !== undefined ? [w.rank] : [], w),
        processes: p ? [p.key] : [],
        comm_id: null,
        evidence: wheres.slice(0, 5),
        ...(wheres.length > 1 ? { count: wheres.length } : {}),
      }),
    );
  }
  return out;
}

/** With the other rank a `Duplicate GPU detected` WARN names on the same GPU. */
function withSharedGpu(ranks: readonly number[], w: WarningRecord): number[] {
  return w.sharedGpuRank === undefined || ranks.includes(w.sharedGpuRank) ? [...ranks] : [...ranks, w.sharedGpuRank].sort((a, b) => a - b);
}

/** The first process of each host whose socket failed (a connect, reset or close WARN). */
function socketFailures(all: readonly Item[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const x of all) if (x.p !== undefined && SOCKET_KINDS.has(x.w.kind) && !out.has(x.p.host)) out.set(x.p.host, who(x.p.key, x.w.cudaDev));
  return out;
}

/**
 * Processes whose chain shows a failure that no finding above told: one nccl_error each. A
 * network_error instead for ncclRemoteError, and for ncclSystemError with no WARN of its own in the
 * excerpt on a host where another process's socket failed: the same failure, seen from a process
 * whose WARN the excerpt cut off (real capture: nccl-pasted file 215).
 */
function chainFindings(
  state: TrackedState,
  procs: readonly ProcessState[],
  chains: Chains,
  sockets: ReadonlyMap<string, string>,
  reported: ReadonlySet<number>,
): Finding[] {
  const out: Finding[] = [];
  for (const p of procs) {
    if (chains.has(p.key)) continue;
    const failed = p.chains.filter((c) => isFailure(c) || (c.afterWarn !== undefined && !c.recovered && reported.has(c.code)));
    const c = longest(failed);
    if (!c) continue;
    chains.claim(p.key);
    // The WARN that opened a chain of this process: the longest chain's own, else another thread's (the same failure seen from two threads).
    const afterWarn = c.afterWarn ?? failed.find((x) => x.afterWarn !== undefined)?.afterWarn;
    const warn = afterWarn !== undefined ? p.warnings.find((w) => w.where === afterWarn) : undefined;
    // ncclRemoteError: a remote process exited or the network failed, whatever this process logged.
    const remote = c.code === 6;
    const socketOf = warn === undefined && c.code === 2 ? sockets.get(p.host) : undefined;
    const facts = { process: who(p.key, c.cudaDev ?? warn?.cudaDev), chain: chainText(c), warn: warn?.message };
    out.push(
      (remote || socketOf !== undefined ? networkError : ncclError)({
        summary: remote
          ? networkErrorWords.chain(facts)
          : socketOf !== undefined
            ? networkErrorWords.socketChain({ ...facts, socket: socketOf })
            : ncclErrorWords.chain(facts),
        ranks: ranksOf(state, [p]),
        processes: [p.key],
        comm_id: null,
        evidence: uniq([...(warn ? [warn.where] : []), c.firstWhere, c.lastWhere, ...failed.filter((x) => x !== c).map((x) => x.firstWhere)]).slice(0, 5),
        ...(failed.length > 1 ? { count: failed.length } : {}),
      }),
    );
  }
  return out;
}
