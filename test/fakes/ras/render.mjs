// @ts-check
/**
 * NCCL RAS reports rendered from a job model, as the RAS service of NCCL 2.24 to 2.32 writes them
 * (src/ras/client_support.cc: rasClientRunInit, rasClientRunComms, rasClientBreakDownErrors,
 * rasDumpCommsToJSON and the json* writers; src/ras/peers.cc and rasClientsNotifyEvent for MONITOR
 * events; src/ras/diagnostics*.cc for the DIAGNOSTICS answer of 2.31.2+, see renderDiagnostics).
 * Written from reading those sources; no NCCL code is copied, only short format strings.
 *
 * Job model (render.d.mts has the types):
 *   { version: "2.26.2", cudaCompiled?: "12.6", cudaRuntime?: 12060, cudaDriver?: 12060,
 *     gatherSeconds?: 0, timeouts?: 0, timestamp?: "2026-01-01 00:00:00",
 *     comms: [{ hash: "0x49bbd7790311d5eb", hostHash?, pidHash?, size,
 *               ranks: [{ rank, host, pid, cudaDev, nvmlDev?, counts?: { Broadcast?, Reduce?, AllGather?,
 *                         ReduceScatter?, AllReduce? }, opCount?, status?: { initState?, asyncError?,
 *                         finalizeCalled?, destroyFlag?, abortFlag? } }],
 *               missing?: [{ rank, host, pid, cudaDev, nvmlDev?, unresponsive, dead }] }],
 *     deadPeers?: [{ host, pid, cudaDevs, nvmlDevs? }],
 *     processes?: [{ host, pid, cudaDevs, nvmlDevs?, unresponsive?, dead? }] }
 *
 * How the model maps onto NCCL's data:
 * - The job's processes (NCCL's rasPeers) are every (host, pid) named by a rank, a missing rank, a dead
 *   peer or `processes`; a process manages the union of the GPUs named for it. NCCL sorts them by address
 *   (IP, then RAS port); the model has no ports, so processes of one host are ordered by pid. Nothing
 *   printed depends on the port order.
 * - A process is dead if any entry says so (or it is in deadPeers); it did not answer the communicator
 *   query if it is dead or any missing-rank entry says `unresponsive`. `processes` adds processes that are
 *   in no communicator.
 * - `ranks` is the order in which NCCL received the ranks (comm->ranks; used as-is where NCCL does, e.g.
 *   in the ERROR breakdown and in JSON); `comms` is the order of the communicators in the gathered data.
 *   NCCL sorts with qsort; where two communicators compare equal, this keeps their model order (glibc's
 *   merge sort does the same).
 * - counts are NCCL's collOpCounts[ncclFunc_t] (NCCL_NUM_FUNCTIONS = 5: Broadcast, Reduce, AllGather,
 *   ReduceScatter, AllReduce, in that order and with those names in every version 2.24 to 2.30). NCCL 2.24
 *   and 2.25 keep one collOpCount per rank: `opCount` if given, otherwise the sum of `counts`.
 * - initState / asyncError are ncclResult_t values 0..7 (0 success, 7 in progress).
 * - Time figures: gatherSeconds for "Communicators... (0.00s)" and JSON collection_time_sec; timestamp
 *   for the JSON header ("%F %T" local time in NCCL).
 *
 * Not modeled (NCCL paths our scenarios do not reach): "[process information not found]" lines (every rank
 * here belongs to a known process), communicators with no responding rank at all (NCCL's status bitmask is 0
 * there and it indexes by __builtin_clz(0)), output trimmed by NCCL's 1024-byte line buffer, the RAS_COLL_CONNS
 * section (compiled out with #if 0 in every version), NCCL_SUFFIX (taken as empty, as in release builds), and
 * NCCL 2.28.x's text-path bug that walks the gathered communicators without skipping their missing-rank
 * records (it reads garbage for the communicator after one with missing ranks; fixed in 2.29).
 */

/** NCCL's ncclFuncStr / ncclFuncToString for ncclFunc_t 0..4. */
export const FUNCS = /** @type {const} */ (["Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"]);

const DETAIL_THRESHOLD = 10; // RAS_CLIENT_DETAIL_THRESHOLD
const OUTLIER_FRACTION = 0.25; // RAS_CLIENT_OUTLIER_FRACTION
const VERBOSE_OUTLIER_FRACTION = 0.5; // RAS_CLIENT_VERBOSE_OUTLIER_FRACTION
const MAX_LOCAL_RANKS = 64; // NCCL_MAX_LOCAL_RANKS

// rasACStatus bits and rasACError bits.
const ACS_NOCOMM = 1;
const ACS_INIT = 2;
const ACS_RUNNING = 4;
const ACS_FINALIZE = 8;
const ACS_ABORT = 16;
const ACE_MISMATCH = 1;
const ACE_ERROR = 2;
const ACE_INCOMPLETE = 4;
const ERROR_STR = ["OK", "MISMATCH", "ERROR", "ERROR,MISMATCH", "INCOMPLETE", "INCOMPLETE,MISMATCH", "INCOMPLETE,ERROR", "INCOMPLETE,ERROR,MISMATCH"];
const NCCL_IN_PROGRESS = 7;

/** @param {string} version @returns {[number, number, number]} */
function parseVersion(version) {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!m) throw new Error(`job.version must be X.Y.Z, got ${JSON.stringify(version)}`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}

/**
 * What a given NCCL version's RAS service does (boundaries from the release tags: 2.24.3, 2.25.1, 2.26.2,
 * 2.27.7, 2.28.3, 2.28.7, 2.28.9, 2.29.2, 2.29.7, 2.30.7).
 * @param {string} version
 */
export function rasFeatures(version) {
  const [a, b, c] = parseVersion(version);
  /** @param {number} x @param {number} y @param {number} z */
  const ge = (x, y, z) => (a !== x ? a > x : b !== y ? b > y : c >= z);
  return {
    /** Per-collective-type op counts, NOCOMM status and missing-rank details (2.26+; 2.24/2.25: one count, UNKNOWN). */
    perTypeCounts: ge(2, 26, 0),
    /** `SET FORMAT text|json` (first in 2.28.7; 2.28.3 lacks it). */
    json: ge(2, 28, 7),
    /** jsonWriteMissingRank writes `"nvml_dev": N` without its comma (2.28.7, 2.28.9; fixed in 2.29.2). */
    jsonMissingCommaBug: ge(2, 28, 7) && !ge(2, 29, 0),
    /** `MONITOR [groups]` and event notifications (2.29+). */
    monitor: ge(2, 29, 0),
    /** Decimals of "Communicators... (N.NNs)": %.2f up to 2.28.3, %.3f from 2.28.7. */
    timeDecimals: ge(2, 28, 7) ? 3 : 2,
    /** `DIAGNOSTICS` (v2.31.2-1, the first 2.31 release): GPU inventory, CUDA driver, ECC, NVLink, NCCL_* env. */
    diagnostics: ge(2, 31, 2),
    /** Diagnostics' Xid/SXid, rdma_topo, IOMMU, ATS, NVIDIA driver and Paths checks, NVLink speeds (v2.32.3-1). */
    diagXid: ge(2, 32, 3),
    /** `CONTROL PROFILER_MASK <value>` (2.31.2+). */
    control: ge(2, 31, 2),
    /** `TIMEOUT` parsed with strtod (fractions accepted; negative, non-finite, out-of-range refused) from 2.31.2; strtol before. */
    timeoutStrtod: ge(2, 31, 2),
  };
}

/**
 * @param {number} count
 * @param {boolean} verbose
 * @param {number} [totalCount]
 */
export function rasCountIsOutlier(count, verbose, totalCount = -1) {
  if (count === 1) return true;
  if (verbose) return totalCount !== -1 ? count < totalCount * VERBOSE_OUTLIER_FRACTION : true;
  return count <= DETAIL_THRESHOLD && (totalCount === -1 || count <= totalCount * OUTLIER_FRACTION);
}

/** @param {number} e */
function ncclErrorToString(e) {
  switch (e) {
    case 1:
      return "Unhandled CUDA error";
    case 2:
      return "System error";
    case 3:
      return "Internal error";
    case 4:
      return "Invalid argument";
    case 5:
      return "Invalid usage";
    case 6:
      return "Remote process error";
    case 7:
      return "NCCL operation in progress";
    default:
      return "Unexpected error";
  }
}

/** @param {number|string} v @param {number} w */
const pad = (v, w) => String(v).padStart(w);

/** @param {string} hash "0x..." or hex digits */
function hashBig(hash) {
  const h = String(hash).replace(/^0x/i, "");
  if (!/^[0-9a-f]+$/i.test(h)) throw new Error(`bad communicator hash ${JSON.stringify(hash)}`);
  return BigInt(`0x${h}`);
}

// ---- addresses -------------------------------------------------------------------------------------------

/**
 * An IP as NCCL compares it (ncclSocketsHostCompare): family first (AF_INET 2 before AF_INET6 10), then the
 * address bytes. A host that is not an IP literal sorts after all IPs, by its text.
 * @param {string} host
 * @returns {{ family: number, bytes: number[] }}
 */
function hostKey(host) {
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host);
  if (v4) return { family: 2, bytes: v4.slice(1).map(Number) };
  if (host.includes(":")) {
    const [head = "", tail] = host.split("::");
    const h = head ? head.split(":") : [];
    const t = tail !== undefined && tail !== "" ? tail.split(":") : [];
    const groups = tail === undefined ? h : [...h, ...Array(Math.max(0, 8 - h.length - t.length)).fill("0"), ...t];
    if (groups.length === 8 && groups.every((g) => /^[0-9a-f]{1,4}$/i.test(g))) {
      return { family: 10, bytes: groups.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 255]) };
    }
  }
  return { family: 99, bytes: [] };
}

/** @param {string} a @param {string} b */
function hostCompare(a, b) {
  const ka = hostKey(a);
  const kb = hostKey(b);
  if (ka.family !== kb.family) return ka.family < kb.family ? -1 : 1;
  if (ka.family === 99) return a < b ? -1 : a > b ? 1 : 0;
  for (let i = 0; i < ka.bytes.length; i++) {
    const x = ka.bytes[i] ?? 0;
    const y = kb.bytes[i] ?? 0;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

// ---- the job as NCCL holds it ------------------------------------------------------------------------------

/**
 * @typedef {{ host: string, pid: number, cuda: Set<number>, nvml: Set<number>, dead: boolean, unresponsive: boolean, idx: number }} Peer
 * @typedef {{ rank: number, host: string, pid: number, cudaDev: number, nvmlDev: number, counts: number[], opCount: number,
 *   initState: number, asyncError: number, finalizeCalled: boolean, destroyFlag: boolean, abortFlag: boolean, peer: Peer }} Rank
 * @typedef {{ rank: number, host: string, pid: number, cudaDev: number, nvmlDev: number, peer: Peer }} Missing
 * @typedef {{ hash: bigint, hostHash: bigint, pidHash: bigint, size: number, ranks: Rank[], missing: Missing[] }} Comm
 * @typedef {{ comm: Comm, nPeers: number, nNodes: number, rpnMin: number, rpnMax: number, status: number, errors: number, nIncomplete: number }} AuxComm
 */

/** @param {any} job */
function model(job) {
  if (!job || typeof job !== "object") throw new Error("job must be an object");
  const v = rasFeatures(job.version);
  /** @type {Map<string, Peer>} */
  const byKey = new Map();
  /** @param {string} host @param {number} pid */
  const peerOf = (host, pid) => {
    const key = `${host}|${pid}`;
    let p = byKey.get(key);
    if (!p) {
      p = { host, pid, cuda: new Set(), nvml: new Set(), dead: false, unresponsive: false, idx: -1 };
      byKey.set(key, p);
    }
    return p;
  };
  /** @type {Comm[]} */
  const comms = (job.comms ?? []).map((/** @type {any} */ c) => {
    /** @type {Rank[]} */
    const ranks = (c.ranks ?? []).map((/** @type {any} */ r) => {
      const peer = peerOf(r.host, r.pid);
      const nvmlDev = r.nvmlDev ?? r.cudaDev;
      peer.cuda.add(r.cudaDev);
      peer.nvml.add(nvmlDev);
      const counts = FUNCS.map((f) => Number(r.counts?.[f] ?? 0));
      const st = r.status ?? {};
      return {
        rank: r.rank,
        host: r.host,
        pid: r.pid,
        cudaDev: r.cudaDev,
        nvmlDev,
        counts,
        opCount: r.opCount ?? counts.reduce((x, y) => x + y, 0),
        initState: st.initState ?? 0,
        asyncError: st.asyncError ?? 0,
        finalizeCalled: !!st.finalizeCalled,
        destroyFlag: !!st.destroyFlag,
        abortFlag: !!st.abortFlag,
        peer,
      };
    });
    /** @type {Missing[]} */
    const missing = (c.missing ?? []).map((/** @type {any} */ m) => {
      const peer = peerOf(m.host, m.pid);
      const nvmlDev = m.nvmlDev ?? m.cudaDev;
      peer.cuda.add(m.cudaDev);
      peer.nvml.add(nvmlDev);
      if (m.dead) peer.dead = true;
      if (m.unresponsive) peer.unresponsive = true;
      return { rank: m.rank, host: m.host, pid: m.pid, cudaDev: m.cudaDev, nvmlDev, peer };
    });
    return {
      hash: hashBig(c.hash),
      hostHash: hashBig(c.hostHash ?? "0x0"),
      pidHash: hashBig(c.pidHash ?? "0x0"),
      size: c.size ?? ranks.length + missing.length,
      ranks,
      missing,
    };
  });
  for (const d of [...(job.deadPeers ?? []), ...(job.processes ?? [])]) {
    const peer = peerOf(d.host, d.pid);
    for (const g of d.cudaDevs ?? []) peer.cuda.add(g);
    for (const g of d.nvmlDevs ?? d.cudaDevs ?? []) peer.nvml.add(g);
    if (d.dead || (job.deadPeers ?? []).includes(d)) peer.dead = true;
    if (d.unresponsive) peer.unresponsive = true;
  }
  const peers = [...byKey.values()].sort((a, b) => hostCompare(a.host, b.host) || a.pid - b.pid);
  peers.forEach((p, i) => (p.idx = i));
  const nDead = peers.filter((p) => p.dead).length;
  // nRasPeers - nRasDeadPeers - coll->nPeers: live processes that did not answer.
  const nPeersMissing = peers.filter((p) => !p.dead && p.unresponsive).length;
  const rt = job.cudaRuntime ?? 12060;
  return {
    v,
    job,
    peers,
    comms,
    nDead,
    nPeersMissing,
    cudaRuntime: rt,
    cudaDriver: job.cudaDriver ?? rt,
    cudaCompiled: job.cudaCompiled ?? `${Math.floor(rt / 1000)}.${Math.floor((rt % 1000) / 10)}`,
    gatherSeconds: Number(job.gatherSeconds ?? 0),
    timeouts: Number(job.timeouts ?? 0),
  };
}

/** @param {Peer} p */
const responded = (p) => !p.dead && !p.unresponsive;

/** rasGpuDevsToString: the CUDA devices, and the NVML ones in parentheses where the masks differ. */
/** @param {Iterable<number>} cuda @param {Iterable<number>} nvml */
function gpuDevsToString(cuda, nvml) {
  const c = [...new Set(cuda)].sort((a, b) => a - b);
  const n = [...new Set(nvml)].sort((a, b) => a - b);
  let s = c.join(",");
  if (c.join(",") !== n.join(",")) s += ` (NVML ${n.join(",")})`;
  return s;
}

/** @param {number} cudaDev @param {number} nvmlDev */
const gpuToString = (cudaDev, nvmlDev) => (cudaDev !== nvmlDev ? `${cudaDev} (NVML ${nvmlDev})` : `${cudaDev}`);

/** "Process P on node H managing GPU[s] G" (the DEAD / INCOMPLETE lists; rasPeerInfoToString in 2.29+). */
/** @param {{ host: string, pid: number, cuda: Iterable<number>, nvml: Iterable<number> }} p */
function peerLine(p) {
  const n = new Set(p.cuda).size;
  return `Process ${p.pid} on node ${p.host} managing GPU${n > 1 ? "s" : ""} ${gpuDevsToString(p.cuda, p.nvml)}`;
}

/** @param {Rank|Missing} r */
const rankWhere = (r) => `GPU ${gpuToString(r.cudaDev, r.nvmlDev)} managed by process ${r.peer.pid} on node ${r.peer.host}`;

/** @param {number} status */
const highBit = (status) => 31 - Math.clz32(status);

/** @param {Rank} r */
function rankStatus(r) {
  if (r.abortFlag) return ACS_ABORT;
  if (r.finalizeCalled || r.destroyFlag) return ACS_FINALIZE;
  if (r.initState === 0) return ACS_RUNNING;
  return ACS_INIT;
}

/** @param {number} x */
const popcount = (x) => x.toString(2).replaceAll("0", "").length;

/**
 * Groups ranks (already sorted by value, then commRank) into rasValCount entries, most frequent first,
 * larger value first among equally frequent ones (rasValCountsCompareRev).
 * @template T
 * @param {T[]} sorted
 * @param {(t: T) => number} valueOf
 * @returns {{ value: number, count: number, first: number }[]}
 */
function valCounts(sorted, valueOf) {
  /** @type {{ value: number, count: number, first: number }[]} */
  const out = [];
  sorted.forEach((t, i) => {
    const last = out[out.length - 1];
    if (i === 0 || !last || valueOf(t) !== valueOf(/** @type {T} */ (sorted[i - 1]))) out.push({ value: valueOf(t), count: 1, first: i });
    else last.count++;
  });
  return out;
}

/** @param {{ value: number, count: number }} a @param {{ value: number, count: number }} b */
const byCountRev = (a, b) => (a.count !== b.count ? b.count - a.count : b.value - a.value);

// ---- text ---------------------------------------------------------------------------------------------------

/**
 * The text report in two parts, as NCCL sends it: `head` leaves before the communicator data is gathered
 * (version lines, Job summary, "\nCommunicators..."), `tail` when it is in (from " (0.00s)" on).
 * @param {any} job
 * @param {{ verbose?: boolean }} [opts]
 */
export function renderTextParts(job, opts = {}) {
  const m = model(job);
  return { head: textHead(m, !!opts.verbose), tail: textTail(m, !!opts.verbose) };
}

/**
 * The full STATUS (or VERBOSE STATUS, with verbose) text report of NCCL `job.version`.
 * @param {any} job
 * @param {{ verbose?: boolean }} [opts]
 */
export function renderText(job, opts = {}) {
  const { head, tail } = renderTextParts(job, opts);
  return head + tail;
}

/** @param {ReturnType<typeof model>} m @param {boolean} verbose */
function textHead(m, verbose) {
  let out = `NCCL version ${m.job.version} compiled with CUDA ${m.cudaCompiled}\n`;
  out += `CUDA runtime version ${m.cudaRuntime}, driver version ${m.cudaDriver}\n\n`;
  out += "Job summary\n===========\n\n";
  out += jobSummary(m, verbose);
  out += "\nCommunicators...";
  return out;
}

/** rasClientRunInit's job summary, including its branches for uneven jobs. */
/** @param {ReturnType<typeof model>} m @param {boolean} verbose */
function jobSummary(m, verbose) {
  const peers = m.peers;
  const n = peers.length;
  let totalGpus = 0;
  let totalNodes = 0;
  let firstNGpusNode = 0;
  let firstNGpusGlobal = 0;
  let consistentNGpusNode = true;
  let consistentNGpusGlobal = true;
  let consistentNPeersGlobal = true;
  let nPeers = 0;
  let firstNPeersGlobal = 0;
  peers.forEach((p, i) => {
    const nGpus = p.cuda.size;
    totalGpus += nGpus;
    if (i === 0) {
      totalNodes = 1;
      nPeers = 1;
      firstNGpusGlobal = firstNGpusNode = nGpus;
    } else {
      if (nGpus !== firstNGpusGlobal) consistentNGpusGlobal = false;
      if (hostCompare(p.host, /** @type {Peer} */ (peers[i - 1]).host) !== 0) {
        totalNodes++;
        if (firstNPeersGlobal === 0) firstNPeersGlobal = nPeers;
        else if (nPeers !== firstNPeersGlobal) consistentNPeersGlobal = false;
        nPeers = 1;
        firstNGpusNode = nGpus;
      } else {
        if (nGpus !== firstNGpusNode) consistentNGpusNode = false;
        nPeers++;
      }
    }
    if (i === n - 1) {
      if (firstNPeersGlobal === 0) firstNPeersGlobal = nPeers;
      else if (nPeers !== firstNPeersGlobal) consistentNPeersGlobal = false;
    }
  });

  if (consistentNGpusNode && consistentNGpusGlobal && consistentNPeersGlobal) {
    return (
      "  Nodes  Processes         GPUs  Processes     GPUs\n" +
      "(total)   per node  per process    (total)  (total)\n" +
      `${pad(totalNodes, 7)}  ${pad(firstNPeersGlobal, 9)}  ${pad(firstNGpusGlobal, 11)}  ${pad(n, 9)}  ${pad(totalGpus, 7)}\n`
    );
  }

  let out = "";
  // Processes per node, stored per peer, then peers sorted by (that value, host, pid).
  /** @type {{ peer: Peer, value: number }[]} */
  let aux = peers.map((peer) => ({ peer, value: 0 }));
  let firstIdx = 0;
  nPeers = 0;
  for (let i = 0; i < n; i++) {
    if (i === 0) {
      nPeers = 1;
      firstIdx = 0;
    } else if (hostCompare(peers[i]?.host ?? "", peers[i - 1]?.host ?? "") !== 0) {
      for (let j = firstIdx; j < i; j++) /** @type {{ value: number }} */ (aux[j]).value = nPeers;
      nPeers = 1;
      firstIdx = i;
    } else nPeers++;
    if (i === n - 1) for (let j = firstIdx; j < n; j++) /** @type {{ value: number }} */ (aux[j]).value = nPeers;
  }
  /** @param {{ peer: Peer, value: number }} a @param {{ peer: Peer, value: number }} b */
  const auxCmp = (a, b) => (a.value !== b.value ? a.value - b.value : hostCompare(a.peer.host, b.peer.host) || a.peer.pid - b.peer.pid);
  aux.sort(auxCmp);
  /** @type {{ value: number, count: number, first: number }[]} */
  let vcs = [];
  for (let i = 0; i < n;) {
    const a = /** @type {{ value: number }} */ (aux[i]);
    const last = vcs[vcs.length - 1];
    if (i === 0 || !last || a.value !== aux[i - 1]?.value) vcs.push({ value: a.value, count: 1, first: i });
    else last.count++;
    i += a.value;
  }
  vcs.sort(byCountRev);

  if (consistentNGpusNode && consistentNGpusGlobal) {
    out += "  Nodes  Processes         GPUs\n          per node  per process\n";
    for (const vc of vcs) out += `${pad(vc.count, 7)}  ${pad(vc.value, 9)}  ${pad(firstNGpusGlobal, 11)}\n`;
  } else {
    out += "  Nodes  Processes\n          per node\n";
    for (const vc of vcs) out += `${pad(vc.count, 7)}  ${pad(vc.value, 9)}\n`;
    aux = peers.map((peer) => ({ peer, value: peer.cuda.size })).sort(auxCmp);
    vcs = valCounts(aux, (a) => a.value).sort(byCountRev);
    out += "\n         Processes         GPUs\n                    per process\n";
    for (const vc of vcs) out += `         ${pad(vc.count, 9)}  ${pad(vc.value, 11)}\n`;
  }
  out += `\n  Nodes  Processes         GPUs\n(total)    (total)      (total)\n${pad(totalNodes, 7)}  ${pad(n, 9)}  ${pad(totalGpus, 11)}\n`;

  if (consistentNGpusNode && consistentNGpusGlobal) {
    for (let i = 1; i < vcs.length; i++) {
      const vc = /** @type {{ value: number, count: number, first: number }} */ (vcs[i]);
      if (!rasCountIsOutlier(vc.count, verbose, totalNodes)) continue;
      out += `\nThe outlier node${vc.count > 1 ? "s" : ""}:\n`;
      for (let p = vc.first; p < vc.count * vc.value + vc.first; p += vc.value) {
        // NCCL prints the pids of aux[0..value-1] here, whatever the node (it indexes with j, not p+j).
        const pids = aux
          .slice(0, vc.value)
          .map((a) => a.peer.pid)
          .join(",");
        out += `  Node ${aux[p]?.peer.host ?? ""} running process${vc.value > 1 ? "es" : ""} ${pids}\n`;
      }
    }
  }
  return out;
}

/**
 * @param {ReturnType<typeof model>} m
 * @returns {AuxComm[]}
 */
function analyzeComms(m) {
  const { v, nPeersMissing, nDead } = m;
  return m.comms.map((comm) => {
    /** @type {AuxComm} */
    const aux = { comm, nPeers: 0, nNodes: 0, rpnMin: 0, rpnMax: 0, status: 0, errors: 0, nIncomplete: 0 };
    if (v.perTypeCounts) {
      if (comm.missing.length > 0) {
        if (nPeersMissing === 0 && nDead === 0) {
          aux.errors |= ACE_MISMATCH;
          aux.status |= ACS_NOCOMM;
        } else {
          for (const mr of comm.missing) {
            if (responded(mr.peer)) {
              aux.errors |= ACE_MISMATCH;
              aux.status |= ACS_NOCOMM;
            } else {
              aux.errors |= ACE_INCOMPLETE;
              aux.nIncomplete++;
            }
          }
        }
      }
    } else if (comm.size > comm.ranks.length) {
      // 2.24/2.25 have no missing-rank records: any unreachable process makes it INCOMPLETE.
      if (nPeersMissing > 0 || nDead > 0) aux.errors |= ACE_INCOMPLETE;
      else {
        aux.errors |= ACE_MISMATCH;
        aux.status |= ACS_NOCOMM;
      }
    }
    const sorted = [...comm.ranks].sort((a, b) => a.peer.idx - b.peer.idx || a.rank - b.rank);
    let nRanks = 0;
    sorted.forEach((r, i) => {
      if (i === 0) {
        aux.nPeers = aux.nNodes = 1;
        aux.rpnMin = MAX_LOCAL_RANKS;
        aux.rpnMax = 0;
        nRanks = 1;
      } else {
        const prev = /** @type {Rank} */ (sorted[i - 1]);
        if (r.peer !== prev.peer) {
          aux.nPeers++;
          if (hostCompare(r.peer.host, prev.peer.host) !== 0) {
            aux.nNodes++;
            aux.rpnMin = Math.min(aux.rpnMin, nRanks);
            aux.rpnMax = Math.max(aux.rpnMax, nRanks);
            nRanks = 0;
          }
        }
        nRanks++;
      }
      if (i === sorted.length - 1) {
        aux.rpnMin = Math.min(aux.rpnMin, nRanks);
        aux.rpnMax = Math.max(aux.rpnMax, nRanks);
      }
      aux.status |= rankStatus(r);
      const first = /** @type {Rank} */ (sorted[0]);
      if (v.perTypeCounts ? r.counts.some((c, k) => c !== first.counts[k]) : r.opCount !== first.opCount) aux.errors |= ACE_MISMATCH;
      if (r.initState !== 0 && r.initState !== NCCL_IN_PROGRESS) aux.errors |= ACE_ERROR;
      if (r.asyncError !== 0 && r.asyncError !== NCCL_IN_PROGRESS) aux.errors |= ACE_ERROR;
    });
    if (aux.status === 0) throw new Error(`communicator ${comm.hash.toString(16)}: no rank answered; NCCL's output is undefined there (not modeled)`);
    if (popcount(aux.status) > 1) aux.errors |= ACE_MISMATCH;
    return aux;
  });
}

/** rasAuxCommsCompareRev: larger size, more nodes, higher status, more errors first; fewer ranks present first. */
/** @param {AuxComm} a @param {AuxComm} b */
function auxCommCompareRev(a, b) {
  if (a.comm.size !== b.comm.size) return a.comm.size > b.comm.size ? -1 : 1;
  if (a.nNodes !== b.nNodes) return a.nNodes > b.nNodes ? -1 : 1;
  const sa = Math.clz32(a.status);
  const sb = Math.clz32(b.status);
  if (sa !== sb) return sa < sb ? -1 : 1;
  if (a.errors !== b.errors) return a.errors > b.errors ? -1 : 1;
  if (a.comm.ranks.length !== b.comm.ranks.length) return a.comm.ranks.length < b.comm.ranks.length ? -1 : 1;
  return 0;
}

/** @param {ReturnType<typeof model>} m @param {boolean} verbose */
function textTail(m, verbose) {
  const { v } = m;
  const statusStr = ["NOCOMM", "INIT", "RUNNING", "FINALIZE", "ABORT"];
  if (!v.perTypeCounts) statusStr[0] = "UNKNOWN";
  const auxComms = analyzeComms(m).sort(auxCommCompareRev); // Array.prototype.sort is stable
  /** @type {{ first: number, count: number }[]} */
  const groups = [];
  auxComms.forEach((a, i) => {
    const p = auxComms[i - 1];
    const last = groups[groups.length - 1];
    if (
      i === 0 ||
      !p ||
      !last ||
      a.comm.size !== p.comm.size ||
      a.nNodes !== p.nNodes ||
      Math.clz32(a.status) !== Math.clz32(p.status) ||
      a.errors !== p.errors
    ) {
      groups.push({ first: i, count: 1 });
    } else last.count++;
  });

  let out = ` (${m.gatherSeconds.toFixed(v.timeDecimals)}s)\n=============\n\n`;
  if (v.perTypeCounts) {
    out +=
      auxComms.length > 0
        ? "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n    #  in group  per comm  per node  per comm  in group\n"
        : "No communicator data collected!\n";
  } else {
    out += "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n    #  in group  per comm  per node  per comm  in group\n";
    if (auxComms.length === 0) out += "No communicator data collected!\n";
  }
  groups.forEach((g, gi) => {
    const members = auxComms.slice(g.first, g.first + g.count);
    const head = /** @type {AuxComm} */ (members[0]);
    let min = MAX_LOCAL_RANKS;
    let max = 0;
    /** @type {Set<string>} */
    const gpus = new Set();
    for (const a of members) {
      min = Math.min(min, a.rpnMin);
      max = Math.max(max, a.rpnMax);
      for (const r of a.comm.ranks) gpus.add(`${r.peer.idx}/${r.nvmlDev}`);
    }
    const rpn = min === max ? `${min}` : `${min}-${max}`;
    out += `${pad(gi, 5)}  ${pad(g.count, 8)}  ${pad(head.nNodes, 8)}  ${pad(rpn, 8)}  ${pad(head.comm.size, 8)}  ${pad(gpus.size, 8)}  ${pad(statusStr[highBit(head.status)] ?? "", 8)}  ${pad(ERROR_STR[head.errors] ?? "", 6)}\n`;
  });

  // Errors.
  out += "\nErrors\n======\n\n";
  /** @param {Peer[]} list */
  const peerList = (list) =>
    [...list]
      .sort((a, b) => hostCompare(a.host, b.host) || a.pid - b.pid)
      .map((p) => `  ${peerLine(p)}\n`)
      .join("");
  if (m.nPeersMissing > 0) {
    out += `INCOMPLETE\n  Missing communicator data from ${m.nPeersMissing} job process${m.nPeersMissing > 1 ? "es" : ""}\n`;
    if (rasCountIsOutlier(m.nPeersMissing, verbose)) out += peerList(m.peers.filter((p) => !p.dead && p.unresponsive));
    out += "\n";
  }
  if (m.nDead > 0) {
    out += `DEAD\n  ${m.nDead} job process${m.nDead > 1 ? "es are" : " is"} considered dead (unreachable via the RAS network)\n`;
    if (rasCountIsOutlier(m.nDead, verbose)) out += peerList(m.peers.filter((p) => p.dead));
    out += "\n";
  }
  /** @param {(a: AuxComm, label: string) => void} fn */
  const eachComm = (fn) =>
    groups.forEach((g, gi) =>
      auxComms.slice(g.first, g.first + g.count).forEach((a, ci) => fn(a, `#${gi}-${ci} (${a.comm.hash.toString(16).padStart(16, "0")})`)),
    );
  eachComm((a, label) => {
    const comm = a.comm;
    if (a.errors & ACE_INCOMPLETE) {
      if (v.perTypeCounts) {
        out += `${label} INCOMPLETE\n  Missing communicator data from ${a.nIncomplete} rank${a.nIncomplete > 1 ? "s" : ""}\n`;
        if (rasCountIsOutlier(a.nIncomplete, verbose)) {
          for (const mr of comm.missing) if (!responded(mr.peer)) out += `  Rank ${mr.rank} -- ${rankWhere(mr)}\n`;
        }
      } else {
        const nMissing = comm.size - comm.ranks.length;
        out += `${label} INCOMPLETE\n  Missing communicator data from ${nMissing} rank${nMissing > 1 ? "s" : ""}\n`;
        if (rasCountIsOutlier(nMissing, verbose)) out += `  The missing rank${nMissing > 1 ? "s" : ""}: ${absentRanks(comm)}\n`;
      }
      out += "\n";
    }
    if (a.errors & ACE_ERROR) {
      out += `${label} ERROR\n`;
      for (const isAsync of [false, true]) {
        /** @param {Rank} r */
        const errOf = (r) => (isAsync ? r.asyncError : r.initState);
        const tally = Array(8).fill(0);
        for (const r of comm.ranks) tally[errOf(r)]++;
        const nErrors = comm.ranks.length - (tally[0] + tally[NCCL_IN_PROGRESS]);
        if (nErrors <= 0) continue;
        out += `  ${isAsync ? "Asynchronous" : "Initialization"} error${nErrors > 1 ? "s" : ""} on ${nErrors} rank${nErrors > 1 ? "s" : ""}\n`;
        for (;;) {
          let maxCount = 0;
          let maxIdx = 0;
          for (let i = 1; i < NCCL_IN_PROGRESS; i++) if (maxCount < tally[i]) [maxCount, maxIdx] = [tally[i], i];
          if (maxIdx === 0) break;
          if (maxCount > 1) out += `  ${maxCount} ranks reported ${ncclErrorToString(maxIdx)}\n`;
          if (rasCountIsOutlier(maxCount, verbose)) {
            for (const r of comm.ranks) {
              if (errOf(r) !== maxIdx) continue;
              out += maxCount > 1 ? `  Rank ${r.rank} -- ${rankWhere(r)}\n` : `  Rank ${r.rank} reported ${ncclErrorToString(maxIdx)} -- ${rankWhere(r)}\n`;
            }
          }
          tally[maxIdx] = 0;
        }
      }
      out += "\n";
    }
  });

  // Warnings.
  out += "Warnings\n========\n\n";
  if (m.timeouts > 0) out += `TIMEOUT\n  Encountered ${m.timeouts} communication timeout${m.timeouts > 1 ? "s" : ""} while gathering communicator data\n\n`;
  eachComm((a, label) => {
    if (!(a.errors & ACE_MISMATCH)) return;
    const comm = a.comm;
    out += `${label} MISMATCH\n`;
    if (popcount(a.status) > 1) {
      out += "  Communicator ranks have different status\n";
      const byStatus = [...comm.ranks].sort((x, y) => rankStatus(x) - rankStatus(y) || x.rank - y.rank);
      const vcs = valCounts(byStatus, rankStatus).map((vc) => ({ ...vc, value: highBit(vc.value) }));
      const nocomm = v.perTypeCounts ? comm.missing.length - a.nIncomplete : comm.size - comm.ranks.length;
      if (nocomm > 0) vcs.push({ value: 0, count: nocomm, first: -1 });
      vcs.sort(byCountRev);
      for (const vc of vcs) {
        const name = statusStr[vc.value] ?? "";
        if (vc.count > 1) out += `  ${vc.count} ranks have status ${name}\n`;
        if (!rasCountIsOutlier(vc.count, verbose, comm.size)) continue;
        if (vc.first !== -1) {
          for (const r of byStatus.slice(vc.first, vc.first + vc.count)) {
            out += vc.count > 1 ? `  Rank ${r.rank} -- ${rankWhere(r)}\n` : `  Rank ${r.rank} has status ${name} -- ${rankWhere(r)}\n`;
          }
        } else if (v.perTypeCounts) {
          for (const mr of comm.missing) {
            if (!responded(mr.peer)) continue;
            out += vc.count > 1 ? `  Rank ${mr.rank} -- ${rankWhere(mr)}\n` : `  Rank ${mr.rank} has status ${name} -- ${rankWhere(mr)}\n`;
          }
        } else {
          out += vc.count > 1 ? `  The unknown ranks: ${absentRanks(comm)}\n` : `  Rank ${absentRanks(comm)} has status ${name}\n`;
        }
      }
    }
    if (v.perTypeCounts) {
      FUNCS.forEach((fn, k) => {
        if (comm.ranks.every((r) => r.counts[k] === comm.ranks[0]?.counts[k])) return;
        out += `  Communicator ranks have different ${fn} operation counts\n`;
        out += countBlock(comm, (r) => r.counts[k] ?? 0, verbose, true);
        out += "\n";
      });
    } else {
      if (!comm.ranks.every((r) => r.opCount === comm.ranks[0]?.opCount)) {
        out += "  Communicator ranks have different collective operation counts\n";
        out += countBlock(comm, (r) => r.opCount, verbose, false);
      }
      out += "\n";
    }
  });
  return out;
}

/**
 * The ranks of one op-count comparison: groups by count, most frequent first, then the outliers' ranks.
 * @param {Comm} comm @param {(r: Rank) => number} countOf @param {boolean} verbose @param {boolean} notLaunched
 */
function countBlock(comm, countOf, verbose, notLaunched) {
  let out = "";
  const sorted = [...comm.ranks].sort((x, y) => countOf(x) - countOf(y) || x.rank - y.rank);
  const vcs = valCounts(sorted, countOf).sort(byCountRev);
  for (const vc of vcs) {
    const none = notLaunched && vc.value <= 0;
    if (vc.count > 1)
      out += none ? `  ${vc.count} ranks have not launched any operations\n` : `  ${vc.count} ranks have launched up to operation ${vc.value}\n`;
    if (!rasCountIsOutlier(vc.count, verbose, comm.size)) continue;
    for (const r of sorted.slice(vc.first, vc.first + vc.count)) {
      if (vc.count > 1) out += `  Rank ${r.rank} -- ${rankWhere(r)}\n`;
      else if (none) out += `  Rank ${r.rank} has not launched any operations -- ${rankWhere(r)}\n`;
      else out += `  Rank ${r.rank} has launched up to operation ${vc.value} -- ${rankWhere(r)}\n`;
    }
  }
  return out;
}

/** NCCL 2.24's list of the ranks absent from comm->ranks (it walks comm->ranks assuming commRank order). */
/** @param {Comm} comm */
function absentRanks(comm) {
  let s = "";
  for (let commRank = 0, i = 0; commRank < comm.size; commRank++) {
    if (i < comm.ranks.length && comm.ranks[i]?.rank === commRank) i++;
    else s += `${i === commRank ? "" : ","}${commRank}`;
  }
  return s;
}

// ---- JSON -----------------------------------------------------------------------------------------------------

/**
 * The `SET FORMAT json` + STATUS report (NCCL 2.28.7+; always verbose, no text header), byte for byte,
 * including 2.28.x's missing comma after a missing rank's "nvml_dev".
 * @param {any} job
 */
export function renderJson(job) {
  const m = model(job);
  if (!m.v.json) throw new Error(`NCCL ${job.version} has no JSON output (SET FORMAT json is 2.28.7+)`);
  const b = (/** @type {boolean} */ x) => (x ? "true" : "false");
  let out = "{\n";
  out += `  "nccl_version": "${job.version}",\n`;
  out += `  "cuda_runtime_version": ${m.cudaRuntime},\n`;
  out += `  "cuda_driver_version": ${m.cudaDriver},\n`;
  out += `  "timestamp": "${job.timestamp ?? "2026-01-01 00:00:00"}",\n`;
  out += `  "communicators_count": ${m.comms.length},\n`;
  out += '  "communicators": [\n';
  m.comms.forEach((c, ci) => {
    if (ci > 0) out += ",\n";
    out += "    {\n";
    out += `      "hash": "0x${c.hash.toString(16)}",\n`;
    out += `      "secondary_hash": "0x${c.hostHash.toString(16)}:0x${c.pidHash.toString(16)}",\n`;
    out += `      "size": ${c.size},\n`;
    out += `      "ranks_count": ${c.ranks.length},\n`;
    out += `      "missing_ranks_count": ${c.missing.length},\n`;
    out += '      "ranks": [\n';
    c.ranks.forEach((r, ri) => {
      if (ri > 0) out += ",\n";
      out += "        {\n";
      out += `          "rank": ${r.rank},\n          "host": "${r.peer.host}",\n          "pid": ${r.peer.pid},\n`;
      out += `          "cuda_dev": ${r.cudaDev},\n          "nvml_dev": ${r.nvmlDev},\n`;
      out += '          "status": {\n';
      out += `            "init_state": ${r.initState},\n            "async_error": ${r.asyncError},\n`;
      out += `            "finalize_called": ${b(r.finalizeCalled)},\n            "destroy_flag": ${b(r.destroyFlag)},\n            "abort_flag": ${b(r.abortFlag)}\n`;
      out += "          },\n";
      out += '          "collective_counts": {\n';
      FUNCS.forEach((f, k) => (out += `            "${f}": ${r.counts[k]}${k < FUNCS.length - 1 ? "," : ""}\n`));
      out += "          }\n        }";
    });
    out += '\n      ],\n      "missing_ranks": [\n';
    c.missing.forEach((mr, mi) => {
      if (mi > 0) out += ",\n";
      out += "        {\n";
      out += `          "rank": ${mr.rank},\n          "host": "${mr.peer.host}",\n          "pid": ${mr.peer.pid},\n`;
      out += `          "cuda_dev": ${mr.cudaDev},\n          "nvml_dev": ${mr.nvmlDev}${m.v.jsonMissingCommaBug ? "" : ","}\n`;
      out += '          "status": {\n';
      out += `            "unresponsive": ${b(!responded(mr.peer))},\n            "considered_dead": ${b(mr.peer.dead)}\n`;
      out += "          }\n        }";
    });
    out += "\n      ]\n    }";
  });
  out += "\n  ],\n";
  out += `  "ras": {\n    "collection_time_sec": ${m.gatherSeconds.toFixed(3)},\n    "timeouts_count": ${m.timeouts}\n  }\n}\n`;
  return out;
}

// ---- MONITOR events ---------------------------------------------------------------------------------------------

/** RAS_EVENT_* masks. */
export const EVENT_GROUPS = /** @type {const} */ ({ LIFECYCLE: 0x01, TRACE: 0x02, ALL: 0xff });

/** @param {Date} d */
export function formatLocalTime(d) {
  const p2 = (/** @type {number} */ x) => String(x).padStart(2, "0");
  return `${d.getFullYear()}-${p2(d.getMonth() + 1)}-${p2(d.getDate())} ${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())}`;
}

/**
 * One MONITOR notification as rasClientsNotifyEvent writes it (NCCL 2.29+). event: { type: "PEER_DEAD",
 * group?: "LIFECYCLE" | "TRACE", peer?: { host, pid, cudaDevs, nvmlDevs? }, addr?: { host, port }, details? }.
 * With `peer` (a process NCCL knows), the peer is described; with only `addr` (one it does not know), NCCL
 * prints ncclSocketToString's "host<port>".
 * @param {any} event
 * @param {{ format?: "text" | "json", time?: string }} [opts]
 */
export function renderEvent(event, opts = {}) {
  const time = opts.time ?? event.time ?? formatLocalTime(new Date());
  const details = event.details ?? "";
  const addrStr = event.addr ? `${event.addr.host}<${event.addr.port}>` : "";
  if ((opts.format ?? "text") === "json") {
    const group = (event.group ?? "LIFECYCLE") === "LIFECYCLE" ? "LIFECYCLE" : "TRACE";
    let out = `{\n  "timestamp": "${time}",\n  "group": "${group}",\n  "event": "${event.type}",\n`;
    if (event.peer) {
      const p = event.peer;
      const devs = (/** @type {number[]} */ d) => `[${[...new Set(d)].sort((a, b) => a - b).join(",")}]`;
      out += `  "peer": {\n    "host": "${p.host}",\n    "pid": ${p.pid},\n    "cuda_devs": ${devs(p.cudaDevs ?? [])},\n    "nvml_devs": ${devs(p.nvmlDevs ?? p.cudaDevs ?? [])}\n  },\n`;
    } else if (event.addr) {
      out += `  "peer": {\n    "addr": "${addrStr}"\n  },\n`;
    }
    return `${out}  "details": "${details}"\n}\n`;
  }
  const peerStr = event.peer
    ? peerLine({ host: event.peer.host, pid: event.peer.pid, cuda: event.peer.cudaDevs ?? [], nvml: event.peer.nvmlDevs ?? event.peer.cudaDevs ?? [] })
    : addrStr;
  return peerStr ? `[${time}] ${event.type}: ${peerStr} ${details}\n` : `[${time}] ${event.type}: ${details}\n`;
}

// ---- DIAGNOSTICS (2.31.2+) ------------------------------------------------------------------------------------

const DIAG_TAG_OK = "[OK]   "; // RAS_DIAG_TAG_OK
const DIAG_TAG_INFO = "[INFO] "; // RAS_DIAG_TAG_INFO
const DIAG_RANK_SET_MAX = 8; // RAS_DIAG_RANK_SET_MAX
const XID_DOC = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html";
const SXID_DOC = "https://docs.nvidia.com/hgx-platforms/fabric-manager-user-guide/index.html";
/** rasDiagnosticsXidClassify (diagnostics_xid.cc, v2.32.3). */
const XID_NO_USER_ACTION = [63, 106, 107];
const XID_RESTART_APPLICATION = [
  8, 11, 13, 25, 31, 32, 39, 40, 41, 60, 68, 69, 70, 71, 72, 75, 76, 77, 80, 82, 83, 84, 85, 86, 88, 89, 94, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 126,
  127, 128, 129, 130, 131, 132, 133, 134, 135, 139,
];
const XID_RESET_GPU = [46, 62, 64, 95, 109, 110, 119, 120, 136, 140, 143, 155, 156, 158];
/** rasDiagnosticsSxidClassify: the Non-fatal SXids that need no action. */
const SXID_NO_USER_ACTION = [
  11012, 11021, 11022, 11023, 12021, 12023, 15008, 15011, 19049, 19055, 19057, 19059, 19062, 19065, 19068, 19071, 22013, 24001, 24002, 24003,
];
/** topoPathTypeStr order, PATH_LOC printed "self". */
const PATH_TYPES = ["self", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS"];
const RDMA_TOPO_STATES = ["not applicable", "needs root", "inconclusive", "unavailable"];

/**
 * rasDiagnosticsFormatRankSet: "{r1,r2}", or the first 8 and ",...} (N=total)".
 * @param {number[]} ranks
 */
export function diagRankSet(ranks) {
  const shown = ranks.slice(0, DIAG_RANK_SET_MAX).join(",");
  return ranks.length > DIAG_RANK_SET_MAX ? `{${shown},...} (N=${ranks.length})` : `{${shown}}`;
}

/** rasDiagnosticsEnv{Key,Value}Display: control characters as '?', cut at 252 characters plus "...". */
/** @param {string} s */
function envDisplay(s) {
  const clean = s.replace(/[\x00-\x1f\x7f]/g, "?");
  return clean.length > 252 ? `${clean.slice(0, 252)}...` : clean;
}

/**
 * The process whose listener answers, as NCCL names it in every line: the host name (`diag.hostNames` of its
 * address, else the address) and pid of `diag.answeredBy`, else of the lowest responding rank of the first
 * communicator, else of the first responding process.
 * @param {any} job
 * @returns {{ host: string, pid: number }}
 */
export function diagnosticsSource(job) {
  const m = model(job);
  /** @param {string} addr */
  const hostName = (addr) => String(job.diag?.hostNames?.[addr] ?? addr);
  if (job.diag?.answeredBy) return { host: String(job.diag.answeredBy.host), pid: Number(job.diag.answeredBy.pid) };
  const first = [...(m.comms[0]?.ranks ?? [])].sort((a, b) => a.rank - b.rank).find((r) => responded(r.peer))?.peer ?? m.peers.find(responded);
  return first ? { host: hostName(first.host), pid: first.pid } : { host: "localhost", pid: 1 };
}

/**
 * The text NCCL sends for `DIAGNOSTICS` (NCCL 2.31.2+; throws for older versions), every line
 * "<host>:<pid> NCCL DIAG <body>\n": the header, the checks in NCCL's dispatch order (diagnostics.cc
 * rasDiagnosticsChecks: GPU inventory, CUDA driver version, ECC, NVLink, NCCL environment; from 2.32.3 also
 * rdma_topo, IOMMU, ATS, Xid/SXid, NVIDIA graphics driver version, Paths), then the completion line. Within a
 * check, communicators in (commHash, hostHash, pidHash) order, ranks in rank order. The model (render.d.mts
 * RasDiag) says what each rank's NVML, driver, environment and kernel log report; defaults make a healthy job.
 *
 * Who answered: the ranks in `comm.ranks` of processes that are neither dead nor unresponsive. A communicator
 * with fewer than its size prints "<check>: diagnostics incomplete, gathered x/y ranks in comm
 * 0x<commHash>/0x<hostHash>/0x<pidHash>" for every per-communicator check instead of its result; one with no
 * answering rank prints nothing. The completion line counts the processes that answered ("RAS peers", the
 * unscoped on-demand request). Xid/SXid is per host: the hosts of the answering processes that hold a
 * communicator; a host whose processes all failed to answer is absent.
 *
 * Not modeled: per-link NVLink speeds (2.32.3 reports a speed mismatch), corrected-ECC thresholds
 * (NCCL_DIAGNOSTICS_ECC_THRESHOLD, default off), truncated env records, pre-Ampere Xid guidance, mixed
 * rdma_topo/IOMMU/ATS states within a communicator, topology-not-ready records, "ERROR: diagnostics summary
 * failed"; NCCL orders Xid hosts by a host hash, the model by host name.
 * @param {any} job
 * @param {{ host?: string, pid?: number, ms?: number }} [opts] host/pid: the answering process (default
 *   diagnosticsSource); ms: the "completed in" time (default 0)
 */
export function renderDiagnostics(job, opts = {}) {
  const m = model(job);
  if (!m.v.diagnostics) throw new Error(`NCCL ${job.version} has no DIAGNOSTICS (2.31.2+)`);
  const full = m.v.diagXid;
  /** @type {any} */
  const d = job.diag ?? {};
  const src = diagnosticsSource(job);
  const host = opts.host ?? src.host;
  const pid = opts.pid ?? src.pid;
  let out = "";
  /** @param {string} body */
  const emit = (body) => (out += `${host}:${pid} NCCL DIAG ${body}\n`);
  /** rasDiagnosticsReport: tag + text in a 1024-byte line. @param {string} tag @param {string} text */
  const report = (tag, text) => emit(`${tag}${text}`.slice(0, 1023));
  /** @param {string} addr */
  const hostName = (addr) => String(d.hostNames?.[addr] ?? addr);
  /** A rank's value: diag.ranks[rank][key], else diag[key], else the default. @param {number} rank @param {string} key @param {any} dflt */
  const val = (rank, key, dflt) => d.ranks?.[rank]?.[key] ?? d[key] ?? dflt;
  const hex = (/** @type {bigint} */ h) => `0x${h.toString(16)}`;

  emit("=== RAS Diagnostics ===");
  const comms = m.comms
    .map((c) => ({ c, recs: c.ranks.filter((r) => responded(r.peer)).sort((a, b) => a.rank - b.rank) }))
    .filter((x) => x.recs.length > 0)
    .sort((x, y) => {
      const a = x.c;
      const b = y.c;
      if (a.hash !== b.hash) return a.hash < b.hash ? -1 : 1;
      if (a.hostHash !== b.hostHash) return a.hostHash < b.hostHash ? -1 : 1;
      return a.pidHash < b.pidHash ? -1 : a.pidHash > b.pidHash ? 1 : 0;
    });
  /**
   * Runs `fn` for each communicator that answered in full; prints the incomplete line for the others.
   * @param {string} label @param {(c: Comm, recs: Rank[], id: string) => void} fn
   */
  const perComm = (label, fn) => {
    for (const { c, recs } of comms) {
      if (recs.length !== c.size) {
        report(
          DIAG_TAG_INFO,
          `${label}: diagnostics incomplete, gathered ${recs.length}/${c.size} ranks in comm ${hex(c.hash)}/${hex(c.hostHash)}/${hex(c.pidHash)}`,
        );
      } else fn(c, recs, hex(c.hash));
    }
  };
  /** rasDiagnosticsVersionSummarize. @param {string} label @param {(r: Rank) => [string, boolean]} fmt */
  const versionCheck = (label, fmt) =>
    perComm(label, (c, recs, id) => {
      const [ref, ok] = fmt(/** @type {Rank} */ (recs[0]));
      const diff = recs.slice(1).filter((r) => fmt(r)[0] !== ref || fmt(r)[1] !== ok);
      if (diff.length > 0) {
        report(
          DIAG_TAG_INFO,
          `${label}: mismatch across ${c.size} ranks in comm ${id}, rank(s) ${diagRankSet(diff.map((r) => r.rank))} differ from rank ${recs[0]?.rank} (${ref})`,
        );
      } else if (ok) report(DIAG_TAG_OK, `${label}: ${ref} consistent across ${c.size} ranks in comm ${id}`);
      else report(DIAG_TAG_INFO, `${label}: ${ref} across ${c.size} ranks in comm ${id}`);
    });

  // GPU inventory (NVML device count on the node, as uint8; the rank's GPU name or "unknown").
  perComm("GPU inventory", (c, recs, id) => {
    const count = (/** @type {Rank} */ r) => Number(val(r.rank, "gpusPerNode", 8)) & 0xff;
    const name = (/** @type {Rank} */ r) => String(val(r.rank, "gpuModel", "NVIDIA H100 80GB HBM3") || "unknown").slice(0, 95);
    const ref = /** @type {Rank} */ (recs[0]);
    const countDiff = recs.slice(1).filter((r) => count(r) !== count(ref));
    const modelDiff = recs.slice(1).filter((r) => name(r) !== name(ref));
    if (countDiff.length === 0 && modelDiff.length === 0) {
      const countKnown = count(ref) > 0;
      const modelKnown = name(ref) !== "unknown";
      if (countKnown && modelKnown) report(DIAG_TAG_OK, `GPU inventory: ${count(ref)}x ${name(ref)} per node consistent across ${c.size} ranks in comm ${id}`);
      else if (countKnown)
        report(DIAG_TAG_INFO, `GPU inventory: ${count(ref)} GPUs per node consistent across ${c.size} ranks in comm ${id}, GPU model unavailable via NVML`);
      else if (modelKnown)
        report(DIAG_TAG_INFO, `GPU inventory: ${name(ref)} per node consistent across ${c.size} ranks in comm ${id}, GPU count unavailable via NVML`);
      else report(DIAG_TAG_INFO, `GPU inventory: unavailable via NVML across ${c.size} ranks in comm ${id}`);
      return;
    }
    if (countDiff.length > 0) {
      report(
        DIAG_TAG_INFO,
        `GPU inventory: count mismatch across ${c.size} ranks in comm ${id}, rank(s) ${diagRankSet(countDiff.map((r) => r.rank))} differ from rank ${ref.rank} (${count(ref)})`,
      );
    }
    if (modelDiff.length > 0) {
      report(
        DIAG_TAG_INFO,
        `GPU inventory: model mismatch across ${c.size} ranks in comm ${id}, rank(s) ${diagRankSet(modelDiff.map((r) => r.rank))} differ from rank ${ref.rank} (${name(ref)})`,
      );
    }
  });

  // CUDA driver version (cudaDriverGetVersion, "%u"; 0: no driver in 2.32.3, unknown in 2.31.2).
  versionCheck("CUDA driver version", (r) => {
    const v = Number(val(r.rank, "cudaDriver", m.cudaDriver));
    if (v === 0) return [full ? "no driver installed" : "unavailable", false];
    return [String(v >>> 0), true];
  });

  // ECC: volatile uncorrected SRAM+DRAM errors; every counter available.
  perComm("ECC", (c, recs, id) => {
    const unc = (/** @type {Rank} */ r) => Number(d.eccUncorrected?.[r.rank] ?? 0);
    const bad = recs.filter((r) => unc(r) > 0);
    if (bad.length === 0) report(DIAG_TAG_OK, `ECC: no uncorrected volatile errors across ${c.size} ranks in comm ${id}`);
    else {
      const worst = Math.max(...bad.map(unc));
      report(
        DIAG_TAG_INFO,
        `ECC: uncorrected volatile errors on rank(s) ${diagRankSet(bad.map((r) => r.rank))} (worst=${worst}) across ${c.size} ranks in comm ${id}`,
      );
    }
  });

  // NVLink: links per GPU (2.31.2 scans link ids 0..17), one inactive on the ranks of nvlinkInactive.
  perComm("NVLink", (c, recs, id) => {
    const links = (/** @type {Rank} */ r) => {
      const n = Number(val(r.rank, "nvlinkLinks", 18)) & 0xff;
      return full ? n : Math.min(n, 18);
    };
    const inactive = (/** @type {Rank} */ r) => links(r) > 0 && (d.nvlinkInactive ?? []).includes(r.rank);
    const ref = /** @type {Rank} */ (recs[0]);
    if (!recs.some((r) => links(r) > 0)) return; // PCIe only: nothing to report
    const countDiff = recs.filter((r) => links(r) !== links(ref));
    const down = recs.filter(inactive);
    if (countDiff.length === 0 && down.length === 0) {
      report(
        DIAG_TAG_OK,
        full
          ? `NVLink: ${links(ref)} links per GPU, all active at consistent speed across ${c.size} ranks in comm ${id}`
          : `NVLink: found ${links(ref)} link(s) per device, all active across ${c.size} ranks in comm ${id}`,
      );
      return;
    }
    if (countDiff.length > 0) {
      report(
        DIAG_TAG_INFO,
        `NVLink: link-count mismatch across ${c.size} ranks in comm ${id}, rank(s) ${diagRankSet(countDiff.map((r) => r.rank))} differ from rank ${ref.rank} (${links(ref)})`,
      );
    }
    if (down.length > 0)
      report(DIAG_TAG_INFO, `NVLink: inactive link(s) on rank(s) ${diagRankSet(down.map((r) => r.rank))} across ${c.size} ranks in comm ${id}`);
  });

  // NCCL environment: the NCCL_* variables that differ, keys in byte order, values in order of first rank.
  perComm("NCCL environment", (c, recs, id) => {
    /** @type {Record<string, Record<string, string>>} */
    const env = d.env ?? {};
    /** @param {Rank} r @param {string} k @returns {string | undefined} */
    const value = (r, k) => env[k]?.[String(r.rank)] ?? env[k]?.["*"];
    const keys = Object.keys(env)
      .filter((k) => k.startsWith("NCCL_") && !k.includes("=") && recs.some((r) => value(r, k) !== undefined))
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    let nMismatch = 0;
    for (const k of keys) {
      const first = value(/** @type {Rank} */ (recs[0]), k);
      if (recs.every((r) => value(r, k) === first)) continue;
      nMismatch++;
      report(DIAG_TAG_INFO, `NCCL environment: mismatch across ${c.size} ranks in comm ${id} for ${envDisplay(k)}`);
      /** @type {Map<string | undefined, number[]>} */
      const groups = new Map();
      for (const r of recs) {
        const v = value(r, k);
        const g = groups.get(v);
        if (g) g.push(r.rank);
        else groups.set(v, [r.rank]);
      }
      for (const [v, ranks] of groups) {
        report(DIAG_TAG_INFO, `NCCL environment: ${envDisplay(k)}=${v === undefined ? "(unset)" : envDisplay(v)} on rank(s) ${diagRankSet(ranks)}`);
      }
    }
    if (nMismatch === 0) report(DIAG_TAG_OK, `NCCL environment: NCCL_* env vars consistent across ${c.size} ranks in comm ${id}`);
    else report(DIAG_TAG_INFO, `NCCL environment: ${nMismatch} NCCL_* env var(s) differ across ranks in comm ${id}`);
  });

  if (full) {
    // rdma_topo: one state for every process; "passed" / {failed} ran the tool, the others fall back.
    const topo = d.rdmaTopo ?? "unavailable";
    const ran = topo === "passed" || typeof topo === "object";
    if (!ran && !RDMA_TOPO_STATES.includes(topo)) throw new Error(`diag.rdmaTopo ${JSON.stringify(topo)}`);
    perComm("rdma_topo check", (c, recs, id) => {
      if (!ran) {
        report(DIAG_TAG_INFO, `rdma_topo check: not usable on ${recs.length}/${c.size} ranks in comm ${id} (${topo})`);
        return;
      }
      /** @type {number[]} */
      const failed = typeof topo === "object" ? (topo.failed ?? []) : [];
      const bad = recs.filter((r) => failed.includes(r.rank));
      if (bad.length === 0) report(DIAG_TAG_OK, `rdma_topo check: passed on ${recs.length}/${c.size} ranks in comm ${id}`);
      else {
        report(
          DIAG_TAG_INFO,
          `rdma_topo check: failed on rank(s) ${diagRankSet(bad.map((r) => r.rank))} across ${recs.length}/${c.size} ranks in comm ${id}; first rank ${bad[0]?.rank} exit ${Number(topo.exitCode ?? 1)}: ${String(topo.sample ?? "FAIL").slice(0, 255)}`,
        );
      }
    });

    // IOMMU and ATS: only where rdma_topo was not conclusive and the rank's channels use a NIC (diag.nic).
    const nic = ran ? undefined : d.nic;
    const bdf = String(nic?.bdf ?? "0000:0c:00.0");
    perComm("IOMMU mode", (c, recs, id) => {
      if (!nic) return;
      const mode = nic.iommu ?? "passthrough";
      const n = recs.length;
      report(
        mode !== "enabled (DMA remapping)" ? DIAG_TAG_OK : DIAG_TAG_INFO,
        `IOMMU mode: ${mode} for ${2 * n} relevant device(s) across ${n}/${c.size} ranks in comm ${id}`,
      );
      if (mode === "disabled") return; // no IOMMU groups to compare
      const gpuGroup = Number(nic.gpuGroup ?? 40);
      const nicGroup = Number(nic.nicGroup ?? 40);
      if (gpuGroup !== nicGroup) {
        report(
          DIAG_TAG_INFO,
          `IOMMU groups: GPU and NIC groups differ on ${n} pair(s) in comm ${id}; first rank ${recs[0]?.rank} GPU group ${gpuGroup} NIC ${bdf} group ${nicGroup}`,
        );
      } else report(DIAG_TAG_OK, `IOMMU groups: GPU and NIC groups match on ${n} pair(s) across ${n}/${c.size} ranks in comm ${id}`);
    });
    perComm("ATS state", (c, recs, id) => {
      if (!nic) return;
      const ats = nic.ats ?? "enabled";
      const n = recs.length;
      const first = recs[0]?.rank;
      if (ats === "enabled") report(DIAG_TAG_OK, `ATS state: enabled on ${n} rank/NIC pair(s) across ${c.size} ranks in comm ${id}`);
      else if (ats === "disabled") {
        report(DIAG_TAG_INFO, `ATS state: disabled on ${n} rank/NIC pair(s) across ${n}/${c.size} ranks in comm ${id}`);
        report(DIAG_TAG_INFO, `ATS state: ATSCtl disabled on ${n} rank/NIC pair(s) in comm ${id}; first rank ${first} NIC ${bdf}`);
      } else if (ats === "needs root") {
        report(DIAG_TAG_INFO, `ATS state: PCIe capabilities require root access on ${n} rank/NIC pair(s) across ${n}/${c.size} ranks in comm ${id}`);
        report(DIAG_TAG_INFO, `ATS state: PCIe capabilities inaccessible on ${n} rank/NIC pair(s) in comm ${id}; first rank ${first} NIC ${bdf}`);
      } else throw new Error(`diag.nic.ats ${JSON.stringify(ats)}`);
    });

    // Xid/SXid, per host: the hosts of answering processes that hold a communicator.
    const hosts = [...new Set(comms.flatMap(({ recs }) => recs.map((r) => hostName(r.peer.host))))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    if (hosts.length > 0) {
      /** @type {Record<string, string>} */
      const kernelLog = d.kernelLog ?? {};
      let complete = true;
      for (const h of hosts) {
        if (kernelLog[h] === "unavailable") {
          complete = false;
          report(DIAG_TAG_INFO, `Xid/SXid: no kernel-log source was available on host ${h}`);
        } else if (kernelLog[h] === "truncated") {
          complete = false;
          report(DIAG_TAG_INFO, `Xid/SXid: recent-event scan was truncated on host ${h}`);
        }
      }
      /** @typedef {{ host: string, type: number, code: number, cls: number, count: number, atLeast: boolean, links: number[] }} Finding */
      /** @type {Map<string, Finding>} */
      const findings = new Map();
      /** @param {Finding} f */
      const add = (f) => {
        if (!hosts.includes(f.host) || kernelLog[f.host] === "unavailable" || !(f.count > 0)) return;
        const key = `${f.host}|${f.type}|${f.code}|${f.cls}`;
        const old = findings.get(key);
        if (!old) findings.set(key, { ...f, links: [...f.links] });
        else {
          old.count += f.count;
          old.atLeast ||= f.atLeast;
          old.links.push(...f.links);
        }
      };
      for (const x of d.xids ?? [])
        add({ host: String(x.host), type: 1, code: Number(x.xid), cls: 0, count: Number(x.count), atLeast: !!x.atLeast, links: [] });
      for (const x of d.sxids ?? []) {
        const cls = x.classification === "Fatal" ? 2 : x.classification === "Non-fatal" ? 1 : -1;
        if (cls < 0) throw new Error(`diag.sxids classification must be "Fatal" or "Non-fatal", got ${JSON.stringify(x.classification)}`);
        add({ host: String(x.host), type: 2, code: Number(x.sxid), cls, count: Number(x.count), atLeast: !!x.atLeast, links: (x.links ?? []).map(Number) });
      }
      const sorted = [...findings.values()].sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : a.type - b.type || a.code - b.code || a.cls - b.cls));
      for (const f of sorted) {
        const times = `${f.atLeast ? "at least " : ""}${f.count} ${f.count === 1 && !f.atLeast ? "time" : "times"}`;
        if (f.type === 2) {
          const links = `{${[...new Set(f.links)].sort((a, b) => a - b).join(",")}}`;
          const what = `SXid ${f.code} detected ${times} (NVSwitch driver reported ${f.cls === 2 ? "Fatal" : "Non-fatal"}, link(s) ${links}) on host ${f.host}.`;
          if (f.cls === 1 && SXID_NO_USER_ACTION.includes(f.code))
            report(DIAG_TAG_OK, `${what} No user action or further investigation is required for this SXid.`);
          else report(DIAG_TAG_INFO, `${what} See the NVIDIA Fabric Manager documentation for the recommended response: ${SXID_DOC}`);
          continue;
        }
        const what = `Xid ${f.code} detected ${times} on host ${f.host}.`;
        if (XID_NO_USER_ACTION.includes(f.code)) report(DIAG_TAG_OK, `${what} No user action or further investigation is required for this Xid.`);
        else if (XID_RESTART_APPLICATION.includes(f.code))
          report(DIAG_TAG_INFO, `${what} Restart the affected application. For guidance, see the NVIDIA Xid documentation: ${XID_DOC}`);
        else if (XID_RESET_GPU.includes(f.code)) {
          report(
            DIAG_TAG_INFO,
            `${what} The NVIDIA Xid catalog recommends resetting the affected GPU. Follow the documented GPU-reset capabilities and limitations: ${XID_DOC}`,
          );
        } else report(DIAG_TAG_INFO, `${what} For the recommended response, see the NVIDIA Xid documentation: ${XID_DOC}`);
      }
      if (sorted.length === 0 && complete) {
        report(DIAG_TAG_OK, `Xid/SXid: no events requiring immediate attention across ${hosts.length} host${hosts.length === 1 ? "" : "s"}`);
      }
    }

    // NVIDIA graphics driver version (nvmlSystemGetDriverVersion; "" = unavailable).
    versionCheck("NVIDIA graphics driver version", (r) => {
      const v = String(val(r.rank, "nvidiaDriver", "570.133.20")).slice(0, 79);
      return v === "" ? ["unavailable via NVML", false] : [v, true];
    });

    // Paths: the union of the path types each rank uses ("NAME(n/N)" where only some ranks use it).
    perComm("Paths", (c, recs, id) => {
      if (d.paths !== undefined) {
        const p = String(d.paths);
        report(p.includes("(") || p.includes("DIS") ? DIAG_TAG_INFO : DIAG_TAG_OK, `Paths: ${p} across ${c.size} ranks in comm ${id}`);
        return;
      }
      const used = PATH_TYPES.map(() => 0);
      for (const r of recs) {
        used[0] = (used[0] ?? 0) + 1;
        const local = recs.some((o) => o !== r && o.peer.host === r.peer.host);
        const remote = recs.some((o) => o.peer.host !== r.peer.host);
        const intra = Number(val(r.rank, "nvlinkLinks", 18)) > 0 ? 1 : 8; // NVL, else PHB
        if (local) used[intra] = (used[intra] ?? 0) + 1;
        if (remote) used[10] = (used[10] ?? 0) + 1; // NET
      }
      let info = false;
      const parts = [];
      for (let t = 0; t < PATH_TYPES.length; t++) {
        const n = used[t] ?? 0;
        if (n === 0) continue;
        if (n !== c.size) info = true;
        parts.push(n === c.size ? PATH_TYPES[t] : `${PATH_TYPES[t]}(${n}/${c.size})`);
      }
      report(info ? DIAG_TAG_INFO : DIAG_TAG_OK, `Paths: ${parts.join("+")} across ${c.size} ranks in comm ${id}`);
    });
  }

  const nPeers = m.peers.filter(responded).length;
  emit(`RAS diagnostics completed in ${Number(opts.ms ?? 0).toFixed(1)} ms across ${nPeers} RAS peers`.slice(0, 63));
  return out;
}

/**
 * CONTROL PROFILER_MASK's default: the job's `profilerMask`, else NCCL Inspector's Coll|P2p|KernelCh (0x46)
 * when `inspector` says it is loaded, else 0.
 * @param {any} job
 */
export function defaultProfilerMask(job) {
  if (job?.profilerMask !== undefined) return Number(job.profilerMask) >>> 0;
  return job?.inspector ? 0x46 : 0;
}

// ---- building jobs ---------------------------------------------------------------------------------------------

/**
 * A job of one communicator over `nodes` x `ranksPerNode` processes, one GPU each (rank r on node
 * floor(r / ranksPerNode), GPU r % ranksPerNode, pid pidBase + r unless pidOf says otherwise).
 * @param {{ version: string, nodes: number, ranksPerNode: number, hash?: string, counts?: Record<string, number>,
 *   countsOf?: (rank: number) => Record<string, number> | undefined, hostOf?: (node: number) => string,
 *   pidBase?: number, pidOf?: (rank: number) => number, cudaRuntime?: number, cudaDriver?: number,
 *   cudaCompiled?: string, gatherSeconds?: number, timestamp?: string }} o
 */
export function uniformJob(o) {
  const hostOf = o.hostOf ?? ((/** @type {number} */ n) => `10.0.0.${n + 1}`);
  const size = o.nodes * o.ranksPerNode;
  const ranks = Array.from({ length: size }, (_, r) => ({
    rank: r,
    host: hostOf(Math.floor(r / o.ranksPerNode)),
    pid: o.pidOf ? o.pidOf(r) : (o.pidBase ?? 4000) + r,
    cudaDev: r % o.ranksPerNode,
    nvmlDev: r % o.ranksPerNode,
    counts: { ...(o.countsOf?.(r) ?? o.counts ?? {}) },
  }));
  /** @type {Record<string, unknown>} */
  const job = {
    version: o.version,
    comms: [{ hash: o.hash ?? "0x49bbd7790311d5eb", hostHash: "0x6b8c2f3d1a4e5b70", pidHash: "0x1f2e3d4c5b6a7988", size, ranks }],
  };
  for (const k of /** @type {const} */ (["cudaRuntime", "cudaDriver", "cudaCompiled", "gatherSeconds", "timestamp"])) if (o[k] !== undefined) job[k] = o[k];
  return job;
}

/**
 * Moves ranks of a job's communicator from `ranks` to `missing` (a process that did not answer, or died).
 * Returns a new job; the input is not changed.
 * @param {any} job @param {number} commIdx @param {number[]} rankIds @param {{ dead?: boolean }} [o]
 */
export function withMissing(job, commIdx, rankIds, o = {}) {
  const copy = JSON.parse(JSON.stringify(job));
  const comm = copy.comms[commIdx];
  const gone = comm.ranks.filter((/** @type {any} */ r) => rankIds.includes(r.rank));
  comm.ranks = comm.ranks.filter((/** @type {any} */ r) => !rankIds.includes(r.rank));
  comm.missing = [
    ...(comm.missing ?? []),
    ...gone.map((/** @type {any} */ r) => ({
      rank: r.rank,
      host: r.host,
      pid: r.pid,
      cudaDev: r.cudaDev,
      nvmlDev: r.nvmlDev,
      unresponsive: true,
      dead: !!o.dead,
    })),
  ];
  return copy;
}
