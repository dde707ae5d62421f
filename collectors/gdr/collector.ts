/**
 * gdr collector (poll): is GPUDirect RDMA's kernel side in place?
 *
 * Reads `<procfs>/modules` (no fork, no privilege). Only when that file does not exist (a
 * procfs without it, or an odd mount) does it run `lsmod` through deps.exec.
 */
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { CollectorError, type Collector, type CollectorDeps } from "../collector.js";
import { gauge, publishGauge, type Sample } from "../publish.js";
import { parseLsmod, parseProcModules, type ModuleList } from "./parse-modules.js";
import { assessGdr, CONTEXT_MODULES } from "./readiness.js";

export interface GdrOptions {
  /** Root of procfs, normally /proc (--path.procfs). */
  procfsRoot: string;
  /** lsmod binary, used only when <procfsRoot>/modules is absent (--collector.gdr.lsmod). */
  lsmod: string;
  /** Kill lsmod after this many ms. Default 5,000. */
  timeoutMs?: number;
  /** The file lsmod itself reads, whatever --path.procfs says. Default /proc/modules (tests change it). */
  lsmodSource?: string;
}

type Source = "procfs" | "lsmod";

/** What lsmod prints when it cannot open its module list (both must match; stderr is a few lines). */
const SAYS_NO_MODULE_LIST = [/\bmodules\b/, /could not open|can't open|cannot open|No such file/i];

interface Reading {
  source: Source;
  list: ModuleList;
}

function errnoCode(err: unknown): string | undefined {
  return typeof err === "object" && err !== null && "code" in err ? String(err.code) : undefined;
}

export function createGdrCollector(deps: CollectorDeps, opts: GdrOptions): Collector {
  const { registry, logger, exec } = deps;
  const modulesPath = join(opts.procfsRoot, "modules");
  const timeoutMs = opts.timeoutMs ?? 5000;
  const lsmodSource = opts.lsmodSource ?? "/proc/modules";

  const peermemLoaded = gauge(
    registry,
    "ringwatch_gdr_peermem_loaded",
    "1 if the GPUDirect RDMA peer-memory module (nvidia_peermem, or legacy nv_peer_mem) is loaded and live, else 0.",
    [],
  );
  const ibCoreUser = gauge(
    registry,
    "ringwatch_gdr_peermem_ib_core_user",
    "1 if ib_core's used-by list names the loaded peer-memory module (gpud's check), else 0.",
    [],
  );
  const moduleLoaded = gauge(registry, "ringwatch_gdr_module_loaded", "1 if the kernel module is loaded and live, else 0 (fixed set of GPU/RDMA modules).", [
    "module",
  ]);
  const sourceInfo = gauge(registry, "ringwatch_gdr_source_info", "Where the module list was read: procfs (/proc/modules) or lsmod. Always 1.", ["source"]);
  const all = [peermemLoaded, ibCoreUser, moduleLoaded, sourceInfo];

  /**
   * No series at all. prom-client keeps a 0 series in a label-less gauge even after reset(),
   * which would read "peermem not loaded" while nothing is known: remove it explicitly.
   */
  function withdraw(): void {
    for (const g of all) {
      g.reset();
      g.remove({});
    }
  }
  withdraw();

  async function readProcfs(): Promise<Reading | undefined> {
    let text: string;
    try {
      text = await readFile(modulesPath, "utf8");
    } catch (err) {
      const code = errnoCode(err);
      if (code === "ENOENT" || code === "ENOTDIR") return undefined;
      throw new CollectorError(`${modulesPath}: ${code ?? String(err)}`, { cause: err });
    }
    const list = parseProcModules(text);
    if (list.modules.length === 0 && list.invalidLines > 0) {
      throw new CollectorError(`${modulesPath}: no line has the /proc/modules format`);
    }
    return { source: "procfs", list };
  }

  async function readLsmod(): Promise<Reading> {
    // lsmod prints a few kilobytes; more is a broken tool.
    const r = await exec.run(opts.lsmod, [], { timeoutMs, maxBytes: 1024 * 1024 });
    if (r.notFound) {
      throw new CollectorError(`neither ${modulesPath} nor ${opts.lsmod} is available`, { absent: true });
    }
    if (!r.ok) {
      // lsmod reads /proc/modules too: where it exits with an error and that file does not exist
      // (a kernel without loadable modules, a gVisor sandbox), there is no module list to read.
      // Only an lsmod that ran, exited with an error and said it could not open its module list
      // (kmod: "could not open /proc/modules", busybox: "can't open '/proc/modules'"): not one that
      // was killed (time, output, signal) or crashed on its own.
      const noList =
        !r.timedOut &&
        !r.overflowed &&
        r.signal === undefined &&
        r.exitCode !== undefined &&
        SAYS_NO_MODULE_LIST.every((re) => re.test(r.stderr)) &&
        (await stat(lsmodSource).then(
          () => false,
          (err: unknown) => errnoCode(err) === "ENOENT",
        ));
      if (noList) {
        const none = modulesPath === lsmodSource ? `${modulesPath} does not exist` : `neither ${modulesPath} nor ${lsmodSource} exists`;
        throw new CollectorError(`no module list: ${none}, and ${opts.lsmod}, which reads ${lsmodSource}, failed`, { absent: true });
      }
      throw new CollectorError(r.problem ?? `${r.command}: failed`);
    }
    const list = parseLsmod(r.stdout);
    if (list.modules.length === 0 && !list.sawHeader) {
      throw new CollectorError(`${r.command}: output has neither the lsmod header nor a module line`);
    }
    return { source: "lsmod", list };
  }

  function publish(reading: Reading): void {
    const gdr = assessGdr(reading.list.modules);
    const one = (v: boolean): Sample[] => [{ labels: {}, value: v ? 1 : 0 }];
    publishGauge(peermemLoaded, one(gdr.peermemLoaded));
    publishGauge(ibCoreUser, one(gdr.peermemIbCoreUser));
    publishGauge(
      moduleLoaded,
      CONTEXT_MODULES.map((m) => ({ labels: { module: m }, value: gdr.loaded[m] ? 1 : 0 })),
    );
    publishGauge(sourceInfo, [{ labels: { source: reading.source }, value: 1 }]);
  }

  async function update(): Promise<void> {
    let reading: Reading;
    try {
      reading = (await readProcfs()) ?? (await readLsmod());
    } catch (err) {
      withdraw();
      if (err instanceof CollectorError) throw err;
      throw new CollectorError(`gdr: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    if (reading.list.invalidLines > 0) {
      logger.debug({ source: reading.source, invalidLines: reading.list.invalidLines }, "gdr: skipped unparsable module lines");
    }
    publish(reading);
  }

  return { name: "gdr", mode: "poll", update, once: update };
}
