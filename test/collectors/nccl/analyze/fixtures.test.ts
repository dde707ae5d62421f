/** `ringwatch analyze` on real captures: the verdict each one should give. */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../collectors/nccl/analyze/analyze.js";
import { commIdOfHash } from "../../../../collectors/nccl/ras/findings.js";
import type { Finding, Report } from "../../../../collectors/nccl/verdict/report.js";
import { listFixtures, readCapture } from "../../../helpers/fixtures.js";

function analyze(...names: string[]): Report {
  return analyzeLogs(names.map((n) => ({ name: n, text: readCapture(`nccl/${n}`) })));
}
const kinds = (r: Report): string[] => r.findings.map((f) => f.kind);
const find = (r: Report, kind: string): Finding => {
  const f = r.findings.find((x) => x.kind === kind);
  if (!f) throw new Error(`no ${kind} finding in ${JSON.stringify(kinds(r))}`);
  return f;
};

describe("analyze on real captures", () => {
  it("91: rank 2 issued AllGather where the others issued AllReduce (opCount 0x28c)", () => {
    const r = analyze("91-hang-coll-rank2-allgather-while-others-allreduce.log");
    const f = find(r, "collective_mismatch");
    expect(f).toMatchObject({ severity: "critical", op_count: "28c", op: "AllReduce", other_op: "AllGather", processes: ["h03r3n06:45006", "h03r3n06:45012"] });
    expect(f.summary).toContain("cudaDev 2");
    expect(f.evidence).toEqual(["91-hang-coll-rank2-allgather-while-others-allreduce.log:1", "91-hang-coll-rank2-allgather-while-others-allreduce.log:4"]);
  });

  it("95: the desync report's rank 7 never joined collective #183", () => {
    const r = analyze("95-hang-desync-report-rank7-never-joined.log");
    expect(r.findings[0]).toMatchObject({ kind: "rank_behind", ranks: [7], seq: 183 });
    expect(find(r, "watchdog_timeout")).toMatchObject({ ranks: [0], seq: 241, op: "ALLREDUCE", timeout_ms: 600000 });
  });

  it("93: ranks 1,2 still wait in SeqNum 532339 (BROADCAST), which rank 0 got past (532341, _ALLGATHER_BASE): ranks 1,2 behind, first", () => {
    const r = analyze("93-hang-watchdog-rank0-ahead-allgather-vs-broadcast.log");
    expect(r.findings[0]).toMatchObject({ kind: "rank_behind", ranks: [1, 2], seq: 532340, process_group: "PG 0" });
    expect(r.findings[0]?.summary).toContain(
      "ranks 1,2 still wait in work SeqNum=532339 (BROADCAST), which rank 0 got past: it waits in SeqNum=532341 (_ALLGATHER_BASE)",
    );
    expect(r.findings[0]?.summary).toContain("different collectives (BROADCAST vs _ALLGATHER_BASE)");
    const wd = r.findings.filter((f) => f.kind === "watchdog_timeout");
    expect(wd.map((f) => [f.ranks, f.seq, f.op])).toEqual([
      [[1, 2], 532339, "BROADCAST"],
      [[0], 532341, "_ALLGATHER_BASE"],
    ]);
  });

  it("77: a heartbeat monitor timeout on rank 144 (watchdog stuck 600 s, 1 collective pending) is a hang, not 'nothing wrong'", () => {
    const r = analyze("77-watchdog-heartbeat-monitor-timed-out-rank144.log");
    expect(r.findings[0]).toMatchObject({ kind: "hang_suspected", ranks: [144], process_group: "PG 0" });
    expect(r.findings[0]?.summary).toContain("watchdog got stuck for 600 s with 1 collective pending");
  });

  it("79: heartbeat timeouts of a subgroup name the group (PG 5) and the global ranks 0 and 4", () => {
    const r = analyze("79-watchdog-heartbeat-subgroup-pg5.log");
    expect(r.findings[0]).toMatchObject({ kind: "hang_suspected", ranks: [0, 4], process_group: "PG 5" });
  });

  it("82: ranks 0-2 all time out in #808 with work enqueued to #811: the collective itself hangs; rank 2's cut status line makes no rank behind", () => {
    const r = analyze("82-watchdog-pt2.6-pg-guid-format.log");
    expect(r.findings.filter((f) => f.kind === "rank_behind")).toEqual([]);
    expect(r.findings.map((f) => [f.kind, f.ranks, f.seq, f.process_group])).toEqual([["watchdog_timeout", [0, 1, 2], 808, "PG 0 (default_pg)"]]);
    expect(r.findings[0]?.summary).toContain("Every rank shown (0-2) entered it and none completed it (enqueued up to #811)");
  });

  it("85: a dump signal from rank 2 names rank 2's watchdog first; rank 5, with nothing pending, is not made the culprit", () => {
    const r = analyze("85-watchdog-dump-signal-from-remote-rank.log");
    expect(r.findings.filter((f) => f.kind === "rank_behind")).toEqual([]);
    expect(r.findings[0]).toMatchObject({ kind: "watchdog_timeout", ranks: [2], process_group: "PG 0 (default_pg)" });
  });

  it("89: a dump raised by rank 1's own timeout with work #3750-3755 pending: rank 1's watchdog timed out at #3750", () => {
    const r = analyze("89-watchdog-first-pg-to-signal-dumping.log");
    expect(r.findings[0]).toMatchObject({ kind: "watchdog_timeout", ranks: [1], seq: 3750 });
  });

  it("96: Flight Recorder names ranks 3-7 missing from collective #31117", () => {
    const r = analyze("96-hang-flight-recorder-fr_trace-missing-ranks.log");
    expect(find(r, "rank_behind")).toMatchObject({ ranks: [3, 4, 5, 6, 7], seq: 31117 });
  });

  it("97: the NCCL RAS report names ranks 12 and 13, ahead at AllGather #641 while 30 ranks are at #640", () => {
    const r = analyze("97-hang-ras-mismatch-allgather-640-vs-641.log");
    expect(r.findings).toHaveLength(1);
    expect(r.findings[0]).toMatchObject({
      kind: "collective_mismatch",
      severity: "critical",
      ranks: [12, 13],
      processes: ["10.137.190.124:323032", "10.137.190.124:323033"],
      comm_id: "0xfa93daea854b060b",
      seq: 641,
      op: "AllGather",
      count: 2,
    });
    expect(r.findings[0]?.summary).toContain("30 at #640, 2 at #641");
  });

  it("98: a RAS report saying OK adds nothing to the watchdog timeout after it", () => {
    expect(kinds(analyze("98-hang-ras-ok-vs-pytorch-watchdog-timeout-256rank.log"))).toEqual(["watchdog_timeout"]);
  });

  it("a RAS report (in NCCL's format) naming one rank behind gives rank_behind with its process", () => {
    const text = [
      "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors",
      "    #  in group  per comm  per node  per comm  in group",
      "    0         1         2         8        16        16   RUNNING  MISMATCH",
      "",
      "Warnings",
      "========",
      "",
      "#0-0 (49bbd7790311d5eb) MISMATCH",
      "  Communicator ranks have different AllReduce operation counts",
      "  15 ranks have launched up to operation 1204",
      "  Rank 9 has launched up to operation 1203 -- GPU 1 managed by process 4242 on node 10.0.0.8",
      "",
      "DEAD",
      "  1 job process is considered dead (unreachable via the RAS network)",
      "  Process 4251 on node 10.0.0.9 managing GPU 1",
    ].join("\n");
    const r = analyzeLogs([{ name: "ras.txt", text }]);
    expect(r.findings.map((f) => [f.kind, f.ranks, f.processes, f.comm_id, f.seq ?? null, f.evidence])).toEqual([
      ["rank_behind", [9], ["10.0.0.8:4242"], "0x49bbd7790311d5eb", 1204, ["ras.txt:8"]],
      ["network_error", [], ["10.0.0.9:4251"], null, null, ["ras.txt:13"]],
    ]);
    expect(r.findings[0]?.summary).toContain("never entered AllReduce #1204");
  });

  it("a RAS commHash with leading zeros is the comm_id the Init line prints (0x%llx, no padding)", () => {
    const text = [
      "Communicators... (0.00s)",
      "",
      "#0-0 (0a93daea854b060b) MISMATCH",
      "  Communicator ranks have different AllGather operation counts",
      "  7 ranks have launched up to operation 12",
      "  Rank 3 has launched up to operation 11 -- GPU 3 managed by process 77 on node n1",
    ].join("\n");
    const r = analyzeLogs([{ name: "ras.txt", text }]);
    expect(r.findings.map((f) => [f.kind, f.comm_id, f.ranks])).toEqual([["rank_behind", "0xa93daea854b060b", [3]]]);
    expect(r.findings[0]?.summary).toContain("communicator 0xa93daea854b060b,");
    expect(commIdOfHash("0000000000000000")).toBe("0x0");
  });

  it("40: sockets instead of InfiniBand", () => {
    const r = analyze("40-socket-dgxa100-net-socket-channels-system-error.log");
    const f = find(r, "socket_transport");
    expect(f.processes).toEqual(["dgxa100:1050"]);
    expect(r.processes[0]).toMatchObject({ net: "Socket", gdr: "n/a" });
  });

  it("49: GPUDirect RDMA disabled on RoCE", () => {
    const r = analyze("49-gdr-disabled-for-hca-roce.log");
    expect(find(r, "gdr_disabled").evidence).toEqual(["49-gdr-disabled-for-hca-roce.log:5"]);
    expect(r.processes[0]).toMatchObject({ net: "RoCE", gdr: "disabled" });
  });

  it("71: IB completion errors point at one peer, status 12 vendor err 129", () => {
    const r = analyze("71-error-ib-completion-status12-then-status5-vendor249.log");
    const f = find(r, "network_error");
    expect(f).toMatchObject({ peer: "172.36.143.59", count: 3 });
    expect(f.summary).toContain("status 12 vendor err 129");
    expect(f.summary).toContain("transport retry counter exceeded");
  });

  it("02: a healthy 8-rank IB+GDRDMA job that was torn down: nothing wrong", () => {
    const r = analyze("02-full-2.23.4-4node-ib-gdrdma-init-complete-perf-destroy.log");
    expect(kinds(r)).toEqual([]);
    expect(r.communicators).toEqual([
      { comm_id: "0x70fba02a8d314739", nranks: 8, ranks_seen: 8, collectives_max: 0, collectives_min: 0, last_op: null, torn_down: true },
    ]);
    expect(r.processes).toHaveLength(8);
    expect(r.processes.every((p) => p.net === "IB" && p.gdr === "enabled" && p.nccl_version === "2.23.4")).toBe(true);
  });

  it("every capture gives a report without throwing, and every finding is well formed", () => {
    const names = listFixtures("nccl", ".log");
    expect(names.length).toBe(66);
    const all = analyzeLogs(names.map((n) => ({ name: n, text: readCapture(`nccl/${n}`) })));
    for (const n of names) {
      const r = analyze(n);
      for (const f of r.findings) {
        expect(f.summary.length, n).toBeGreaterThan(20);
        expect(f.evidence.length, `${n} ${f.kind}`).toBeGreaterThan(0);
        for (const e of f.evidence) expect(e.startsWith(`${n}:`), e).toBe(true);
        expect(f.ranks.every((x) => Number.isInteger(x) && x >= 0)).toBe(true);
      }
    }
    // All logs at once: processes from every file, and the findings of the single files still there.
    expect(all.processes.length).toBeGreaterThan(40);
    expect(all.findings.some((f) => f.kind === "collective_mismatch" && f.op_count === "28c")).toBe(true);
  });
});
