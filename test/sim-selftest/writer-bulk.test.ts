/** Files written by the writer (per process, stderr, combined stdout) and the bulk generators. */
import { mkdtemp, readFile, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { collLineRate, writeBulk } from "../sim/bulk.js";
import * as F from "../sim/faults.js";
import { Scenario } from "../sim/scenario.js";
import type { JobSpec } from "../sim/spec.js";
import { runRealtime, writeScenario } from "../sim/writer.js";

const dirs: string[] = [];
async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), "ringwatch-sim-"));
  dirs.push(d);
  return d;
}
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

const job: JobSpec = { nodes: ["n01", "n02"], ranksPerNode: 2, ncclVersion: "2.21.5" };
const faults = [F.allStallInside({ atStep: 3 })];

describe("writeScenario", () => {
  it("one nccl-<host>-<pid>.log per process holding exactly that process's lines, stderr apart", async () => {
    const dir = await tmp();
    const sim = new Scenario(job, { faults, watchdog: { timeoutMs: 20_000 } });
    await writeScenario(sim, dir, { durationMs: 40_000, chunkMs: 700 });
    const ref = new Scenario(job, { faults, watchdog: { timeoutMs: 20_000 } }).advance(40_000);
    const names = (await readdir(dir)).sort();
    expect(names).toEqual([...ref.byFile.keys()].sort());
    expect(names.filter((n) => /^nccl-n0[12]-\d+\.log$/.test(n)).length).toBe(4);
    expect(names.filter((n) => n.startsWith("stderr-")).length).toBe(4);
    for (const [file, lines] of ref.byFile) expect(await readFile(join(dir, file), "utf8")).toBe(`${lines.join("\n")}\n`);
  });

  it("combined OpenMPI-tagged stdout: every line tagged, each rank's stdout lines in order, bare version line before 2.23", async () => {
    const dir = await tmp();
    const sim = new Scenario(job, { faults, watchdog: { timeoutMs: 20_000 } });
    await writeScenario(sim, dir, { durationMs: 40_000, perRank: false, stderr: false, combined: { file: "job.out", style: "openmpi" } });
    expect(await readdir(dir)).toEqual(["job.out"]);
    const text = (await readFile(join(dir, "job.out"), "utf8")).trimEnd().split("\n");
    expect(text.every((l) => /^\[1,\d\]<std(out|err)>:/.test(l))).toBe(true);
    expect(text).toContain("[1,0]<stdout>:NCCL version 2.21.5+cuda12.4");
    const ref = new Scenario(job, { faults, watchdog: { timeoutMs: 20_000 } }).advance(40_000).lines;
    const rank1 = ref.filter((l) => l.rank === 1 && l.stream === "nccl").map((l) => l.text);
    expect(text.filter((l) => l.startsWith("[1,1]<stdout>:")).map((l) => l.slice(14))).toEqual(rank1);
    expect(text.some((l) => /^\[1,1\]<stderr>:\[rank1\]:\[E/.test(l))).toBe(true);
  });

  it("runRealtime writes the same bytes as writeScenario", async () => {
    const [a, b] = [await tmp(), await tmp()];
    await writeScenario(new Scenario(job), a, { durationMs: 8000, combined: { file: "all.out", style: "pytorch" } });
    const res = await runRealtime(new Scenario(job), b, { durationMs: 8000, speed: 400, tickMs: 5, combined: { file: "all.out", style: "pytorch" } });
    expect(res.lines).toBeGreaterThan(0);
    for (const f of await readdir(a)) expect(await readFile(join(b, f), "utf8")).toBe(await readFile(join(a, f), "utf8"));
    const all = await readFile(join(b, "all.out"), "utf8");
    expect(
      all
        .split("\n")
        .filter((l) => l !== "")
        .every((l) => /^\[rank\d\]:/.test(l)),
    ).toBe(true);
  });
});

describe("bulk", () => {
  it("writeBulk: files of the asked size, init block first, then COLL lines with consecutive opCounts", async () => {
    const dir = await tmp();
    const res = await writeBulk(dir, { files: 4, bytesPerFile: 300_000 });
    expect(res.files.length).toBe(4);
    for (const f of res.files) {
      const size = (await stat(f)).size;
      expect(size).toBeGreaterThanOrEqual(300_000);
      expect(size).toBeLessThan(300_000 + 400);
      const lines = (await readFile(f, "utf8")).trimEnd().split("\n");
      const firstColl = lines.findIndex((l) => / opCount /.test(l));
      expect(lines.slice(0, firstColl).some((l) => /Init COMPLETE$/.test(l))).toBe(true);
      const coll = lines.slice(firstColl);
      expect(coll.every((l) => /NCCL INFO \w+: opCount [0-9a-f]+ .* stream 0x[0-9a-f]+$/.test(l))).toBe(true);
      const world = coll.filter((l) => / \[nranks=4\] /.test(l)).map((l) => parseInt(/opCount ([0-9a-f]+)/.exec(l)?.[1] ?? "", 16));
      expect(world.length).toBeGreaterThan(100);
      expect(world).toEqual(world.map((_, i) => i));
    }
  });

  it("collLineRate: about linesPerSecond x seconds lines, spread over the files, in real time", async () => {
    const dir = await tmp();
    const t0 = performance.now();
    const res = await collLineRate(dir, { files: 4, linesPerSecond: 4000, seconds: 0.5, tickMs: 20 });
    const took = performance.now() - t0;
    expect(res.lines).toBe(2000);
    expect(took).toBeGreaterThanOrEqual(450);
    const counts = await Promise.all(res.files.map(async (f) => (await readFile(f, "utf8")).split("\n").filter((l) => / opCount /.test(l)).length));
    expect(counts).toEqual([500, 500, 500, 500]);
  });
});
