/**
 * No silent misconfiguration of --collector.nccl.path, on the real agent: a configured path that is
 * missing, not a directory or unreadable is one warning and ringwatch_nccl_log_path_state says so
 * (one series per path and state, a glob by its root, never per file); the nccl collector's source
 * state says whether any of its log paths is there while ringwatch_collector_success{nccl} stays 1
 * (the collector runs and picks the path up when it appears). Real directories made missing,
 * replaced by a file and made unreadable (chmod 000, with the agent run as nobody, from a copy of
 * the build every user can read, where the test runs as root, since chmod does not deny root).
 */
import { chmodSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { eventually, sample, samplesOf, startAgent, type RunningAgent, type StartOptions } from "../helpers/agent-process.js";
import { deniedUser, stageBuild } from "../helpers/staged-build.js";
import { tempDir } from "./env.js";

const ONLY_NCCL = [
  "--no-collector.gpu",
  "--no-collector.infiniband",
  "--no-collector.gdr",
  "--no-collector.mtu",
  "--no-collector.job",
  "--no-collector.kmsg",
  "--no-collector.nccl.ras",
];
const INIT = "node-a:4242:4242 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n";

const agents: RunningAgent[] = [];
afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop();
});

async function start(paths: string[], opts: StartOptions = {}): Promise<RunningAgent> {
  const a = await startAgent([...ONLY_NCCL, ...paths.map((p) => `--collector.nccl.path=${p}`)], {}, 10_000, opts);
  agents.push(a);
  return a;
}

interface Line {
  level: number;
  msg: string;
  path?: string;
  state?: string;
}
const lines = (a: RunningAgent): Line[] => a.logs().map((l) => JSON.parse(l) as Line);
const warnings = (a: RunningAgent): Line[] => lines(a).filter((l) => l.level > 30);

/** The path's states on a scrape: the one at 1, and how many series the path has. */
function pathState(text: string, path: string): { on: string[]; series: number } {
  const series = samplesOf(text, "ringwatch_nccl_log_path_state").filter((l) => l.includes(`path="${path}"`));
  return { on: series.filter((l) => l.endsWith(" 1")).map((l) => /state="([a-z_]+)"/.exec(l)?.[1] ?? "?"), series: series.length };
}
const ncclSource = (text: string): string[] =>
  ["present", "absent", "failing"].filter((s) => sample(text, `ringwatch_collector_source_state{collector="nccl",state="${s}"}`) === 1);

describe("ringwatch_nccl_log_path_state and the nccl collector's source state", () => {
  it("a missing path: one warning, the series say missing and absent, success stays 1; followed once it appears, and one more warning when it goes", async () => {
    const path = join(tempDir(), "nccl");
    const a = await start([path]);
    const missing = await eventually(async () => {
      const t = await a.scrape();
      return pathState(t, path).on[0] === "missing" && ncclSource(t).length > 0 ? t : undefined;
    });
    expect(pathState(missing, path)).toEqual({ on: ["missing"], series: 5 });
    expect(ncclSource(missing)).toEqual(["absent"]);
    expect(sample(missing, 'ringwatch_collector_success{collector="nccl"}')).toBe(1);
    // Two looks at the paths (every 5 s) while it stays missing: still the one warning.
    await new Promise((r) => setTimeout(r, 6000));
    expect(warnings(a).map((l) => [l.level, l.msg, l.path, l.state])).toEqual([
      [40, `nccl: log path ${path} does not exist: nothing is followed there until it appears`, path, "missing"],
    ]);

    mkdirSync(path);
    writeFileSync(join(path, "nccl-node-a-4242.log"), INIT);
    const present = await eventually(async () => {
      const t = await a.scrape();
      return pathState(t, path).on[0] === "present" && sample(t, "ringwatch_nccl_log_files") === 1 ? t : undefined;
    }, 15_000);
    expect(ncclSource(present)).toEqual(["present"]);
    expect(lines(a).filter((l) => l.msg === `nccl: log path ${path} is present now; following it`)).toHaveLength(1);

    rmSync(path, { recursive: true });
    const gone = await eventually(async () => {
      const t = await a.scrape();
      return pathState(t, path).on[0] === "missing" ? t : undefined;
    }, 15_000);
    expect(ncclSource(gone)).toEqual(["absent"]);
    expect(sample(gone, 'ringwatch_collector_success{collector="nccl"}')).toBe(1);
    expect(warnings(a)).toHaveLength(2);
  }, 60_000);

  it("a glob is one path, however many files it matches; a path through a file is not_a_directory; one present path makes the source present", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "logs"));
    for (const n of [1, 2, 3]) writeFileSync(join(dir, "logs", `nccl-node-a-${n}.log`), INIT);
    writeFileSync(join(dir, "file"), "");
    const glob = join(dir, "logs", "*.log");
    const throughFile = join(dir, "file", "*.log");
    const a = await start([glob, throughFile]);
    const text = await eventually(async () => {
      const t = await a.scrape();
      return sample(t, "ringwatch_nccl_log_files") === 3 && pathState(t, throughFile).on.length === 1 ? t : undefined;
    });
    expect(pathState(text, glob)).toEqual({ on: ["present"], series: 5 });
    expect(pathState(text, throughFile)).toEqual({ on: ["not_a_directory"], series: 5 });
    expect(samplesOf(text, "ringwatch_nccl_log_path_state")).toHaveLength(10);
    expect(ncclSource(text)).toEqual(["present"]);
    expect(warnings(a).map((l) => [l.msg, l.state])).toEqual([
      [`nccl: log path ${throughFile} is not a directory (a file): nothing is followed there`, "not_a_directory"],
    ]);
  });

  // chmod 000 denies nobody, not root: as root the agent runs as nobody (staged-build.ts).
  it("an unreadable directory: one warning (not one per sweep from the follower too), the source failing; present and followed once readable", async () => {
    const dir = tempDir();
    chmodSync(dir, 0o755); // nobody must reach what is in it
    const locked = join(dir, "locked");
    mkdirSync(locked);
    writeFileSync(join(locked, "nccl-node-a-1.log"), INIT);
    chmodSync(join(locked, "nccl-node-a-1.log"), 0o644);
    chmodSync(locked, 0o000);
    const staged = deniedUser !== undefined ? stageBuild("rw-path-state-agent-") : undefined;
    try {
      const a = await start([locked], deniedUser !== undefined && staged !== undefined ? { user: deniedUser, main: staged.agentMain } : {});
      const text = await eventually(async () => {
        const t = await a.scrape();
        return pathState(t, locked).on[0] === "unreadable" && ncclSource(t).length > 0 ? t : undefined;
      });
      expect(ncclSource(text)).toEqual(["failing"]);
      expect(sample(text, 'ringwatch_collector_success{collector="nccl"}')).toBe(1);
      await new Promise((r) => setTimeout(r, 6000)); // sweeps and looks go on
      expect(warnings(a).map((l) => [l.msg, l.state])).toEqual([
        [`nccl: log path ${locked} cannot be read by the agent's user (EACCES): nothing is followed there`, "unreadable"],
      ]);
      expect(sample(await a.scrape(), "ringwatch_nccl_log_read_errors_total")).toBeGreaterThan(0); // still counted

      chmodSync(locked, 0o755);
      const readable = await eventually(async () => {
        const t = await a.scrape();
        return pathState(t, locked).on[0] === "present" && sample(t, "ringwatch_nccl_log_files") === 1 ? t : undefined;
      }, 15_000);
      expect(ncclSource(readable)).toEqual(["present"]);
      expect(warnings(a)).toHaveLength(1);
    } finally {
      chmodSync(locked, 0o755);
      for (const a of agents.splice(0)) await a.stop();
      staged?.remove();
    }
  }, 60_000);
});
