/**
 * parse-diag.ts on NCCL RAS diagnostics answers. No real capture exists (NCCL 2.31.2, the first with
 * diagnostics, came after the last machine run): the lines are built from NCCL v2.32.3's format
 * strings (src/ras/diagnostics_*.cc, client_support.cc), as the fake service renders them too.
 */
import { describe, expect, it } from "vitest";
import { diagProblems, parseDiagnostics } from "../../../../collectors/nccl/ras/parse-diag.js";

const P = "gpu-node-03:48211 NCCL DIAG ";
const C = "0x7f3a9c2e5d1b4a60";
const ANSWER = [
  `${P}=== RAS Diagnostics ===`,
  `${P}[OK]   GPU inventory: 8x NVIDIA H100 80GB HBM3 per node consistent across 16 ranks in comm ${C}`,
  `${P}[OK]   CUDA driver version: 12080 consistent across 16 ranks in comm ${C}`,
  `${P}[INFO] ECC: uncorrected volatile errors on rank(s) {11} (worst=1) across 16 ranks in comm ${C}`,
  `${P}[OK]   NVLink: 18 links per GPU, all active at consistent speed across 16 ranks in comm ${C}`,
  `${P}[INFO] NCCL environment: mismatch across 16 ranks in comm ${C} for NCCL_IB_HCA`,
  `${P}[INFO] NCCL environment: NCCL_IB_HCA=mlx5_0,mlx5_3 on rank(s) {0,1,2,3,4,5,6,7}`,
  `${P}[INFO] NCCL environment: NCCL_IB_HCA=(unset) on rank(s) {8,9,10,11,12,13,14,15}`,
  `${P}[INFO] NCCL environment: 1 NCCL_* env var(s) differ across ranks in comm ${C}`,
  `${P}[INFO] rdma_topo check: not usable on 16/16 ranks in comm ${C} (unavailable)`,
  `${P}[OK]   IOMMU mode: passthrough for 32 relevant device(s) across 16/16 ranks in comm ${C}`,
  `${P}[INFO] IOMMU groups: GPU and NIC groups differ on 16 pair(s) in comm ${C}; first rank 0 GPU group 38 NIC 0000:0c:00.0 group 40`,
  `${P}[INFO] ATS state: PCIe capabilities require root access on 16 rank/NIC pair(s) across 16/16 ranks in comm ${C}`,
  `${P}[OK]   Xid 63 detected 1 time on host gpu-node-04. No user action or further investigation is required for this Xid.`,
  `${P}[INFO] Xid 94 detected 1 time on host gpu-node-04. Restart the affected application. For guidance, see the NVIDIA Xid documentation: https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html`,
  `${P}[INFO] SXid 12028 detected 4 times (NVSwitch driver reported Non-fatal, link(s) {32,33}) on host gpu-node-04. See the NVIDIA Fabric Manager documentation for the recommended response: https://docs.nvidia.com/hgx-platforms/fabric-manager-user-guide/index.html`,
  `${P}[OK]   NVIDIA graphics driver version: 570.133.20 consistent across 16 ranks in comm ${C}`,
  `${P}[OK]   Paths: self+NVL+NET across 16 ranks in comm ${C}`,
  `${P}RAS diagnostics completed in 2841.6 ms across 16 RAS peers`,
].join("\n");

describe("parseDiagnostics", () => {
  it("a full 2.32.3 answer: every result, the completion, and the problems only", () => {
    const r = parseDiagnostics(`${ANSWER}\n`);
    expect(r.from).toBe("gpu-node-03:48211");
    expect(r.results).toHaveLength(17);
    expect(r.completed).toEqual({ ms: 2841.6, peers: 16 });
    expect(r.busy).toBe(false);
    expect(r.errors).toEqual([]);
    expect(diagProblems(r).map((p) => [p.check, p.commId ?? null, p.detail ?? null, p.host ?? null])).toEqual([
      ["ecc", C, null, null],
      ["nccl_env", C, "NCCL_IB_HCA", null],
      ["xid", null, "94", "gpu-node-04"],
      ["sxid", null, "12028", "gpu-node-04"],
    ]);
    // The [OK] Xid 63 is read, and no problem.
    expect(r.results.find((x) => x.check === "xid" && x.detail === "63")).toMatchObject({ ok: true, problem: false, host: "gpu-node-04" });
  });

  it("an unpadded commHash is written as comm_id is (no leading zeros); ranks that did not answer are a problem per check", () => {
    const r = parseDiagnostics(
      [
        "node042:12345 NCCL DIAG [INFO] GPU inventory: diagnostics incomplete, gathered 15/16 ranks in comm 0x1234/0x5be1c0d2a3f49e87/0x1d7e44a09c3b2f15",
        "node042:12345 NCCL DIAG [INFO] ECC: diagnostics incomplete, gathered 15/16 ranks in comm 0x1234/0x5be1c0d2a3f49e87/0x1d7e44a09c3b2f15",
        "node042:12345 NCCL DIAG [OK]   Xid/SXid: no events requiring immediate attention across 2 hosts",
        "node042:12345 NCCL DIAG RAS diagnostics completed in 10004.9 ms across 15 RAS peers",
      ].join("\n"),
    );
    expect(diagProblems(r).map((p) => [p.check, p.commId, p.detail])).toEqual([
      ["gpu_inventory", "0x1234", "incomplete"],
      ["ecc", "0x1234", "incomplete"],
    ]);
    expect(r.completed).toEqual({ ms: 10004.9, peers: 15 });
  });

  it("consistent or unavailable values are no problem; mismatches, inactive links, a failed rdma_topo and DIS paths are", () => {
    const lines = [
      `[INFO] GPU inventory: 8 GPUs per node consistent across 16 ranks in comm ${C}, GPU model unavailable via NVML`,
      `[INFO] ECC: unavailable via NVML across 16 ranks in comm ${C}`,
      `[INFO] ECC: no uncorrected volatile errors across 14 of 16 ranks in comm ${C} (ECC counters unavailable via NVML on 2 ranks)`,
      `[INFO] Xid/SXid: no kernel-log source was available on host gpu-node-04`,
      `[INFO] GPU inventory: count mismatch across 16 ranks in comm ${C}, rank(s) {8} differ from rank 0 (8)`,
      `[INFO] NVLink: inactive link(s) on rank(s) {3,4} across 16 ranks in comm ${C}`,
      `[INFO] CUDA driver version: mismatch across 16 ranks in comm ${C}, rank(s) {8,9} differ from rank 0 (12080)`,
      `[INFO] rdma_topo check: failed on rank(s) {0,1} across 16/16 ranks in comm ${C}; first rank 0 exit 1: DMA direct incorrect`,
      `[INFO] Paths: self+NVL+DIS(2/16) across 16 ranks in comm ${C}`,
      `[INFO] ATS state: ATSCtl disabled on 4 rank/NIC pair(s) in comm ${C}; first rank 0 NIC 0000:0c:00.0`,
      `[INFO] CUDA driver version: unavailable across 16 ranks in comm ${C}`,
      `[INFO] NVIDIA graphics driver version: no driver installed across 16 ranks in comm ${C}`,
      `[INFO] rdma_topo check: passed on 8/16 ranks in comm ${C}`,
      `[INFO] IOMMU mode: incomplete for comm ${C}: topology-dependent data was unavailable for 2 of 16 ranks`,
      `[INFO] IOMMU groups: GPU and NIC groups differ on 16 pair(s) in comm ${C}; first rank 0 GPU group 38 NIC 0000:0c:00.0 group 40`,
      `[INFO] IOMMU mode: enabled (DMA remapping) for 32 relevant device(s) across 16/16 ranks in comm ${C}`,
      `[INFO] IOMMU mode: passthrough for 30 relevant device(s) across 15/16 ranks in comm ${C}`,
      `[INFO] ATS state: enabled on 14 rank/NIC pair(s) across 15/16 ranks in comm ${C}`,
      `[INFO] ATS state: lspci output truncated on rank(s) {3} in comm ${C}`,
    ].map((b) => `${P}${b}`);
    const r = parseDiagnostics(lines.join("\n"));
    expect(r.results.map((x) => [x.check, x.problem])).toEqual([
      ["gpu_inventory", false],
      ["ecc", false],
      ["ecc", false],
      ["kernel_log", false],
      ["gpu_inventory", true],
      ["nvlink", true],
      ["cuda_driver", true],
      ["rdma_topo", true],
      ["paths", true],
      ["ats", true],
      ["cuda_driver", false],
      ["nvidia_driver", false],
      ["rdma_topo", false],
      ["iommu", false],
      ["iommu", false],
      ["iommu", true],
      ["iommu", false],
      ["ats", false],
      ["ats", false],
    ]);
  });

  it("BUSY, the refusals and lines pasted behind a log prefix", () => {
    expect(parseDiagnostics("BUSY: diagnostics already in progress\n")).toMatchObject({ busy: true, results: [] });
    expect(parseDiagnostics("ERROR: Unknown command DIAGNOSTICS\n").errors).toEqual(["Unknown command DIAGNOSTICS"]);
    expect(parseDiagnostics("OK\nERROR: diagnostics only supports text output\n").errors).toEqual(["diagnostics only supports text output"]);
    const pasted = parseDiagnostics(
      `[rank0]:2026-11-27 02:47:10 ${P}[INFO] ECC: uncorrected volatile errors on rank(s) {3} (worst=2) across 8 ranks in comm 0xab\nsomething else\n`,
    );
    expect(pasted.from).toBe("gpu-node-03:48211");
    expect(diagProblems(pasted).map((p) => [p.check, p.commId, p.lineNo])).toEqual([["ecc", "0xab", 1]]);
  });

  it("garbage and a flood stay bounded", () => {
    // Bare ERROR and BUSY lines count only at the head of an answer, not in a pasted log.
    const logged = parseDiagnostics(`a python line\nanother\nERROR: something else\nBUSY: busy elsewhere\n`);
    expect([logged.busy, logged.errors]).toEqual([false, []]);
    const flood = Array.from(
      { length: 2000 },
      (_, i) => `${P}[INFO] NVLink: inactive link(s) on rank(s) {${i}} across 4 ranks in comm 0x${(i + 1).toString(16)}`,
    ).join("\n");
    const r = parseDiagnostics(`${flood}\n\u0000\u0001 NCCL DIAG\nNCCL DIAG [WHAT] x\n`);
    expect(r.results).toHaveLength(512);
    expect(diagProblems(r)).toHaveLength(512);
  });
});
