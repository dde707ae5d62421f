/** Facts read from captures 50-73 (COLL lines, torn writes, WARN classes, error chains). */
import { expect } from "vitest";
import { kindCounts, ofKind } from "./capture.js";
import type { Check } from "./cases-init.js";

export const COLL_WARN_CASES: Record<string, Check> = {
  "50": (evs) => {
    const coll = ofKind(evs, "coll");
    expect(coll).toHaveLength(6);
    // Line 1 holds two headers: the event belongs to the second writer (pid 32629, [7]).
    expect(coll[0]).toMatchObject({ torn: true, pid: 32629, tid: 32629, cudaDev: 7, opCount: "0", count: 53, comm: "0x7f372005a260" });
    expect(coll[0]?.launcher).toBeUndefined();
    // The line that lost its header keeps its fields but no process.
    const orphan = coll.find((c) => c.headerless === true);
    expect(orphan).toMatchObject({ op: "Broadcast", opCount: "1", comm: "0x7f584405a260", pid: undefined, host: undefined });
    expect(coll.every((c) => c.op === "Broadcast" && c.nranks === 8 && c.root === 0)).toBe(true);
    expect(coll.map((c) => c.datatype)).toEqual([4, 4, 6, 4, 6, 6]);
  },
  "51": (evs) => {
    const coll = ofKind(evs, "coll");
    expect(coll.map((c) => c.opCount)).toEqual(["1a", "1a", "1b", "1b", "1c", "1c", "1d"]);
    expect(coll.every((c) => c.op === "AllReduce" && c.nranks === 2 && c.datatype === 7 && c.redOp === 0)).toBe(true);
    expect(new Set(coll.map((c) => `${c.tid}:${c.comm}`))).toEqual(new Set(["13922:0x7f0c741162f0", "13923:0x7f0c7410f0e0"]));
    expect(coll[0]).toMatchObject({ sendbuff: "0x10048f82700", recvbuff: "0x10048f82800", count: 64, stream: "0x7f0c74002f00" });
  },
  "53": (evs) => {
    const coll = ofKind(evs, "coll");
    expect(coll.map((c) => `${c.op}:${c.opCount}`)).toEqual(["Send:12", "Send:14", "Send:16", "Send:18", "Send:d60", "Send:d62", "Recv:d60"]);
    expect(coll.filter((c) => c.op === "Send").every((c) => c.recvbuff === null && typeof c.sendbuff === "string")).toBe(true);
    expect(coll[6]).toMatchObject({ sendbuff: null, recvbuff: "0x7f5176000000", root: 1, comm: "0x7f5128002e10" });
    expect(new Set(coll.map((c) => c.comm))).toEqual(new Set(["0x7f5128002e10", "0x7f516c002e10"]));
  },
  "55": (evs) => {
    const coll = ofKind(evs, "coll");
    expect(coll).toHaveLength(4);
    expect(coll.every((c) => c.nranks === 1 && c.opCount === "0" && c.count === 33554432 && c.stream === "0x5631f0021140")).toBe(true);
    expect(coll[0]?.host).toBe("ip-172-31-54-74");
  },
  "56": (evs) => {
    const coll = ofKind(evs, "coll");
    expect(coll.map((c) => `${c.pid}:${c.op}:${c.opCount}`)).toEqual([
      "191370:AllGather:d",
      "191369:ReduceScatter:e",
      "191369:AllGather:f",
      "191370:ReduceScatter:e",
      "191370:AllGather:f",
      "191369:AllReduce:10",
      "191369:AllReduce:11",
    ]);
    expect(coll[5]).toMatchObject({ count: 1, nranks: 2 });
  },
  "58": (evs) => {
    // Only INFO "Call to connect returned Connection refused, retrying" before the cut WARN line.
    expect(evs).toEqual([]);
  },
  "59": (evs) => {
    expect(evs.every((e) => e.launcherRank === 155 && e.launcher?.kind === "tag" && e.pid === 5330)).toBe(true);
    const ch = ofKind(evs, "channel");
    expect(ch.map((c) => [c.transport, c.from, c.to, c.dir])).toEqual([
      ["P2P", 5, 6, undefined],
      ["P2P", 5, 4, undefined],
      ["NET", 2, 5, "receive"],
      ["P2P", 5, 4, undefined],
    ]);
    expect(ofKind(evs, "warn")[0]).toMatchObject({ warnKind: "ib_qp_error", call: "ibv_modify_qp", error: "Invalid argument" });
    expect(ofKind(evs, "warn")[0]?.hca).toBeUndefined(); // 2.5 names no device
    expect(ofKind(evs, "retcode").map((r) => r.code)).toEqual([2, 2, 2, 2, 2, 2, 2]);
    expect(ofKind(evs, "tree")[0]?.trees.map((t) => t.up)).toEqual([4, 1, 4, -1]);
  },
  "61": (evs) => {
    expect(evs).toHaveLength(1);
    expect(ofKind(evs, "pt_error")[0]).toMatchObject({
      what: "ops_failed",
      src: "ProcessGroupNCCL.cpp:455",
      ncclVersion: "2.14.3",
      ncclError: "ncclRemoteError",
      reason: "remote process exited or there was a network error",
      lastError: { warnKind: "ib_completion_error", peer: "11.214.147.122", peerPort: 39138, ibStatus: 12, vendorErr: 129 },
    });
  },
  "62": (evs) => {
    const w = ofKind(evs, "warn");
    expect(w.map((e) => e.warnKind)).toEqual(["connection_reset", "other", "connection_closed"]);
    expect(w[0]).toMatchObject({ call: "recv", peer: "10.200.84.247", peerPort: 58355, error: "Broken pipe" });
    expect(w[2]).toMatchObject({
      peer: "a100-st-p4d24xlarge-22.luciodelelis-92732890-0458-4f76-8369-c4fee80b23e7.pcluster",
      peerPort: 47861,
      tid: 183181,
    });
    expect(ofKind(evs, "retcode").every((r) => r.code === 6)).toBe(true);
  },
  "64": (evs) => {
    const w = ofKind(evs, "warn");
    expect(w.map((e) => e.warnKind)).toEqual(["connect_failed", "system_error", "connection_closed", "other"]);
    expect(w[0]).toMatchObject({ peer: "10.0.0.2", peerPort: 45763, error: "Software caused connection abort" });
    expect(w[2]).toMatchObject({ peer: "node1", peerPort: 57557, file: "misc/socket.cc", line: 49 });
    expect(w[3]?.message).toBe("Socket recv failed while polling for opId=0x7f6f18cb7f40");
  },
  "65": (evs) => {
    expect(ofKind(evs, "warn").map((e) => [e.warnKind, e.cudaDev])).toEqual([
      ["other", 2],
      ["internal_error", 2],
    ]);
    expect(ofKind(evs, "retcode").map((r) => r.code)).toEqual([3, 3, 3, 3, 3, 3]);
  },
  "67": (evs) => {
    // A bootstrap connect failure with no WARN line at all: only the return-code chain.
    expect(kindCounts(evs)).toEqual({ retcode: 7 });
    expect(ofKind(evs, "retcode").map((r) => `${r.file}:${r.line}`)).toEqual([
      "misc/socket.cc:564",
      "misc/socket.cc:615",
      "bootstrap.cc:270",
      "init.cc:1303",
      "group.cc:64",
      "group.cc:422",
      "group.cc:106",
    ]);
    expect(ofKind(evs, "retcode")[4]).toMatchObject({ context: "Async thread", tid: 219889 });
  },
  "68": (evs) => {
    const w = ofKind(evs, "warn");
    expect(w.map((e) => [e.host, e.peer, e.peerPort])).toEqual([
      ["H100-2", "fe80::966d:ae03:8b:df78%ib0", 53249],
      ["H100-1", "fe80::966d:ae03:8b:df50%ib0", 44413],
      ["H100-5", "fe80::966d:ae03:9c:f5f8%ib0", 39391],
    ]);
    expect(w.every((e) => e.warnKind === "ib_completion_error" && e.ibStatus === 4 && e.vendorErr === 81 && e.ibDir === "Send")).toBe(true);
    expect(w[0]).toMatchObject({ ibOpcode: 32564, ibLen: 32564, file: "transport/net_ib.cc", line: 1295 });
    expect(ofKind(evs, "retcode").filter((r) => r.context === "Proxy Thread")).toHaveLength(2);
  },
  "70": (evs) => {
    const w = ofKind(evs, "warn");
    expect(w.map((e) => [e.peerPort, e.ibOpcode])).toEqual([
      [54862, 0],
      [54862, 32616],
      [49892, 32616],
    ]);
    expect(w.every((e) => e.ibStatus === 12 && e.vendorErr === 129 && e.ibDir === "Recv" && e.peer === "10.216.210.236")).toBe(true);
    expect(w[0]).toMatchObject({ localGid: "fd00:1148:9000:5000:4:200:3:ff22", remoteGid: "fd00:1148:9000:5000:4:200:3:ff1f" });
  },
  "71": (evs) => {
    const w = ofKind(evs, "warn");
    expect(w.map((e) => [e.ibStatus, e.vendorErr, e.ibOpcode, e.ibLen])).toEqual([
      [12, 129, 129, 65536],
      [5, 249, 32656, 32659],
      [5, 249, 32656, 32659],
    ]);
    expect(w[0]).toMatchObject({ peer: "172.36.143.59", peerPort: 44206, localGid: "::ffff:29.87.88.182", remoteGid: "::ffff:29.87.4.221" });
  },
  "73": (evs) => {
    // `Last error:` alone on its row: the error is on the next row (analyze joins them; parse/unwrap.ts).
    expect(ofKind(evs, "pt_error").map((e) => e.what)).toEqual(["dist_backend_error", "nccl_error", "last_error"]);
    expect(ofKind(evs, "pt_error")[2]?.reason).toBeUndefined();
    expect(ofKind(evs, "pt_error")[0]).toMatchObject({
      ncclVersion: "2.21.5",
      reason: "remote process exited or there was a network error",
    });
    expect(ofKind(evs, "pt_error")[1]?.ncclError).toBe("ncclRemoteError");
    expect(ofKind(evs, "warn")[0]).toMatchObject({
      headerless: true,
      warnKind: "connection_reset",
      call: "recv",
      peer: "172....",
      peerPort: 33759,
      error: "Connection reset by peer",
    });
  },
};
