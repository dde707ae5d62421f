/**
 * Reads /sys/class/infiniband into IbDevice values. No root, no fork; reads run in parallel under a
 * concurrency bound. One odd file never loses a device or a port: an unreadable or unparsable
 * counter file (`N/A (no PMA)`, EINVAL, EACCES, EOPNOTSUPP, EISDIR...) skips that counter only and
 * is counted in IbPort.unreadable; an unreadable attribute leaves that attribute absent.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { HW_COUNTER_LIMIT, HW_COUNTER_NAME, HW_NOT_COUNTERS, PMA_WIDTH } from "./counters.js";
import { DEFAULT_HW_ALLOWED } from "./hw-counters.js";
import { createLimiter } from "./limit.js";
import { cleanText, normalizeGuid, parseCounterValue, parseLid, parseRateBytesPerSecond, parseStateId } from "./parse-sysfs.js";
import { emptyPort, type IbDevice, type IbPort } from "./types.js";

/** The two fs calls the reader makes (injectable so tests can produce EINVAL / EOPNOTSUPP). */
export interface SysfsFs {
  readFile(path: string): Promise<string>;
  readdir(path: string): Promise<string[]>;
}

export const nodeFs: SysfsFs = {
  readFile: (p) => readFile(p, "utf8"),
  readdir: (p) => readdir(p),
};

export interface SysfsReadOptions {
  fs?: SysfsFs;
  /** Most files read at once. Default 32. */
  concurrency?: number;
  /** hw_counters files to read (the allow-list); others are not opened. Default: those with a family. */
  hwCounters?: ReadonlySet<string>;
}

export interface SysfsSnapshot {
  devices: IbDevice[];
  /** The first few files that could not be read or parsed, `path: why` (for a debug log line). */
  problems: string[];
}

const MAX_PROBLEMS = 20;

const isHwCounter = (name: string): boolean => HW_COUNTER_NAME.test(name) && !HW_NOT_COUNTERS.has(name);

export function classDir(sysfsRoot: string): string {
  return join(sysfsRoot, "class", "infiniband");
}

function errCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : err instanceof Error ? err.message : String(err);
}

/** Device names under <root>/class/infiniband, sorted; undefined when that directory does not exist. */
export async function listDevices(sysfsRoot: string, fs: SysfsFs = nodeFs): Promise<string[] | undefined> {
  try {
    return (await fs.readdir(classDir(sysfsRoot))).filter((n) => !n.startsWith(".")).sort();
  } catch (err) {
    const code = errCode(err);
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw err;
  }
}

/** Reads the named devices completely. */
export async function readInfinibandSysfs(sysfsRoot: string, names: readonly string[], opts: SysfsReadOptions = {}): Promise<SysfsSnapshot> {
  const fs = opts.fs ?? nodeFs;
  const limit = createLimiter(opts.concurrency ?? 32);
  const hwAllowed = opts.hwCounters ?? DEFAULT_HW_ALLOWED;
  // Files outside the allow-list are never opened (on mlx5 a hw_counters read may go to the firmware).
  const acceptHw = (name: string): boolean => hwAllowed.has(name) && isHwCounter(name);
  const problems: string[] = [];
  const note = (path: string, why: string): void => {
    if (problems.length < MAX_PROBLEMS) problems.push(`${path.slice(sysfsRoot.length)}: ${why}`);
  };

  /** File text, or undefined (ENOENT silently; anything else noted). */
  const text = async (path: string): Promise<string | undefined> => {
    try {
      return await limit(() => fs.readFile(path));
    } catch (err) {
      const code = errCode(err);
      if (code !== "ENOENT") note(path, code);
      return undefined;
    }
  };
  /** Directory entries; undefined when absent. */
  const list = async (path: string): Promise<string[] | undefined> => {
    try {
      return (await limit(() => fs.readdir(path))).sort();
    } catch (err) {
      const code = errCode(err);
      if (code !== "ENOENT") note(path, code);
      return undefined;
    }
  };

  /** Reads every file in a counter directory; returns the values and how many were unreadable. */
  const counterDir = async (dir: string, accept: (name: string) => boolean = () => true, max = Infinity) => {
    const values: Record<string, number> = {};
    const read = new Map<string, number>();
    let unreadable = 0;
    const names = await list(dir);
    if (names === undefined) return { values, unreadable };
    await Promise.all(
      names
        .filter(accept)
        .slice(0, max)
        .map(async (name) => {
          const path = join(dir, name);
          const raw = await text(path);
          if (raw === undefined) {
            unreadable++;
            return;
          }
          const r = parseCounterValue(raw);
          if (r.ok) read.set(name, r.value);
          else {
            unreadable++;
            note(path, r.reason === "no-pma" ? "N/A (no PMA)" : "not a number");
          }
        }),
    );
    // Names in order, whatever order the reads finished in.
    for (const name of [...read.keys()].sort()) values[name] = read.get(name) ?? 0;
    return { values, unreadable };
  };

  const noCounters = Promise.resolve({ values: {}, unreadable: 0 });

  const readPort = async (dir: string, port: number): Promise<IbPort> => {
    const [state, phys, rate, linkLayer, lid, smLid, counters, ext, hw] = await Promise.all([
      text(join(dir, "state")),
      text(join(dir, "phys_state")),
      text(join(dir, "rate")),
      text(join(dir, "link_layer")),
      text(join(dir, "lid")),
      text(join(dir, "sm_lid")),
      counterDir(join(dir, "counters")),
      counterDir(join(dir, "counters_ext")),
      hwAllowed.size === 0 ? noCounters : counterDir(join(dir, "hw_counters"), acceptHw, HW_COUNTER_LIMIT),
    ]);
    const p = emptyPort(port);
    if (state !== undefined) p.state = parseStateId(state);
    if (phys !== undefined) p.physState = parseStateId(phys);
    if (rate !== undefined) p.rateBytesPerSecond = parseRateBytesPerSecond(rate);
    if (linkLayer !== undefined) p.linkLayer = cleanText(linkLayer);
    if (lid !== undefined) p.lid = parseLid(lid);
    if (smLid !== undefined) p.smLid = parseLid(smLid);
    p.counters = counters.values;
    p.countersExt = ext.values;
    p.hwCounters = hw.values;
    // Every sysfs counters/ file named in the PortCounters table is read from that fixed-width attribute
    // (the data/packet ones may come from the 64-bit extended attribute on newer kernels; a 64-bit
    // counter sitting exactly at 2^32-1 is improbable enough for a hint).
    p.fixedWidth = Object.keys(counters.values)
      .filter((n) => PMA_WIDTH[n] !== undefined)
      .sort();
    p.unreadable = counters.unreadable + ext.unreadable + hw.unreadable;
    return p;
  };

  const readDevice = async (name: string): Promise<IbDevice> => {
    const dir = join(classDir(sysfsRoot), name);
    const [fw, hca, board, guid, portNames] = await Promise.all([
      text(join(dir, "fw_ver")),
      text(join(dir, "hca_type")),
      text(join(dir, "board_id")),
      text(join(dir, "node_guid")),
      list(join(dir, "ports")),
    ]);
    const numbers = (portNames ?? [])
      .filter((n) => /^\d{1,3}$/.test(n))
      .map(Number)
      .sort((a, b) => a - b);
    const ports = await Promise.all(numbers.map((n) => readPort(join(dir, "ports", String(n)), n)));
    const device: IbDevice = { name, ports };
    if (fw !== undefined) device.firmwareVersion = cleanText(fw);
    if (hca !== undefined) device.hcaType = cleanText(hca);
    if (board !== undefined) device.boardId = cleanText(board);
    if (guid !== undefined) device.nodeGuid = normalizeGuid(guid);
    return device;
  };

  const devices = await Promise.all(names.map(readDevice));
  return { devices, problems };
}
