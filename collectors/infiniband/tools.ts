/**
 * Tools source: `ibstat` once (CAs, ports, states, rates), then `perfquery -x -C <ca> -P <port>`
 * per InfiniBand port that has a LID (RoCE ports and LID-less ports have no PMA to ask). When the
 * PMA has no 64-bit error counters, the plain PortCounters (`perfquery -C <ca> -P <port>`) fill in;
 * those are fixed-width and can saturate.
 */
import { trustedStdout, type Exec, type ToolResult } from "../exec.js";
import { PERFQUERY_TO_SYSFS, PMA_WIDTH } from "./counters.js";
import { createLimiter } from "./limit.js";
import { ibstatPhysStateId, ibstatStateId, parseIbstat, type IbstatCa } from "./parse-ibstat.js";
import { blockForPort, parsePerfquery } from "./parse-perfquery.js";
import { BYTES_PER_GBIT, cleanText, normalizeGuid } from "./parse-sysfs.js";
import { emptyPort, type IbDevice, type IbPort } from "./types.js";

export interface ToolsReadOptions {
  ibstat: string;
  perfquery: string;
  timeoutMs: number;
  accept: (device: string) => boolean;
  /** perfquery runs at once. Default 4. */
  concurrency?: number;
}

export interface ToolsSnapshot {
  devices: IbDevice[];
  /** ibstat is not installed (or not executable). */
  notFound: boolean;
  /** CAs ibstat listed, before the device filters. */
  seen: number;
  /** Nothing usable came back (ibstat failed before printing any CA). */
  fatal?: string;
  /** One line each: what went wrong while the rest was still read. */
  problems: string[];
}

/** A tool run's problem as one stable line: the parsed diag message if any, else exec's. */
function describe(r: ToolResult, parsed: string | undefined): string | undefined {
  if (r.timedOut || r.overflowed || r.signal) return r.problem;
  if (parsed !== undefined) return `${r.command}: ${parsed}`;
  return r.ok ? undefined : r.problem;
}

function toDevice(ca: IbstatCa): IbDevice {
  const device: IbDevice = { name: ca.name, ports: [] };
  if (ca.firmwareVersion !== undefined) device.firmwareVersion = cleanText(ca.firmwareVersion);
  if (ca.caType !== undefined) device.hcaType = cleanText(ca.caType);
  if (ca.nodeGuid !== undefined) device.nodeGuid = normalizeGuid(ca.nodeGuid);
  for (const p of ca.ports) {
    const port = emptyPort(p.port);
    port.state = ibstatStateId(p.state);
    port.physState = ibstatPhysStateId(p.physicalState);
    if (p.rateGbps !== undefined) port.rateBytesPerSecond = Math.round(p.rateGbps * BYTES_PER_GBIT);
    if (p.linkLayer !== undefined) port.linkLayer = cleanText(p.linkLayer);
    port.lid = p.baseLid;
    port.smLid = p.smLid;
    device.ports.push(port);
  }
  return device;
}

/** perfquery's fields mapped onto sysfs counter names. */
function mapCounters(counters: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, value] of Object.entries(counters)) {
    const file = PERFQUERY_TO_SYSFS[name];
    if (file !== undefined) out[file] = value;
  }
  return out;
}

/**
 * An ibstat that died while printing a port leaves that block unfinished; `Link layer` is the last
 * line of every port block, so a last port without it is dropped rather than published half-read.
 */
function dropUnfinishedPort(cas: IbstatCa[]): void {
  const ports = cas[cas.length - 1]?.ports;
  if (ports && ports.length > 0 && ports[ports.length - 1]?.linkLayer === undefined) ports.pop();
}

export async function readInfinibandTools(exec: Exec, opts: ToolsReadOptions): Promise<ToolsSnapshot> {
  // ibstat prints about 0.5 KB per port; more than 1 MiB is a broken tool.
  const r = await exec.run(opts.ibstat, [], { timeoutMs: opts.timeoutMs, maxBytes: 1024 * 1024 });
  if (r.notFound) return { devices: [], notFound: true, seen: 0, fatal: r.problem, problems: [] };
  if (r.timedOut || r.overflowed || r.signal) return { devices: [], notFound: false, seen: 0, fatal: r.problem, problems: [] };

  const parsed = parseIbstat(`${trustedStdout(r)}\n${r.stderr}`);
  if (!r.ok) dropUnfinishedPort(parsed.cas);
  const problems: string[] = [];
  const ibstatProblem = describe(r, parsed.problem);
  if (ibstatProblem !== undefined) problems.push(ibstatProblem);
  if (parsed.cas.length === 0 && ibstatProblem !== undefined) {
    return { devices: [], notFound: false, seen: 0, fatal: ibstatProblem, problems: [] };
  }

  const devices = parsed.cas.filter((ca) => opts.accept(ca.name)).map(toDevice);
  const limit = createLimiter(opts.concurrency ?? 4);
  const run = (args: string[]): Promise<ToolResult> => limit(() => exec.run(opts.perfquery, args, { timeoutMs: opts.timeoutMs, maxBytes: 1024 * 1024 }));

  const readPort = async (ca: string, port: IbPort): Promise<void> => {
    if (port.linkLayer?.toLowerCase() === "ethernet" || !(port.lid !== undefined && port.lid > 0)) return;
    const where = ["-C", ca, "-P", String(port.port)];
    const ext = await run(["-x", ...where]);
    const extParsed = parsePerfquery(`${trustedStdout(ext)}\n${ext.stderr}`);
    const block = blockForPort(extParsed, port.port);
    const extProblem = describe(ext, extParsed.problem) ?? (block ? undefined : `${ext.command}: no counters for port ${port.port}`);
    if (extProblem !== undefined) {
      problems.push(extProblem);
      return;
    }
    port.counters = mapCounters(block?.counters ?? {});
    if (port.counters.symbol_error !== undefined) return;
    // No 64-bit error counters on this PMA: read them from the fixed-width PortCounters.
    const basic = await run(where);
    const basicParsed = parsePerfquery(`${trustedStdout(basic)}\n${basic.stderr}`);
    const basicBlock = blockForPort(basicParsed, port.port);
    const basicProblem = describe(basic, basicParsed.problem);
    if (basicProblem !== undefined || !basicBlock) {
      problems.push(basicProblem ?? `${basic.command}: no counters for port ${port.port}`);
      return;
    }
    for (const [file, value] of Object.entries(mapCounters(basicBlock.counters))) {
      if (port.counters[file] !== undefined) continue;
      port.counters[file] = value;
      if (PMA_WIDTH[file] !== undefined) port.fixedWidth.push(file);
    }
    port.fixedWidth.sort();
  };

  await Promise.all(devices.flatMap((d) => d.ports.map((p) => readPort(d.name, p))));
  return { devices, notFound: false, seen: parsed.cas.length, problems };
}
