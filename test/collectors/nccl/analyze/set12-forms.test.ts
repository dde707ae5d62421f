/**
 * Forms the twelfth blind set brought (test/fixtures/nccl-pasted 419, 421, 428, 429, 430, 427),
 * each from its real capture, with the lines around them that must stay as they were: the
 * watchdog's C++ frames pasted without its message, 2.0-2.4 WARNs quoted from their source
 * reference on, 2.0-2.3's `Call to connect failed`, a torchrun prefix template of its own, the
 * words for an interface NCCL could not find, and one host without libibverbs.
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../collectors/nccl/analyze/analyze.js";
import { parseLine } from "../../../../collectors/nccl/logs/parse/line.js";
import { parsePrefix } from "../../../../collectors/nccl/logs/parse/prefix.js";
import type { Finding } from "../../../../collectors/nccl/verdict/report.js";
import { listFixtures, readCapture } from "../../../helpers/fixtures.js";

const nameOf = (prefix: string): string => listFixtures("nccl-pasted", ".log").find((f) => f.startsWith(prefix)) ?? "";
const capture = (prefix: string): Finding[] => analyzeLogs([{ name: nameOf(prefix), text: readCapture(`nccl-pasted/${nameOf(prefix)}`) }]).findings;
const run = (lines: readonly string[]): Finding[] => analyzeLogs([{ name: "job.log", text: lines.join("\n") }]).findings;
const serious = (fs: readonly Finding[]): [string, number[]][] => fs.filter((f) => f.severity !== "info").map((f) => [f.kind, f.ranks]);

const TIMEOUT =
  "[rank3]:[E ProcessGroupNCCL.cpp:1182] [Rank 3] NCCL watchdog thread terminated with exception: [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLGATHER, NumelIn=1, NumelOut=4, Timeout(ms)=1800000) ran for 1800650 milliseconds before timing out.";
const FRAME =
  "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x1d2 (0x1554e9e0f8f2 in /x/torch/lib/libtorch_cuda.so)";

describe("the watchdog's C++ frames without its message", () => {
  it("419: a watchdog_timeout of no known work", () => {
    const fs = capture("419-");
    expect(serious(fs)).toEqual([["watchdog_timeout", []]]);
    expect(fs[0]?.seq).toBeUndefined();
    expect(fs[0]?.summary).toContain("its C++ stack (WorkNCCL::checkTimeout) is in these lines, its message");
  });

  it("beside the timeout's own line, the frames add nothing; a prefix's rank is kept", () => {
    expect(
      serious(run([TIMEOUT, FRAME, "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:525 (most recent call first):"])),
    ).toEqual([["watchdog_timeout", [3]]]);
    expect(serious(run([`[rank5]:${FRAME}`]))).toEqual([["watchdog_timeout", [5]]]);
  });

  it("other frames of ProcessGroupNCCL (a destructor, an abort) are no timeout", () => {
    expect(serious(run(["frame #3: c10d::ProcessGroupNCCL::~ProcessGroupNCCL() + 0x113 (0x7fa730e94233 in /x/libtorch_cuda_cpp.so)"]))).toEqual([]);
  });
});

describe("2.0-2.4 WARNs", () => {
  it("428: quoted from the source reference on, without host:pid or NCCL: a connect_failed of no process", () => {
    const line = readCapture(`nccl-pasted/${nameOf("428-")}`).split("\n")[0] ?? "";
    expect(parseLine(line)).toMatchObject({ kind: "warn", warnKind: "connect_failed", headerless: true, error: "Address family not supported by protocol" });
    expect(serious(capture("428-"))).toEqual([["network_error", []]]);
  });

  it("only NCCL's own sources of those releases, and only a WARN kind NCCL wrote: another C program's WARN is nothing", () => {
    for (const l of [
      "redis_client.c:301 WARN Call to connect failed : Connection refused",
      "gpu_monitor.c:55 WARN Cuda failure 'out of memory'",
      "db.c:12 WARN Connection timed out",
      "include/foo.h:3 WARN low disk space",
    ])
      expect(parseLine(l)).toBeUndefined();
    expect(parseLine("transport/net_socket.cu:101 WARN Call to connect failed : Connection refused")).toMatchObject({ warnKind: "connect_failed" });
  });

  it("a source reference must be all that stands before WARN", () => {
    for (const l of [
      "see include/socket.h:344 WARN Socket creation failed",
      "train.py:12 WARN low memory",
      "include/socket.h:x WARN Socket creation failed",
      "include/socket.h:344 WARN",
    ])
      expect(parseLine(l)).toBeUndefined();
    expect(parseLine("[1,0]<stderr>: misc/ibvwrap.cu:63 WARN Failed to open libibverbs.so[.1]")).toMatchObject({ warnKind: "ib_unavailable" });
  });

  it("421: `Call to connect failed : Connection refused` is a failed connect: one network_error with the closed connections", () => {
    const line = readCapture(`nccl-pasted/${nameOf("421-")}`).split("\n")[0] ?? "";
    expect(parseLine(line)).toMatchObject({ kind: "warn", warnKind: "connect_failed", host: "instance-fjhn02ur", pid: 454 });
    expect(serious(capture("421-")).map(([k]) => k)).toEqual(["network_error"]);
  });
});

describe("a torchrun prefix template of its own", () => {
  it("`[trainer0|0]:` is a prefix that names no rank (which number is which, the template alone says)", () => {
    expect(parsePrefix("[trainer0|0]:ncclInternalError: Internal check failed.", 0, 50, true)).toEqual({ end: 13, launcher: { kind: "torchrun" } });
    expect(parsePrefix("[trainer0|x]:text", 0, 17, true).end).toBe(0);
    expect(parsePrefix("[trainer|0]:text", 0, 16, true).end).toBe(0);
  });

  it("429: its `Last error:` row is joined to the next, and the words point at NCCL_SOCKET_IFNAME", () => {
    const fs = capture("429-");
    expect(serious(fs)).toEqual([["nccl_error", []]]);
    expect(fs[0]?.summary).toContain("last error: ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor AF_INET6(10)");
    expect(fs[0]?.summary).toContain("NCCL_SOCKET_IFNAME names no interface of this host");
  });

  it("427: `Bootstrap : no socket interface found` gets the same words; other errors do not", () => {
    expect(capture("427-")[0]?.summary).toContain("NCCL found no usable network interface for its bootstrap");
    expect(capture("412-")[0]?.summary).not.toContain("NCCL_SOCKET_IFNAME");
  });
});

describe("one host without libibverbs", () => {
  it("430: four ranks of one workstation, libibverbs missing, sockets selected: a note at info, nothing at warning", () => {
    const fs = capture("430-");
    expect(serious(fs)).toEqual([]);
    expect(fs.map((f) => [f.kind, f.severity])).toEqual([["socket_transport", "info"]]);
    expect(fs[0]?.summary).toContain("NCCL could not load libibverbs on ptv-gpu01");
  });

  it("the same processes with a channel through NET/Socket still move data over it: a warning", () => {
    const text = readCapture(`nccl-pasted/${nameOf("430-")}`);
    const fs = analyzeLogs([{ name: "x.log", text: `${text}\n[1,0]<stdout>:ptv-gpu01:11007:11098 [0] NCCL INFO Ring 00 : 0 -> 1 via NET/Socket/0` }]).findings;
    expect(serious(fs).map(([k]) => k)).toEqual(["socket_transport"]);
  });
});
