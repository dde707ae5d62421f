/**
 * RasWatch: when it asks NCCL's RAS service (only during a hang, then every interval), and what it
 * keeps of the answer. Time is a fake clock; the service is a real process (test/fakes/nccl-ras).
 */
import { afterEach, describe, expect, it } from "vitest";
import { RasWatch, lastReport, rasSeries } from "../../../collectors/nccl/ras-watch.js";
import { readCapture } from "../../helpers/fixtures.js";
import { memoryLogger } from "../../helpers/memory-logger.js";
import { oneRankBehind, rasText } from "../../helpers/ras-text.js";
import { closedPort, rasServices } from "../../helpers/ras-service.js";

const REPORT_97 = readCapture("nccl/97-hang-ras-mismatch-allgather-640-vs-641.log");
/** Rank 9 behind on another node, and a dead process. */
const REPORT_BEHIND = rasText({
  nodes: 2,
  ranksPerNode: 8,
  errors: ["DEAD", "  1 job process is considered dead (unreachable via the RAS network)", "  Process 4251 on node 10.0.0.9 managing GPU 1"],
  warnings: oneRankBehind({ hash: "049bd7790311d5eb", op: "AllReduce", ranks: 16, top: 1204, rank: 9, gpu: 1, pid: 4242, node: "10.0.0.8" }),
});

const service = rasServices();
const watches: RasWatch[] = [];

afterEach(async () => {
  await Promise.all(watches.splice(0).map((w) => w.close()));
});

/** A watch with a 60 s interval and no jitter (random() = 0.5). */
function watch(port: number, clock: { t: number }, deadlineMs = 3000): { w: RasWatch; logs: () => Array<Record<string, unknown>> } {
  const { logger, lines } = memoryLogger("info");
  const w = new RasWatch({ address: { host: "127.0.0.1", port }, intervalMs: 60_000, now: () => clock.t, log: logger, deadlineMs }, () => 0.5);
  watches.push(w);
  return { w, logs: lines };
}

const count = (w: RasWatch, result: "ok" | "unreachable" | "timeout" | "error"): number => w.view().queries.get(result) ?? 0;

describe("RasWatch", () => {
  it("asks nothing while no hang is suspected", async () => {
    const s = await service(REPORT_97);
    const { w } = watch(s.port, { t: 0 });
    w.update(false);
    w.update(false);
    await w.settled();
    await new Promise((r) => setTimeout(r, 100));
    expect(s.connections()).toBe(0);
    expect(w.view()).toMatchObject({ lastReportMs: undefined, behind: [], mismatched: [], dead: [], findings: [] });
  });

  it("capture 97 during a hang: the communicator is mismatched, ranks 12 and 13 are ahead (none listed behind)", async () => {
    const s = await service(REPORT_97);
    const clock = { t: 1_700_000_000_000 };
    const { w, logs } = watch(s.port, clock);
    w.update(true);
    await w.settled();
    const v = w.view();
    expect(count(w, "ok")).toBe(1);
    expect(v.lastReportMs).toBe(1_700_000_000_000);
    expect(v.mismatched).toEqual(["0xfa93daea854b060b"]);
    expect(v.behind).toEqual([]);
    expect(v.findings.map((f) => [f.kind, f.ranks, f.processes, f.seq])).toEqual([["collective_mismatch", [12, 13], ["10.137.190.124:323032", "10.137.190.124:323033"], 641]]);
    const warn = logs().filter((l) => l.level === 40);
    expect(warn).toHaveLength(1);
    expect(String(warn[0]?.msg)).toContain("launched AllGather #641, which the other 30 ranks have not");
  });

  it("a rank behind on another node and a dead process; the comm_id drops the hash's leading zero", async () => {
    const s = await service(REPORT_BEHIND);
    const { w } = watch(s.port, { t: 5000 });
    w.update(true);
    await w.settled();
    const v = w.view();
    expect(v.behind).toEqual([{ commId: "0x49bd7790311d5eb", rank: 9, process: "10.0.0.8:4242" }]);
    expect(v.mismatched).toEqual(["0x49bd7790311d5eb"]);
    expect(v.dead).toEqual(["10.0.0.9:4251"]);
    expect(v.findings.map((f) => f.kind).sort()).toEqual(["network_error", "rank_behind"]);
  });

  it("asks again only after the interval while the hang lasts, logs a repeated answer once, and clears when the hang ends", async () => {
    const s = await service(REPORT_BEHIND);
    const clock = { t: 0 };
    const { w, logs } = watch(s.port, clock);
    w.update(true);
    await w.settled();
    clock.t = 30_000;
    w.update(true);
    await w.settled();
    expect(s.connections()).toBe(1);
    clock.t = 60_000;
    w.update(true);
    await w.settled();
    expect(count(w, "ok")).toBe(2);
    expect(logs().filter((l) => String(l.msg).includes("never entered AllReduce #1204"))).toHaveLength(1);

    clock.t = 61_000;
    w.update(false);
    expect(w.view()).toMatchObject({ behind: [], mismatched: [], dead: [], findings: [], lastReportMs: 60_000 });
    expect(count(w, "ok")).toBe(2);
    // A hang that starts again right after one ended waits a quarter interval after the last query
    // (a flickering verdict does not make the whole job answer every 5 s)...
    clock.t = 62_000;
    w.update(true);
    await w.settled();
    expect(count(w, "ok")).toBe(2);
    // ...then asks, and its answer is logged again.
    clock.t = 75_000;
    w.update(true);
    await w.settled();
    expect(count(w, "ok")).toBe(3);
    expect(w.view().behind).toHaveLength(1);
    expect(logs().filter((l) => String(l.msg).includes("never entered AllReduce #1204"))).toHaveLength(2);
  });

  it("repeats are spread by ±10 % so the nodes of a job drift apart", async () => {
    const s = await service(REPORT_BEHIND);
    const clock = { t: 0 };
    const { logger } = memoryLogger("info");
    const early = new RasWatch({ address: { host: "127.0.0.1", port: s.port }, intervalMs: 60_000, now: () => clock.t, log: logger }, () => 0);
    const late = new RasWatch({ address: { host: "127.0.0.1", port: s.port }, intervalMs: 60_000, now: () => clock.t, log: logger }, () => 0.999);
    watches.push(early, late);
    for (const t of [0, 54_000, 60_000, 65_900]) {
      clock.t = t;
      early.update(true);
      late.update(true);
      await Promise.all([early.settled(), late.settled()]);
    }
    expect(count(early, "ok")).toBe(2); // at 0 and 54 s
    expect(count(late, "ok")).toBe(1); // its second is due at 65.94 s
  });

  it("turned off (SIGHUP): the series go, nothing is asked while off, counts stay; turned on again it asks", async () => {
    const s = await service(REPORT_BEHIND);
    const clock = { t: 0 };
    const { w } = watch(s.port, clock);
    w.update(true);
    await w.settled();
    expect(w.view().behind).toHaveLength(1);
    w.setOptions(undefined);
    expect(w.view()).toMatchObject({ behind: [], dead: [], mismatched: [], findings: [] });
    clock.t = 120_000;
    w.update(true);
    await w.settled();
    expect(count(w, "ok")).toBe(1);
    w.setOptions({ address: { host: "127.0.0.1", port: s.port }, intervalMs: 60_000 });
    w.update(true);
    await w.settled();
    expect(count(w, "ok")).toBe(2);
    expect(w.view().behind).toHaveLength(1);
  });

  it("an answer that arrives after its hang ended is counted, not shown and not logged; the next hang logs its own", async () => {
    const s = await service(REPORT_BEHIND, "silent");
    const clock = { t: 0 };
    const { w, logs } = watch(s.port, clock, 300);
    w.update(true);
    w.update(false); // the hang ends while RAS has not answered
    await w.settled();
    expect(count(w, "timeout")).toBe(1);
    expect(logs().filter((l) => String(l.msg).includes("gave no report"))).toHaveLength(0);
    clock.t = 60_000;
    w.update(true);
    await w.settled();
    expect(count(w, "timeout")).toBe(2);
    expect(logs().filter((l) => String(l.msg).includes("gave no report"))).toHaveLength(1);
  });

  it("no RAS service is counted as unreachable and logged once, at info", async () => {
    const port = await closedPort();
    const clock = { t: 0 };
    const { w, logs } = watch(port, clock);
    w.update(true);
    await w.settled();
    clock.t = 120_000;
    w.update(true);
    await w.settled();
    expect(count(w, "unreachable")).toBe(2);
    expect(count(w, "ok")).toBe(0);
    const said = logs().filter((l) => String(l.msg).includes("gave no report"));
    expect(said).toHaveLength(1);
    expect(said[0]?.level).toBe(30);
    expect(String(said[0]?.msg)).toContain("NCCL_RAS_ADDR");
  });

  it("an answer without a report is an error", async () => {
    const s = await service("ERROR: internal error while collecting\n");
    const { w, logs } = watch(s.port, { t: 0 });
    w.update(true);
    await w.settled();
    expect(count(w, "error")).toBe(1);
    expect(w.view().lastReportMs).toBeUndefined();
    expect(logs().some((l) => l.level === 40 && String(l.msg).includes('it begins "ERROR: internal error'))).toBe(true);
  });
});

describe("rasSeries", () => {
  it("names nothing for a report without errors (capture 98)", () => {
    const r = lastReport(readCapture("nccl/98-hang-ras-ok-vs-pytorch-watchdog-timeout-256rank.log"));
    expect(r).toBeDefined();
    if (r) expect(rasSeries(r)).toEqual({ behind: [], mismatched: [], dead: [] });
  });

  it("keeps the last of several reports in one answer", () => {
    const r = lastReport(`${REPORT_97}\n${REPORT_BEHIND}`);
    expect(r && rasSeries(r).mismatched).toEqual(["0x49bd7790311d5eb"]);
  });
});
