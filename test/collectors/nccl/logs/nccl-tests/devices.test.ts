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
});
