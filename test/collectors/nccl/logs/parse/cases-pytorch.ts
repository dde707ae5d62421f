/** Facts read from captures 74-98 (PyTorch watchdog, heartbeat, dump, desync, Flight Recorder, RAS). */
import { expect } from "vitest";
import { kindCounts, ofKind } from "./capture.js";
import type { Check } from "./cases-init.js";

export const PYTORCH_CASES: Record<string, Check> = {
  "74": (evs) => {
    const t = ofKind(evs, "pt_watchdog_timeout");
    expect(t.map((e) => e.pgRank)).toEqual([1, 3, 2, 6, 7]);
    expect(t.every((e) => e.seq === 469508 && e.opType === "ALLREDUCE" && e.timeoutMs === 1800000)).toBe(true);
    expect(t.every((e) => e.numelIn === undefined && e.launcherRank === undefined && e.src === "ProcessGroupNCCL.cpp:737")).toBe(true);
    expect(t.map((e) => e.ranForMs)).toEqual([1802212, 1802211, 1802212, 1802210, 1802220]);
  },
  "76": (evs) => {
    expect(evs.map((e) => e.kind)).toEqual(["pt_watchdog_timeout", "pt_error", "pt_error"]);
    expect(evs.every((e) => e.launcherRank === 1)).toBe(true);
    expect(ofKind(evs, "pt_watchdog_timeout")[0]).toMatchObject({
      seq: 44,
      opType: "ALLREDUCE",
      numelIn: 6832129,
      numelOut: 6832129,
      timeoutMs: 1800000,
      ranForMs: 1800772,
    });
    expect(evs[0]?.ts).toBeUndefined(); // `[E ProcessGroupNCCL.cpp:523]` carries no time
    expect(ofKind(evs, "pt_error").map((e) => e.what)).toEqual(["ops_failed", "taking_down"]);
  },
  "77": (evs) => {
    expect(evs.map((e) => e.kind)).toEqual(["pt_heartbeat", "pt_dump", "pt_heartbeat"]);
    expect(evs[0]).toMatchObject({ what: "monitor_timeout", workMetaListSize: 1, launcherRank: 144, pgId: 0, pgRank: 144 });
    expect(evs[2]).toMatchObject({ what: "watchdog_stuck", stuckSeconds: 600, severity: "F" });
  },
  "79": (evs) => {
    const hb = ofKind(evs, "pt_heartbeat").filter((e) => e.what === "monitor_timeout");
    // [rank4] is rank 0 of sub-group PG 5.
    expect(hb.map((e) => [e.launcherRank, e.pgId, e.pgRank, e.workMetaListSize])).toEqual([
      [0, 5, 0, 3],
      [4, 5, 0, 2],
    ]);
    expect(ofKind(evs, "pt_dump")).toHaveLength(2);
  },
  "80": (evs) => {
    // `[80746] ` is a log-viewer line number; `[rank0]:` gives the rank.
    expect(evs.map((e) => e.launcherRank)).toEqual([0, 4, 0, 3]);
    const ws = ofKind(evs, "pt_work_status");
    expect(ws.map((e) => [e.pgId, e.pgRank, e.failedSeq, e.lastEnqueued, e.lastCompleted])).toEqual([
      [1, 0, 1580, 1582, 1579],
      [1, 3, 1580, 1582, 1579],
    ]);
    expect(ofKind(evs, "pt_watchdog_timeout")[0]).toMatchObject({ seq: 1580, numelIn: 466119168, ts: "321 02:07:08.408271257" });
  },
  "82": (evs) => {
    const ws = ofKind(evs, "pt_work_status");
    expect(ws.every((e) => e.pgId === 0 && e.pgGuid === "0" && e.pgName === "default_pg")).toBe(true);
    expect(ws.map((e) => [e.launcherRank, e.failedSeq, e.lastEnqueued, e.lastCompleted])).toEqual([
      [1, 808, 811, 807],
      [0, 808, 811, 807],
    ]);
    expect(ofKind(evs, "pt_watchdog_timeout").map((e) => e.launcherRank)).toEqual([1, 0, 2]);
  },
  "83": (evs) => {
    expect(ofKind(evs, "pt_heartbeat")[0]).toMatchObject({ what: "watchdog_stuck", stuckSeconds: 480, launcherRank: 7, pgName: "default_pg" });
    expect(ofKind(evs, "pt_watchdog_timeout")[0]).toMatchObject({
      launcherRank: 2,
      seq: 120049,
      opType: "_ALLGATHER_BASE",
      numelIn: 16384000,
      numelOut: 131072000,
      timeoutMs: 1800000,
    });
  },
  "85": (evs) => {
    const d = ofKind(evs, "pt_dump");
    expect(d).toHaveLength(2);
    expect(d.every((e) => e.what === "dump_signal" && e.fromRank === 2 && e.lastEnqueued === 136 && e.lastCompleted === 136)).toBe(true);
    expect(d[0]?.launcherRank).toBe(5);
  },
  "86": (evs) => {
    const d = ofKind(evs, "pt_dump");
    expect(d.map((e) => [e.what, e.launcherRank])).toEqual([
      ["preparing_dump", 1],
      ["dump_signal", 7],
      ["dump_signal", undefined],
      ["preparing_dump", 7],
      ["dump_signal", 6],
      ["dump_signal", undefined],
    ]);
    // Hard-wrapped: the work numbers are on the continuation line, which has no rank.
    expect(d[2]).toMatchObject({ headerless: true, lastEnqueued: 9387, lastCompleted: 9386 });
    expect(d[1]?.lastEnqueued).toBeUndefined();
    expect(d[0]?.includeStackTrace).toBeUndefined();
  },
  "88": (evs) => {
    const t = ofKind(evs, "pt_watchdog_timeout");
    expect(t.map((e) => [e.launcherRank, e.via])).toEqual([
      [1, "watchdog"],
      [1, "blocking_wait"],
      [7, "watchdog"],
      [7, "blocking_wait"],
      [5, "watchdog"],
    ]);
    expect(t.every((e) => e.seq === 2521 && e.numelIn === 160672064 && e.timeoutMs === 600000)).toBe(true);
    expect(t[1]?.ranForMs).toBeUndefined();
  },
  "89": (evs) => {
    expect(ofKind(evs, "pt_dump").map((e) => e.what)).toEqual(["first_pg_dump", "dump_signal", "preparing_dump"]);
    expect(ofKind(evs, "pt_dump")[1]).toMatchObject({ fromLocal: true, lastEnqueued: 3755, lastCompleted: 3749 });
    expect(ofKind(evs, "pt_dump")[2]).toMatchObject({ includeStackTrace: true, src: "ProcessGroupNCCL.cpp:1628" });
  },
  "91": (evs) => {
    const coll = ofKind(evs, "coll");
    expect(coll.map((c) => `${c.pid}:${c.op}:${c.opCount}`)).toEqual([
      "45006:AllReduce:28c",
      "45006:AllReduce:28d",
      "45012:AllGather:28c",
      "45012:AllGather:28d",
    ]);
    expect(coll[2]).toMatchObject({ stream: "0x559c248a3630", comm: "0x559c24b55610", datatype: 0, nranks: 4 });
  },
  "93": (evs) => {
    const t = ofKind(evs, "pt_watchdog_timeout");
    expect(t.map((e) => [e.launcherRank, e.seq, e.opType])).toEqual([
      [2, 532339, "BROADCAST"],
      [1, 532339, "BROADCAST"],
      [0, 532341, "_ALLGATHER_BASE"],
    ]);
    // The terminal cut "NumelOut=5|164000": a number cut by the wrap is not reported.
    expect(t.map((e) => [e.numelIn, e.numelOut, e.timeoutMs])).toEqual([
      [5164000, undefined, undefined],
      [5164000, undefined, undefined],
      [513, undefined, undefined],
    ]);
  },
  "95": (evs) => {
    const d = ofKind(evs, "pt_desync");
    expect(d.map((e) => e.what)).toEqual([
      "report",
      "timeout_at",
      "finished_not_joined",
      "snapshot_seq",
      "snapshot_ranks",
      "snapshot_seq",
      "snapshot_ranks",
      "snapshot_seq",
      "snapshot_ranks",
    ]);
    expect(d[1]).toMatchObject({ ranks: [0], collective: "ALLREDUCE", seq: 315 });
    expect(d[2]).toMatchObject({ ranks: [7], seq: 182, nextSeq: 183 });
    expect(d.filter((e) => e.what === "snapshot_seq").map((e) => [e.seq, e.state])).toEqual([
      [182, "finished"],
      [315, "started"],
      [317, "started"],
    ]);
    expect(d.filter((e) => e.what === "snapshot_ranks").map((e) => [e.ranks, e.collective])).toEqual([
      [[7], "ALLREDUCE"],
      [[0, 1, 2], "ALLREDUCE"],
      [[3, 4, 5, 6], "_ALLGATHER_BASE"],
    ]);
    expect(ofKind(evs, "pt_work_status")[0]).toMatchObject({ failedSeq: 241, lastEnqueued: 315, lastCompleted: 183, pgName: "default_pg" });
  },
  "96": (evs) => {
    expect(evs).toEqual([
      expect.objectContaining({ kind: "pt_flight_recorder", what: "not_all_joined", seq: 31117 }),
      expect.objectContaining({ kind: "pt_flight_recorder", what: "missing_ranks", ranks: [3, 4, 5, 6, 7] }),
    ]);
  },
  "97": (evs) => {
    // The RAS report is not a log line form (ras/parse-text.ts reads it, see test/collectors/nccl/ras/parse-text.test.ts); parseLine recognises its version header.
    expect(evs).toEqual([expect.objectContaining({ kind: "version", version: "2.26.2", cuda: "12.6" })]);
  },
  "98": (evs) => {
    expect(kindCounts(evs)).toEqual({ version: 1, pt_watchdog_timeout: 1, pt_work_status: 1 });
    expect(ofKind(evs, "pt_watchdog_timeout")[0]).toMatchObject({ launcherRank: 118, seq: 2398459, numelIn: 8652160 });
    expect(ofKind(evs, "pt_work_status")[0]).toMatchObject({ failedSeq: 2398459, lastEnqueued: 2398578, lastCompleted: 2398458 });
  },
};
