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
import { createNodeView, GpuSpinClock } from "./node-view.js";
import type { NcclSettings } from "./settings.js";
import { FlightRecorderWatch, NO_FLIGHT_RECORDER, type FlightRecorderOptions } from "./flight-recorder/watch.js";
import { FlightRecorderMetrics } from "./flight-recorder/metrics.js";
import { RasAskMetrics } from "./ras/metrics.js";
import { RasReportMetrics } from "./ras/report-metrics.js";
import { InspectorMetrics } from "./inspector/metrics.js";
import { knownRanks } from "./logs/pytorch/findings.js";
import { PytorchMetrics } from "./logs/pytorch/metrics.js";
import { PytorchVerdicts, type PytorchVerdict } from "./logs/pytorch/verdict.js";
import { InspectorWatch } from "./inspector/watch.js";
import { PEER_ROLE_PATH } from "./ras/peer-probe.js";
import { gpusSpin } from "./ras-inputs.js";
import { rasHangEndedLine, rasHangLine, type RasCommVerdict } from "./ras/verdict.js";
import { RasSide, type NcclRasOptions } from "./ras-side.js";
import type { Tracker } from "./logs/state/tracker.js";
import { LogsWatch, type LogsWatchOptions } from "./logs/watch.js";
import { LogPathMetrics } from "./logs/path-metrics.js";
import { processUid, rankProcesses, type RankProcess } from "./logs/rank-processes.js";
import { LiveStacks, type LiveStacksSettings } from "./stacks/live/watch.js";
import { LiveStacksMetrics } from "./stacks/live/metrics.js";
import { liveStackSuspects } from "./stacks-inputs.js";

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

export interface NcclCollector extends Collector<NcclSettings> {
  /** Current verdicts (evaluated now). */
  verdicts(): CommVerdict[];
  readonly tracker: Tracker;
  /** Each rank the logs know and its process (read-only; the job collector reads it). */
  rankProcesses(): readonly RankProcess[];
}

const DEFAULT_HEAD_BYTES = 256 * 1024;

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

/** The RAS side (ras-side.ts), reading the settings as they are at each use (reload changes them). */
function makeRasSide(
  opts: NcclOptions,
  deps: CollectorDeps,
  c: { view: () => NodeView; tracker: Tracker; spin: GpuSpinClock; detect: DetectOptions },
): RasSide {
  return new RasSide(
    {
      procfsRoot: () => opts.procfsRoot,
      checkPids: () => opts.checkPids,
      view: c.view,
      tracker: c.tracker,
      spin: c.spin,
      ...(opts.gpu !== undefined ? { gpu: opts.gpu } : {}),
      ...(opts.gpuProcesses !== undefined ? { gpuProcesses: opts.gpuProcesses } : {}),
      ...(opts.isLocalAddress !== undefined ? { isLocalAddress: opts.isLocalAddress } : {}),
      threshold: () => ({ hangThresholdMs: c.detect.hangThresholdMs, maxThresholdMs: c.detect.maxThresholdMs }),
      now: deps.now,
      log: deps.logger,
    },
    opts.ras,
  );
}

const STACKS_OFF: LiveStacksSettings = { source: "off", workerSocket: "", timeoutMs: 10_000, maxPerMinute: 16 };

/** The logs' watch (follower, sinks, tracker) from the settings. */
function makeLogs(opts: NcclOptions, deps: CollectorDeps, onPathStates: LogsWatchOptions["onPathStates"]): LogsWatch {
  return new LogsWatch({
    paths: opts.paths,
    quietWhenMissing: new Set(opts.quietWhenMissing ?? []),
    onPathStates,
    usePolling: opts.usePolling,
    headBytes: opts.headBytes ?? DEFAULT_HEAD_BYTES,
    retireAfterMs: opts.retireAfterMs,
    retireGraceMs: opts.retireGraceMs ?? 60_000,
    maxComms: opts.maxComms,
    now: deps.now,
    log: deps.logger,
    ...(opts.sweepIntervalMs !== undefined ? { sweepIntervalMs: opts.sweepIntervalMs } : {}),
    ...(opts.pollIntervalMs !== undefined ? { pollIntervalMs: opts.pollIntervalMs } : {}),
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
  const pathMetrics = new LogPathMetrics(deps.registry);
  const logs = makeLogs(opts, deps, (states) => pathMetrics.publish(states));
  const tracker: Tracker = logs.tracker;
  const makeView = (): NodeView => opts.view ?? createNodeView({ procfsRoot: opts.procfsRoot, checkPids: opts.checkPids, gpu: opts.gpu });
  let view = makeView();
  const spin = new GpuSpinClock(opts.gpu);
  const ras = makeRasSide(opts, deps, { view: () => view, tracker, spin, detect });
  const makeFr = (o: FlightRecorderOptions): FlightRecorderWatch => new FlightRecorderWatch({ ...o, now: deps.now, log });
  let fr: FlightRecorderWatch | undefined = opts.flightRecorder !== undefined ? makeFr(opts.flightRecorder) : undefined;
  const inspector = makeInspector(opts, deps);
  const stacks = new LiveStacks({ ...(opts.stacks ?? STACKS_OFF), exec: deps.exec, now: deps.now, log });
  const evaluate = (): CommVerdict[] => liveByComm(evaluateAll(tracker, deps.now(), detect, view), ras.collLive);
  const pytorch = new PytorchVerdicts({ log, now: deps.now });
  const ptNow = (): PytorchVerdict[] => pytorch.evaluate(tracker.pt, () => knownRanks(tracker));

  const metrics = new NcclMetrics(
    deps.registry,
    () => {
      // A follower that failed (no log directory) leaves the RAS verdicts to publish.
      if (!logs.started && logs.failed === undefined) return;
      const snapshot = ras.watch?.snapshot();
      const insp = inspector?.snapshot();
      // The logs' verdicts first: they say which communicators still have a live rank here, which RAS's use.
      const logVerdicts = evaluate();
      const rasPublished = snapshot !== undefined ? { snapshot, verdicts: ras.verdicts(snapshot) } : undefined;
      const showsRanks = metrics.publish(tracker, logVerdicts, logs.stats(), rasPublished, insp);
      if (rasPublished !== undefined) rasReportMetrics.publish(rasPublished);
      if (insp !== undefined) inspectorMetrics.publish(insp, showsRanks);
      frMetrics.publish(fr?.snapshot() ?? NO_FLIGHT_RECORDER);
      if (snapshot !== undefined) rasMetrics.publish(snapshot);
      pytorchMetrics.publish(ptNow(), tracker.pt);
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

  const collHangs = new HangTransitions<CommVerdict>(log, commHangLine, commHangEndedLine);
  const rasHangs = new HangTransitions<RasCommVerdict>(log, rasHangLine, rasHangEndedLine);
  function tick(): void {
    try {
      const now = deps.now();
      logs.housekeep(now, view);
      spin.update(now);
      const verdicts = evaluate();
      collHangs.update(new Map(verdicts.flatMap((v) => (v.hangSuspected ? [[v.commKey, v] as const] : []))));
      const w = ras.watch;
      const rasVerdictsNow = w !== undefined ? ras.verdicts(w.snapshot()) : [];
      const uidOf = (pid: number): number | undefined => processUid(opts.procfsRoot, pid);
      stacks.update(
        liveStackSuspects({
          tracker,
          pt: tracker.pt,
          view,
          uidOf,
          logs: verdicts,
          ...(w !== undefined ? { ras: { verdicts: rasVerdictsNow, verifiedUid: w.verifiedOwnerUid(), nodePid: (pid: number) => ras.pidNode(pid) } } : {}),
          pytorch: ptNow(),
          now,
        }),
      );
      if (w !== undefined) rasHangs.update(new Map(rasVerdictsNow.flatMap((v) => (v.hang ? [[v.commId, v] as const] : []))));
      w?.setHang(collHangs.any || rasHangs.any);
      // Local evidence of a hang other than the logs' COLL verdicts lets a node that is not the querier ask: the GPUs spin, or PyTorch's lines say so.
      w?.tick(collHangs.any || gpusSpin(spin, opts.gpu?.latestSamples().keys() ?? [], now, detect.hangThresholdMs) || ptNow().length > 0);
      fr?.tick(collHangs.any || rasHangs.any);
      if (inspector !== undefined) inspector.logChanges(inspector.snapshot());
    } catch (err) {
      log.error({ reason: err instanceof Error ? err.message : String(err) }, "nccl: evaluation failed");
    }
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
      ras.reconfigure(n.ras, n.hangThresholdMs);
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
      void logs.start().then(() => ras.watch?.tick(false));
      timer = setInterval(tick, opts.evaluateEveryMs ?? 5000);
      timer.unref();
      void inspector?.start();
    },
    async stop(): Promise<void> {
      if (timer) clearInterval(timer);
      timer = undefined;
      await logs.stop();
      await ras.watch?.close();
      await fr?.settled();
      await stacks.settled();
      await inspector?.stop();
    },
    health(): CollectorHealth {
      if (logs.failed !== undefined) return { ok: false, reason: logs.failed };
      if (!logs.started) return { ok: false, reason: "starting", starting: true };
      return { ok: true, lastSuccessMs: deps.now() };
    },
    documents: () => new Map([[PEER_ROLE_PATH, () => ras.roleAnswer()]]),
    // The collector runs (and asks RAS) with no log path there: its source is the logs' paths.
    sourceState: () => (logs.failed !== undefined ? "failing" : logs.logPaths.source()),
    async once(): Promise<void> {
      await logs.once();
      if (logs.failed !== undefined) throw new CollectorError(logs.failed);
      metrics.publish(tracker, evaluate(), logs.stats(), undefined);
    },
  };
}
