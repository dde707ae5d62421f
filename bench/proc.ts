/** What /proc says about one process: CPU time (user + system) and memory. */
import { readFile } from "node:fs/promises";

const CLK_TCK = 100;

/** utime + stime of the process itself (children not included), seconds. */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / CLK_TCK; // fields 14 and 15
}

export interface Memory {
  /** Resident set size now, MB (2^20 bytes). */
  rssMB: number;
  /** Peak resident set size since start (VmHWM), MB. */
  peakMB: number;
}

export async function memory(pid: number): Promise<Memory> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = (key: string): number => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status);
    return m ? Number(m[1]) / 1024 : NaN;
  };
  return { rssMB: kb("VmRSS"), peakMB: kb("VmHWM") };
}
