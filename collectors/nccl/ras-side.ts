/**
 * The RAS watch (ras/watch.ts) as the nccl collector wires it: built from the settings with what
 * this node knows (the logs' rank processes, whose sockets an answer must come from; the NCCL
 * version they logged; the peers' agents for the succession), the node as RAS's verdicts see it
 * (ras/verdict.ts's RasNode), and the node pid of a process RAS names by its own pid. Rebuilt or
 * reconfigured on reload; once created, the watch stays (paused when RAS is turned off), so that
 * its counters do not reset.
 */
import type { Logger } from "pino";
import type { NodeView, TrackedState } from "./logs/detect/verdict.js";
import type { GpuReadings } from "./verdict/gpu-readings.js";
import { addressIn, createRasNode, localAddresses, shortHostname, type GpuSpinClock } from "./node-view.js";
import type { RasAddress } from "./ras/client.js";
import { NO_RAS_ROLE, RasWatch, type RasElection, type RasSnapshot } from "./ras/watch.js";
import { defectsOf } from "./ras/defects.js";
import { PEER_DEADLINE_MS, probePeer } from "./ras/peer-probe.js";
import { loggedComms, loggedVersion } from "./ras-inputs.js";
import { rasVerdicts, type RasCommVerdict, type RasNode } from "./ras/verdict.js";
import { liveRankPids, processUid } from "./logs/rank-processes.js";
import { ProcessIdentity } from "./process-identity.js";

export interface NcclRasOptions {
  address: RasAddress;
  intervalMs: number;
  /** One querier per job (ras/job-view.ts); undefined or false: this node asks every interval. */
  elected?: boolean;
  /** No query this long after a service appears or a report shows a rank in init. Default 0. */
  settleMs?: number;
  /** false: the defect table (ras/defects.ts) holds timed queries back; undefined or true: no table. */
  pollKnownDefective?: boolean;
  /** The other nodes' agents' port, for the succession; 0 or undefined: not followed. */
  peerPort?: number;
  /** The addresses RAS names this node by; empty or undefined: the interfaces'. */
  nodeAddresses?: readonly string[];
  /** Switch NCCL Inspector on for this long when a hang begins; undefined: never. */
  inspectorWindowMs?: number | undefined;
  /** Overrides (tests): NCCL's per-peer wait and the query's deadline. */
  legTimeoutSeconds?: number;
  deadlineMs?: number;
}

/** What the RAS side reads of the collector, as it is now (settings change on reload). */
export interface RasSideContext {
  procfsRoot(): string;
  checkPids(): boolean;
  view(): NodeView;
  tracker: TrackedState;
  spin: GpuSpinClock;
  gpu?: GpuReadings;
  /** GPU compute processes (the job collector's), whose RAS sockets count too. */
  gpuProcesses?: () => readonly number[];
  /** Overrides (tests): is an address this node's. */
  isLocalAddress?: (host: string) => boolean;
  /** The hang threshold and its ceiling (ms), as the detectors have them. */
  threshold(): { hangThresholdMs: number; maxThresholdMs: number };
  now: () => number;
  log: Logger;
}

const noDefects = (): readonly never[] => [];

export class RasSide {
  /** The watch; undefined until RAS is first configured. */
  watch: RasWatch | undefined;
  /** Per communicator the logs know: does a rank of it live on this node (the last evaluation's answer). */
  readonly collLive = new Map<string, boolean>();
  private options: NcclRasOptions | undefined;
  private node: RasNode;
  private pids: { procfsRoot: string; identity: ProcessIdentity };
  private readonly sharedLocalAddresses = localAddresses();

  constructor(
    private readonly c: RasSideContext,
    options: NcclRasOptions | undefined,
  ) {
    this.options = options;
    this.node = this.makeNode();
    this.pids = this.makePids();
    if (options !== undefined) this.watch = this.makeWatch(options);
  }

  /** RAS's verdicts of this node's communicators, from a snapshot of the watch. */
  verdicts(snapshot: RasSnapshot): RasCommVerdict[] {
    return rasVerdicts(snapshot.progress, this.node);
  }

  /** The node pid of a process RAS names by its own pid (process-identity.ts: by NSpid and start time). */
  pidNode(pid: number): number | undefined {
    if (this.pids.procfsRoot !== this.c.procfsRoot()) this.pids = this.makePids();
    const ref = { key: `ras:${pid}`, host: shortHostname(), pid, sources: new Set<string>() };
    return this.pids.identity.alive(ref) === true ? this.pids.identity.nodePid(ref.key) : undefined;
  }

  /** The answer to the peers' role question (ras/peer-probe.ts). */
  roleAnswer(): ReturnType<RasWatch["roleAnswer"]> {
    return this.watch?.roleAnswer() ?? NO_RAS_ROLE;
  }

  /** New settings (a reload): the node view again; the watch made, paused or given its options. */
  reconfigure(ras: NcclRasOptions | undefined, hangThresholdMs: number): void {
    if (ras !== undefined) this.options = { ...this.options, ...ras };
    this.node = this.makeNode();
    if (this.watch === undefined && ras !== undefined) this.watch = this.makeWatch(ras);
    else this.watch?.setOptions(ras === undefined ? undefined : { ...ras, knownDefects: ras.pollKnownDefective ? noDefects : defectsOf });
    this.watch?.setThreshold(hangThresholdMs);
  }

  private isLocal(o: NcclRasOptions | undefined): (host: string) => boolean {
    return o?.nodeAddresses !== undefined && o.nodeAddresses.length > 0 ? addressIn(o.nodeAddresses) : (this.c.isLocalAddress ?? this.sharedLocalAddresses);
  }

  private makePids(): { procfsRoot: string; identity: ProcessIdentity } {
    return { procfsRoot: this.c.procfsRoot(), identity: new ProcessIdentity(this.c.procfsRoot(), shortHostname(), this.c.now) };
  }

  private makeNode(): RasNode {
    return createRasNode({
      procfsRoot: this.c.procfsRoot(),
      checkPids: this.c.checkPids(),
      spin: this.c.spin,
      rasHost: this.options?.address.host ?? "localhost",
      // The logs' own verdict of the same evaluation says whether a rank of the communicator lives here.
      loggedHere: (commId) => this.collLive.get(commId),
      now: this.c.now,
      ...(this.c.gpu !== undefined ? { gpu: this.c.gpu } : {}),
      isLocal: this.isLocal(this.options),
    });
  }

  private makeWatch(o: NcclRasOptions): RasWatch {
    const c = this.c;
    const t = c.threshold();
    const w = new RasWatch({
      ...o,
      now: c.now,
      log: c.log,
      // RAS's standstills are seen at the poll interval: the threshold stretches to twice the longest recent one.
      progress: { hangThresholdMs: t.hangThresholdMs, gapFactor: 2, maxThresholdMs: t.maxThresholdMs },
      // An answer counts only from a socket that a live process of a rank the logs know (or root) holds.
      owner: {
        procfsRoot: () => c.procfsRoot(),
        rankPids: () => [...liveRankPids(c.tracker, c.view(), (pid) => processUid(c.procfsRoot(), pid)), ...(c.gpuProcesses?.() ?? [])],
      },
      procfsRoot: () => c.procfsRoot(),
      settleMs: o.settleMs ?? 0,
      ...(o.pollKnownDefective === false ? { knownDefects: defectsOf } : {}),
      versionHint: () => loggedVersion(c.tracker),
      ...(o.inspectorWindowMs !== undefined ? { inspectorWindowMs: o.inspectorWindowMs } : {}),
      ...(o.elected === true ? { election: this.election(o) } : {}),
    });
    w.start();
    return w;
  }

  private election(o: NcclRasOptions): RasElection {
    const port = o.peerPort ?? 0;
    return {
      isLocal: this.isLocal(o),
      ...(port > 0 ? { peerPort: port } : {}),
      probe: (node) => probePeer(node, port, PEER_DEADLINE_MS),
      loggedComms: () => loggedComms(this.c.tracker),
    };
  }
}
