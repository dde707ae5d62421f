/**
 * Parser for `ibstat` (infiniband-diags): `CA 'mlx5_0'` blocks of `Key: value` lines with indented
 * `Port N:` sections. Indentation may be TABs or spaces (pasted captures), `ibwarn:` lines may come
 * first, and `ibpanic:` may follow partial output: the CAs before the panic are kept and the panic is
 * reported as `problem`.
 */
import { diagLine, diagProblem } from "./diag-errors.js";

export interface IbstatPort {
  port: number;
  state?: string;
  physicalState?: string;
  /** `Rate: 400` is Gb/s. */
  rateGbps?: number;
  baseLid?: number;
  lmc?: number;
  smLid?: number;
  capabilityMask?: string;
  portGuid?: string;
  linkLayer?: string;
}

export interface IbstatCa {
  name: string;
  caType?: string;
  numberOfPorts?: number;
  firmwareVersion?: string;
  hardwareVersion?: string;
  nodeGuid?: string;
  systemImageGuid?: string;
  ports: IbstatPort[];
}

export interface IbstatResult {
  cas: IbstatCa[];
  /** ibwarn lines that were only chatter (without their pid). */
  warnings: string[];
  /** One line: ibpanic / iberror / fatal ibwarn, or output that is not ibstat's. */
  problem?: string;
}

const CA_LINE = /^CA\s+'([^']+)'\s*$/;
const PORT_LINE = /^Port\s+(\d{1,3}):\s*$/;
const KEY = /^[A-Za-z][A-Za-z ]*$/;
const LINE_BREAK = /[\r\n\u2028\u2029]/;

/**
 * `Key: value` of a trimmed line: [key, value] with both trimmed, or undefined. Split at the first
 * colon in code: the regular expression it replaces (`^(..)*?\s*:\s*(.*?)\s*$`) backtracked
 * quadratically on a long run of blanks.
 */
function keyValue(line: string): [string, string] | undefined {
  const colon = line.indexOf(":");
  if (colon < 1) return undefined;
  const key = line.slice(0, colon).trimEnd();
  const value = line.slice(colon + 1).trim();
  if (!KEY.test(key) || LINE_BREAK.test(value)) return undefined;
  return [key, value];
}

const num = (v: string): number | undefined => {
  if (!/^\d+(?:\.\d+)?$/.test(v)) return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
};
const str = (v: string): string | undefined => (v.length > 0 ? v : undefined);

type PortKey = Exclude<keyof IbstatPort, "port">;
type CaKey = Exclude<keyof IbstatCa, "name" | "ports">;

const PORT_KEYS: Readonly<Record<string, [PortKey, (v: string) => string | number | undefined]>> = {
  State: ["state", str],
  "Physical state": ["physicalState", str],
  Rate: ["rateGbps", num],
  "Base lid": ["baseLid", num],
  LMC: ["lmc", num],
  "SM lid": ["smLid", num],
  "Capability mask": ["capabilityMask", str],
  "Port GUID": ["portGuid", str],
  "Link layer": ["linkLayer", str],
};

const CA_KEYS: Readonly<Record<string, [CaKey, (v: string) => string | number | undefined]>> = {
  "CA type": ["caType", str],
  "Number of ports": ["numberOfPorts", num],
  "Firmware version": ["firmwareVersion", str],
  "Hardware version": ["hardwareVersion", str],
  "Node GUID": ["nodeGuid", str],
  "System image GUID": ["systemImageGuid", str],
};

export function parseIbstat(text: string): IbstatResult {
  const cas: IbstatCa[] = [];
  const warnings: string[] = [];
  let unexpected: string | undefined;
  let ca: IbstatCa | undefined;
  let port: IbstatPort | undefined;

  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.length === 0) continue;
    const diag = diagLine(line);
    if (diag) {
      if (diag.kind === "ibwarn") warnings.push(diag.text);
      continue;
    }
    const caMatch = CA_LINE.exec(line);
    if (caMatch?.[1] !== undefined) {
      ca = { name: caMatch[1], ports: [] };
      cas.push(ca);
      port = undefined;
      continue;
    }
    const portMatch = PORT_LINE.exec(line);
    if (portMatch?.[1] !== undefined && ca) {
      port = { port: Number(portMatch[1]) };
      ca.ports.push(port);
      continue;
    }
    const kv = keyValue(line);
    if (kv && ca) {
      // Known key sets decide where a line belongs: pasted captures lose the indentation.
      // Own keys only: `constructor: 1` must not find Object.prototype.constructor.
      const portKey = Object.hasOwn(PORT_KEYS, kv[0]) ? PORT_KEYS[kv[0]] : undefined;
      const caKey = Object.hasOwn(CA_KEYS, kv[0]) ? CA_KEYS[kv[0]] : undefined;
      if (portKey && port) {
        const v = portKey[1](kv[1]);
        if (v !== undefined) (port as unknown as Record<string, unknown>)[portKey[0]] = v;
      } else if (caKey) {
        const v = caKey[1](kv[1]);
        if (v !== undefined) (ca as unknown as Record<string, unknown>)[caKey[0]] = v;
      }
      continue;
    }
    unexpected ??= line.slice(0, 80);
  }

  const result: IbstatResult = { cas, warnings };
  const diag = diagProblem(text);
  if (diag !== undefined) result.problem = diag;
  else if (unexpected !== undefined) result.problem = `unexpected line in ibstat output: ${JSON.stringify(unexpected)}`;
  return result;
}

/** ibstat's port state words → the IBA state id (ibstat prints Down, Initializing, Armed, Active). */
export function ibstatStateId(name: string | undefined): number | undefined {
  switch (name?.toLowerCase().replace(/[\s_]/g, "")) {
    case "down":
      return 1;
    case "init":
    case "initialize":
    case "initializing":
      return 2;
    case "armed":
      return 3;
    case "active":
      return 4;
    case "activedefer":
    case "actdefer":
      return 5;
    default:
      return undefined;
  }
}

const PHYS: Readonly<Record<string, number>> = {
  sleep: 1,
  polling: 2,
  disabled: 3,
  portconfigurationtraining: 4,
  linkup: 5,
  linkerrorrecovery: 6,
  phytest: 7,
};

/** ibstat's physical state words → the IBA physical state id. */
export function ibstatPhysStateId(name: string | undefined): number | undefined {
  return name === undefined ? undefined : PHYS[name.toLowerCase().replace(/[\s_]/g, "")];
}
