/** What a running process holds, read from /proc: its children, resident memory, open descriptors. */
import { readdirSync, readFileSync } from "node:fs";

function statFields(pid: number | string): { state: string; ppid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: rest[0] ?? "?", ppid: Number(rest[1]) };
  } catch {
    return undefined; // gone
  }
}

/**
 * Live (non-zombie) processes whose parent is `pid`: those still alive once /proc has been read
 * through. Reading it takes a while on a busy machine, and a child read early may have exited, and
 * been replaced by the next one read later, before the end: counted twice, two children that were
 * never alive together would look like a leak.
 */
export function childPids(pid: number): number[] {
  const found: number[] = [];
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    const s = statFields(e);
    if (s && s.ppid === pid && s.state !== "Z") found.push(Number(e));
  }
  return found.filter((c) => {
    const s = statFields(c);
    return s !== undefined && s.ppid === pid && s.state !== "Z";
  });
}

/** Resident set size in bytes (VmRSS), or undefined when the process is gone. */
export function rssBytes(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Number of open file descriptors, or undefined when the process is gone. */
export function fdCount(pid: number): number | undefined {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return undefined;
  }
}

export interface ProcSample {
  atMs: number;
  rss: number;
  fds: number;
  children: number;
  /** The children's command lines (for the message of a failed check). */
  childCommands: string[];
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "(gone)";
  }
}

/** Samples rss / fds / children of `pid` every `everyMs` until stop() is called. */
export function watchProcess(pid: number, everyMs = 250): { samples: ProcSample[]; stop(): ProcSample[] } {
  const samples: ProcSample[] = [];
  const t0 = Date.now();
  const take = (): void => {
    const rss = rssBytes(pid);
    const fds = fdCount(pid);
    if (rss === undefined || fds === undefined) return;
    const children = childPids(pid);
    samples.push({ atMs: Date.now() - t0, rss, fds, children: children.length, childCommands: children.map(commandLine) });
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    samples,
    stop() {
      clearInterval(timer);
      return samples;
    },
  };
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** The p-th percentile (0..100), nearest rank. */
export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] as number;
}

export const MiB = 1024 * 1024;
