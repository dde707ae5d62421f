// @ts-check
/**
 * The cluster mode of test/fakes/nccl-ras (`nccl-ras --cluster <spec.json>`): a simulated NCCL job for a
 * "cluster in a box" on loopback. ONE process serves one RAS client listener per simulated node (node n on
 * 127.0.1.(n+1) by default: 127.0.0.0/8 is all loopback on Linux), all answering from one shared job state,
 * with NCCL's client protocol and formats (serve-job.mjs's protocol code, render.mjs's renderers). It counts
 * every job-wide collection (a STATUS, VERBOSE STATUS or DIAGNOSTICS on any listener) and the RAS-network
 * messages it costs, and every job-wide broadcast (CONTROL PROFILER_MASK, NCCL 2.31.2+).
 *
 * Spec (cluster-job.d.mts has the types): { version: "2.29.7", nodes: N, ranksPerNode: 8, port: 28028 | 0,
 *   nodeAddress?: "127.0.1.{n+1}" | ["a0", "a1", ...], pidBase?: 4000, stepMs?: 100, collectionsLog?: path,
 *   gatherDelayMs?: 0, listen?: true, hash?: "0x49bbd7790311d5eb", cudaRuntime?, cudaDriver?, diag?: {...},
 *   profilerMask?: 0x46, inspector?: true }
 * - One communicator of N*ranksPerNode ranks, one process per rank: rank r on node floor(r / ranksPerNode),
 *   named under that node's address, pid pidBase + r, cudaDev = nvmlDev = r % ranksPerNode.
 * - port: the RAS client port on every node address; 0 picks a free one per node (reported on "listening").
 * - A healthy job launches one AllReduce per rank every stepMs, and every 5th step an AllGather too (counts
 *   are computed from the clock when asked, so nothing ticks in between).
 * - collectionsLog: one JSON line appended per collection, before its answer leaves:
 *   {"t": epoch ms, "node": n, "command": "STATUS" | "VERBOSE STATUS" | "DIAGNOSTICS", "format": "json" | "text",
 *   "messages": m}
 * - gatherDelayMs: the gathering delay before the answer (text: the head leaves at once, as in NCCL); the
 *   reports' collection time ("Communicators... (0.250s)", JSON collection_time_sec, DIAGNOSTICS' "completed in
 *   <ms> ms") says the same.
 * - DIAGNOSTICS (2.31.2+; serve-job.mjs has the replies): a job-wide collection (RAS_COLL_DIAG, sent and answered
 *   over the RAS network as RAS_COLL_COMMS is: the same message count) whose answer is render.mjs
 *   renderDiagnostics of the job with `diag`, from node n's first process (pid of rank n * ranksPerNode, host
 *   diag.hostNames[node address] or the address); BUSY while another runs on the same node's listener (NCCL:
 *   per process; a node here is one process). JSON refusals and BUSY start no collection.
 * - CONTROL PROFILER_MASK (2.31.2+): a job-wide broadcast (RAS_BC_PROFILER_MASK; no response, not counted in
 *   messages) that sets the job's mask (stats.profilerMask); it starts at profilerMask, else 0x46 with
 *   inspector, else 0, and again so for a new job (version control line).
 * - listen: false opens no listener until {"listen": true}.
 *
 * Control lines on stdin, one JSON object a line, each acknowledged on stdout with "ctl <n>" (n counts them
 * from 1) once applied; several keys in one line apply in the order listed here:
 *   {"version": "2.27.3"}     a new job of that version: counts from 0, no hang, every node alive again (its
 *                             listener reopens on the same port if listening), every client connection of the
 *                             old job's processes closed
 *   {"listen": true}          opens the listeners not open yet (killed nodes stay closed), prints "listening"
 *   {"initialising": bool}    ranks report communicator status INIT (initState ncclInProgress, 7) and launch
 *                             nothing while true
 *   {"hang": {"rank": r}}     rank r never enters its next AllReduce; every other rank launches up to that one
 *                             (at most one more step) and the job stands still: every count stays
 *   {"resume": true}          progress again, every rank from where it is (a hung rank stays behind by what it
 *                             missed); a job with a killed node does not progress (its collectives cannot complete)
 *   {"kill": {"node": n}}     node n's processes die: its listener closes (connection refused) and its clients
 *                             are cut; the other listeners' reports list its ranks missing and dead (render.mjs
 *                             withMissing), and every MONITOR client of the other listeners gets one PEER_DEAD per
 *                             dead process (NCCL 2.29+, src/ras/peers.cc rasPeerDeclareDead -> rasClientsNotifyEvent),
 *                             in pid order; the survivors launch up to the dead ranks' next step and stand still
 *   {"stats": true}           prints "stats <json>": {collections, byNode: {n: count}, messages,
 *                             statusByFormat: {text, json}, diagnostics, broadcasts, profilerMask} (before the
 *                             ack); collections, byNode and messages include DIAGNOSTICS runs, statusByFormat
 *                             only STATUS ones
 * stdout: "ready" once started, "listening <json {node: port}>" once every listener is bound (at start, or at
 * {"listen": true}); SIGTERM ends it (exit 0). stderr: "error ..." lines only.
 *
 * Not modeled: how long NCCL takes to notice a dead process (keep-alive timeouts, seconds): here the RAS
 * network knows at once, healed around the dead processes, and the events leave at once.
 *
 * ---- RAS-network messages per collection --------------------------------------------------------------------
 * From NCCL's source (tag v2.29.7-1; the same code, at shifted lines, in every release 2.24.3 to 2.30.7):
 *
 * 1. A STATUS (text or JSON, VERBOSE or not) starts exactly one RAS collective, RAS_COLL_COMMS, rooted at the
 *    process owning the client listener: src/ras/client_support.cc:837-838 (rasClientRunInit:
 *    `collReq.type = RAS_COLL_COMMS; rasNetSendCollReq(&collReq, &allDone, &client->coll)`). The RAS_COLL_CONNS
 *    collective is compiled out: client_support.cc:535-544 and 804-822 are `#if 0`.
 * 2. The RAS network is a ring over every process of the job (rasPeers, sorted by address), skipping dead ones:
 *    src/ras/peers.cc:739-783 rasLinkCalculatePeer (`newPeerIdx = (peerIdx + link->direction + nRasPeers) %
 *    nRasPeers`, `if (rasPeerIsDead(...)) newPeerIdx = ... + link->direction`, -1 when it comes back to
 *    itself); each process has a next link (+1) and a prev link (-1) whose primary connection is that peer
 *    (peers.cc:698, rasLinkReinitConns; one rasConnection per peer pair, found with rasConnFind). Fallback and
 *    external link connections exist only while a primary one has trouble, i.e. not in a healthy ring.
 * 3. A request goes out on every link connection but the one it came from, each connection once:
 *    src/ras/collectives.cc:151-155 (rasNetSendCollReq clears linkFlag, then rasLinkSendCollReq on rasNextLink
 *    and rasPrevLink) and :171-176 (`linkConn->conn != fromConn && !linkConn->conn->linkFlag` ->
 *    rasConnSendCollReq, one RAS_MSG_COLLREQ; `coll->fwdConns[coll->nFwdSent++]`).
 * 4. A process receiving a request it has seen (finished: collectives.cc:216-229, or ongoing: :232-250) answers
 *    at once with an empty RAS_MSG_COLLRESP (:225, :241) and forwards nothing; otherwise it forwards it (:254,
 *    rule 3 with fromConn = where it came from), and answers its sender once every forwarded request has been
 *    answered (:256-261 at once for a leaf; rasMsgHandleCollResp :362 `nFwdRecv++`, :378 `nFwdSent ==
 *    nFwdRecv` -> rasCollReadyResp, :274-278 rasConnSendCollResp(coll->fromConn, ...)).
 * So every COLLREQ is answered by exactly one COLLRESP, and every live process forwards once: the root over all
 * its deg(root) connections, every other process over deg(v) - 1. With L live processes and E ring connections:
 *     requests = deg(root) + sum over v != root of (deg(v) - 1) = 2E - (L - 1)
 *     messages = 2 * requests = 2 * (2E - L + 1)
 * where E = L for L >= 3 (a ring), 1 for L = 2 (next and prev link are the same connection: linkFlag sends once),
 * 0 for L = 1. Hence messages = 2(L + 1) for L >= 3 (the request goes both ways round the ring and crosses
 * itself once: L - 1 first arrivals + 2 duplicates), 2 for L = 2, 0 for L = 1; L = N * ranksPerNode minus the
 * processes of killed nodes. 4 nodes x 8 ranks: 66 messages; with one node killed: 50. Assumed: the ring is
 * healed (no fallback connections, no leg timeouts), and keep-alives, peer updates and the dead-peer broadcast
 * (RAS_BC_DEADPEER) are not the collection's cost. test/fakes-selftest/ras-cluster.integration.test.ts replays
 * rules 2-4 message by message, in random delivery orders, against this formula.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { defaultProfilerMask, formatLocalTime, uniformJob, withMissing } from "./render.mjs";
import { answerDiagnostics, answerStatus, notifyMonitors, rasClientListener } from "./serve-job.mjs";

export const DEFAULT_HASH = "0x49bbd7790311d5eb";
const NCCL_IN_PROGRESS = 7; // ncclInProgress: initState of a communicator being initialised

/**
 * The RAS ring's connections among `live` processes (src/ras/peers.cc rasLinkCalculatePeer).
 * @param {number} live
 */
export function ringConnections(live) {
  return live >= 3 ? live : live === 2 ? 1 : 0;
}

/**
 * RAS-network messages (RAS_MSG_COLLREQ + RAS_MSG_COLLRESP) one RAS_COLL_COMMS collective costs among `live`
 * processes: 2 * (2E - L + 1) (the header derives it).
 * @param {number} live
 */
export function collectionMessages(live) {
  if (live <= 0) return 0;
  return 2 * (2 * ringConnections(live) - (live - 1));
}

/**
 * The collective counts of a rank that launched `steps` steps: an AllReduce each, an AllGather every 5th.
 * @param {number} steps
 */
export function countsAfter(steps) {
  return { AllGather: Math.floor(steps / 5), AllReduce: steps };
}

/**
 * Node n's address: nodeAddress[n], or the pattern with {n} / {n+1} replaced; default 127.0.1.(n+1).
 * @param {{ nodeAddress?: string | string[] }} spec @param {number} n
 */
export function nodeAddressOf(spec, n) {
  const a = spec.nodeAddress ?? "127.0.1.{n+1}";
  if (Array.isArray(a)) {
    const host = a[n];
    if (host === undefined) throw new Error(`nodeAddress has no entry for node ${n}`);
    return host;
  }
  return a.replaceAll("{n+1}", String(n + 1)).replaceAll("{n}", String(n));
}

/**
 * The job's state, on an injected clock (ms): how far each rank got, who hangs, which nodes died.
 */
export class ClusterState {
  /** @param {any} spec @param {number} now */
  constructor(spec, now) {
    if (!Number.isInteger(spec.nodes) || spec.nodes < 1) throw new Error("spec.nodes must be a positive integer");
    if (!Number.isInteger(spec.ranksPerNode) || spec.ranksPerNode < 1) throw new Error("spec.ranksPerNode must be a positive integer");
    this.spec = spec;
    this.nodes = /** @type {number} */ (spec.nodes);
    this.ranksPerNode = /** @type {number} */ (spec.ranksPerNode);
    this.size = this.nodes * this.ranksPerNode;
    this.stepMs = Number(spec.stepMs ?? 100);
    if (!(this.stepMs > 0)) throw new Error("spec.stepMs must be > 0");
    this.pidBase = Number(spec.pidBase ?? 4000);
    this.newJob(String(spec.version), now);
  }

  /** @param {string} version @param {number} now */
  newJob(version, now) {
    this.version = version;
    /** Steps launched by each rank at `since`. */
    this.stepsAt = Array.from({ length: this.size }, () => 0);
    this.since = now;
    this.hung = false;
    this.initialising = false;
    /** @type {Set<number>} */
    this.dead = new Set();
  }

  get progressing() {
    return !this.hung && !this.initialising && this.dead.size === 0;
  }

  /** @param {number} rank @param {number} now */
  steps(rank, now) {
    const at = this.stepsAt[rank] ?? 0;
    return this.progressing ? at + Math.floor((now - this.since) / this.stepMs) : at;
  }

  /** Fixes every rank's steps at `now` (before the rules change). @param {number} now */
  settle(now) {
    this.stepsAt = this.stepsAt.map((_, r) => this.steps(r, now));
    this.since = now;
  }

  /** @param {number} rank */
  nodeOf(rank) {
    return Math.floor(rank / this.ranksPerNode);
  }

  /** @param {number} node */
  ranksOf(node) {
    return Array.from({ length: this.ranksPerNode }, (_, i) => node * this.ranksPerNode + i);
  }

  /** @param {number} rank */
  pidOf(rank) {
    return this.pidBase + rank;
  }

  /**
   * `stopped` never enter their next step; every other live rank launches up to the first step one of them
   * misses (at most that one) and everything stands still.
   * @param {number[]} stopped @param {number} now
   */
  block(stopped, now) {
    this.settle(now);
    const next = Math.min(...stopped.map((r) => this.stepsAt[r] ?? 0)) + 1;
    this.stepsAt = this.stepsAt.map((s, r) => (stopped.includes(r) || this.dead.has(this.nodeOf(r)) ? s : Math.max(s, next)));
    this.hung = true;
  }

  /** @param {number} rank @param {number} now */
  hang(rank, now) {
    if (!Number.isInteger(rank) || rank < 0 || rank >= this.size) throw new Error(`no rank ${rank}`);
    this.block([rank], now);
  }

  /** @param {number} now */
  resume(now) {
    this.settle(now);
    this.hung = false;
  }

  /** @param {boolean} on @param {number} now */
  setInitialising(on, now) {
    this.settle(now);
    this.initialising = on;
  }

  /** @param {number} node @param {number} now */
  kill(node, now) {
    if (!Number.isInteger(node) || node < 0 || node >= this.nodes) throw new Error(`no node ${node}`);
    if (this.dead.has(node)) return;
    this.block(this.ranksOf(node), now);
    this.dead.add(node);
  }

  /** Live processes (one per rank). */
  liveProcesses() {
    return this.size - this.dead.size * this.ranksPerNode;
  }

  /** The job as the RAS service reports it now (render.mjs model). @param {number} now @returns {any} */
  job(now) {
    const spec = this.spec;
    const gatherDelayMs = Number(spec.gatherDelayMs ?? 0);
    /** @type {any} */
    let job = uniformJob({
      version: String(this.version),
      nodes: this.nodes,
      ranksPerNode: this.ranksPerNode,
      hash: spec.hash ?? DEFAULT_HASH,
      hostOf: (n) => nodeAddressOf(spec, n),
      pidBase: this.pidBase,
      countsOf: (r) => countsAfter(this.steps(r, now)),
      gatherSeconds: gatherDelayMs / 1000,
      timestamp: formatLocalTime(new Date(now)),
      ...(spec.cudaRuntime !== undefined ? { cudaRuntime: spec.cudaRuntime } : {}),
      ...(spec.cudaDriver !== undefined ? { cudaDriver: spec.cudaDriver } : {}),
    });
    if (spec.diag !== undefined) job.diag = spec.diag;
    if (spec.profilerMask !== undefined) job.profilerMask = spec.profilerMask;
    if (spec.inspector !== undefined) job.inspector = spec.inspector;
    if (this.initialising) for (const r of job.comms[0].ranks) r.status = { initState: NCCL_IN_PROGRESS };
    if (this.dead.size > 0) {
      const gone = [...this.dead].sort((a, b) => a - b).flatMap((n) => this.ranksOf(n));
      job = withMissing(job, 0, gone, { dead: true });
    }
    return job;
  }
}

/**
 * @typedef {import("./serve-job.mjs").Client} Client
 * @typedef {{ node: number, host: string, port: number, server: import("node:net").Server | null, clients: Set<Client> }} Listener
 */

/** @param {string} specFile */
export function serveCluster(specFile) {
  /** @type {any} */
  const spec = JSON.parse(readFileSync(specFile, "utf8"));
  const state = new ClusterState(spec, Date.now());
  const gatherDelayMs = Number(spec.gatherDelayMs ?? 0);
  const stats = {
    collections: 0,
    /** @type {Record<string, number>} */
    byNode: Object.fromEntries(Array.from({ length: state.nodes }, (_, n) => [String(n), 0])),
    messages: 0,
    statusByFormat: { text: 0, json: 0 },
    diagnostics: 0,
    broadcasts: 0,
    profilerMask: defaultProfilerMask(state.job(Date.now())),
  };
  let listening = false;

  /** @type {Listener[]} */
  const listeners = Array.from({ length: state.nodes }, (_, node) => ({
    node,
    host: nodeAddressOf(spec, node),
    port: Number(spec.port ?? 0),
    server: null,
    clients: new Set(),
  }));

  /**
   * Counts and logs one job-wide collection started on node l's listener.
   * @param {Listener} l @param {Client} c @param {"STATUS" | "VERBOSE STATUS" | "DIAGNOSTICS"} command @param {number} now
   */
  function count(l, c, command, now) {
    const messages = collectionMessages(state.liveProcesses());
    stats.collections++;
    stats.byNode[String(l.node)] = (stats.byNode[String(l.node)] ?? 0) + 1;
    stats.messages += messages;
    if (command === "DIAGNOSTICS") stats.diagnostics++;
    else stats.statusByFormat[c.format]++;
    if (spec.collectionsLog) {
      const line = { t: now, node: l.node, command, format: c.format, messages };
      appendFileSync(spec.collectionsLog, `${JSON.stringify(line)}\n`);
    }
  }

  /** @param {Listener} l @param {Client} c @param {boolean} verbose */
  function collect(l, c, verbose) {
    const now = Date.now();
    count(l, c, verbose ? "VERBOSE STATUS" : "STATUS", now);
    answerStatus(c, state.job(now), verbose, gatherDelayMs);
  }

  /** @param {Listener} l @param {Client} c */
  function diagnose(l, c) {
    const now = Date.now();
    count(l, c, "DIAGNOSTICS", now);
    const job = state.job(now);
    const host = String(job.diag?.hostNames?.[l.host] ?? l.host);
    answerDiagnostics(c, job, gatherDelayMs, { host, pid: state.pidOf(l.node * state.ranksPerNode) });
  }

  /** @param {Listener} l @returns {Promise<void>} */
  function open(l) {
    if (l.server !== null || state.dead.has(l.node)) return Promise.resolve();
    const { server, clients } = rasClientListener({
      version: () => String(state.version),
      onStatus: (c, verbose) => collect(l, c, verbose),
      onDiagnostics: (c) => diagnose(l, c),
      onProfilerMask: (mask) => {
        stats.broadcasts++;
        stats.profilerMask = mask;
      },
    });
    l.server = server;
    l.clients = clients;
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(l.port, l.host, () => {
        server.off("error", reject);
        const a = server.address();
        if (a && typeof a === "object") l.port = a.port; // a port picked once stays the node's port
        resolve();
      });
    });
  }

  /** Closes node l's listener and cuts its clients; resolves once it no longer accepts. @param {Listener} l */
  function close(l) {
    const server = l.server;
    if (server === null) return Promise.resolve();
    l.server = null;
    for (const c of l.clients) c.sock.destroy();
    return new Promise((resolve) => server.close(() => resolve(undefined)));
  }

  async function listenAll() {
    listening = true;
    await Promise.all(listeners.map(open));
    process.stdout.write(`listening ${JSON.stringify(Object.fromEntries(listeners.map((l) => [String(l.node), l.port])))}\n`);
  }

  /** @param {any} msg */
  async function apply(msg) {
    if (typeof msg.version === "string") {
      // A new job: the old processes (and their client connections) are gone, every node runs again.
      for (const l of listeners) for (const c of l.clients) c.sock.destroy();
      state.newJob(msg.version, Date.now());
      stats.profilerMask = defaultProfilerMask(state.job(Date.now())); // new processes start with the default
      if (listening) await Promise.all(listeners.map(open));
    }
    if (msg.listen === true) await listenAll();
    if (typeof msg.initialising === "boolean") state.setInitialising(msg.initialising, Date.now());
    if (msg.hang) state.hang(Number(msg.hang.rank), Date.now());
    if (msg.resume === true) state.resume(Date.now());
    if (msg.kill) {
      const node = Number(msg.kill.node);
      const wasDead = state.dead.has(node);
      state.kill(node, Date.now());
      const l = listeners[node];
      if (l) await close(l);
      if (!wasDead) {
        const time = formatLocalTime(new Date());
        const others = listeners.filter((o) => o.node !== node && o.server !== null).flatMap((o) => [...o.clients]);
        for (const r of state.ranksOf(node)) {
          const peer = { host: nodeAddressOf(spec, node), pid: state.pidOf(r), cudaDevs: [r % state.ranksPerNode] };
          await notifyMonitors(others, { type: "PEER_DEAD", peer }, time);
        }
      }
    }
    if (msg.stats === true) process.stdout.write(`stats ${JSON.stringify(stats)}\n`);
  }

  let ctl = 0;
  /** Control lines apply one after another, in order. */
  let queue = Promise.resolve();
  createInterface({ input: process.stdin }).on("line", (line) => {
    if (!line.trim()) return;
    const n = ++ctl;
    queue = queue.then(async () => {
      try {
        await apply(JSON.parse(line));
      } catch (e) {
        process.stderr.write(`error control line ${n}: ${String(e)}\n`);
      }
      process.stdout.write(`ctl ${n}\n`);
    });
  });

  process.on("SIGTERM", () => process.exit(0));
  process.stdout.write("ready\n");
  if (spec.listen !== false) {
    listenAll().catch((e) => {
      process.stderr.write(`error listening: ${String(e)}\n`);
      process.exit(1);
    });
  }
}
