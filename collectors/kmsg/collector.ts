/**
 * The kmsg collector (stream): follows the kernel log and counts what the GPU, NVSwitch and HCA
 * drivers report there (parse/events.ts). It reads /dev/kmsg where it may (CAP_SYSLOG when
 * kernel.dmesg_restrict=1), else the journal's kernel messages through journalctl; with neither it
 * reports itself absent. Where it stopped is saved (position.ts), so a restart reads nothing twice.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { CollectorError, type Collector, type CollectorDeps, type CollectorHealth } from "../collector.js";
import type { StreamExit, StreamHandle } from "../exec.js";
import { DeviceNames, type GpuIndexReadings } from "./device-names.js";
import { unreadableSystemJournals } from "./journal-files.js";
import { followJournal, journalProblem, type JournalProblem } from "./journal.js";
import { KmsgDevice } from "./kmsg-device.js";
import { KmsgMetrics, type KmsgSource } from "./metrics.js";
import type { KernelEvent } from "./parse/events.js";
import { recoveryActionOf } from "./parse/xid.js";
import { KernelEvents } from "./parse/events.js";
import type { JournalRecord } from "./parse/journal-record.js";
import type { KmsgRecord } from "./parse/kmsg-record.js";
import { XID_CATALOGUE } from "./xid-catalogue.js";
import { loadPosition, PositionKeeper, type Position } from "./position.js";

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
/** How long GPU events wait for the gpu collector's first identities before sysfs names them. */
const GPU_NAMES_WAIT_MS = 30_000;
/** Events held while waiting, at most (a kernel buffer's backlog). */
const MAX_HELD = 10_000;

/** The journal files' group, for the fix in a log line. */
const JOURNAL_GROUP = "the journal files' group (adm on Debian and Ubuntu, systemd-journal elsewhere)";

/** journalctl's complaint, with the fix, for the one log line. */
function journalProblemReason(p: JournalProblem, dir: string | undefined): string {
  const cmd = dir !== undefined ? `journalctl -D ${dir}` : "journalctl";
  switch (p.kind) {
    case "unreadable":
      return dir !== undefined
        ? `${cmd} may read none of the journal files there (${p.line}): run ringwatch with ${JOURNAL_GROUP} as a supplemental group`
        : `${cmd} may read none of the journal's files (${p.line}): add ringwatch's user to ${JOURNAL_GROUP}`;
    case "no_directory":
      return `the journal directory ${dir ?? "?"} does not exist (${p.line}): mount the host's /var/log/journal there, or /run/log/journal where the host keeps its journal in memory`;
    case "directory_denied":
      return `the journal directory ${dir ?? "?"} may not be read (${p.line}): run ringwatch with ${JOURNAL_GROUP} as a supplemental group`;
    case "no_boot":
      return dir !== undefined
        ? `${cmd} finds no journal of a boot there (${p.line}): the directory holds no journal files; mount the host's persistent journal (/var/log/journal) there, or /run/log/journal where the host keeps its journal in memory`
        : `${cmd} finds no journal of this boot (${p.line}): journald keeps none`;
  }
}

/** What an errno from opening /dev/kmsg means, for the one log line. */
function deviceProblem(path: string, code: string): string {
  if (code === "EPERM" || code === "EACCES") return `cannot open ${path}: ${code} (reading the kernel log needs CAP_SYSLOG where kernel.dmesg_restrict=1)`;
  return `cannot open ${path}: ${code}`;
}

export function createKmsgCollector(deps: CollectorDeps, opts: KmsgOptions): Collector {
  const { registry, logger, exec, now } = deps;
  const metrics = new KmsgMetrics(registry);
  const names = new DeviceNames(opts.sysfsRoot, opts.gpu, now);
  let health: CollectorHealth = { ok: false, starting: true, reason: "starting" };
  /** The failure last logged: the same one again (each journalctl restart) is not logged again. */
  let loggedReason: string | undefined;
  /** System journal files of the -D directory this process may not read: a failure even while records come. */
  let journalBlocked: string | undefined;
  let bootId = "unknown";
  let bootWallMs = 0;
  let keeper: PositionKeeper | undefined;
  let restored: Position | undefined;
  let device: KmsgDevice | undefined;
  let journal: StreamHandle | undefined;
  let stopped = false;
  let restartMs = RESTART_MIN_MS;
  let restartTimer: NodeJS.Timeout | undefined;
  let namesTimer: NodeJS.Timeout | undefined;
  let loggedSaveFailure = false;
  /** When the source was last read to its end (kmsg) or last known running (journal). */
  let lastReadMs: number | undefined;
  const kernelEvents = new KernelEvents();

  function setHealth(h: CollectorHealth): void {
    health = h;
    if (h.ok || h.starting) {
      loggedReason = undefined;
      return;
    }
    if (h.reason === loggedReason) return;
    loggedReason = h.reason;
    const msg = `kmsg: ${h.reason ?? "failed"}`;
    if (h.absent) logger.info(msg);
    else logger.warn(msg);
  }

  let held: Array<{ ev: KernelEvent; atMs: number }> | undefined = [];
  let heldSinceMs: number | undefined;
  let heldTimer: NodeJS.Timeout | undefined;

  /** GPU events wait until the gpu collector knows its GPUs (or for at most 30 s). */
  function handle(ev: KernelEvent, atMs: number): void {
    if (held !== undefined && (ev.kind === "xid" || ev.kind === "gpu_pcie") && !names.gpusKnown()) {
      heldSinceMs ??= now();
      if (held.length < MAX_HELD) held.push({ ev, atMs });
      else metrics.dropped.inc();
      heldTimer ??= setInterval(releaseHeld, 250);
      heldTimer.unref();
      return;
    }
    if (held !== undefined && held.length > 0) releaseHeld(true);
    publishEvent(ev, atMs);
  }

  function releaseHeld(force = false): void {
    if (held === undefined) return;
    if (!force && !names.gpusKnown() && now() - (heldSinceMs ?? now()) < GPU_NAMES_WAIT_MS) return;
    const events = held;
    held = undefined; // from now on, events are named as they come
    if (heldTimer !== undefined) clearInterval(heldTimer);
    heldTimer = undefined;
    for (const h of events) publishEvent(h.ev, h.atMs);
  }

  function publishEvent(ev: KernelEvent, atMs: number): void {
    const t = atMs / 1000;
    switch (ev.kind) {
      case "xid": {
        const gpu = names.gpuName(ev.xid.pci);
        const xid = String(ev.xid.xid);
        if (!metrics.admit(`x|${gpu}|${xid}`)) return;
        const entry = XID_CATALOGUE.get(ev.xid.xid);
        metrics.xid.inc({ gpu, xid });
        metrics.xidLast.set({ gpu, xid }, t);
        metrics.xidInfo.set({ xid, meaning: entry?.meaning ?? "", cause: entry?.cause ?? "unknown", action: entry?.action ?? "unknown" }, 1);
        const what = entry !== undefined ? ` (${entry.meaning}; ${entry.cause}; action: ${entry.action})` : "";
        logger.warn({ gpu, xid: ev.xid.xid, pid: ev.xid.pid, name: ev.xid.name, pci: ev.xid.pci }, `kmsg: Xid ${xid} on GPU ${gpu}${what}: ${ev.xid.detail}`);
        const recovery = recoveryActionOf(ev.xid);
        if (recovery !== undefined) {
          metrics.recovery.set({ gpu }, recovery);
          keeper?.markRecovery(ev.xid.pci, recovery);
        }
        return;
      }
      case "sxid": {
        const nvswitch = ev.sxid.nvswitch ?? ev.sxid.pci;
        const sxid = String(ev.sxid.sxid);
        const fatality = ev.sxid.fatal ? "fatal" : "non_fatal";
        if (!metrics.admit(`s|${nvswitch}|${sxid}|${fatality}`)) return;
        metrics.sxid.inc({ nvswitch, sxid, fatality });
        metrics.sxidLast.set({ nvswitch, sxid, fatality }, t);
        if (ev.sxid.fatal) logger.warn({ nvswitch, sxid: ev.sxid.sxid }, `kmsg: fatal SXid ${sxid} on NVSwitch ${nvswitch}: ${ev.sxid.detail}`);
        return;
      }
      case "nic": {
        const dev = names.hcaName(ev.nic.pci) ?? (ev.nic.name?.startsWith("mlx") === true ? ev.nic.name : ev.nic.pci);
        if (!metrics.admit(`n|${dev}|${ev.nic.kind}`)) return;
        metrics.nic.inc({ device: dev, event: ev.nic.kind });
        return;
      }
      case "gpu_pcie": {
        const gpu = names.gpuName(ev.pcie.pci);
        if (!metrics.admit(`p|${gpu}|${ev.pcie.severity}`)) return;
        metrics.gpuPcie.inc({ gpu, aer_severity: ev.pcie.severity });
        return;
      }
    }
  }

  function onMessage(message: string, atMs: number): void {
    metrics.records.inc();
    for (const ev of kernelEvents.read(message, atMs)) handle(ev, atMs);
  }

  function onKmsgRecord(r: KmsgRecord): void {
    if (restored?.kmsgSeq !== undefined && r.seq <= restored.kmsgSeq) return;
    if (r.facility === 0) onMessage(r.message, bootWallMs + r.usec / 1000);
    keeper?.markKmsg(r.seq);
  }

  function onJournalRecord(r: JournalRecord): void {
    // journalctl -k shows this boot only; the check keeps a directory of another host's journal honest.
    if (r.bootId !== undefined && bootId !== "unknown" && r.bootId.replaceAll("-", "") !== bootId.replaceAll("-", "")) return;
    onMessage(r.message, r.realtimeMs ?? (r.usec !== undefined ? bootWallMs + r.usec / 1000 : now()));
    keeper?.markJournal(r.cursor);
  }

  async function openDevice(): Promise<string | undefined> {
    const d = new KmsgDevice(opts.device, opts.pollMs ?? 1000, {
      onRecord: onKmsgRecord,
      onLost: () => metrics.lost.inc(),
      onIdle: () => {
        lastReadMs = now();
      },
      onError: (code, message) => {
        device = undefined;
        metrics.setSource(undefined);
        setHealth({ ok: false, reason: `reading ${opts.device} failed: ${code}: ${message}` });
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
    restartMs = RESTART_MIN_MS;
    setHealth({ ok: true });
    return undefined;
  }

  async function startJournal(deviceReason: string | undefined): Promise<void> {
    const dir = opts.journalDirectory;
    const and = deviceReason !== undefined ? `; and ${deviceReason}` : "";
    journalBlocked = undefined;
    if (dir !== undefined) {
      const files = await unreadableSystemJournals(dir);
      const first = files?.unreadable[0];
      if (files !== undefined && first !== undefined) {
        journalBlocked = `journalctl -D ${dir} skips ${files.unreadable.length} of the ${files.total} system journal files there, which hold the kernel's messages (${first.path}: ${first.code}): run ringwatch with ${JOURNAL_GROUP} as a supplemental group${and}`;
      }
      if (stopped) return;
    }
    const cursor = restored?.journalCursor ?? keeper?.position.journalCursor;
    // The source is published once journalctl reads (a record, or 2 s running), not while it may
    // still refuse and exit.
    let sourcePublished = false;
    const { handle } = followJournal(
      exec,
      {
        journalctl: opts.journalctl,
        ...(dir !== undefined ? { directory: dir } : {}),
        ...(cursor !== undefined ? { afterCursor: cursor } : {}),
      },
      {
        onRecord: (r) => {
          if (journal === handle && !sourcePublished) {
            sourcePublished = true;
            metrics.setSource("journal");
          }
          if (!health.ok && journalBlocked === undefined) {
            restartMs = RESTART_MIN_MS;
            setHealth({ ok: true });
          }
          onJournalRecord(r);
        },
        onExit: (exit: StreamExit) => {
          journal = undefined;
          metrics.setSource(undefined);
          if (stopped) return;
          if (exit.notFound && deviceReason !== undefined) {
            setHealth({ ok: false, absent: !deviceReason.includes("EPERM") && !deviceReason.includes("EACCES"), reason: `${deviceReason}; and ${opts.journalctl} is not available` });
            return;
          }
          const problem = journalProblem(exit.stderrTail);
          setHealth({ ok: false, reason: problem !== undefined ? journalProblemReason(problem, dir) + and : exit.problem });
          scheduleRestart();
        },
      },
    );
    journal = handle;
    // Healthy once a record arrives; the journal may hold none yet: treat a running child as ok.
    // Skipped system journal files are reported once journalctl runs: one that exits at once
    // (every file unreadable) says so itself.
    setTimeout(() => {
      if (journal !== handle) return;
      if (!sourcePublished) {
        sourcePublished = true;
        metrics.setSource("journal");
      }
      if (journalBlocked !== undefined) setHealth({ ok: false, reason: journalBlocked });
      else if (!health.ok) setHealth({ ok: true });
    }, 2000).unref();
  }

  async function begin(): Promise<void> {
    if (stopped) return;
    if (opts.source !== "journal") {
      const code = await openDevice();
      if (code === undefined || stopped) return;
      const reason = deviceProblem(opts.device, code);
      if (opts.source === "kmsg") {
        setHealth({ ok: false, absent: code === "ENOENT", reason });
        if (code !== "ENOENT") scheduleRestart();
        return;
      }
      await startJournal(reason);
      return;
    }
    await startJournal(undefined);
  }

  function scheduleRestart(): void {
    if (stopped || restartTimer !== undefined) return;
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      restored = keeper?.position !== undefined ? { ...keeper.position } : restored;
      void begin();
    }, restartMs);
    restartTimer.unref();
    restartMs = Math.min(RESTART_MAX_MS, restartMs * 2);
  }

  async function prepare(): Promise<void> {
    bootId = (await readFile(join(opts.procfsRoot, "sys/kernel/random/boot_id"), "utf8").catch(() => "unknown")).trim() || "unknown";
    const uptime = Number.parseFloat((await readFile(join(opts.procfsRoot, "uptime"), "utf8").catch(() => "")).split(" ")[0] ?? "");
    bootWallMs = Number.isFinite(uptime) ? now() - uptime * 1000 : now();
    keeper = new PositionKeeper(
      opts.stateFile,
      bootId,
      opts.saveEveryMs ?? 5000,
      (message) => {
        metrics.positionFailures.inc();
        if (!loggedSaveFailure) logger.warn(`kmsg: ${message}; after a restart, records since the last good write are read again`);
        loggedSaveFailure = true;
      },
      () => {
        loggedSaveFailure = false;
      },
    );
    await names.refresh();
    if (opts.stateFile !== undefined) {
      const { position, problem } = await loadPosition(opts.stateFile);
      if (problem !== undefined) logger.warn(`kmsg: ${problem}; reading the whole kernel log buffer`);
      if (position !== undefined && position.bootId === bootId && bootId !== "unknown") {
        restored = position;
        keeper.restore(position);
        for (const [pci, action] of Object.entries(position.recovery ?? {})) metrics.recovery.set({ gpu: names.gpuName(pci) }, action);
      }
    }
    namesTimer = setInterval(() => void names.refresh(), NAMES_REFRESH_MS);
    namesTimer.unref();
  }

  return {
    name: "kmsg",
    mode: "stream",
    start() {
      void prepare().then(begin, (err: unknown) => setHealth({ ok: false, reason: `start failed: ${String(err)}` }));
    },
    async stop() {
      stopped = true;
      if (restartTimer !== undefined) clearTimeout(restartTimer);
      if (namesTimer !== undefined) clearInterval(namesTimer);
      if (heldTimer !== undefined) clearInterval(heldTimer);
      device?.stop();
      device = undefined;
      await journal?.kill();
      await keeper?.flush();
    },
    health() {
      if (health.ok && journal !== undefined) lastReadMs = now();
      return lastReadMs !== undefined ? { ...health, lastSuccessMs: lastReadMs } : health;
    },
    async once() {
      // One snapshot: the kernel's buffer as it is now, without saving a position.
      await prepare();
      keeper = undefined;
      let d: KmsgDevice | undefined;
      const code = await new Promise<string | undefined>((resolve) => {
        d = new KmsgDevice(opts.device, 60_000, {
          onRecord: onKmsgRecord,
          onLost: () => metrics.lost.inc(),
          onIdle: () => resolve(undefined),
          onError: (c) => resolve(c),
        });
        void d.open().then((c) => {
          if (c !== undefined) resolve(c);
        });
      });
      d?.stop();
      if (namesTimer !== undefined) clearInterval(namesTimer);
      if (code !== undefined) throw new CollectorError(deviceProblem(opts.device, code), { absent: code === "ENOENT" });
    },
  };
}
