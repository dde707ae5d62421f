/**
 * The nccl collector: follows NCCL_DEBUG_FILE / PyTorch logs (follow/), parses every line
 * (ingest/file-sink.ts: COLL lines on bytes, the rest with parse/line.ts), folds them into state (state/tracker.ts) and turns state into verdicts
 * (detect/) at scrape time and every few seconds, when verdict changes are logged and
 * finished jobs retired. A stream collector: it runs from start() to stop().
 */
import { stat } from "node:fs/promises";
import { DEFAULT_DETECT, type CommVerdict, type DetectOptions } from "./logs/detect/types.js";
import { evaluateAll, type NodeView } from "./logs/detect/verdict.js";
import { CollectorError, type Collector, type CollectorDeps, type CollectorHealth } from "../collector.js";
import type { CommonSettings } from "../settings/common.js";
import { Follower, type FollowedFile, type ResumePoint } from "../follow/follower.js";
import { NcclMetrics } from "./metrics.js";
import type { GpuReadings } from "./verdict/gpu-readings.js";
import { createNodeView, createRasNode, GpuSpinClock } from "./node-view.js";
import { collScannerProblem } from "./logs/ingest/coll-scanner.js";
import { FileSink } from "./logs/ingest/file-sink.js";
import type { RasAddress } from "./ras/client.js";
import type { NcclSettings } from "./settings.js";
import { FlightRecorderWatch, NO_FLIGHT_RECORDER, type FlightRecorderOptions } from "./flight-recorder/watch.js";
import { FlightRecorderMetrics } from "./flight-recorder/metrics.js";
import { InspectorMetrics } from "./inspector/metrics.js";
import { knownRanks } from "./logs/pytorch/findings.js";
import { PytorchMetrics } from "./logs/pytorch/metrics.js";
import { PytorchVerdicts } from "./logs/pytorch/verdict.js";
import { InspectorWatch } from "./inspector/watch.js";
import { RasWatch, type RasSnapshot } from "./ras/watch.js";
import { rasHangMessage, rasVerdicts, type RasCommVerdict, type RasNode } from "./ras/verdict.js";
import { Tracker } from "./logs/state/tracker.js";
import { liveRankPids, processUid, rankProcesses, type RankProcess } from "./logs/rank-processes.js";
import { CapWarnings } from "./logs/cap-warnings.js";
import { ReadErrorLog } from "./logs/read-error-log.js";
import { REFUSAL_WORDS } from "../untrusted-open.js";
import { DEFAULT_MAX_FILES } from "../follow/options.js";

export interface NcclOptions {
  /** Directories or globs to follow (--collector.nccl.path). */
  paths: string[];
  procfsRoot: string;
  hangThresholdMs: number;
  maxComms: number;
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
  /** Overrides (tests): is an address this node's (RAS node addresses). */
  isLocalAddress?: (host: string) => boolean;
}

export interface NcclRasOptions {
  address: RasAddress;
  intervalMs: number;
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

function trackerLimits(maxComms: number): { maxComms: number; maxProcesses: number } {
  return { maxComms, maxProcesses: Math.max(4096, maxComms * 8) };
}

export function createNcclCollector(deps: CollectorDeps, options: NcclOptions): NcclCollector {
  const log = deps.logger;
  // A copy: reconfigure() changes it.
  const opts: NcclOptions = { ...options, paths: [...options.paths] };
  const tracker = new Tracker(trackerLimits(opts.maxComms));
  const detect: DetectOptions = { ...DEFAULT_DETECT, hangThresholdMs: opts.hangThresholdMs, ...opts.detect };
  const makeView = (): NodeView => opts.view ?? createNodeView({ procfsRoot: opts.procfsRoot, checkPids: opts.checkPids, gpu: opts.gpu });
  let view = makeView();
  const headBytes = opts.headBytes ?? DEFAULT_HEAD_BYTES;
  const graceMs = opts.retireGraceMs ?? 60_000;
  const historicalFiles = new Set<string>();
  let follower: Follower | undefined;
  let timer: NodeJS.Timeout | undefined;
  let failure: string | undefined;
  let startedMs: number | undefined;
  const hung = new Set<string>();
  const rasHung = new Set<string>();
  const caps = new CapWarnings(log);
  const spin = new GpuSpinClock(opts.gpu);
  // RAS's standstills are seen at the poll interval: the threshold stretches to twice the longest recent one.
  // An answer counts only from a socket that a live process of a rank the logs know (or root) holds.
  const makeRas = (o: NcclRasOptions): RasWatch =>
    new RasWatch({
      ...o,
      now: deps.now,
      log,
      progress: { hangThresholdMs: detect.hangThresholdMs, gapFactor: 2, maxThresholdMs: detect.maxThresholdMs },
      owner: { procfsRoot: () => opts.procfsRoot, rankPids: () => [...liveRankPids(tracker, view, (pid) => processUid(opts.procfsRoot, pid)), ...(opts.gpuProcesses?.() ?? [])] },
    });
  let ras: RasWatch | undefined = opts.ras !== undefined ? makeRas(opts.ras) : undefined;
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
      ...(opts.isLocalAddress !== undefined ? { isLocal: opts.isLocalAddress } : {}),
    });
  let rasNode = makeRasNode();
  const makeFr = (o: FlightRecorderOptions): FlightRecorderWatch => new FlightRecorderWatch({ ...o, now: deps.now, log });
  let fr: FlightRecorderWatch | undefined = opts.flightRecorder !== undefined ? makeFr(opts.flightRecorder) : undefined;
  const inspector =
    opts.inspectorPaths !== undefined && opts.inspectorPaths.length > 0
      ? new InspectorWatch({ paths: opts.inspectorPaths, usePolling: opts.usePolling, now: deps.now, log, maxComms: opts.maxComms, ...(opts.sweepIntervalMs !== undefined ? { sweepIntervalMs: opts.sweepIntervalMs } : {}), ...(opts.pollIntervalMs !== undefined ? { pollIntervalMs: opts.pollIntervalMs } : {}) })
      : undefined;
  const rasNow = (snapshot: RasSnapshot): RasCommVerdict[] => rasVerdicts(snapshot.progress, rasNode);
  const scanProblem = collScannerProblem();
  if (scanProblem !== undefined) log.info({ reason: scanProblem }, "nccl: COLL lines are matched in JavaScript (slower catch-up reads), not by the WebAssembly scanner");

  // Nothing is published before the heads of existing files are read and settled (settleHistory):
  // a count from a head that did not reach the file's end would be withdrawn right after.
  const metrics = new NcclMetrics(deps.registry, () => {
    // A follower that failed (no log directory) leaves the RAS verdicts to publish.
    if (startedMs === undefined && failure === undefined) return;
    const verdicts = evaluate();
    const snapshot = ras?.snapshot();
    const insp = inspector?.snapshot();
    metrics.publish(tracker, verdicts, follower?.stats(), snapshot !== undefined ? { snapshot, verdicts: rasNow(snapshot) } : undefined, insp);
    if (insp !== undefined) inspectorMetrics.publish(insp);
    frMetrics.publish(fr?.snapshot() ?? NO_FLIGHT_RECORDER);
    pytorchMetrics.publish(pytorch.evaluate(tracker.pt, () => knownRanks(tracker)), tracker.pt);
  });

  // After NcclMetrics, whose collect hook fills them: prom-client reads metrics in registration order.
  const frMetrics = new FlightRecorderMetrics(deps.registry);
  const inspectorMetrics = new InspectorMetrics(deps.registry);
  const pytorchMetrics = new PytorchMetrics(deps.registry);
  const pytorch = new PytorchVerdicts({ log, now: deps.now });

  function fileKey(f: FollowedFile): string {
    return `${f.dev}:${f.ino}:${f.generation}`;
  }

  /** Per followed file (dev:ino:generation): its sink, which knows its writer and line count. */
  const sinks = new Map<string, FileSink>();
  const onSinkError = (err: unknown, where: string): void => {
    log.warn({ where, reason: err instanceof Error ? err.message : String(err) }, "nccl: line could not be processed");
  };

  function openSink(file: FollowedFile, meta: { historical: boolean; mtimeMs: number }): FileSink {
    const key = fileKey(file);
    let sink = sinks.get(key);
    if (sink === undefined) {
      sink = new FileSink(tracker, onSinkError);
      sinks.set(key, sink);
    }
    if (meta.historical) historicalFiles.add(file.path);
    return sink.open(file.path, deps.now(), meta.historical, meta.mtimeMs, file.uid);
  }

  const readErrors = new ReadErrorLog(log, deps.now);
  function onReadError(path: string, code: string): void {
    readErrors.failed(path, code, (REFUSAL_WORDS as Readonly<Record<string, string>>)[code]);
  }

  function forget(f: FollowedFile): void {
    sinks.delete(fileKey(f));
  }

  /** Per communicator the logs know: does a rank of it live on this node (the last evaluation's answer). */
  const collLive = new Map<string, boolean>();
  function evaluate(): CommVerdict[] {
    const verdicts = evaluateAll(tracker, deps.now(), detect, view);
    collLive.clear();
    for (const v of verdicts) collLive.set(v.commKey, v.liveRanks.length > 0);
    return verdicts;
  }

  /** Files whose head read did not reach their end: counting restarts for their ranks. */
  async function settleHistory(): Promise<void> {
    for (const path of historicalFiles) {
      try {
        if ((await stat(path)).size > headBytes) tracker.markResumed(path);
      } catch {
        // gone meanwhile
      }
    }
    historicalFiles.clear();
  }

  function retire(now: number): void {
    for (const p of [...tracker.processes.values()]) {
      const alive = view.alive(p);
      if (alive === true) p.goneSinceMs = undefined;
      else if (alive === false) p.goneSinceMs ??= now;
      const gone = p.goneSinceMs !== undefined && now - p.goneSinceMs >= graceMs;
      const stale = alive === undefined && now - p.lastSeenMs >= opts.retireAfterMs;
      if (gone || stale) {
        log.info({ process: p.key, reason: gone ? "process exited" : "no line for the retire-after period" }, "nccl: retiring process");
        tracker.retireProcess(p.key);
      }
    }
    for (const c of [...tracker.comms.values()]) {
      for (const [r, st] of [...c.ranks]) if (st.tornDownMs !== undefined && now - st.tornDownMs >= graceMs) tracker.retireRank(c.key, r);
      if (c.ranks.size === 0) tracker.retireComm(c.key);
    }
  }

  function logChanges(verdicts: CommVerdict[]): void {
    const now = new Set<string>();
    for (const v of verdicts) {
      if (!v.hangSuspected) continue;
      now.add(v.commKey);
      if (hung.has(v.commKey)) continue;
      log.warn(
        {
          comm_id: v.commKey,
          silent_seconds: Math.round((v.silentMs ?? 0) / 1000),
          threshold_seconds: Math.round(v.thresholdMs / 1000),
          ranks_behind: v.behind,
          live_ranks: v.liveRanks,
          gpu_signatures: v.gpus.map((g) => `${g.gpu}:${g.signature}`),
        },
        `nccl: hang suspected on communicator ${v.commKey}${v.behind.length ? `; rank ${v.behind.join(",")} never entered the collective the others wait in` : ""}`,
      );
    }
    for (const k of hung) if (!now.has(k)) log.info({ comm_id: k }, `nccl: communicator ${k} no longer hung`);
    hung.clear();
    for (const k of now) hung.add(k);
  }

  function logRasChanges(verdicts: RasCommVerdict[]): void {
    const now = new Set<string>();
    for (const v of verdicts) {
      if (!v.hang) continue;
      now.add(v.commId);
      if (rasHung.has(v.commId)) continue;
      log.warn(
        {
          comm_id: v.commId,
          source: "ras",
          still_seconds: Math.round(v.stillMs / 1000),
          threshold_seconds: Math.round(v.thresholdMs / 1000),
          ranks_behind: v.behind.map((r) => r.rank),
          processes_behind: v.behind.map((r) => (r.pid !== undefined ? `${r.node ?? "?"}:${r.pid}` : "")),
          evidence: v.evidence,
          local_ranks: v.local.map((l) => l.rank),
          gpu_signatures: v.gpus.map((g) => `${g.gpu}:${g.signature}`),
        },
        rasHangMessage(v),
      );
    }
    for (const k of rasHung) if (!now.has(k)) log.info({ comm_id: k, source: "ras" }, `nccl: communicator ${k} no longer hung (NCCL RAS)`);
    rasHung.clear();
    for (const k of now) rasHung.add(k);
  }

  function tick(): void {
    try {
      const now = deps.now();
      retire(now);
      caps.commsDropped(tracker.droppedCommsByOwner, opts.maxComms);
      spin.update(now);
      logChanges(evaluate());
      if (ras !== undefined) logRasChanges(rasNow(ras.snapshot()));
      ras?.tick(hung.size > 0);
      fr?.tick(hung.size > 0 || rasHung.size > 0);
      if (inspector !== undefined) inspector.logChanges(inspector.snapshot());
    } catch (err) {
      log.error({ reason: err instanceof Error ? err.message : String(err) }, "nccl: evaluation failed");
    }
  }

  function makeFollower(resume?: ReadonlyMap<string, ResumePoint>): Follower {
    return new Follower(
      {
        paths: opts.paths,
        headBytes,
        usePolling: opts.usePolling,
        ...(resume !== undefined ? { resume } : {}),
        ...(opts.sweepIntervalMs !== undefined ? { sweepIntervalMs: opts.sweepIntervalMs } : {}),
        ...(opts.pollIntervalMs !== undefined ? { pollIntervalMs: opts.pollIntervalMs } : {}),
        now: deps.now,
      },
      {
        openSink,
        onReadError,
        onFileDropped: (path, uid) => caps.fileDropped(path, uid, DEFAULT_MAX_FILES),
        onLook: (f) => sinks.get(fileKey(f))?.looked(deps.now()),
        onTruncated: (f) => forget(f),
        onFileRemoved: (f) => forget(f),
      },
    );
  }

  async function startFollowing(resume?: ReadonlyMap<string, ResumePoint>): Promise<void> {
    follower = makeFollower(resume);
    try {
      await follower.start();
      await settleHistory();
      failure = undefined;
      startedMs = deps.now();
      log.info({ paths: opts.paths, files: follower.stats().files, polling: follower.stats().polling }, "nccl: following logs");
    } catch (err) {
      failure = `cannot follow ${opts.paths.join(", ")}: ${err instanceof Error ? err.message : String(err)}`;
      log.warn({ reason: failure }, "nccl: log follower failed");
    }
  }

  /** Other paths or polling (a reload): a new follower that goes on where the old one stood in every file. */
  let refollowing: Promise<void> = Promise.resolve();
  function refollow(): void {
    refollowing = refollowing.then(async () => {
      const old = follower;
      if (old === undefined || stopped) return;
      await old.stop();
      const resume = old.positions();
      follower = undefined;
      if (stopped) return;
      await startFollowing(resume);
    });
  }

  let stopped = false;

  return {
    name: "nccl",
    mode: "stream",
    tracker,
    verdicts: evaluate,
    rankProcesses: () => rankProcesses(tracker, (p) => view.nodePid?.(p)),
    reconfigure(n: NcclSettings, common: CommonSettings): void {
      const follow = n.paths.join("\n") !== opts.paths.join("\n") || n.polling !== opts.usePolling;
      opts.paths = [...n.paths];
      opts.usePolling = n.polling;
      opts.procfsRoot = common.procfsRoot;
      opts.checkPids = n.checkPids;
      opts.retireAfterMs = n.retireAfterMs;
      opts.hangThresholdMs = n.hangThresholdMs;
      opts.maxComms = n.maxCommunicators;
      detect.hangThresholdMs = n.hangThresholdMs;
      tracker.setLimits(trackerLimits(n.maxCommunicators));
      view = makeView();
      if (n.ras !== undefined) opts.ras = { ...opts.ras, ...n.ras };
      rasNode = makeRasNode();
      // Once created, the watch stays (paused when RAS is turned off): its counters do not reset.
      if (ras === undefined && n.ras !== undefined) ras = makeRas(n.ras);
      else ras?.setOptions(n.ras);
      ras?.setThreshold(n.hangThresholdMs);
      if (n.flightRecorder === undefined) fr = undefined;
      else if (fr === undefined) fr = makeFr(n.flightRecorder);
      else fr.setOptions(n.flightRecorder);
      log.info({ paths: opts.paths, hang_threshold_seconds: n.hangThresholdMs / 1000, refollow: follow }, "nccl: settings reloaded");
      if (follow) refollow();
    },
    start(): void {
      // RAS is asked from the start, logs or none: once the heads of the logs are read, which name
      // the rank processes whose RAS socket is believed.
      void startFollowing().then(() => ras?.tick(false));
      timer = setInterval(tick, opts.evaluateEveryMs ?? 5000);
      timer.unref();
      void inspector?.start();
    },
    async stop(): Promise<void> {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = undefined;
      await refollowing;
      await follower?.stop();
      await ras?.close();
      await fr?.settled();
      await inspector?.stop();
    },
    health(): CollectorHealth {
      if (failure) return { ok: false, reason: failure };
      if (startedMs === undefined) return { ok: false, reason: "starting", starting: true };
      return { ok: true, lastSuccessMs: deps.now() };
    },
    async once(): Promise<void> {
      await startFollowing();
      await follower?.flush();
      await follower?.stop();
      if (failure) throw new CollectorError(failure);
      metrics.publish(tracker, evaluate(), follower?.stats(), undefined);
    },
  };
}
