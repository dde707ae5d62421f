/**
 * What the node is expected to be: the --check.* flags over the YAML file of --check.file (its keys
 * are the flags' names without `check.`, nested or dotted; `mtu` may be a mapping of interface to
 * bytes). Every problem is a ConfigError of one line naming the flag or key (docs/check.md).
 */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { ConfigError } from "../collectors/settings/flags.js";
import { LayeredSettings } from "../collectors/settings/reader.js";
import type { XidAction } from "../collectors/kmsg/xid-catalogue.js";
import { CHECK_FLAGS_BY_NAME } from "./check-args.js";

/** An Xid's action as the catalogue says it, or `unknown` for a code it does not list (ringwatch_gpu_xid_info). */
export type XidActionLabel = XidAction | "unknown";

const ACTIONS: readonly XidActionLabel[] = ["none", "restart_job", "reset_gpu", "reboot_node", "drain_node", "unknown"];

export interface MtuExpectation {
  /** An interface name, or a pattern with * and ?. */
  pattern: string;
  bytes: number;
}

export interface Expectations {
  gpuCount?: number;
  ibPorts?: number;
  /** Gb/s. */
  ibRateGbps?: number;
  /** Device or device/port patterns; empty: every port. */
  ibDevices: string[];
  gdrPeermem: boolean;
  mtu: MtuExpectation[];
  /** ms; undefined: since boot. */
  xidWindowMs?: number;
  xidActions: ReadonlySet<XidActionLabel>;
  /** Whether an Xid expectation was given (the window or the actions): the kernel log must then be read. */
  xidGiven: boolean;
  timeoutMs: number;
  /** The running agent's /metrics (http or https), for nccl.ras. */
  agentUrl?: string;
  /** The expectations given, by flag name without `check.`, as shown in --json. */
  given: Record<string, unknown>;
}

/** Flattens nested mappings to dotted keys; `mtu` is kept whole (a mapping of interfaces). */
function flatten(obj: Record<string, unknown>, prefix: string, out: Map<string, unknown>): void {
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (key !== "mtu" && v !== null && typeof v === "object" && !Array.isArray(v)) flatten(v as Record<string, unknown>, key, out);
    else out.set(key, v);
  }
}

/** A YAML value as a flag's text: a list joined by newlines, a mapping (mtu) as IFACE=BYTES lines. */
function asText(file: string, key: string, v: unknown): string {
  if (Array.isArray(v) && v.every((x) => typeof x === "string" || typeof x === "number")) return v.join("\n");
  if (key === "mtu" && v !== null && typeof v === "object" && !Array.isArray(v)) {
    return Object.entries(v as Record<string, unknown>)
      .map(([iface, bytes]) => `${iface}=${typeof bytes === "number" || typeof bytes === "string" ? bytes : "?"}`)
      .join("\n");
  }
  if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") return String(v);
  throw new ConfigError(`check file ${file}: "${key}" must be a single value or a list`);
}

/** The YAML file's expectations as flag texts, keyed by flag name. */
export function readCheckFile(file: string): Map<string, string> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError(`cannot read check file ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ConfigError(`check file ${file} is not valid YAML: ${(err as Error).message.split("\n")[0] ?? ""}`);
  }
  const raw = new Map<string, string>();
  if (doc === null || doc === undefined) return raw;
  if (typeof doc !== "object" || Array.isArray(doc)) throw new ConfigError(`check file ${file}: top level must be a mapping`);
  const flat = new Map<string, unknown>();
  flatten(doc as Record<string, unknown>, "", flat);
  for (const [key, v] of flat) {
    const name = `check.${key}`;
    if (!CHECK_FLAGS_BY_NAME.has(name) || name === "check.file") throw new ConfigError(`check file ${file}: unknown key "${key}" (docs/check.md)`);
    raw.set(name, asText(file, key, v));
  }
  return raw;
}

/** `400`, `200`, `56`, `2.5` (Gb/s) → the number. */
function parseRate(text: string): number {
  const n = Number(text.trim());
  if (text.trim() === "" || !Number.isFinite(n) || n <= 0)
    throw new ConfigError(`invalid value "${text}" for --check.ib.rate: expected a rate in Gb/s, e.g. 400`);
  return n;
}

/** `ib0=4092` → the interface (pattern) and its MTU. */
function parseMtu(item: string): MtuExpectation {
  const eq = item.lastIndexOf("=");
  const pattern = eq < 0 ? "" : item.slice(0, eq).trim();
  const bytes = eq < 0 ? "" : item.slice(eq + 1).trim();
  if (pattern === "" || !/^\d+$/.test(bytes) || Number(bytes) < 68 || Number(bytes) > 1 << 20) {
    throw new ConfigError(`invalid value "${item}" for --check.mtu: expected IFACE=BYTES, e.g. ib0=4092`);
  }
  return { pattern, bytes: Number(bytes) };
}

/** An http or https URL, as given. */
function parseAgentUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(`invalid value "${text}" for --check.agent-url: expected a URL, e.g. http://127.0.0.1:9742/metrics`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ConfigError(`invalid value "${text}" for --check.agent-url: expected http:// or https://`);
  return text;
}

/** The expectations of the command line over those of the file. */
export function readExpectations(flags: ReadonlyMap<string, string>): Expectations {
  const file = flags.get("check.file");
  const fromFile = file !== undefined && file !== "" ? readCheckFile(file) : new Map<string, string>();
  const set = (name: string): boolean => flags.has(name) || fromFile.has(name);
  const r = new LayeredSettings(CHECK_FLAGS_BY_NAME, (name) => flags.get(name) ?? fromFile.get(name) ?? CHECK_FLAGS_BY_NAME.get(name)?.default);
  const given: Record<string, unknown> = {};
  const keep = <T>(name: string, v: T): T => {
    if (set(name)) given[name.slice("check.".length)] = v;
    return v;
  };
  const int = (name: string): number | undefined => (set(name) ? keep(name, r.int(name, 0)) : undefined);
  const actions = r.list("check.xid.actions");
  for (const a of actions) {
    if (!(ACTIONS as readonly string[]).includes(a))
      throw new ConfigError(`invalid value "${a}" for --check.xid.actions: expected some of ${ACTIONS.join(", ")}`);
  }
  const windowMs = set("check.xid.window") ? r.duration("check.xid.window") : undefined;
  if (windowMs !== undefined) given["xid.window"] = flags.get("check.xid.window") ?? fromFile.get("check.xid.window");
  if (set("check.xid.actions")) given["xid.actions"] = actions;
  const out: Expectations = {
    ibDevices: keep("check.ib.devices", r.list("check.ib.devices")),
    gdrPeermem: keep("check.gdr.peermem", r.bool("check.gdr.peermem")),
    mtu: r.list("check.mtu").map(parseMtu),
    xidActions: new Set(actions as XidActionLabel[]),
    xidGiven: set("check.xid.window") || set("check.xid.actions"),
    timeoutMs: r.duration("check.timeout"),
    given,
  };
  if (set("check.mtu")) given.mtu = Object.fromEntries(out.mtu.map((m) => [m.pattern, m.bytes]));
  const gpuCount = int("check.gpu.count");
  if (gpuCount !== undefined) out.gpuCount = gpuCount;
  const ibPorts = int("check.ib.ports");
  if (ibPorts !== undefined) out.ibPorts = ibPorts;
  if (set("check.ib.rate")) out.ibRateGbps = keep("check.ib.rate", r.parsed("check.ib.rate", parseRate, String));
  if (windowMs !== undefined) out.xidWindowMs = windowMs;
  const agentUrl = r.text("check.agent-url");
  if (agentUrl !== "") out.agentUrl = keep("check.agent-url", parseAgentUrl(agentUrl));
  return out;
}
