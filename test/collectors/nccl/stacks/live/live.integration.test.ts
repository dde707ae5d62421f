/**
 * Live stacks on real components: PyTorch's worker server as a real python3 process on a real Unix
 * socket, answering `POST /handler/dump_traceback` with faulthandler's own text
 * (test/fakes/torch-worker-server.py, after PyTorch's handler source); py-spy as a fake started
 * through collectors/exec.ts that prints real captured dumps (test/fakes/py-spy). Then the episode
 * logic: once per episode, the cap a minute, one collection per process at a time, off.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createExec } from "../../../../../collectors/exec.js";
import { collectStacks, socketPath, type StackTarget } from "../../../../../collectors/nccl/stacks/live/collect.js";
import { judgeStacks } from "../../../../../collectors/nccl/stacks/live/culprit.js";
import { LiveStacks, type StackSuspect } from "../../../../../collectors/nccl/stacks/live/watch.js";
import { askWorkerServer } from "../../../../../collectors/nccl/stacks/live/worker-socket.js";
import { fakesDir } from "../../../../helpers/collector-deps.js";
import { memoryLogger } from "../../../../helpers/memory-logger.js";
import { tempDir } from "../../../../helpers/temp-dir.js";

const fixtures = join(fakesDir, "..", "fixtures", "stacks");
const servers: ChildProcess[] = [];
let dir = "";
const uid = process.getuid?.() ?? 0;

/** A real python3 rank serving its stacks on `<dir>/rank<rank>.sock`; resolves once it listens. */
async function worker(rank: number, where: "collective" | "dataloader" | "gil"): Promise<ChildProcess> {
  const p = spawn("python3", [join(fakesDir, "torch-worker-server.py"), join(dir, `rank${rank}.sock`), join(dir, "site-packages"), where], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  servers.push(p);
  await new Promise<void>((res, rej) => {
    p.stdout?.once("data", () => res());
    p.once("exit", (c) => rej(new Error(`worker server exited ${c}`)));
  });
  return p;
}

const target = (rank: number, pid: number): StackTarget => ({ nodePid: pid, pid, globalRank: rank, uid });
const pattern = (): string => join(dir, "rank{rank}.sock");
const withFakes = (): void => {
  process.env.PATH = `${fakesDir}:${process.env.PATH ?? ""}`;
};

beforeAll(async () => {
  dir = tempDir("rw-live-stacks-");
  await worker(0, "collective");
  await worker(1, "collective");
  await worker(2, "dataloader");
  await worker(3, "gil");
}, 30_000);

afterAll(() => {
  for (const s of servers) s.kill("SIGTERM");
});

describe("PyTorch's worker server on a Unix socket", () => {
  const exec = createExec();

  it("takes each rank's faulthandler stacks and names the rank that is not in the collective, by the job's own frame", async () => {
    const got = await Promise.all(
      [0, 1, 2].map((r) => collectStacks(target(r, servers[r]?.pid ?? 0), { source: "worker", workerSocket: pattern(), timeoutMs: 5000, exec })),
    );
    expect(got.map((c) => [c.source, c.result])).toEqual([
      ["worker", "ok"],
      ["worker", "ok"],
      ["worker", "ok"],
    ]);
    expect(got[0]?.dump?.tool).toBe("faulthandler");
    // Every thread was dumped: the main thread and the server's.
    expect(got[0]?.dump?.threads.length).toBeGreaterThanOrEqual(2);
    const v = judgeStacks(
      got.map((c, rank) => ({ rank, dump: c.dump! })),
      [],
    );
    expect(v.waiting).toEqual([0, 1]);
    expect(v.waitingAt).toMatch(/^torch\/distributed\/distributed_c10d\.py:2 all_reduce$/);
    expect(v.culprit).toMatchObject({ rank: 2, why: "outlier", frame: { function: "next_batch", line: 2 } });
    expect(v.culprit?.frame.file).toMatch(/train\.py$/);
    expect(v.culprit?.innermost.function).toMatch(/^(wait|get)$/);
    expect(v.culprit?.chain).toMatch(/train\.py:2 next_batch -> .*queue\.py:\d+ get/);
  });

  it("the rank the verdict names behind is the culprit, whatever the grouping", async () => {
    const got = await Promise.all(
      [0, 1].map((r) => collectStacks(target(r, servers[r]?.pid ?? 0), { source: "worker", workerSocket: pattern(), timeoutMs: 5000, exec })),
    );
    const v = judgeStacks(
      got.map((c, rank) => ({ rank, dump: c.dump! })),
      [1],
    );
    // The job's own innermost frame (the fake's main module), and the frames inward to all_reduce.
    expect(v.culprit).toMatchObject({ rank: 1, why: "behind", frame: { function: "<module>" } });
    expect(v.culprit?.chain).toMatch(/torch-worker-server\.py:\d+ <module> -> .*torch\/distributed\/distributed_c10d\.py:2 all_reduce/);
  });

  it("a rank whose GIL is held does not answer: a timeout, bounded", async () => {
    const t0 = Date.now();
    const c = await collectStacks(target(3, servers[3]?.pid ?? 0), { source: "worker", workerSocket: pattern(), timeoutMs: 800, exec });
    expect(c.result).toBe("timeout");
    expect(Date.now() - t0).toBeLessThan(3000);
  });

  it("a symlink, a regular file, another user's socket, a missing path: never asked", async () => {
    symlinkSync(join(dir, "rank0.sock"), join(dir, "link.sock"));
    writeFileSync(join(dir, "file.sock"), "x");
    expect((await askWorkerServer(join(dir, "link.sock"), { timeoutMs: 1000, maxBytes: 1 << 20, ownerUid: uid })).result).toBe("untrusted");
    expect((await askWorkerServer(join(dir, "file.sock"), { timeoutMs: 1000, maxBytes: 1 << 20, ownerUid: uid })).result).toBe("untrusted");
    if (uid !== 0) expect((await askWorkerServer(join(dir, "rank0.sock"), { timeoutMs: 1000, maxBytes: 1 << 20, ownerUid: uid + 1 })).result).toBe("untrusted");
    expect((await askWorkerServer(join(dir, "none.sock"), { timeoutMs: 1000, maxBytes: 1 << 20, ownerUid: uid })).result).toBe("absent");
  });

  it("an answer over the size cap is cut off", async () => {
    const a = await askWorkerServer(join(dir, "rank0.sock"), { timeoutMs: 5000, maxBytes: 64, ownerUid: uid });
    expect(a.result).toBe("too_large");
  });

  it("the socket pattern: {rank} and {pid}; a rank the logs do not give is no path", () => {
    expect(socketPath("/run/t/rank{rank}-{pid}.sock", { pid: 42, globalRank: 3 })).toBe("/run/t/rank3-42.sock");
    expect(socketPath("/run/t/rank{rank}.sock", { pid: 42, globalRank: undefined })).toBeUndefined();
    expect(socketPath("", { pid: 42, globalRank: 1 })).toBeUndefined();
  });
});

describe("py-spy through collectors/exec.ts", () => {
  const exec = createExec();
  const path0 = process.env.PATH;
  afterEach(() => {
    process.env.PATH = path0;
    delete process.env.FAKE_PYSPY_DUMPS;
    delete process.env.FAKE_PYSPY_MODE;
    delete process.env.FAKE_PYSPY_LOG;
  });

  it("prints a real captured dump; read as py-spy's; started with --nonblocking", async () => {
    withFakes();
    const dumps = tempDir("rw-pyspy-");
    writeFileSync(join(dumps, "default.txt"), readFileSync(join(fixtures, "01-pyspy-fairseq-4816-rank0-dataloader-queue-get.txt")));
    process.env.FAKE_PYSPY_DUMPS = dumps;
    process.env.FAKE_PYSPY_LOG = join(dumps, "calls");
    const c = await collectStacks(target(0, 4242), { source: "py-spy", workerSocket: "", timeoutMs: 5000, exec });
    expect(c.result).toBe("ok");
    expect(c.dump?.tool).toBe("py-spy");
    expect(c.dump?.threads[0]?.frames.slice(0, 2).map((f) => f.function)).toEqual(["wait", "get"]);
    expect(readFileSync(join(dumps, "calls"), "utf8")).toBe("dump --pid 4242 --nonblocking\n");
  });

  it("without ptrace rights: refused; not installed: absent; hung: killed at the timeout", async () => {
    withFakes();
    process.env.FAKE_PYSPY_MODE = "denied";
    expect((await collectStacks(target(0, 4242), { source: "py-spy", workerSocket: "", timeoutMs: 5000, exec })).result).toBe("refused");
    process.env.FAKE_PYSPY_MODE = "hang";
    const t0 = Date.now();
    expect((await collectStacks(target(0, 4242), { source: "py-spy", workerSocket: "", timeoutMs: 500, exec })).result).toBe("timeout");
    expect(Date.now() - t0).toBeLessThan(3000);
    process.env.PATH = "/nonexistent";
    expect((await collectStacks(target(0, 4242), { source: "py-spy", workerSocket: "", timeoutMs: 500, exec })).result).toBe("absent");
  });

  it("auto: the worker server where the rank's socket is there, else py-spy", async () => {
    withFakes();
    const dumps = tempDir("rw-pyspy-");
    writeFileSync(join(dumps, "default.txt"), readFileSync(join(fixtures, "01-pyspy-fairseq-4816-rank0-dataloader-queue-get.txt")));
    process.env.FAKE_PYSPY_DUMPS = dumps;
    const o = { source: "auto", workerSocket: pattern(), timeoutMs: 5000, exec } as const;
    expect((await collectStacks(target(0, servers[0]?.pid ?? 0), o)).source).toBe("worker");
    const c = await collectStacks(target(9, 4242), o);
    expect([c.source, c.result]).toEqual(["py-spy", "ok"]);
  });
});

describe("episodes: once each, capped a minute, never two at once per process", () => {
  const path0 = process.env.PATH;
  afterEach(() => {
    process.env.PATH = path0;
    delete process.env.FAKE_PYSPY_DUMPS;
    delete process.env.FAKE_PYSPY_LOG;
  });

  function setup(
    maxPerMinute: number,
    source: "py-spy" | "off" = "py-spy",
  ): { live: LiveStacks; calls: () => string[]; log: ReturnType<typeof memoryLogger>; clock: { t: number } } {
    withFakes();
    const dumps = tempDir("rw-pyspy-");
    const collective = readFileSync(join(fixtures, "02-pyspy-accelerate-3104-deepspeed-zero3-threads-all-gather.txt"), "utf8");
    // The second dump of the capture: MainThread in DeepSpeed's all_gather_coalesced.
    writeFileSync(join(dumps, "default.txt"), collective.slice(collective.indexOf("# [turn 5")));
    writeFileSync(join(dumps, "105.txt"), readFileSync(join(fixtures, "01-pyspy-fairseq-4816-rank0-dataloader-queue-get.txt")));
    process.env.FAKE_PYSPY_DUMPS = dumps;
    process.env.FAKE_PYSPY_LOG = join(dumps, "calls");
    const log = memoryLogger();
    const clock = { t: 1_000_000 };
    // The fake py-spy is a Node.js child: eight of them start at once, and on a loaded machine that takes seconds; none of these tests waits for a timeout.
    const live = new LiveStacks({ source, workerSocket: "", timeoutMs: 30_000, maxPerMinute, exec: createExec(), now: () => clock.t, log: log.logger });
    const calls = (): string[] => (existsSync(join(dumps, "calls")) ? readFileSync(join(dumps, "calls"), "utf8").trim().split("\n") : []);
    return { live, calls, log, clock };
  }

  const suspect = (commId: string, behind: number[] = []): StackSuspect => ({
    commId,
    ranks: Array.from({ length: 8 }, (_, r) => ({ rank: r, target: target(r, 100 + r) })),
    behind,
  });

  it("a hang: 8 processes dumped once, the culprit logged once and published until the episode ends", async () => {
    const { live, calls, log } = setup(16);
    live.update([suspect("0xaa")]);
    live.update([suspect("0xaa")]);
    await live.settled();
    live.update([suspect("0xaa")]);
    expect(calls()).toHaveLength(8);
    const lines = log.lines().filter((l) => String(l.msg).includes("Python stacks of communicator 0xaa"));
    expect(lines).toHaveLength(1);
    expect(String(lines[0]?.msg)).toMatch(
      /rank 5, not where 7 ranks here wait \(deepspeed\/runtime\/zero\/partition_parameters\.py:1254 all_gather_coalesced\), is at .*fairseq\/data\/iterators\.py:648 __next__ -> queue\.py:170 get -> threading\.py:302 wait/,
    );
    expect(live.culprits()).toEqual([
      {
        commId: "0xaa",
        processGroup: "",
        labels: {
          rank: "5",
          pid: "105",
          function: "__next__",
          file: "fairseq/data/iterators.py",
          line: "648",
          innermost: "threading.py:302 wait",
          source: "py-spy",
          why: "outlier",
        },
      },
    ]);
    expect(live.counts.get("py-spy\u0000ok")).toBe(8);
    live.update([]);
    expect(live.culprits()).toEqual([]);
  });

  it("many communicators over the same processes: one collection per process; a second episode within the minute waits for the cap", async () => {
    const { live, calls, log, clock } = setup(8);
    live.update(["0x1", "0x2", "0x3"].map((c) => suspect(c)));
    await live.settled();
    expect(calls()).toHaveLength(8);
    expect(live.culprits().map((c) => c.commId)).toEqual(["0x1", "0x2", "0x3"]);
    live.update([]);
    clock.t += 40_000; // past the reuse, within the minute
    live.update([suspect("0x1")]);
    live.update([suspect("0x1")]);
    await live.settled();
    expect(calls()).toHaveLength(8);
    expect(live.counts.get("py-spy\u0000rate_limited")).toBe(1);
    expect(log.lines().filter((l) => String(l.msg).includes("wait: 8 collections would pass"))).toHaveLength(1);
    clock.t += 30_000; // the minute has passed, the episode still lasts
    live.update([suspect("0x1")]);
    await live.settled();
    expect(calls()).toHaveLength(16);
    expect(live.culprits().map((c) => c.commId)).toEqual(["0x1"]);
  });

  it("one process suspected by the logs (or RAS, same comm_id) and by PyTorch's process group at once: collected once, two culprits", async () => {
    const { live, calls, log } = setup(8);
    const pg: StackSuspect = { ...suspect(""), processGroup: "PG 0 (default_pg)" };
    // The logs' suspect and RAS's of the same communicator are one episode; the process group another.
    live.update([suspect("0xaa"), suspect("0xaa"), pg]);
    live.update([suspect("0xaa"), pg]);
    await live.settled();
    // 8 processes in all, within the cap of 8 a minute: the second episode reuses the first's stacks.
    expect(calls()).toHaveLength(8);
    expect(live.counts.get("py-spy\u0000ok")).toBe(8);
    expect(live.counts.get("py-spy\u0000rate_limited")).toBeUndefined();
    expect(live.culprits().map((c) => [c.commId, c.processGroup, c.labels.rank])).toEqual([
      ["0xaa", "", "5"],
      ["", "PG 0 (default_pg)", "5"],
    ]);
    expect(log.lines().filter((l) => String(l.msg).includes("Python stacks of process group PG 0 (default_pg)"))).toHaveLength(1);
    expect(log.lines().filter((l) => String(l.msg).includes("Python stacks of communicator 0xaa"))).toHaveLength(1);
    live.update([pg]);
    expect(live.culprits().map((c) => c.processGroup)).toEqual(["PG 0 (default_pg)"]);
  });

  it("processes RAS names that no verified owner vouches for: never asked, counted and logged once an episode", async () => {
    const { live, calls, log } = setup(16);
    const s: StackSuspect = { commId: "0xbb", ranks: [], behind: [], untrusted: [{ rank: 2, pid: 77, nodePid: 7077, uid: 1234 }] };
    live.update([s]);
    live.update([s]);
    await live.settled();
    expect(calls()).toEqual([]);
    expect(live.counts.get("py-spy\u0000untrusted")).toBe(1);
    const lines = log.lines().filter((l) => String(l.msg).includes("NCCL RAS names here not asked (pid 7077)"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ comm_id: "0xbb", pids: [7077], uids: [1234] });
    expect(live.culprits()).toEqual([]);
  });

  it("the default source, worker, with no socket named: nothing asked, nothing counted, nothing logged", async () => {
    const log = memoryLogger();
    const live = new LiveStacks({ source: "worker", workerSocket: "", timeoutMs: 5000, maxPerMinute: 16, exec: createExec(), now: () => 0, log: log.logger });
    live.update([suspect("0xaa")]);
    await live.settled();
    expect(live.counts.size).toBe(0);
    expect(log.lines()).toEqual([]);
  });

  it("off: nothing is started", async () => {
    const { live, calls } = setup(16, "off");
    live.update([suspect("0xaa")]);
    await live.settled();
    expect(calls()).toEqual([]);
    expect(live.culprits()).toEqual([]);
  });
});
