/**
 * The nccl collector: wiring of its evidence sources. The logs (logs/watch.ts: follower, file
 * sinks, tracker), NCCL RAS (ras/watch.ts), Flight Recorder dumps (flight-recorder/watch.ts) and
 * NCCL Inspector (inspector/watch.ts) are watched; their verdicts are computed at scrape time and
 * every few seconds, when hangs that begin or end are logged (verdict/hang-transitions.ts) and
 * finished jobs retired. A stream collector: it runs from start() to stop().
 */
import { DEFAULT_DETECT, type CommVerdict, type DetectOptions } from "./logs/detect/types.js";
import { evaluateAll, type NodeView } from "./logs/detect/verdict.js";
import { commHangEndedLine, commHangLine } from "./logs/detect/hang-line.js";
import { CollectorError, type Collector, type CollectorDeps, type CollectorHealth } from "../collector.js";
import type { CommonSettings } from "../settings/common.js";
import { NcclMetrics } from "./metrics.js";
import { DEFAULT_SERIES, type SeriesOptions } from "./series.js";
import type { GpuReadings } from "./verdict/gpu-readings.js";
import { HangTransitions } from "./verdict/hang-transitions.js";
import { addressIn, createNodeView, createRasNode, GpuSpinClock, localAddresses, shortHostname } from "./node-view.js";
import type { RasAddress } from "./ras/client.js";
import type { NcclSettings } from "./settings.js";
import { FlightRecorderWatch, NO_FLIGHT_RECORDER, type FlightRecorderOptions } from "./flight-recorder/watch.js";
import { FlightRecorderMetrics } from "./flight-recorder/metrics.js";
import { RasAskMetrics } from "./ras/metrics.js";
import { RasReportMetrics } from "./ras/report-metrics.js";
import { InspectorMetrics } from "./inspector/metrics.js";
import { knownRanks } from "./logs/pytorch/findings.js";
import { PytorchMetrics } from "./logs/pytorch/metrics.js";
import { PytorchVerdicts } from "./logs/pytorch/verdict.js";
import { InspectorWatch } from "./inspector/watch.js";
import { NO_RAS_ROLE, RasWatch, type RasElection, type RasSnapshot } from "./ras/watch.js";
import { defectsOf } from "./ras/defects.js";
import { PEER_DEADLINE_MS, PEER_ROLE_PATH, probePeer } from "./ras/peer-probe.js";
import { gpusSpin, loggedComms, loggedVersion } from "./ras-inputs.js";
import { rasHangEndedLine, rasHangLine, rasVerdicts, type RasCommVerdict, type RasNode } from "./ras/verdict.js";
import type { Tracker } from "./logs/state/tracker.js";
import { LogsWatch } from "./logs/watch.js";
import { LogPathMetrics } from "./logs/path-metrics.js";
import { liveRankPids, processUid, rankProcesses, type RankProcess } from "./logs/rank-processes.js";
import { LiveStacks, type LiveStacksSettings } from "./stacks/live/watch.js";
import { LiveStacksMetrics } from "./stacks/live/metrics.js";
import { pytorchStackSuspects, rasStackSuspects, stackSuspects } from "./stacks-inputs.js";
import { PYTORCH_HOLD_MS } from "./logs/pytorch/verdict.js";
import { ProcessIdentity } from "./process-identity.js";

export interface NcclOptions {
  /** Directories or globs to follow (--collector.nccl.path). */
  paths: string[];
  /** Paths whose absence from the start is normal (the default, /var/log/nccl): logged at info, not warn. */
  quietWhenMissing?: readonly string[];
  procfsRoot: string;
  hangThresholdMs: number;
  maxComms: number;
  /** Which NCCL series are published (--collector.nccl.rank-series, --collector.nccl.max-series); default DEFAULT_SERIES. */
  series?: SeriesOptions;
  /** Processes whose liveness cannot be checked are retired after this long without a line. */
  retireAfterMs: number;
  checkPids: boolean;
  usePolling: boolean | "auto";
  gpu?: GpuReadings;
  /** Pids of the GPU compute processes (the job collector's): RAS answers from them are the job's too. */
  gpuProcesses?: () => readonly number[];
  headBytes?: number;
  /** How often verdicts are evaluated for logging and retirement (ms). Default 5000. */
  evaluateEveryMs?: number;
  /** How long a dead or torn-down rank is kept before its series go (ms). Default 60,000. */
  retireGraceMs?: number;
  /** Overrides for the detectors (tests). */
  detect?: Partial<DetectOptions>;
  /** Overrides for the node view (tests). */
  view?: NodeView;
  /** Follower sweep/poll intervals (tests). */
  sweepIntervalMs?: number;
  pollIntervalMs?: number;
  /** Ask NCCL's RAS service every interval (ras/watch.ts); undefined = never. */
  ras?: NcclRasOptions;
  /** NCCL Inspector output to follow (directories or globs); undefined: none. */
  inspectorPaths?: string[];
  /** PyTorch Flight Recorder dumps to read, and pipes to poke when a hang begins. */
  flightRecorder?: FlightRecorderOptions;
  /** Python stacks of the suspect communicators' processes (stacks/live/); undefined: off. */
  stacks?: LiveStacksSettings;
  /** Overrides (tests): is an address this node's (RAS node addresses). */
  isLocalAddress?: (host: string) => boolean;
}

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

export interface NcclCollector extends Collector<NcclSettings> {
  /** Current verdicts (evaluated now). */
  verdicts(): CommVerdict[];
  readonly tracker: Tracker;
  /** Each rank the logs know and its process (read-only; the job collector reads it). */
  rankProcesses(): readonly RankProcess[];
}

const DEFAULT_HEAD_BYTES = 256 * 1024;
const noDefects = (): readonly never[] => [];

/** The Inspector watcher, where --collector.nccl.inspector.path names something. */
function makeInspector(opts: NcclOptions, deps: CollectorDeps): InspectorWatch | undefined {
  if (opts.inspectorPaths === undefined || opts.inspectorPaths.length === 0) return undefined;
  const intervals = {
    ...(opts.sweepIntervalMs !== undefined ? { sweepIntervalMs: opts.sweepIntervalMs } : {}),
    ...(opts.pollIntervalMs !== undefined ? { pollIntervalMs: opts.pollIntervalMs } : {}),
  };
  return new InspectorWatch({
    paths: opts.inspectorPaths,
    usePolling: opts.usePolling,
    now: deps.now,
    log: deps.logger,
    maxComms: opts.maxComms,
    ...intervals,
  });
}

/** Whether one rank of each communicator the logs know lives here, as their last evaluation said (for RAS). */
function liveByComm(verdicts: readonly CommVerdict[], into: Map<string, boolean>): CommVerdict[] {
  into.clear();
  for (const v of verdicts) into.set(v.commKey, v.liveRanks.length > 0);
  return [...verdicts];
}

export function createNcclCollector(deps: CollectorDeps, options: NcclOptions): NcclCollector {
  const log = deps.logger;
  // A copy: reconfigure() changes it.
  const opts: NcclOptions = { ...options, paths: [...options.paths] };
  const detect: DetectOptions = { ...DEFAULT_DETECT, hangThresholdMs: opts.hangThresholdMs, ...opts.detect };
  const intervals = {
    ...(opts.sweepIntervalMs !== undefined ? { sweepIntervalMs: opts.sweepIntervalMs } : {}),
    ...(opts.pollIntervalMs !== undefined ? { pollIntervalMs: opts.pollIntervalMs } : {}),
  };
  const pathMetrics = new LogPathMetrics(deps.registry);
  const logs = new LogsWatch({
    paths: opts.paths,
    quietWhenMissing: new Set(opts.quietWhenMissing ?? []),
    onPathStates: (states) => pathMetrics.publish(states),
    usePolling: opts.usePolling,
    headBytes: opts.headBytes ?? DEFAULT_HEAD_BYTES,
    retireAfterMs: opts.retireAfterMs,
    retireGraceMs: opts.retireGraceMs ?? 60_000,
    maxComms: opts.maxComms,
    now: deps.now,
    log,
    ...intervals,
  });
  const tracker: Tracker = logs.tracker;
  const makeView = (): NodeView => opts.view ?? createNodeView({ procfsRoot: opts.procfsRoot, checkPids: opts.checkPids, gpu: opts.gpu });
  let view = makeView();
  const spin = new GpuSpinClock(opts.gpu);
  // RAS's standstills are seen at the poll interval: the threshold stretches to twice the longest recent one.
  // An answer counts only from a socket that a live process of a rank the logs know (or root) holds.
  const sharedLocalAddresses = localAddresses();
  const isLocal = (o: NcclRasOptions | undefined): ((host: string) => boolean) =>
    o?.nodeAddresses !== undefined && o.nodeAddresses.length > 0 ? addressIn(o.nodeAddresses) : (opts.isLocalAddress ?? sharedLocalAddresses);
  const makeRas = (o: NcclRasOptions): RasWatch => {
    const w = new RasWatch({
      ...o,
      now: deps.now,
      log,
      progress: { hangThresholdMs: detect.hangThresholdMs, gapFactor: 2, maxThresholdMs: detect.maxThresholdMs },
      owner: {
        procfsRoot: () => opts.procfsRoot,
        rankPids: () => [...liveRankPids(tracker, view, (pid) => processUid(opts.procfsRoot, pid)), ...(opts.gpuProcesses?.() ?? [])],
      },
      procfsRoot: () => opts.procfsRoot,
      settleMs: o.settleMs ?? 0,
      ...(o.pollKnownDefective === false ? { knownDefects: defectsOf } : {}),
      versionHint: () => loggedVersion(tracker),
      ...(o.inspectorWindowMs !== undefined ? { inspectorWindowMs: o.inspectorWindowMs } : {}),
      ...(o.elected === true ? { election: rasElection(o) } : {}),
    });
    w.start();
    return w;
  };
  const rasElection = (o: NcclRasOptions): RasElection => {
    const port = o.peerPort ?? 0;
    return {
      isLocal: isLocal(o),
      ...(port > 0 ? { peerPort: port } : {}),
      probe: (node) => probePeer(node, port, PEER_DEADLINE_MS),
      loggedComms: () => loggedComms(tracker),
    };
  };
  let ras: RasWatch | undefined = opts.ras !== undefined ? makeRas(opts.ras) : undefined;
  /** Per communicator the logs know: does a rank of it live on this node (the last evaluation's answer). */
  const collLive = new Map<string, boolean>();
  const makeRasNode = (): RasNode =>
    createRasNode({
      procfsRoot: opts.procfsRoot,
      checkPids: opts.checkPids,
      spin,
      rasHost: opts.ras?.address.host ?? "localhost",
      // The logs' own verdict of the same evaluation says whether a rank of the communicator lives here.
      loggedHere: (commId) => collLive.get(commId),
      now: deps.now,
      ...(opts.gpu !== undefined ? { gpu: opts.gpu } : {}),
      isLocal: isLocal(opts.ras),
    });
  let rasNode = makeRasNode();
  const makeFr = (o: FlightRecorderOptions): FlightRecorderWatch => new FlightRecorderWatch({ ...o, now: deps.now, log });
  let fr: FlightRecorderWatch | undefined = opts.flightRecorder !== undefined ? makeFr(opts.flightRecorder) : undefined;
  const inspector = makeInspector(opts, deps);
  const stacks = new LiveStacks({
    ...(opts.stacks ?? { source: "off", workerSocket: "", timeoutMs: 10_000, maxPerMinute: 16 }),
    exec: deps.exec,
    now: deps.now,
    log,
  });
  const evaluate = (): CommVerdict[] => liveByComm(evaluateAll(tracker, deps.now(), detect, view), collLive);
  const rasNow = (snapshot: RasSnapshot): RasCommVerdict[] => rasVerdicts(snapshot.progress, rasNode);

  const metrics = new NcclMetrics(
    deps.registry,
    () => {
      // A follower that failed (no log directory) leaves the RAS verdicts to publish.
      if (!logs.started && logs.failed === undefined) return;
      const snapshot = ras?.snapshot();
      const insp = inspector?.snapshot();
      // The logs' verdicts first: they say which communicators still have a live rank here, which RAS's use.
      const logVerdicts = evaluate();
      const rasPublished = snapshot !== undefined ? { snapshot, verdicts: rasNow(snapshot) } : undefined;
      const showsRanks = metrics.publish(tracker, logVerdicts, logs.stats(), rasPublished, insp);
      if (rasPublished !== undefined) rasReportMetrics.publish(rasPublished);
      if (insp !== undefined) inspectorMetrics.publish(insp, showsRanks);
      frMetrics.publish(fr?.snapshot() ?? NO_FLIGHT_RECORDER);
      if (snapshot !== undefined) rasMetrics.publish(snapshot);
      pytorchMetrics.publish(
        pytorch.evaluate(tracker.pt, () => knownRanks(tracker)),
        tracker.pt,
      );
      stacksMetrics.publish(stacks);
    },
    opts.series ?? DEFAULT_SERIES,
    log,
    (p) => view.nodePid?.(p),
  );
  // After NcclMetrics, whose collect hook fills them: prom-client reads metrics in registration order.
  const frMetrics = new FlightRecorderMetrics(deps.registry);
  const inspectorMetrics = new InspectorMetrics(deps.registry);
  const rasReportMetrics = new RasReportMetrics(deps.registry);
  const rasMetrics = new RasAskMetrics(deps.registry);
  const pytorchMetrics = new PytorchMetrics(deps.registry);
  const stacksMetrics = new LiveStacksMetrics(deps.registry);
  const pytorch = new PytorchVerdicts({ log, now: deps.now });

  const collHangs = new HangTransitions<CommVerdict>(log, commHangLine, commHangEndedLine);
  const rasHangs = new HangTransitions<RasCommVerdict>(log, rasHangLine, rasHangEndedLine);
  function tick(): void {
    try {
      const now = deps.now();
      logs.housekeep(now, view);
      spin.update(now);
      const verdicts = evaluate();
      collHangs.update(new Map(verdicts.flatMap((v) => (v.hangSuspected ? [[v.commKey, v] as const] : []))));
      const rasVerdictsNow = ras !== undefined ? rasNow(ras.snapshot()) : [];
      stacks.update(suspectsNow(verdicts, rasVerdictsNow, now));
      if (ras !== undefined) rasHangs.update(new Map(rasVerdictsNow.flatMap((v) => (v.hang ? [[v.commId, v] as const] : []))));
      ras?.setHang(collHangs.any || rasHangs.any);
      ras?.tick(collHangs.any || rasSuspicion(now));
      fr?.tick(collHangs.any || rasHangs.any);
      if (inspector !== undefined) inspector.logChanges(inspector.snapshot());
    } catch (err) {
      log.error({ reason: err instanceof Error ? err.message : String(err) }, "nccl: evaluation failed");
    }
  }

  /**
   * The suspects of the live stacks, from the logs' verdicts, then RAS's (communicators the logs do
   * not suspect; a RAS pid believed by stacks-inputs.ts's rule), then PyTorch's process groups.
   */
  function suspectsNow(verdicts: readonly CommVerdict[], rasVs: readonly RasCommVerdict[], now: number): ReturnType<typeof stackSuspects> {
    const uidOf = (pid: number): number | undefined => processUid(opts.procfsRoot, pid);
    const fromLogs = stackSuspects(tracker, verdicts, view, uidOf);
    const fromRas =
      ras !== undefined && rasVs.some((v) => v.hang || v.behind.length > 0)
        ? rasStackSuspects(
            rasVs,
            {
              nodePid: (pid) => rasPidNode(pid),
              uidOf,
              verifiedUid: ras.verifiedOwnerUid(),
              loggedPids: new Set(liveRankPids(tracker, view, uidOf)),
            },
            new Set(fromLogs.map((s) => s.commId)),
          )
        : [];
    const ptVerdicts = pytorch.evaluate(tracker.pt, () => knownRanks(tracker));
    const fromPytorch = ptVerdicts.length > 0 ? pytorchStackSuspects(tracker, tracker.pt, ptVerdicts, view, uidOf, now - PYTORCH_HOLD_MS) : [];
    return [...fromLogs, ...fromRas, ...fromPytorch];
  }

  /** The node pid of a process RAS names by its own pid (process-identity.ts: by NSpid and start time). */
  let rasPids = { procfsRoot: opts.procfsRoot, identity: new ProcessIdentity(opts.procfsRoot, shortHostname(), deps.now) };
  function rasPidNode(pid: number): number | undefined {
    if (rasPids.procfsRoot !== opts.procfsRoot)
      rasPids = { procfsRoot: opts.procfsRoot, identity: new ProcessIdentity(opts.procfsRoot, shortHostname(), deps.now) };
    const ref = { key: `ras:${pid}`, host: shortHostname(), pid, sources: new Set<string>() };
    return rasPids.identity.alive(ref) === true ? rasPids.identity.nodePid(ref.key) : undefined;
  }

  /** Local evidence of a hang other than the logs' COLL verdicts: the GPUs spin, or PyTorch's lines say so. */
  function rasSuspicion(now: number): boolean {
    const gpus = opts.gpu?.latestSamples().keys() ?? [];
    return gpusSpin(spin, gpus, now, detect.hangThresholdMs) || pytorch.evaluate(tracker.pt, () => knownRanks(tracker)).length > 0;
  }

  let timer: NodeJS.Timeout | undefined;
  return {
    name: "nccl",
    mode: "stream",
    tracker,
    verdicts: evaluate,
    rankProcesses: () => rankProcesses(tracker, (p) => view.nodePid?.(p)),
    reconfigure(n: NcclSettings, common: CommonSettings): void {
      opts.procfsRoot = common.procfsRoot;
      opts.checkPids = n.checkPids;
      opts.hangThresholdMs = n.hangThresholdMs;
      metrics.configure(n.series);
      detect.hangThresholdMs = n.hangThresholdMs;
      view = makeView();
      if (n.ras !== undefined) opts.ras = { ...opts.ras, ...n.ras };
      rasNode = makeRasNode();
      // Once created, the watch stays (paused when RAS is turned off): its counters do not reset.
      if (ras === undefined && n.ras !== undefined) ras = makeRas(n.ras);
      else ras?.setOptions(n.ras === undefined ? undefined : { ...n.ras, knownDefects: n.ras.pollKnownDefective ? noDefects : defectsOf });
      ras?.setThreshold(n.hangThresholdMs);
      stacks.setOptions(n.stacks);
      if (n.flightRecorder === undefined) fr = undefined;
      else if (fr === undefined) fr = makeFr(n.flightRecorder);
      else fr.setOptions(n.flightRecorder);
      const refollow = logs.setOptions({ paths: n.paths, usePolling: n.polling, retireAfterMs: n.retireAfterMs, maxComms: n.maxCommunicators });
      log.info({ paths: n.paths, hang_threshold_seconds: n.hangThresholdMs / 1000, refollow }, "nccl: settings reloaded");
    },
    start(): void {
      // RAS is asked from the start, logs or none: once the heads of the logs are read, which name
      // the rank processes whose RAS socket is believed.
      void logs.start().then(() => ras?.tick(false));
      timer = setInterval(tick, opts.evaluateEveryMs ?? 5000);
      timer.unref();
      void inspector?.start();
    },
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      timer = undefined;
      await logs.stop();
      await ras?.close();
      await fr?.settled();
      await stacks.settled();
      await inspector?.stop();
    },
    health(): CollectorHealth {
      if (logs.failed !== undefined) return { ok: false, reason: logs.failed };
      if (!logs.started) return { ok: false, reason: "starting", starting: true };
      return { ok: true, lastSuccessMs: deps.now() };
    },
    documents: () => new Map([[PEER_ROLE_PATH, () => ras?.roleAnswer() ?? NO_RAS_ROLE]]),
    // The collector runs (and asks RAS) with no log path there: its source is the logs' paths.
    sourceState: () => (logs.failed !== undefined ? "failing" : logs.logPaths.source()),
    async once(): Promise<void> {
      await logs.once();
      if (logs.failed !== undefined) throw new CollectorError(logs.failed);
      metrics.publish(tracker, evaluate(), logs.stats(), undefined);
    },
  };
}
