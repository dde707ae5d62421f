/**
 * Summarises a V8 CPU profile (node --cpu-prof): self time per function and per module, so the
 * bench can say where the agent's time goes.
 *   node .bench/bench/profile-summary.js <file.cpuprofile> [top]
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileEntry {
  name: string;
  selfMs: number;
  percent: number;
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  /** Non-idle sampled time (everything but "(idle)" and "(program)"). */
  busyMs: number;
  functions: ProfileEntry[];
  modules: ProfileEntry[];
  /**
   * Self time charged to the nearest calling frame in the agent (dist/) or a dependency
   * (node_modules): so the fstat of a log read counts for the follower that asked for it.
   */
  owners: ProfileEntry[];
}

/** dist/agent/server.js, node_modules/prom-client, node:internal/..., or the V8 pseudo-frame. */
function moduleOf(url: string, fn: string): string {
  if (url === "") return fn.startsWith("(") ? fn : "(native)";
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return `node_modules/${nm[1]}`;
  const dist = /\/dist\/(.*)$/.exec(url);
  if (dist) return `dist/${dist[1]}`;
  if (url.startsWith("node:")) return url.split("/").slice(0, 2).join("/");
  return url.replace(/^file:\/\//, "");
}

export function summarizeProfile(file: string, top = 20): ProfileSummary {
  const p = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const id = p.samples[i] ?? 0;
    self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const ownerOf = (id: number): string => {
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const url = byId.get(cur)?.callFrame.url ?? "";
      if (url.includes("/dist/") || url.includes("/node_modules/")) return moduleOf(url, "");
    }
    const fn = byId.get(id)?.callFrame.functionName ?? "";
    return fn.startsWith("(") ? fn : "(node.js internals)";
  };
  const fns = new Map<string, number>();
  const mods = new Map<string, number>();
  const owners = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of self) {
    const n = byId.get(id);
    if (!n) continue;
    const { functionName, url, lineNumber } = n.callFrame;
    const fn = functionName || "(anonymous)";
    const mod = moduleOf(url, fn);
    if (fn !== "(idle)" && fn !== "(program)") busy += us;
    const key = url ? `${fn} ${mod}:${lineNumber + 1}` : fn;
    fns.set(key, (fns.get(key) ?? 0) + us);
    mods.set(mod, (mods.get(mod) ?? 0) + us);
    const owner = ownerOf(id);
    owners.set(owner, (owners.get(owner) ?? 0) + us);
  }
  const total = p.endTime - p.startTime;
  const rank = (m: Map<string, number>): ProfileEntry[] =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, selfMs: us / 1000, percent: (us / total) * 100 }));
  return { file, totalMs: total / 1000, busyMs: busy / 1000, functions: rank(fns), modules: rank(mods), owners: rank(owners) };
}

export function formatProfile(s: ProfileSummary): string {
  const lines = [
    `${s.file}: ${s.totalMs.toFixed(0)} ms profiled, ${s.busyMs.toFixed(0)} ms busy`,
    "  by calling module (self time of a frame and of the native / node.js frames it called):",
  ];
  for (const e of s.owners) lines.push(`    ${e.selfMs.toFixed(1).padStart(8)} ms ${e.percent.toFixed(1).padStart(5)} %  ${e.name}`);
  lines.push("  by module (self time):");
  for (const e of s.modules) lines.push(`    ${e.selfMs.toFixed(1).padStart(8)} ms ${e.percent.toFixed(1).padStart(5)} %  ${e.name}`);
  lines.push("  by function (self time):");
  for (const e of s.functions) lines.push(`    ${e.selfMs.toFixed(1).padStart(8)} ms ${e.percent.toFixed(1).padStart(5)} %  ${e.name}`);
  return lines.join("\n");
}

if (process.argv[1]?.endsWith("profile-summary.js")) {
  const file = process.argv[2];
  if (file === undefined) {
    process.stderr.write("usage: profile-summary <file.cpuprofile> [top]\n");
    process.exit(2);
  }
  console.log(formatProfile(summarizeProfile(file, Number(process.argv[3] ?? 20))));
}
