/**
 * Where settings come from, as text keyed by flag name: the command line, the environment
 * (RINGWATCH_<NAME>) and the YAML file of --config.file. agent/config/config.ts layers them.
 */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { ConfigError, envName } from "../../collectors/settings/flags.js";
import { FLAGS, FLAGS_BY_NAME } from "./flags.js";

/** Raw settings as text, keyed by flag name. */
export type RawSettings = Map<string, string>;

export function parseArgv(argv: readonly string[]): { raw: RawSettings; help: boolean; version: boolean } {
  const raw: RawSettings = new Map();
  let help = false;
  let version = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "-h" || arg === "--help") {
      help = true;
      continue;
    }
    if (arg === "--version") {
      version = true;
      continue;
    }
    if (!arg.startsWith("--")) throw new ConfigError(`unexpected argument "${arg}" (flags look like --name=value; see --help)`);
    const body = arg.slice(2);
    const eq = body.indexOf("=");
    let name = eq < 0 ? body : body.slice(0, eq);
    let value: string | undefined = eq < 0 ? undefined : body.slice(eq + 1);
    if (!FLAGS_BY_NAME.has(name) && name.startsWith("no-") && FLAGS_BY_NAME.get(name.slice(3))?.kind === "bool") {
      if (value !== undefined) throw new ConfigError(`flag --${name} takes no value`);
      name = name.slice(3);
      value = "false";
    }
    const def = FLAGS_BY_NAME.get(name);
    if (!def) throw new ConfigError(`unknown flag --${name} (see --help)`);
    if (value === undefined) {
      if (def.kind === "bool") value = "true";
      else {
        const next = argv[i + 1];
        if (next === undefined || next.startsWith("--")) throw new ConfigError(`flag --${name} needs a value`);
        value = next;
        i++;
      }
    }
    if (def.kind === "list" && raw.has(name)) raw.set(name, `${raw.get(name) ?? ""}\n${value}`);
    else raw.set(name, value);
  }
  return { raw, help, version };
}

export function fromEnv(env: NodeJS.ProcessEnv): RawSettings {
  const raw: RawSettings = new Map();
  for (const def of FLAGS) {
    const v = env[envName(def.name)];
    if (v !== undefined && v !== "") raw.set(def.name, v);
  }
  return raw;
}

/** Flattens nested YAML mappings to dotted keys; `enabled` under a bool flag's name sets that flag. */
function flatten(obj: unknown, prefix: string, out: Map<string, unknown>): void {
  if (obj !== null && typeof obj === "object" && !Array.isArray(obj)) {
    for (const [k, v] of Object.entries(obj as Record<string, unknown>)) {
      const key = prefix ? `${prefix}.${k}` : k;
      if (k === "enabled" && prefix) out.set(prefix, v);
      else flatten(v, key, out);
    }
    return;
  }
  out.set(prefix, obj);
}

export function readYamlSettings(path: string): RawSettings {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new ConfigError(`cannot read config file ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ConfigError(`config file ${path} is not valid YAML: ${(err as Error).message.split("\n")[0] ?? ""}`);
  }
  const raw: RawSettings = new Map();
  if (doc === null || doc === undefined) return raw;
  if (typeof doc !== "object" || Array.isArray(doc)) throw new ConfigError(`config file ${path}: top level must be a mapping`);
  const flat = new Map<string, unknown>();
  flatten(doc, "", flat);
  for (const [key, value] of flat) {
    const def = FLAGS_BY_NAME.get(key);
    if (!def) throw new ConfigError(`config file ${path}: unknown setting "${key}"`);
    if (def.kind === "list" && Array.isArray(value) && value.every((v) => typeof v === "string")) {
      raw.set(key, value.join("\n"));
      continue;
    }
    if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
      throw new ConfigError(`config file ${path}: "${key}" must be a single value`);
    }
    raw.set(key, String(value));
  }
  return raw;
}
