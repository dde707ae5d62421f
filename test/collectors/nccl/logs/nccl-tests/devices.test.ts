/**
 * nccl-tests' `Using devices` table (logs/nccl-tests/failure.ts): every rank of the test with its
 * process and host. Where it puts them all on one host, sockets NCCL selected there carry nothing
 * between nodes (nccl-pasted 448: one process, two GPUs, `Using network Socket`); where it names two
 * hosts, they do (387). The rows are the real ones of 448, 387, 319 and 238.
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../../collectors/nccl/analyze/analyze.js";
import { ncclTestsOneHost, parseNcclTestsDevice } from "../../../../../collectors/nccl/logs/nccl-tests/failure.js";
import { listFixtures, readCapture } from "../../../../helpers/fixtures.js";

const text = (prefix: string): string => readCapture(`nccl-pasted/${listFixtures("nccl-pasted", ".log").find((f) => f.startsWith(prefix)) ?? ""}`);
const rows = (prefix: string) =>
  text(prefix)
    .split("\n")
    .flatMap((l) => parseNcclTestsDevice(l) ?? []);

describe("nccl-tests' device table", () => {
  it("every form: with `Group` (2.13+), without it, and with the `#` a paste lost", () => {
    expect(rows("448-")).toEqual([
      { rank: 0, pid: 8756, host: "Meowth" },
      { rank: 1, pid: 8756, host: "Meowth" },
    ]);
    expect(rows("387-").map((d) => d.host)).toEqual(["v100-gpu-1", "v100-gpu-5"]);
    expect(rows("319-").map((d) => [d.rank, d.host])).toEqual([
      [0, "ranokau"],
      [1, "lascar"],
    ]);
    expect(rows("238-")).toHaveLength(8);
    expect(parseNcclTestsDevice("#  Rank  x Group  0 Pid 1 on h device 0 [0x01] GPU")).toBeUndefined();
    expect(parseNcclTestsDevice("the rank 0 runs on h device 0")).toBeUndefined();
  });

  it("one host only when ranks 0 to N-1 are all listed there", () => {
    expect(ncclTestsOneHost(rows("448-"))).toBe("Meowth");
    expect(ncclTestsOneHost(rows("238-"))).toBe("AI-A100-Beethoven01");
    expect(ncclTestsOneHost(rows("387-"))).toBeUndefined();
    expect(ncclTestsOneHost(rows("448-").slice(1))).toBeUndefined();
  });

  it("448: one process's two GPUs on one host, sockets selected: no socket_transport; 387's two hosts keep theirs", () => {
    const kinds = (prefix: string): string[] =>
      analyzeLogs([{ name: "x.log", text: text(prefix) }])
        .findings.filter((f) => f.severity !== "info")
        .map((f) => f.kind);
    expect(kinds("448-")).toEqual([]);
    expect(kinds("387-")).toContain("socket_transport");
  });

  it("a table that does not vouch for the job (cut short, or a test's beside another job's log) keeps the sockets between nodes", () => {
    const table = (rows: number, pid: number): string[] => [
      "# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
      ...Array.from({ length: rows }, (_, r) => `#  Rank  ${r} Group  0 Pid  ${pid} on   gpu-a01 device  ${r} [0x18] NVIDIA A100-SXM4-80GB`),
    ];
    const job = (pid: number): string[] => [
      `gpu-a01:${pid}:${pid + 26} [0] NCCL INFO NET/IB : No device found.`,
      `gpu-a01:${pid}:${pid + 26} [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.11<0>`,
      `gpu-a01:${pid}:${pid + 26} [0] NCCL INFO Using network Socket`,
    ];
    const kinds = (lines: string[]): string[] =>
      analyzeLogs([{ name: "x.log", text: lines.join("\n") }])
        .findings.filter((f) => f.severity !== "info")
        .map((f) => f.kind);
    expect(kinds([...table(8, 51234), ...job(51234)])).toEqual([]);
    // Four rows of the eight GPUs the header gives the process: the paste cut the table.
    expect(kinds([...table(4, 51234), ...job(51234)])).toEqual(["socket_transport"]);
    // The table's process is not the one whose NCCL lines select sockets.
    expect(kinds([...table(8, 7000), ...job(9000)])).toEqual(["socket_transport"]);
    // A communicator larger than the table.
    expect(
      kinds([
        ...table(8, 51234),
        ...job(51234),
        "gpu-a01:51234:51260 [0] NCCL INFO comm 0x5 rank 0 nranks 16 cudaDev 0 busId 18000 commId 0x1 - Init COMPLETE",
      ]),
    ).toEqual(["socket_transport"]);
  });
});
