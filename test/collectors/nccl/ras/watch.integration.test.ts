/**
 * RasWatch: when it asks NCCL's RAS service (every interval, logs or none; at once when a log hang
 * begins), what it keeps of the answers, and the verdicts ras/verdict.ts draws from them. Time is a
 * fake clock; the service is a real process (test/fakes/nccl-ras) on a real socket.
 */
import { afterEach, describe, expect, it } from "vitest";
import { RasWatch, UNKNOWN_VERSION, lastTextReport } from "../../../../collectors/nccl/ras/watch.js";
import { defectsOf } from "../../../../collectors/nccl/ras/defects.js";
import { rasVerdicts, type RasNode } from "../../../../collectors/nccl/ras/verdict.js";
import { readCapture } from "../../../helpers/fixtures.js";
import { memoryLogger } from "../../../helpers/memory-logger.js";
import { stubRasNode } from "../../../helpers/ras-node.js";
import { oneRankBehind, rasText } from "../../../helpers/ras-text.js";
import { closedPort, rasServices } from "../../../helpers/ras-service.js";

const REPORT_97 = readCapture("nccl/97-hang-ras-mismatch-allgather-640-vs-641.log");
/** Rank 9 behind on another node, and a dead process. */
const REPORT_BEHIND = rasText({
  nodes: 2,
  ranksPerNode: 8,
  errors: ["DEAD", "  1 job process is considered dead (unreachable via the RAS network)", "  Process 4251 on node 10.0.0.9 managing GPU 1"],
  warnings: oneRankBehind({ hash: "049bd7790311d5eb", op: "AllReduce", ranks: 16, top: 1204, rank: 9, gpu: 1, pid: 4242, node: "10.0.0.8" }),
});
const THRESHOLD = 120_000;

const service = rasServices();
const watches: RasWatch[] = [];

afterEach(async () => {
  await Promise.all(watches.splice(0).map((w) => w.close()));
});

/** A watch with a 30 s interval and no jitter (random() = 0.5); `knownDefects` gates timed queries as --collector.nccl.ras-poll-known-defective=false does. */
function watch(
  port: number,
  clock: { t: number },
  deadlineMs = 3000,
  random = (): number => 0.5,
  knownDefects?: typeof defectsOf,
): { w: RasWatch; logs: () => Array<Record<string, unknown>> } {
  const { logger, lines } = memoryLogger("info");
  const w = new RasWatch(
    {
      address: { host: "127.0.0.1", port },
      intervalMs: 30_000,
      now: () => clock.t,
      log: logger,
      deadlineMs,
      progress: { hangThresholdMs: THRESHOLD, gapFactor: 2, maxThresholdMs: 30 * 60_000 },
      ...(knownDefects !== undefined ? { knownDefects } : {}),
    },
    random,
  );
  watches.push(w);
  return { w, logs: lines };
}

/** Ticks at each time and waits for the query it started. */
async function ticks(w: RasWatch, clock: { t: number }, times: readonly number[], urgent = false): Promise<void> {
  for (const t of times) {
    clock.t = t;
    w.tick(urgent);
    await w.settled();
  }
}

const count = (w: RasWatch, result: "ok" | "unreachable" | "timeout" | "error"): number => w.snapshot().queries.get(result) ?? 0;

/** A node that holds the given addresses, every pid alive, no GPU readings. */
const node = (addresses: string[], rasIsLocal = false): RasNode => stubRasNode(addresses, { rasIsLocal });

describe("RasWatch", () => {
  it("asks at once and then every interval, with no hang and no log; asks for JSON first, then reads the text an older NCCL gives", async () => {
    const s = await service(REPORT_97);
    const clock = { t: 0 };
    const { w, logs } = watch(s.port, clock);
    await ticks(w, clock, [0, 5_000, 29_000, 30_000, 35_000, 60_000]);
    expect(count(w, "ok")).toBe(3);
    expect(s.connections()).toBe(3);
    expect(s.commands().slice(0, 4)).toEqual(["CLIENT PROTOCOL 2", "TIMEOUT 5", "SET FORMAT json", "STATUS"]);
    const snap = w.snapshot();
    expect(snap.format).toBe("text");
    expect(snap.report?.version).toBe("2.26.2");
    expect(snap.lastReportMs).toBe(60_000);
    // The job answering is logged once, not at every query.
    expect(logs().filter((l) => String(l.msg).includes("answers"))).toHaveLength(1);
  });

  it("capture 97 standing for the threshold: a hang; ranks 12 and 13 are ahead, no rank is named behind", async () => {
    const s = await service(REPORT_97);
    const clock = { t: 0 };
    const { w } = watch(s.port, clock);
    await ticks(w, clock, [0, 30_000, 60_000, 90_000]);
    const here = node(["10.137.190.124"]);
    // 90 s of the same mismatch: not yet.
    expect(rasVerdicts(w.snapshot().progress, here).map((v) => [v.commId, v.hang, v.stillMs])).toEqual([["0xfa93daea854b060b", false, 90_000]]);
    await ticks(w, clock, [120_000]);
    const [v] = rasVerdicts(w.snapshot().progress, here);
    expect(v).toMatchObject({ commId: "0xfa93daea854b060b", hang: true, stillMs: 120_000, behind: [], network: false, evidence: ["ras"] });
    expect(v?.local.map((l) => [l.rank, l.pid, l.gpu])).toEqual([
      [12, 323032, "4"],
      [13, 323033, "5"],
    ]);
    // A node that runs none of its listed ranks, asking a RAS service that is not its own: no verdict there.
    expect(rasVerdicts(w.snapshot().progress, node(["10.0.0.1"]))).toEqual([]);
  });

  it("a rank behind on another node and a dead process: named by host:pid; the comm_id drops the hash's leading zero", async () => {
    const s = await service(REPORT_BEHIND);
    const clock = { t: 0 };
    const { w } = watch(s.port, clock);
    await ticks(w, clock, [0, 30_000, 60_000, 90_000, 120_000]);
    const snap = w.snapshot();
    expect(snap.dead).toEqual(["10.0.0.9:4251"]);
    // The text lists rank 9 only; the RAS service on this node's loopback answered, so the job runs here.
    const [v] = rasVerdicts(snap.progress, node(["10.0.0.7"], true));
    expect(v?.commId).toBe("0x49bd7790311d5eb");
    expect(v?.hang).toBe(true);
    expect(v?.behind.map((r) => [r.rank, `${r.node}:${r.pid}`])).toEqual([[9, "10.0.0.8:4242"]]);
    expect(v?.waitingIn).toBe("AllReduce #1204");
    expect(snap.findings.map((f) => f.kind).sort()).toEqual(["network_error", "rank_behind"]);
  });

  it("a log hang that begins asks at once, unless the last query is under a quarter interval old", async () => {
    const s = await service(REPORT_BEHIND);
    const clock = { t: 0 };
    const { w } = watch(s.port, clock);
    await ticks(w, clock, [0]);
    await ticks(w, clock, [5_000], true); // 5 s after the last query: waits
    expect(count(w, "ok")).toBe(1);
    await ticks(w, clock, [6_000, 7_000], false);
    await ticks(w, clock, [12_000], true); // rising again, 12 s after the last: asks
    expect(count(w, "ok")).toBe(2);
    await ticks(w, clock, [20_000], true); // still the same hang: the interval rules
    expect(count(w, "ok")).toBe(2);
  });

  it("known defects gate timed queries: a job whose version nothing names yet is never asked to learn it; a suspicion asks, and the report's version (2.26.2) keeps the gate", async () => {
    const s = await service(REPORT_97);
    const clock = { t: 0 };
    const { w } = watch(s.port, clock, 3000, () => 0.5, defectsOf);
    await ticks(w, clock, [0, 5_000, 30_000, 60_000, 90_000]);
    expect(s.connections()).toBe(0);
    expect(w.snapshot().gate).toEqual({ version: "", decision: "suspicion_only", defect: UNKNOWN_VERSION });
    await ticks(w, clock, [95_000], true);
    expect(count(w, "ok")).toBe(1);
    expect(w.snapshot().gate).toEqual({ version: "2.26.2", decision: "suspicion_only", defect: defectsOf("2.26.2")[0]?.id });
    await ticks(w, clock, [125_000, 155_000, 185_000]);
    expect(s.connections()).toBe(1);
  });

  it("repeats are spread by ±10 % so the nodes of a job drift apart", async () => {
    const s = await service(REPORT_BEHIND);
    const clock = { t: 0 };
    const early = watch(s.port, clock, 3000, () => 0).w;
    const late = watch(s.port, clock, 3000, () => 0.999).w;
    for (const t of [0, 27_000, 30_000, 32_900]) {
      clock.t = t;
      early.tick();
      late.tick();
      await Promise.all([early.settled(), late.settled()]);
    }
    expect(count(early, "ok")).toBe(2); // at 0 and 27 s
    expect(count(late, "ok")).toBe(1); // its second is due at 32.97 s
  });

  it("turned off (SIGHUP): what it knew goes, nothing is asked while off, counts stay; turned on again it asks", async () => {
    const s = await service(REPORT_BEHIND);
    const clock = { t: 0 };
    const { w } = watch(s.port, clock);
    await ticks(w, clock, [0]);
    expect(w.snapshot().progress).toHaveLength(1);
    w.setOptions(undefined);
    expect(w.snapshot()).toMatchObject({ progress: [], dead: [], findings: [], report: undefined });
    await ticks(w, clock, [120_000]);
    expect(count(w, "ok")).toBe(1);
    w.setOptions({ address: { host: "127.0.0.1", port: s.port }, intervalMs: 30_000 });
    await ticks(w, clock, [121_000]);
    expect(count(w, "ok")).toBe(2);
    expect(w.snapshot().progress).toHaveLength(1);
  });

  it("a job that ends (nothing listens any more): no connection is made, it is logged once at info, and what it said is forgotten", async () => {
    const s = await service(REPORT_BEHIND);
    const clock = { t: 0 };
    const { w, logs } = watch(s.port, clock);
    await ticks(w, clock, [0, 30_000, 60_000, 90_000, 120_000]);
    expect(rasVerdicts(w.snapshot().progress, node(["10.0.0.8"]))[0]?.hang).toBe(true);
    const connections = s.connections();
    await s.stop();
    await ticks(w, clock, [150_000, 180_000]);
    // The kernel's socket tables show no listener: nothing is asked, not even a refused connection.
    expect(count(w, "unreachable")).toBe(0);
    expect(count(w, "ok")).toBe(5);
    expect(s.connections()).toBe(connections);
    expect(w.snapshot().listener).toBe("none");
    expect(w.snapshot()).toMatchObject({ progress: [], dead: [], report: undefined });
    const said = logs().filter((l) => String(l.msg).includes("no NCCL RAS service"));
    expect(said).toHaveLength(1);
    expect(said[0]?.level).toBe(30);
    expect(String(said[0]?.msg)).toContain("NCCL_RAS_ADDR");
  });

  it("no RAS service at all costs no connection: the socket tables say nothing listens", async () => {
    const port = await closedPort();
    const clock = { t: 0 };
    const { w } = watch(port, clock);
    await ticks(w, clock, [0, 10_000, 30_000]);
    expect(count(w, "unreachable")).toBe(0);
    expect(count(w, "ok")).toBe(0);
    expect(w.snapshot().listener).toBe("none");
  });

  it("a job too busy to answer in time keeps what it said before (a timeout is no standstill and no end)", async () => {
    const s = await service(REPORT_BEHIND, "silent");
    const clock = { t: 0 };
    const { w, logs } = watch(s.port, clock, 300);
    await ticks(w, clock, [0, 30_000]);
    expect(count(w, "timeout")).toBe(2);
    expect(logs().filter((l) => String(l.msg).includes("gave no report"))).toHaveLength(1);
  });

  it("an answer without a report is an error", async () => {
    const s = await service("ERROR: internal error while collecting\n");
    const { w, logs } = watch(s.port, { t: 0 });
    w.tick();
    await w.settled();
    expect(count(w, "error")).toBe(1);
    expect(w.snapshot().lastReportMs).toBeUndefined();
    expect(logs().some((l) => l.level === 40 && String(l.msg).includes('it begins "ERROR: internal error'))).toBe(true);
  });
});

describe("lastTextReport", () => {
  it("capture 98 (status OK for 256 ranks) holds no communicator entry", () => {
    const r = lastTextReport(readCapture("nccl/98-hang-ras-ok-vs-pytorch-watchdog-timeout-256rank.log"));
    expect(r?.comms).toEqual([]);
    expect(r?.table).toEqual([{ comms: 1, ranks: 256, status: "RUNNING", errors: "OK" }]);
  });

  it("keeps the last of several reports in one answer", () => {
    const r = lastTextReport(`${REPORT_97}\n${REPORT_BEHIND}`);
    expect(r?.comms.map((c) => c.commHash)).toEqual(["049bd7790311d5eb"]);
  });
});
