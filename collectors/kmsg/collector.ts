/**
 * The kmsg collector (stream): follows the kernel log and counts what the GPU, NVSwitch and HCA
 * drivers report there (parse/events.ts). It reads /dev/kmsg where it may (CAP_SYSLOG when
 * kernel.dmesg_restrict=1), else the journal's kernel messages through journalctl
 * (journal-source.ts); with neither it reports itself absent. Where it stopped is saved
 * (resume.ts), so a restart reads nothing twice. This file is the wiring: which source is tried
 * when, and the collector's interface.
 */
import { CollectorError, type Collector, type CollectorDeps } from "../collector.js";
import { DeviceNames, type GpuIndexReadings } from "./device-names.js";
import { EventPublisher } from "./event-publisher.js";
import { deviceProblem } from "./failure-reasons.js";
import { GpuEventGate } from "./gpu-event-gate.js";
import { HealthLog } from "./health-log.js";
import { JournalSource } from "./journal-source.js";
import { KmsgDevice } from "./kmsg-device.js";
import { KmsgMetrics, type KmsgSource } from "./metrics.js";
import { KernelEvents } from "./parse/events.js";
import { RestartBackoff } from "./restart-backoff.js";
import { Resume } from "./resume.js";

export type KmsgSourceChoice = "auto" | KmsgSource;

export interface KmsgOptions {
  source: KmsgSourceChoice;
  /** The kmsg device (a file or FIFO replaying records in tests). */
  device: string;
  journalctl: string;
  /** journalctl -D directory; undefined: the system's journal. */
  journalDirectory?: string;
  /** Where the read position is kept; undefined: not kept (a restart reads the buffer again). */
  stateFile?: string;
  /** Its directory need not exist (the default's): where it does not, the position is not kept, logged at info (resume.ts). */
  stateDirMayBeAbsent?: boolean;
  procfsRoot: string;
  sysfsRoot: string;
  gpu?: GpuIndexReadings;
  /** How often /dev/kmsg is drained, ms. Default 1,000. */
  pollMs?: number;
  /** How often the position is saved while records arrive, ms. Default 5,000. */
  saveEveryMs?: number;
}

const RESTART_MIN_MS = 1000;
const RESTART_MAX_MS = 60_000;
const NAMES_REFRESH_MS = 60_000;

export function createKmsgCollector(deps: CollectorDeps, opts: KmsgOptions): Collector {
  const { registry, logger, exec, now } = deps;
  const metrics = new KmsgMetrics(registry);
  const names = new DeviceNames(opts.sysfsRoot, opts.gpu, now);
  const status = new HealthLog(logger);
  const backoff = new RestartBackoff(RESTART_MIN_MS, RESTART_MAX_MS);
  const kernelEvents = new KernelEvents();
  const resume = new Resume({
    procfsRoot: opts.procfsRoot,
    stateFile: opts.stateFile,
    ...(opts.stateDirMayBeAbsent !== undefined ? { stateDirMayBeAbsent: opts.stateDirMayBeAbsent } : {}),
    saveEveryMs: opts.saveEveryMs ?? 5000,
    now,
    logger,
    onMessage,
    onSaveFailure: () => metrics.positionFailures.inc(),
  });
  const publisher = new EventPublisher(metrics, names, logger, (pci, action) => resume.markRecovery(pci, action));
  /** GPU events wait until the gpu collector knows its GPUs (or for at most 30 s). */
  const gate = new GpuEventGate(
    () => names.gpusKnown(),
    now,
    (ev, atMs) => publisher.publish(ev, atMs),
    () => metrics.dropped.inc(),
  );
  const journal = new JournalSource(
    exec,
    { journalctl: opts.journalctl, ...(opts.journalDirectory !== undefined ? { directory: opts.journalDirectory } : {}) },
    metrics,
    status,
    backoff,
    { onRecord: (r) => resume.journalRecord(r), cursor: () => resume.journalCursor(), restart: scheduleRestart, stopped: () => stopped },
  );
  let device: KmsgDevice | undefined;
  let stopped = false;
  let namesTimer: NodeJS.Timeout | undefined;

  function onMessage(message: string, atMs: number): void {
    metrics.records.inc();
    for (const ev of kernelEvents.read(message, atMs)) gate.handle(ev, atMs);
  }

  async function openDevice(): Promise<string | undefined> {
    const d = new KmsgDevice(opts.device, opts.pollMs ?? 1000, {
      onRecord: (r) => resume.kmsgRecord(r),
      onLost: () => metrics.lost.inc(),
      onIdle: () => status.read(now()),
      onError: (code, message) => {
        device = undefined;
        metrics.setSource(undefined);
        status.set({ ok: false, reason: `reading ${opts.device} failed: ${code}: ${message}` });
        scheduleRestart();
      },
    });
    const code = await d.open();
    if (code !== undefined) return code;
    if (stopped) {
      d.stop();
      return undefined;
    }
    device = d;
    metrics.setSource("kmsg");
    backoff.reset();
    status.set({ ok: true });
    return undefined;
  }

  async function begin(): Promise<void> {
    if (stopped) return;
    if (opts.source !== "journal") {
      const code = await openDevice();
      if (code === undefined || stopped) return;
      const reason = deviceProblem(opts.device, code);
      if (opts.source === "kmsg") {
        status.set({ ok: false, absent: code === "ENOENT", reason });
        if (code !== "ENOENT") scheduleRestart();
        return;
      }
      await journal.start(reason);
      return;
    }
    await journal.start(undefined);
  }

  function scheduleRestart(): void {
    if (stopped) return;
    backoff.schedule(() => {
      resume.rewind();
      void begin();
    });
  }

  async function prepare(): Promise<void> {
    await resume.open();
    await names.refresh();
    publisher.restoreRecovery(await resume.restore());
    namesTimer = setInterval(() => void names.refresh(), NAMES_REFRESH_MS);
    namesTimer.unref();
  }

  return {
    name: "kmsg",
    mode: "stream",
    start() {
      void prepare().then(begin, (err: unknown) => status.set({ ok: false, reason: `start failed: ${String(err)}` }));
    },
    async stop() {
      stopped = true;
      backoff.cancel();
      if (namesTimer !== undefined) clearInterval(namesTimer);
      gate.stop();
      device?.stop();
      device = undefined;
      await journal.kill();
      await resume.flush();
    },
    health() {
      if (status.ok && journal.running) status.read(now());
      return status.health();
    },
    async once() {
      // One snapshot: the kernel's buffer as it is now, without saving a position.
      await prepare();
      resume.forget();
      let d: KmsgDevice | undefined;
      const code = await new Promise<string | undefined>((resolve) => {
        d = new KmsgDevice(opts.device, 60_000, {
          onRecord: (r) => resume.kmsgRecord(r),
          onLost: () => metrics.lost.inc(),
          onIdle: () => resolve(undefined),
          onError: (c) => resolve(c),
        });
        void d.open().then((c) => {
          if (c !== undefined) resolve(c);
        });
      });
      d?.stop();
      // What the gate still holds is published now, named as well as it can be: a snapshot has no later.
      gate.release(true);
      if (namesTimer !== undefined) clearInterval(namesTimer);
      if (code !== undefined) throw new CollectorError(deviceProblem(opts.device, code), { absent: code === "ENOENT" });
    },
  };
}
