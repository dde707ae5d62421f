/**
 * Unit tests of the NCCL line forms. Lines are built from NCCL's own format strings
 * (init.cc, enqueue.cc, net_ib.cc, debug.cc) with made-up values, for forms that no capture has.
 */
import { describe, expect, it } from "vitest";
import { NCCL_DATATYPES, NCCL_REDOPS } from "../../../../../collectors/nccl/logs/parse/coll.js";
import { splitCommKey } from "../../../../../collectors/nccl/logs/parse/init.js";
import { MAX_LINE, parseLine, parseText } from "../../../../../collectors/nccl/logs/parse/line.js";

const H = "n1:10:11 [2] NCCL INFO ";

describe("Init COMPLETE / START in every historical form", () => {
  it("2.4: comm, rank, nranks, cudaDev, nvmlDev only", () => {
    const ev = parseLine(`${H}comm 0x7f00 rank 15 nranks 64 cudaDev 0 nvmlDev 0 - Init COMPLETE`);
    expect(ev).toMatchObject({ kind: "init", phase: "complete", comm: "0x7f00", rank: 15, nranks: 64, commCudaDev: 0, nvmlDev: 0 });
    expect(ev?.kind === "init" && ev.commId).toBeUndefined();
  });

  it("2.2x with function name; 64-bit commId stays a string", () => {
    const ev = parseLine(`${H}ncclCommInitRankConfig comm 0x1 rank 0 nranks 2 cudaDev 2 nvmlDev 3 busId c8000 commId 0xffffffffffffffff - Init COMPLETE`);
    expect(ev).toMatchObject({ func: "ncclCommInitRankConfig", busId: "c8000", commId: "0xffffffffffffffff", nvmlDev: 3 });
  });

  it("split communicators: parent, splitCount (<= 2.27) or childCount (2.28+), color, key; `key 1- Init START` has no blank", () => {
    const start = parseLine(
      `${H}ncclCommSplit comm 0x55aa rank 1 nranks 4 cudaDev 2 nvmlDev 2 busId 1b000 parent 0x55bb splitCount 3 color 7 key 1- Init START`,
    );
    expect(start).toMatchObject({ kind: "init", phase: "start", func: "ncclCommSplit", parent: "0x55bb", splitCount: 3, color: 7, key: 1 });
    const done = parseLine(
      `${H}ncclCommSplit comm 0x55aa rank 1 nranks 4 cudaDev 2 nvmlDev 2 busId 1b000 parent 0x55bb childCount 2 color -1 key 0 - Init COMPLETE`,
    );
    expect(done).toMatchObject({ phase: "complete", splitCount: 2, color: -1, key: 0 });
    expect(done?.kind === "init" && done.commId).toBeUndefined();
  });

  it("splitCommKey is built from the parent's commId, the count and the color", () => {
    expect(splitCommKey("0x49bbd7790311d5eb", 3, 7)).toBe("0x49bbd7790311d5eb/split3/color7");
    expect(splitCommKey("0xa", 1, 0)).not.toBe(splitCommKey("0xa", 1, 1));
  });

  it("2.29 `[Rank 0] ` message prefix", () => {
    expect(parseLine(`${H}[Rank 0] ncclCommInitRank comm 0x55 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 80 commId 0x2ef1 - Init START`)).toMatchObject({
      kind: "init",
      phase: "start",
      rank: 0,
      commId: "0x2ef1",
    });
  });

  it("an init line cut before its suffix is not mistaken for a comm summary", () => {
    expect(parseLine(`${H}comm 0x55 rank 5 nranks 16 cudaDev 5 nvmlDev 5 busId d1000 commId 0x9ad9 -`)).toBeUndefined();
    expect(parseLine(`${H}comm 0x5aae1d0 rank 0 nRanks 8 nNodes 4 localRanks 2 localRank 0 MNNVL 0`)).toMatchObject({
      kind: "comm_info",
      nranks: 8,
      nNodes: 4,
      localRanks: 2,
    });
  });
});

describe("teardown", () => {
  it.each([
    ["Abort START", "abort", "start"],
    ["Abort COMPLETE", "abort", "complete"],
    ["Destroy START", "destroy", "start"],
    ["Destroy COMPLETE", "destroy", "complete"],
  ])("%s", (suffix, what, phase) => {
    expect(parseLine(`${H}comm 0x7f00 rank 3 nranks 8 cudaDev 2 busId 1000 - ${suffix}`)).toMatchObject({
      kind: "teardown",
      what,
      phase,
      comm: "0x7f00",
      rank: 3,
      nranks: 8,
      commCudaDev: 2,
      busId: "1000",
    });
  });
});

describe("COLL lines", () => {
  const line = (op: string, rest = ""): string =>
    `${H}${op}: opCount 2a sendbuff 0x10 recvbuff (nil) count 1024 datatype 9 op 2 root 3 comm 0xabc [nranks=16] stream 0xdef${rest}`;

  it.each(["AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce", "Send", "Recv", "AlltoAll", "Gather", "Scatter"])("%s", (op) => {
    expect(parseLine(line(op))).toMatchObject({
      kind: "coll",
      op,
      opCount: "2a",
      sendbuff: "0x10",
      recvbuff: null,
      count: 1024,
      datatype: 9,
      redOp: 2,
      root: 3,
      comm: "0xabc",
      nranks: 16,
      stream: "0xdef",
      host: "n1",
      pid: 10,
      tid: 11,
      cudaDev: 2,
    });
  });

  it("extra or reordered fields (RCCL `task N globalrank N`, a `size` field) are read by key", () => {
    expect(parseLine(line("AllReduce", " task 3 globalrank 7"))).toMatchObject({ comm: "0xabc", stream: "0xdef" });
    const sized = parseLine(`${H}AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x2 count 4 size 16 datatype 7 op 0 comm 0x3 [nranks=2] stream 0x4`);
    expect(sized).toMatchObject({ count: 4, datatype: 7, redOp: 0, comm: "0x3", nranks: 2, stream: "0x4" });
    // NCCL 2.0 printed no op name: not recognised (documented limitation).
    expect(parseLine(`${H}opCount 1 sendbuff 0x1 recvbuff 0x2 count 4 size 16 datatype 7 op 0 comm 0x3 [nranks=2] stream 0x4`)).toBeUndefined();
  });

  it("numbers beyond 2^53 stay strings or are left out, never NaN or rounded", () => {
    const ev = parseLine(
      `${H}AllReduce: opCount ffffffffffffffffff sendbuff 0x1 recvbuff 0x2 count 123456789012345678 datatype 7 op 0 root 0 comm 0x3 [nranks=2] stream 0x4`,
    );
    expect(ev).toMatchObject({ opCount: "ffffffffffffffffff", comm: "0x3", nranks: 2 });
    expect(ev?.kind === "coll" && ev.count).toBeUndefined();
    expect(JSON.stringify(ev)).not.toContain("NaN");
  });

  it("tuning and table lines that merely start with an op name are not COLL lines", () => {
    expect(parseLine(`${H}AllReduce: 1048576 Bytes -> Algo 1 proto 2 time 33.5`)).toBeUndefined();
    expect(parseLine(`${H}    AllReduce |   14.4/  3.6|   19.4/  8.4|`)).toBeUndefined();
  });

  it("datatype and red-op names", () => {
    expect(NCCL_DATATYPES[7]).toBe("float32");
    expect(NCCL_DATATYPES[9]).toBe("bfloat16");
    expect(NCCL_REDOPS[0]).toBe("sum");
  });
});

describe("transport, GDR and topology", () => {
  it("NET/IB device list with RoCE, SHARP and relaxed ordering; OOB interface", () => {
    expect(parseLine(`${H}NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [2]mlx5_2:1/IB/SHARP [RO]; OOB ib0:10.0.0.1<0>`)).toMatchObject({
      kind: "net",
      net: "IB",
      what: "using",
      relaxedOrdering: true,
      oob: "ib0:10.0.0.1<0>",
      devices: [
        { name: "mlx5_0", port: 1, linkLayer: "IB" },
        { name: "mlx5_1", linkLayer: "RoCE" },
        { name: "mlx5_2", sharp: true },
      ],
    });
  });

  it("GDR forms: per GPU (busId, cudaDev[nvmlDev], mode suffix) and per HCA with reason", () => {
    expect(parseLine(`${H}GPU Direct RDMA Enabled for GPU 0[0] / HCA 0 (distance 4 <= 5), read 1 mode Default`)).toMatchObject({
      kind: "gdr",
      enabled: true,
      scope: "gpu",
      gpu: "0[0]",
      hca: 0,
      distance: 4,
      limit: 5,
      read: true,
    });
    expect(parseLine(`${H}GPU Direct RDMA Disabled for GPU ca000 / HCA 0 (distance 7 > 4)`)).toMatchObject({
      enabled: false,
      gpu: "ca000",
      distance: 7,
      limit: 4,
    });
    expect(parseLine(`${H}NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no module)`)).toMatchObject({
      enabled: false,
      scope: "hca",
      hcaName: "mlx5_0",
      reason: "no module",
    });
  });

  it("2.28 `Connected all rings, use ring PXN 0 GDR 1`", () => {
    expect(parseLine(`${H}Connected all rings, use ring PXN 0 GDR 1`)).toMatchObject({ kind: "connected", what: "rings", pxn: false, gdr: true });
  });

  it("ring order and trees", () => {
    expect(parseLine(`${H}Channel 01/02 :    0   1   3   2`)).toMatchObject({ kind: "ring", channel: 1, nChannels: 2, order: [0, 1, 3, 2] });
    expect(parseLine(`${H}Trees [0] 1/-1/-1->0->-1 [1] -1/-1/-1->0->1`)).toMatchObject({
      kind: "tree",
      trees: [
        { channel: 0, rank: 0, up: -1, down: [1] },
        { channel: 1, rank: 0, up: 1, down: [] },
      ],
    });
  });
});

describe("robustness", () => {
  it("never throws and returns undefined on junk, NUL bytes, binary and huge lines", () => {
    const junk = ["", "\u0000\u0000 NCCL \u0000", " NCCL ".repeat(10000), "\uffff\ud800 NCCL INFO", ":::: [] NCCL WARN", "x".repeat(1 << 20)];
    for (const j of junk) expect(() => parseLine(j)).not.toThrow();
    expect(parseLine("x".repeat(1 << 20) + ` ${H}Trees [0] 1/-1/-1->0->-1`)).toBeUndefined(); // cut at MAX_LINE
    expect(MAX_LINE).toBeGreaterThanOrEqual(4096);
    expect(parseLine(`h:1:2 [0] NCCL INFO AllReduce: opCount ${"f".repeat(1 << 20)}`)).toBeUndefined();
  });

  it("NCCL_IB_DISABLE set by environment to 1 means no IB (as 'No device found'); to 0 means nothing", () => {
    expect(parseLine(`${H}NCCL_IB_DISABLE set by environment to 1.`)).toMatchObject({ kind: "net", net: "IB", what: "no_device" });
    expect(parseLine(`${H}NCCL_IB_DISABLE set by environment to 0.`)).toBeUndefined();
  });

  it("NCCL WARN with no host:pid:tid header (a line quoted alone, a `host [dev]` prefix) is a warning of no known process", () => {
    const ev = parseLine("NCCL WARN Mismatched collective detected, please check your collective calls at and around rank 3.");
    expect(ev).toMatchObject({ kind: "warn", warnKind: "collective_mismatch", mismatchRank: 3 });
    expect(ev?.pid).toBeUndefined();
    expect(parseLine("node-a [0] NCCL WARN Cuda failure 'out of memory'")).toMatchObject({ kind: "warn", warnKind: "cuda_error", error: "out of memory" });
    expect(parseLine("init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective calls at and around rank 39.")).toMatchObject({
      warnKind: "collective_mismatch",
      mismatchRank: 39,
    });
    expect(parseLine("the NCCL WARN lines were many")).toBeUndefined();
  });

  it("unknown NCCL INFO lines and ordinary output give nothing", () => {
    expect(parseText(`${H}P2P Chunksize set to 131072\nEpoch 3 loss 1.2\n${H}cudaDriverVersion 12040\n`)).toEqual([]);
  });
});

describe("NCCL 2.1/2.2: the level without `NCCL`", () => {
  it("WARN and INFO lines keep host:pid:tid, device and the launcher's rank", () => {
    expect(parseLine("[1,1]<stdout>:g2-nasp:5224:5292 [1] misc/enqueue.cu:150 WARN Cuda failure 'invalid device function'")).toMatchObject({
      kind: "warn",
      warnKind: "cuda_error",
      error: "invalid device function",
      host: "g2-nasp",
      pid: 5224,
      tid: 5292,
      cudaDev: 1,
      file: "misc/enqueue.cu",
      line: 150,
      launcherRank: 1,
    });
    expect(parseLine("[1,1]<stdout>:g2-nasp:5224:5292 [1] INFO misc/enqueue.cu:205 -> 1")).toMatchObject({
      kind: "retcode",
      file: "misc/enqueue.cu",
      line: 205,
      code: 1,
      host: "g2-nasp",
      pid: 5224,
      cudaDev: 1,
    });
    expect(parseLine("g2-nasp:5223:5289 [0] INFO Ring 01 :    0   1")).toMatchObject({ kind: "ring", channel: 1, host: "g2-nasp", pid: 5223 });
  });

  it("other loggers' INFO/WARN words are not a header", () => {
    expect(parseLine("2019-01-01 10:00:00 [main] INFO Starting job 3")).toBeUndefined();
    expect(parseLine("I0101 12:00:00.1 train.py:12] WARN learning rate 0.1")).toBeUndefined();
    expect(parseLine("job:1:2 INFO x -> 2")).toBeUndefined();
  });
});
