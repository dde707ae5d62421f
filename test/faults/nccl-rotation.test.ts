/**
 * NCCL logs deleted, rotated, copytruncated and truncated under the running agent while simulated
 * jobs write them. One agent follows six job directories, each with its own fault; per job each
 * rank's progress on /metrics (--collector.nccl.rank-series=always: ringwatch_nccl_rank_progress of
 * every rank) must be what the job wrote: with NCCL 2.27, whose single-node communicators keep
 * opCount at 0, the COLL lines counted, none lost, none twice; with 2.23, opCount + 1 of the rank's
 * last COLL line. Over all jobs, the lines read (ringwatch_nccl_log_lines_total) must be the lines
 * written: none lost, none twice, whatever the version.
 * Rename and delete happen while the job writes; a truncation destroys what was not read yet (no
 * follower can get it back), so around those the job pauses until the agent has caught up.
 */
import { copyFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, truncateSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sample, samplesOf, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { eventually } from "../helpers/eventually.js";
import { JobWriter, type WriteStyle } from "./lib/job-writer.js";

interface Case {
  name: string;
  /** 2.23: opCount counts every collective; 2.27+: it stays 0 on a single-node communicator. */
  version?: string;
  style: WriteStyle;
  /** Applied to every rank file of the job. */
  fault: (path: string) => void;
  /** The fault destroys unread data: pause the job and wait for the agent before it. */
  quiesce: boolean;
}

const CASES: Case[] = [
  { name: "deleted, then the job writes the path again", style: "path", fault: (p) => unlinkSync(p), quiesce: false },
  { name: "rotated (rename + create), the job keeps writing its descriptor (NCCL)", style: "append", fault: (p) => rotate(p), quiesce: false },
  { name: "rotated (rename + create), the job reopens the path", style: "path", fault: (p) => rotate(p), quiesce: false },
  {
    name: "copytruncated, the copy kept elsewhere (olddir), NCCL's non-append writer",
    style: "nccl",
    fault: (p) => copyTruncate(p, join(root, "old")),
    quiesce: true,
  },
  { name: "truncated to zero, NCCL's non-append writer (leaves a hole of NULs)", style: "nccl", fault: (p) => truncateSync(p, 0), quiesce: true },
  { name: "truncated to zero, O_APPEND writer", style: "append", fault: (p) => truncateSync(p, 0), quiesce: true },
];
const VERSIONS = ["2.23.4", "2.27.6"];
const ALL: Case[] = CASES.flatMap((c) => VERSIONS.map((version) => ({ ...c, version, name: `NCCL ${version}: ${c.name}` })));

function rotate(p: string): void {
  renameSync(p, `${p}.1`);
  writeFileSync(p, "");
}

/** Copies p to `to` (a file ending in .1, or a directory to copy into), then truncates p. */
function copyTruncate(p: string, to: string): void {
  copyFileSync(p, to.endsWith(".1") ? to : join(to, basename(p)));
  truncateSync(p, 0);
}

interface Result {
  writer: JobWriter;
  collAtFault: number;
  counted: Map<string, number>;
}

let root: string;
let agent: RunningAgent | undefined;
const results = new Map<string, Result>();

/** ringwatch_nccl_rank_progress per `comm_id/rank` of the given comms. */
function counts(text: string, commIds: Set<string>): Map<string, number> {
  const out = new Map<string, number>();
  for (const l of samplesOf(text, "ringwatch_nccl_rank_progress")) {
    const m = /comm_id="([^"]+)",rank="(\d+)"\} (\d+)/.exec(l);
    if (m && commIds.has(m[1] as string)) out.set(`${m[1]}/${m[2]}`, Number(m[3]));
  }
  return out;
}

const total = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);

/** The counts once the agent has caught up with w (a shortfall after 15 s is the test's finding, asserted by the caller). */
async function countsWhenCaughtUp(w: JobWriter, timeoutMs = 15_000): Promise<Map<string, number>> {
  const a = agent as RunningAgent;
  const want = total(w.expectedProgress());
  await eventually(async () => total(counts(await a.scrape(), w.commIds)) >= want, { timeoutMs, everyMs: 250, what: "collectives counted" }).catch(
    () => undefined,
  );
  await new Promise((r) => setTimeout(r, 1000)); // anything counted twice would show up now
  return counts(await a.scrape(), w.commIds);
}

async function runCase(c: Case, i: number): Promise<void> {
  const dir = join(root, "logs", `job${i}`);
  const w = new JobWriter(
    dir,
    { nodes: [`rot-node-${i}`], ranksPerNode: 2, seed: 100 + i, comms: [], stepMs: 200, ncclVersion: c.version ?? "2.23.4" },
    c.style,
  );
  w.resume(100, 500);
  await new Promise((r) => setTimeout(r, 2500));
  if (c.quiesce) {
    w.pause();
    await countsWhenCaughtUp(w);
  }
  const collAtFault = w.coll;
  for (const f of w.files()) c.fault(f);
  if (c.quiesce) w.resume(100, 500);
  await new Promise((r) => setTimeout(r, 2500));
  w.close();
  results.set(c.name, { writer: w, collAtFault, counted: await countsWhenCaughtUp(w) });
}

/**
 * logrotate's copytruncate with its default naming: the copy <name>.1 lands in the followed
 * directory. Which the agent reads first, the copy or the lines written after the truncation, is a
 * race (in place, the case below failed in some runs only); this fixes the order that loses lines
 * by making the copy elsewhere and moving it in once the new lines were counted.
 */
const LATE_COPY = (version: string): string =>
  `NCCL ${version}: copytruncated, the copy <name>.1 shows up in the followed directory after the new lines were read`;

async function runLateCopy(version: string, i: number): Promise<void> {
  const dir = join(root, "logs", `job${i}`);
  const stage = join(root, "stage", `job${i}`);
  mkdirSync(stage, { recursive: true });
  const w = new JobWriter(dir, { nodes: [`rot-node-${i}`], ranksPerNode: 2, seed: 100 + i, comms: [], stepMs: 200, ncclVersion: version }, "append");
  w.resume(100, 500);
  await new Promise((r) => setTimeout(r, 2500));
  w.pause();
  await countsWhenCaughtUp(w);
  const collAtFault = w.coll;
  for (const f of w.files()) copyTruncate(f, join(stage, `${basename(f)}.1`));
  w.resume(100, 500);
  await new Promise((r) => setTimeout(r, 2500));
  w.close();
  await countsWhenCaughtUp(w);
  for (const f of w.files()) renameSync(join(stage, `${basename(f)}.1`), `${f}.1`);
  await new Promise((r) => setTimeout(r, 2000));
  results.set(LATE_COPY(version), { writer: w, collAtFault, counted: await countsWhenCaughtUp(w) });
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "rw-rotate-"));
  mkdirSync(join(root, "logs"));
  mkdirSync(join(root, "old"));
  agent = await startAgent(
    [
      "--no-collector.gpu",
      "--no-collector.infiniband",
      "--no-collector.gdr",
      "--no-collector.mtu",
      `--collector.nccl.path=${join(root, "logs")}`,
      "--collector.nccl.check-pids=false",
      // Every rank's progress, though the jobs are healthy.
      "--collector.nccl.rank-series=always",
    ],
    {},
    30_000,
  );
  await Promise.all([...ALL.map((c, i) => runCase(c, i)), ...VERSIONS.map((v, i) => runLateCopy(v, ALL.length + i))]);
}, 90_000);

afterAll(async () => {
  await agent?.stop();
  rmSync(root, { recursive: true, force: true });
});

function expectExact(name: string): void {
  const r = results.get(name);
  if (!r) throw new Error(`case ${name} did not run`);
  const w = r.writer;
  expect(r.collAtFault).toBeGreaterThan(50);
  expect(w.coll - r.collAtFault).toBeGreaterThan(50); // lines were written after the fault
  expect(w.commIds.size).toBe(1);
  const want = w.expectedProgress();
  expect(want.size).toBe(w.collByRank.size);
  expect(Object.fromEntries(r.counted)).toEqual(Object.fromEntries(want));
}

describe("NCCL logs changed under the running agent: collective counts stay exact", () => {
  it.each(ALL.map((c) => c.name))("%s", (name) => expectExact(name));

  // Regression: the copy was a new file to the follower, read from its start, and its collectives
  // were counted a second time (151 written, 177 counted). A new file whose head is a followed
  // file's head (or one it had before a truncation) is now followed from its end.
  it.each(VERSIONS.map(LATE_COPY))("%s", (name) => expectExact(name));

  it("read every line of every job once: the lines read are the lines written", async () => {
    const written = [...results.values()].reduce((n, r) => n + r.writer.lines, 0);
    expect(results.size).toBe(ALL.length + VERSIONS.length);
    expect(sample(await (agent as RunningAgent).scrape(), "ringwatch_nccl_log_lines_total")).toBe(written);
  });

  it("the agent logged no error and kept serving", async () => {
    const a = agent as RunningAgent;
    expect(a.logs().filter((l) => /"level":50/.test(l))).toEqual([]);
    expect((await fetch(a.url + "/healthz")).status).toBe(200);
  });
});
