/**
 * Finds the binaries the deploy, alerting and mtu tests run (Debian's `prometheus`,
 * `prometheus-alertmanager`, `kubernetes-client` and `iproute2` packages, or upstream builds on the
 * PATH), and decides
 * what a test does without them: on a developer machine it skips and says why; under CI
 * (process.env.CI set) a missing binary is a failure, never a silent skip.
 */
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

/** Each tool, with the names it goes by (Debian's first) and the Debian package that ships it. */
const TOOLS = {
  prometheus: { names: ["prometheus"], pkg: "prometheus" },
  promtool: { names: ["promtool"], pkg: "prometheus" },
  alertmanager: { names: ["prometheus-alertmanager", "alertmanager"], pkg: "prometheus-alertmanager" },
  amtool: { names: ["amtool"], pkg: "prometheus-alertmanager" },
  kubectl: { names: ["kubectl"], pkg: "kubernetes-client" },
  ip: { names: ["ip"], pkg: "iproute2" },
} as const;

export type Tool = keyof typeof TOOLS;

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Absolute path of a tool, or undefined. */
export function which(tool: Tool): string | undefined {
  for (const n of TOOLS[tool].names) {
    const p = onPath(n);
    if (p) return p;
  }
  return undefined;
}

export interface Gate {
  /** Paths of the tools, by name; only meaningful when `missing` is empty. */
  path: Record<Tool, string>;
  missing: Tool[];
  /** Skip the suite: tools missing and not under CI. */
  skip: boolean;
  /** Fail: tools missing under CI. */
  fail: boolean;
  /** One plain sentence saying what is missing and how to install it. */
  message: string;
}

export function gate(tools: Tool[]): Gate {
  const path = {} as Record<Tool, string>;
  const missing: Tool[] = [];
  for (const t of tools) {
    const p = which(t);
    if (p) path[t] = p;
    else missing.push(t);
  }
  const pkgs = [...new Set(missing.map((t) => TOOLS[t].pkg))];
  const message = missing.length
    ? `${missing.map((t) => TOOLS[t].names.join(" or ")).join(", ")} not found on PATH: install them with \`apt-get install ${pkgs.join(" ")}\``
    : "";
  const ci = Boolean(process.env.CI);
  if (missing.length && !ci) console.warn(`SKIPPED: ${message} (with CI set this is a failure)`);
  return { path, missing, skip: missing.length > 0 && !ci, fail: missing.length > 0 && ci, message };
}
