/**
 * A process's transport as the live series give it (state/transport.ts transportOf): NCCL 2.28's
 * `Using network Socket` after its IB plugin failed to start (the real H100 VM capture) is what NCCL
 * would use between nodes, not traffic: a single-node job whose channels go over P2P says nothing
 * about sockets (no false RingwatchNcclSocketTransport); its channels through NET/Socket do. And
 * analyze's socket_transport on one host: only where the job is seen to reach other nodes.
 */
import { describe, expect, it } from "vitest";
import { parseLine } from "../../../../../collectors/nccl/logs/parse/line.js";
import { Tracker } from "../../../../../collectors/nccl/logs/state/tracker.js";
import { socketPicked, transportOf } from "../../../../../collectors/nccl/logs/state/transport.js";
import { listFixtures, readCapture } from "../../../../helpers/fixtures.js";
import { analyzeLogs } from "../../../../../collectors/nccl/analyze/analyze.js";

function process(lines: readonly string[]): ReturnType<typeof transportOf> & { picked: boolean } {
  const t = new Tracker();
  lines.forEach((line, i) => {
    const ev = parseLine(line);
    if (ev) t.ingest(ev, { source: "l", lineNo: i + 1 });
  });
  const p = [...t.processes.values()][0];
  if (p === undefined) throw new Error("no process");
  return { ...transportOf(p), picked: socketPicked(p) };
}

describe("transportOf and `Using network Socket`", () => {
  const capture = readCapture("nccl-device/h100-2026-11-24/nccl-vm-609.log").split("\n");
  const init = capture.slice(0, capture.findIndex((l) => l.includes("Using network Socket")) + 1);

  it("the capture's init (IB plugin failed, Socket picked), then a channel over P2P: picked, but no socket transport", () => {
    expect(init.some((l) => l.includes("Failed to initialize NET plugin IB"))).toBe(true);
    expect(process([...init, "vm:609:609 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM"])).toEqual({ net: "none", gdr: "unknown", picked: true });
  });

  it("the capture whole: its channels go through NET/Socket", () => {
    expect(process(capture)).toMatchObject({ net: "Socket", picked: true });
  });
});

describe("analyze's socket finding on one host", () => {
  const proc = (pid: number, dev: number): string[] => [
    `node-a:${pid}:${pid} [${dev}] NCCL INFO Failed to initialize NET plugin IB`,
    `node-a:${pid}:${pid} [${dev}] NCCL INFO Using network Socket`,
  ];
  const init = (pid: number, dev: number, rank: number, nranks: number): string =>
    `node-a:${pid}:${pid} [${dev}] NCCL INFO comm 0x5${dev} rank ${rank} nranks ${nranks} cudaDev ${dev} nvmlDev ${dev} busId ${dev}8000 commId 0x77 - Init COMPLETE`;
  const kinds = (lines: readonly string[]): string[] => analyzeLogs([{ name: "l", text: lines.join("\n") }]).findings.map((f) => f.kind);

  it("two ranks of a two-rank communicator on node-a, sockets picked, no channel over them: healthy", () => {
    expect(kinds([...proc(11, 0), ...proc(12, 1), init(11, 0, 0, 2), init(12, 1, 1, 2)])).toEqual([]);
  });

  it("the same two ranks of a 16-rank communicator (the job reaches other nodes): socket_transport", () => {
    expect(kinds([...proc(11, 0), ...proc(12, 1), init(11, 0, 0, 16), init(12, 1, 1, 16)])).toEqual(["socket_transport"]);
  });

  const ibOff = (pid: number, dev: number): string[] => [
    `node-a:${pid}:${pid} [${dev}] NCCL INFO NCCL_IB_DISABLE set by environment to 1.`,
    `node-a:${pid}:${pid} [${dev}] NCCL INFO NET/Socket : Using [0]eth0:192.168.0.9<0>`,
    `node-a:${pid}:${pid} [${dev}] NCCL INFO Using network Socket`,
  ];
  const p2pOff = (pid: number, dev: number): string =>
    `node-a:${pid}:${pid} [${dev}] NCCL INFO Could not enable P2P between dev ${dev}(=300000) and dev 0(=100000)`;

  it("IB disabled by the environment on one host, a CUDA WARN beside it, the other process seen only in a line no reader tells (pasted 326): healthy", () => {
    const cuda = "node-a:11:11 [0] misc/cudawrap.cc:90 NCCL WARN Failed to find CUDA library in (null) (NCCL_CUDA_PATH=(null))";
    expect(kinds([cuda, ...ibOff(11, 0), p2pOff(12, 1)])).toEqual([]);
    // With the second process unseen, one process alone does not tell one host.
    expect(kinds([cuda, ...ibOff(11, 0)])).toEqual(["socket_transport"]);
    // A WARN of the network (libibverbs missing) still says the job reaches other nodes.
    expect(kinds(["node-a:11:11 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]", ...ibOff(11, 0), p2pOff(12, 1)])).toEqual([
      "socket_transport",
    ]);
  });

  it("NET/IB's `Unable to open device` on a host that then finds no device (pasted 391): no sign of other nodes", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("391-")) ?? "";
    expect(analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]).findings.filter((f) => f.severity !== "info")).toEqual([]);
  });

  it("a second host named only by the last line, cut after its header (pasted 40): the job spans nodes", () => {
    expect(kinds([...ibOff(11, 0), ...ibOff(12, 1), "node-b:84:206"])).toEqual(["socket_transport"]);
    expect(kinds([...ibOff(11, 0), ...ibOff(12, 1), "node-a:84:206 [2]"])).toEqual([]);
    // A time of day, a date, an elapsed time or a file:line:column is no header; nor is a cut header mid-log.
    for (const last of ["12:30:45", "[rank0]: 2024-05-01T12:30:45", "Elapsed: 00h:01:23", "train.py:120:5", "eta: 5m:30:10"])
      expect(kinds([...ibOff(11, 0), ...ibOff(12, 1), last]), last).toEqual([]);
    expect(kinds([...ibOff(11, 0), "node-b:84:206", ...ibOff(12, 1)])).toEqual([]);
  });
});

describe("channel lines pasted without their host:pid (pasted 322, NCCL 2.5.7 over RoCE)", () => {
  const kinds = (lines: readonly string[]): string[] => analyzeLogs([{ name: "l", text: lines.join("\n") }]).findings.map((f) => f.kind);
  const ring = (via: string): string => ` [0] NCCL INFO Ring 00 : 15[41000] -> 0[1b000] [receive] via ${via}`;

  it("links through NET/IB without /GDRDMA: GPUDirect RDMA off, of no known process", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("322-")) ?? "";
    const r = analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]);
    expect(r.findings.map((f) => [f.kind, f.processes, f.evidence.length])).toEqual([["gdr_disabled", [], 2]]);
    expect(kinds([ring("NET/IB/0"), ring("NET/IB/0")])).toEqual(["gdr_disabled"]);
  });

  it("one such link with /GDRDMA, or over sockets, or P2P: nothing", () => {
    expect(kinds([ring("NET/IB/0"), ring("NET/IB/0/GDRDMA")])).toEqual([]);
    expect(kinds([ring("NET/Socket/0")])).toEqual([]);
    expect(kinds([" [0] NCCL INFO Ring 00 : 0[1b000] -> 1[1c000] via P2P/IPC"])).toEqual([]);
  });
});

describe("NCCL 2.3 over IB with a GPU that cannot do GPUDirect RDMA (pasted 382)", () => {
  it("GDR off `(not supported by GPU)` is a note; the untagged NET ring line `0 -> 1` is rank 1's (printed by the receiver)", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("382-")) ?? "";
    const r = analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]);
    expect(r.findings.map((f) => [f.kind, f.severity, f.ranks])).toEqual([
      ["nccl_error", "critical", [1]],
      ["gdr_disabled", "info", [0, 1]],
    ]);
    // `(no module or not supported by GPU)` may be a missing module: still a warning.
    const noModule = analyzeLogs([
      {
        name: "l",
        text: [
          "a:1:2 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for GPU 0[1] / HCA 2 'mlx5_2' (no module or not supported by GPU)",
          "a:1:2 [0] NCCL INFO Channel 00/0 : 1[1] -> 0[0] [receive] via NET/IB/2",
        ].join("\n"),
      },
    ]);
    expect(noModule.findings.map((f) => [f.kind, f.severity])).toEqual([["gdr_disabled", "warning"]]);
  });
});

describe("second review's cases: whose lines count toward one host", () => {
  const kinds = (lines: readonly string[]): string[] => analyzeLogs([{ name: "l", text: lines.join("\n") }]).findings.map((f) => `${f.kind} ${f.severity}`);
  it("a channel line without its host:pid is no line of the process before it", () => {
    const r = analyzeLogs([
      {
        name: "l",
        text: [
          "nodeA:100:100 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>",
          " [0] NCCL INFO Channel 00/0 : 15[41000] -> 8[1b000] [receive] via NET/IB/0",
        ].join("\n"),
      },
    ]);
    expect(r.findings.map((f) => [f.kind, f.processes, f.ranks])).toEqual([["gdr_disabled", [], []]]);
  });

  it("hosts NCCL printed as `:` are no one host: two processes over sockets are a socket_transport", () => {
    const proc = (pid: number, tid: number, rank: number): string[] => [
      `::${pid}:${tid} [0] NCCL INFO NET/IB : No device found.`,
      `::${pid}:${tid} [0] NCCL INFO Using network Socket`,
      `::${pid}:${tid} [0] NCCL INFO comm 0x55d0 rank ${rank} nranks 2 cudaDev 0 nvmlDev 0 busId 100000 commId 0x1234 - Init COMPLETE`,
    ];
    expect(kinds([...proc(16674, 17023, 0), ...proc(9120, 9301, 1)])).toEqual(["socket_transport warning"]);
  });

  it("a last line that is a time with a unit (`ETA: 1h:30:45`, `epoch3:10:20`) is no host", () => {
    const one = (pid: number, dev: number): string[] => [
      `node-a:${pid}:${pid} [${dev}] NCCL INFO NCCL_IB_DISABLE set by environment to 1.`,
      `node-a:${pid}:${pid} [${dev}] NCCL INFO Using network Socket`,
    ];
    for (const last of ["ETA: 1h:30:45", "loss: epoch3:10:20"]) expect(kinds([...one(1100, 0), ...one(1200, 1), last]), last).toEqual([]);
  });
});
