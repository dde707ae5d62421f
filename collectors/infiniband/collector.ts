/**
 * The infiniband collector (poll): reads the whole snapshot from sysfs or from ibstat + perfquery,
 * then publishes it in one synchronous step. Failures become one CollectorError line; a source that
 * is simply not there (no /sys/class/infiniband and no ibstat) is `absent`.
 */
import { CollectorError, type Collector, type CollectorDeps } from "../collector.js";
import { createInfinibandMetrics } from "./metrics.js";
import { classDir, listDevices, readInfinibandSysfs } from "./sysfs.js";
import { readInfinibandTools } from "./tools.js";
import type { IbDevice } from "./types.js";

export interface InfinibandOptions {
  /** sysfs mount point (--path.sysfs); devices are read from <sysfsRoot>/class/infiniband. */
  sysfsRoot: string;
  /** auto: sysfs when it lists devices, else the tools. */
  source: "auto" | "sysfs" | "tools";
  /** Path of ibstat (--collector.infiniband.ibstat). */
  ibstat: string;
  /** Path of perfquery (--collector.infiniband.perfquery). */
  perfquery: string;
  /** Only HCAs whose name matches. */
  deviceInclude?: RegExp;
  /** Not HCAs whose name matches. */
  deviceExclude?: RegExp;
  /** hw_counters files to read (the allow-list); default: those with a family (hw-counters.ts). */
  hwCounters?: ReadonlySet<string>;
  /** Time limit of each ibstat / perfquery run, ms. Default 5,000. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 5_000;

/** Copies without g/y so test() keeps no state between calls. */
function stateless(re: RegExp | undefined): RegExp | undefined {
  return re && new RegExp(re.source, re.flags.replace(/[gy]/g, ""));
}

export function deviceFilter(include?: RegExp, exclude?: RegExp): (device: string) => boolean {
  const inc = stateless(include);
  const exc = stateless(exclude);
  return (device) => (!inc || inc.test(device)) && !(exc && exc.test(device));
}

/** Several problems as one stable line: the first (sorted) and how many more. */
export function summarize(problems: readonly string[]): string {
  const sorted = [...problems].sort();
  const first = sorted[0] ?? "unknown problem";
  return sorted.length > 1 ? `${first} (and ${sorted.length - 1} more)` : first;
}

function errText(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : err instanceof Error ? err.message : String(err);
}

export function createInfinibandCollector(deps: CollectorDeps, opts: InfinibandOptions): Collector {
  const metrics = createInfinibandMetrics(deps.registry);
  const accept = deviceFilter(opts.deviceInclude, opts.deviceExclude);
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const dir = classDir(opts.sysfsRoot);
  // deps.logger already carries {collector: "infiniband"} (agent/app.ts); a second child() would print the key twice.
  const log = deps.logger;

  /** Withdraws the series and throws: nothing stale is served as current. */
  const fail = (message: string, absent = false): never => {
    metrics.clear();
    throw new CollectorError(message, { absent });
  };

  const sysfsNames = async (): Promise<string[] | undefined> => {
    try {
      return await listDevices(opts.sysfsRoot);
    } catch (err) {
      return fail(`cannot list ${dir}: ${errText(err)}`);
    }
  };

  const publish = (devices: IbDevice[]): void => {
    metrics.publish(devices);
  };

  const fromSysfs = async (names: string[]): Promise<void> => {
    const snap = await readInfinibandSysfs(opts.sysfsRoot, names.filter(accept), { hwCounters: opts.hwCounters });
    if (snap.problems.length > 0) log.debug({ files: snap.problems }, "skipped unreadable InfiniBand sysfs files");
    publish(snap.devices);
  };

  const fromTools = async (names: string[] | undefined): Promise<void> => {
    const snap = await readInfinibandTools(deps.exec, { ibstat: opts.ibstat, perfquery: opts.perfquery, timeoutMs, accept });
    if (snap.notFound) {
      const noSysfs = (names ?? (await sysfsNames()) ?? []).length === 0;
      return fail(
        noSysfs ? `no InfiniBand here: ${dir} lists no devices and ${opts.ibstat} is not installed` : `${opts.ibstat}: not found or not executable`,
        noSysfs,
      );
    }
    if (snap.fatal !== undefined) return fail(snap.fatal);
    if (snap.seen === 0) return fail(`no InfiniBand here: ${opts.ibstat} lists no CA`, true);
    // Partial results stay (ports read before an ibpanic, ports whose perfquery worked); the failure is still reported.
    publish(snap.devices);
    if (snap.problems.length > 0) throw new CollectorError(summarize(snap.problems));
  };

  const update = async (): Promise<void> => {
    if (opts.source === "tools") return fromTools(undefined);
    const names = await sysfsNames();
    if (names !== undefined && names.length > 0) return fromSysfs(names);
    if (opts.source === "sysfs") return fail(`no InfiniBand here: ${dir} ${names === undefined ? "does not exist" : "is empty"}`, true);
    return fromTools(names);
  };

  return { name: "infiniband", mode: "poll", update, once: update };
}
