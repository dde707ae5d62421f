/**
 * Forms the fourteenth blind set brought (test/fixtures/nccl-pasted 471 and 482), from their real
 * captures: XLA's own words for a failed NCCL call (JAX), and a host name a poster redacted with
 * words (`<2nd node server>:5359:5359 [0] NCCL INFO ...`).
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../collectors/nccl/analyze/analyze.js";
import { parseLine } from "../../../../collectors/nccl/logs/parse/line.js";
import type { Finding } from "../../../../collectors/nccl/verdict/report.js";
import { listFixtures, readCapture } from "../../../helpers/fixtures.js";

const text = (prefix: string): string => readCapture(`nccl-pasted/${listFixtures("nccl-pasted", ".log").find((f) => f.startsWith(prefix)) ?? ""}`);
const serious = (t: string): Finding[] => analyzeLogs([{ name: "x.log", text: t }]).findings.filter((f) => f.severity !== "info");

describe("XLA's NCCL errors", () => {
  it("471: `NCCL operation ncclCommInitRank(...) failed: unhandled cuda error`, three times: one nccl_error in XLA's name", () => {
    const fs = serious(text("471-"));
    expect(fs.map((f) => f.kind)).toEqual(["nccl_error"]);
    expect(fs[0]?.summary).toBe("XLA reported an NCCL failure: ncclCommInitRank failed: unhandled cuda error.");
  });

  it("a benign WARN of NCCL's (libibverbs missing) does not hide XLA's failure; a failure of NCCL's own lines does", () => {
    const xla =
      "INTERNAL: external/xla/xla/service/gpu/nccl_utils.cc:275: NCCL operation ncclCommInitRank(&comm, nranks, id, rank) failed: unhandled cuda error";
    const benign = "node1:5202:5202 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]";
    expect(serious([benign, xla].join("\n")).map((f) => f.kind)).toContain("nccl_error");
    const failing = ["node1:5202:5300 [0] include/alloc.h:48 NCCL WARN Cuda failure 'out of memory'", "node1:5202:5300 [0] NCCL INFO init.cc:1234 -> 1"];
    const fs = serious([...failing, xla].join("\n"));
    expect(fs.filter((f) => f.summary.startsWith("XLA reported"))).toEqual([]);
    expect(fs.map((f) => f.kind)).toEqual(["nccl_error"]);
  });

  it("a remote error in XLA's words is a network_error; words that are no NCCL call are nothing", () => {
    const remote = serious(
      "INTERNAL: external/xla/xla/service/gpu/nccl_utils.cc:275: NCCL operation ncclGroupEnd() failed: remote process exited or there was a network error",
    );
    expect(remote.map((f) => f.kind)).toEqual(["network_error"]);
    expect(serious("NCCL operation finished (took 3 ms) failed: no")).toEqual([]);
  });
});

describe("a host name redacted with words", () => {
  it("482: `<2nd node server>:5359:5359 [0] NCCL INFO ...` is a process, and its sockets without libibverbs are a socket_transport", () => {
    expect(parseLine("<2nd node server>:5359:5359 [0] NCCL INFO NET/Socket : Using [0]eth0:node2_ip<0>")).toMatchObject({
      host: "<2nd node server>",
      pid: 5359,
    });
    expect(serious(text("482-")).map((f) => f.kind)).toEqual(["socket_transport"]);
  });
});
