/**
 * `ringwatch analyze` on NCCL RAS diagnostics lines (`<host>:<pid> NCCL DIAG ...`) pasted into a log:
 * the synthetic test/fixtures/nccl-pasted/ file 57 (built from NCCL v2.32.3's format strings; no real
 * capture exists), and DIAG lines of two logs read apart.
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../collectors/nccl/analyze/analyze.js";
import { listFixtures, readCapture } from "../../../helpers/fixtures.js";

const NAME = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("57-")) ?? "";
const C = "0x7f3a9c2e5d1b4a60";

describe("analyze: NCCL RAS diagnostics pasted into a log", () => {
  it("57: rank 11's uncorrected ECC error first, then Xid 94 and SXid 12028, NCCL_IB_HCA, the rank that did not answer; the IOMMU groups are no problem", () => {
    const r = analyzeLogs([{ name: "57.log", text: readCapture(`nccl-pasted/${NAME}`) }]);
    expect(r.findings.map((f) => [f.kind, f.severity, f.event ?? f.code ?? null, f.ranks, f.comm_id, f.evidence])).toEqual([
      ["nccl_diagnostic", "critical", "ecc", [11], C, ["57.log:11"]],
      ["gpu_xid", "warning", 94, [], null, ["57.log:23"]],
      ["nvswitch_sxid", "warning", 12028, [], null, ["57.log:24"]],
      // 8 ranks against 8: no value is the odd one, so every rank is named.
      ["nccl_diagnostic", "warning", "nccl_env", [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], C, ["57.log:13", "57.log:14", "57.log:15"]],
      ["nccl_diagnostic", "warning", "incomplete", [], C, ["57.log:31", "57.log:32"]],
    ]);
    expect(r.findings.find((f) => f.kind === "gpu_xid")).toMatchObject({ host: "gpu-node-04", count: 1, action: "restart_job" });
    expect(r.findings.find((f) => f.event === "nccl_env")?.summary).toContain(
      "NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 on ranks 0-7, unset on ranks 8-15.",
    );
    // Its NCCL lines are read as ever: the process and both communicators.
    expect(r.processes.map((p) => [p.process, p.nccl_version, p.net])).toEqual([["gpu-node-03:48211", "2.32.3", "IB"]]);
    expect(r.communicators.map((c) => c.comm_id)).toEqual([C, "0x2c41e0a7b95d3f18"]);
  });

  it("reads the DIAG lines of each log apart, behind a launcher's prefix too", () => {
    const line = (host: string, rank: number): string =>
      `[1,0]<stdout>:${host}:7 NCCL DIAG [INFO] NVLink: inactive link(s) on rank(s) {${rank}} across 8 ranks in comm 0xab`;
    const r = analyzeLogs([
      { name: "a.log", text: `hello\n${line("a", 1)}\n` },
      { name: "b.log", text: `${line("b", 5)}\n` },
    ]);
    expect(r.findings.map((f) => [f.kind, f.severity, f.ranks, f.evidence])).toEqual([
      ["nccl_diagnostic", "critical", [1], ["a.log:2"]],
      ["nccl_diagnostic", "critical", [5], ["b.log:1"]],
    ]);
  });
});
