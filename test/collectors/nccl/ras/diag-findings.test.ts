/**
 * diag-findings.ts: NCCL RAS diagnostics problems as findings. No real capture exists: the lines are
 * built from NCCL v2.32.3's format strings (src/ras/diagnostics_*.cc), as parse-diag.test.ts's.
 */
import { describe, expect, it } from "vitest";
import { diagFindings, rankSet } from "../../../../collectors/nccl/ras/diag-findings.js";
import { parseDiagnostics } from "../../../../collectors/nccl/ras/parse-diag.js";
import type { Finding } from "../../../../collectors/nccl/verdict/report.js";

const P = "gpu-node-03:48211 NCCL DIAG ";
const C = "0x7f3a9c2e5d1b4a60";
const XID_DOC = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html";
const FM_DOC = "https://docs.nvidia.com/hgx-platforms/fabric-manager-user-guide/index.html";

/** The findings of these result bodies (tag included), as one answer of `diag.txt`. */
function findings(...bodies: string[]): Finding[] {
  return diagFindings("diag.txt", parseDiagnostics(bodies.map((b) => `${P}${b}`).join("\n")));
}

const brief = (f: Finding): unknown[] => [f.kind, f.severity, f.event ?? f.code, f.ranks, f.comm_id];

describe("diagFindings", () => {
  it("[OK] lines, consistent and unavailable values, the header and the completion give nothing", () => {
    expect(
      findings(
        "=== RAS Diagnostics ===",
        `[OK]   GPU inventory: 8x NVIDIA H100 80GB HBM3 per node consistent across 16 ranks in comm ${C}`,
        `[OK]   CUDA driver version: 12080 consistent across 16 ranks in comm ${C}`,
        `[OK]   ECC: no uncorrected volatile errors across 16 ranks in comm ${C}`,
        `[INFO] ECC: unavailable via NVML across 16 ranks in comm ${C}`,
        `[OK]   NVLink: 18 links per GPU, all active at consistent speed across 16 ranks in comm ${C}`,
        `[OK]   NCCL environment: NCCL_* env vars consistent across 16 ranks in comm ${C}`,
        `[INFO] rdma_topo check: not usable on 16/16 ranks in comm ${C} (unavailable)`,
        `[OK]   IOMMU mode: passthrough for 32 relevant device(s) across 16/16 ranks in comm ${C}`,
        `[INFO] ATS state: PCIe capabilities require root access on 16 rank/NIC pair(s) across 16/16 ranks in comm ${C}`,
        "[OK]   Xid 63 detected 1 time on host gpu-node-04. No user action or further investigation is required for this Xid.",
        "[OK]   SXid 12028 detected 2 times (NVSwitch driver reported Non-fatal, link(s) {4}) on host gpu-node-04. No user action or further investigation is required for this SXid.",
        "[OK]   Xid/SXid: no events requiring immediate attention across 2 hosts",
        "[INFO] Xid/SXid: no kernel-log source was available on host gpu-node-04",
        `[OK]   NVIDIA graphics driver version: 570.133.20 consistent across 16 ranks in comm ${C}`,
        `[OK]   Paths: self+NVL+NET across 16 ranks in comm ${C}`,
        "RAS diagnostics completed in 2841.6 ms across 16 RAS peers",
      ),
    ).toEqual([]);
  });

  it("ECC: uncorrected errors are critical, corrected ones at the threshold a warning; one finding per communicator", () => {
    const [f, ...rest] = findings(
      `[INFO] ECC: uncorrected volatile errors on rank(s) {11} (worst=1) across 16 ranks in comm ${C}`,
      `[INFO] ECC: corrected volatile errors at or above threshold 100 on rank(s) {3,5} (worst=250) across 16 ranks in comm ${C}`,
    );
    expect(rest).toEqual([]);
    expect(f).toMatchObject({
      kind: "nccl_diagnostic",
      severity: "critical",
      event: "ecc",
      ranks: [3, 5, 11],
      comm_id: C,
      processes: [],
      evidence: ["diag.txt:1", "diag.txt:2"],
    });
    expect(f?.summary).toBe(
      `NCCL RAS diagnostics: the GPU memory of rank 11 of communicator ${C} has uncorrected ECC errors (worst count 1). Such a GPU can return wrong data or crash the job: drain the node, reset the GPU and check nvidia-smi -q -d ECC. ` +
        `NCCL RAS diagnostics: the GPU memory of ranks 3,5 of communicator ${C} has corrected ECC errors at or above the threshold of 100 (worst count 250). Corrected errors do no harm by themselves, but a count that keeps growing is a GPU to replace: watch nvidia-smi -q -d ECC.`,
    );
    const corrected = findings(`[INFO] ECC: corrected volatile errors at or above threshold 100 on rank(s) {3} (worst=250) across 16 ranks in comm ${C}`);
    expect(corrected.map(brief)).toEqual([["nccl_diagnostic", "warning", "ecc", [3], C]]);
  });

  it("NVLink: links down are critical; a different link count or speed a warning", () => {
    const down = findings(`[INFO] NVLink: inactive link(s) on rank(s) {3,4} across 16 ranks in comm ${C}`);
    expect(down.map(brief)).toEqual([["nccl_diagnostic", "critical", "nvlink", [3, 4], C]]);
    expect(down[0]?.summary).toMatch(
      /^NCCL RAS diagnostics: NVLink links are down on the GPUs of ranks 3,4 of communicator 0x7f3a9c2e5d1b4a60\. .*nvidia-smi nvlink -s/,
    );
    const count = findings(`[INFO] NVLink: link-count mismatch across 16 ranks in comm 0xab, rank(s) {9} differ from rank 0 (18)`);
    expect(count.map(brief)).toEqual([["nccl_diagnostic", "warning", "nvlink", [9], "0xab"]]);
    expect(count[0]?.summary).toMatch(
      /^NCCL RAS diagnostics: rank 9 has a different number of NVLink links per GPU than rank 0 \(18\), among the 16 ranks of communicator 0xab\. /,
    );
    const speed = findings(`[INFO] NVLink: inconsistent link speeds on rank(s) {2} across 8 ranks in comm 0xab`);
    expect(speed.map(brief)).toEqual([["nccl_diagnostic", "warning", "nvlink", [2], "0xab"]]);
    expect(speed[0]?.summary).toContain("NVLink links run at different speeds on the GPUs of rank 2");
  });

  it("GPU inventory and driver mismatches name the ranks that differ and the value of the rank they differ from", () => {
    const f = findings(
      `[INFO] GPU inventory: count mismatch across 16 ranks in comm ${C}, rank(s) {8,9,10,11,12,13,14,15} differ from rank 0 (8)`,
      `[INFO] GPU inventory: model mismatch across 16 ranks in comm 0xcd, rank(s) {15} differ from rank 0 (NVIDIA H100 80GB HBM3)`,
      `[INFO] CUDA driver version: mismatch across 16 ranks in comm ${C}, rank(s) {8,9} differ from rank 0 (12080)`,
      `[INFO] NVIDIA graphics driver version: mismatch across 16 ranks in comm ${C}, rank(s) {8} differ from rank 0 (570.133.20)`,
    );
    expect(f.map(brief)).toEqual([
      ["nccl_diagnostic", "warning", "gpu_inventory", [8, 9, 10, 11, 12, 13, 14, 15], C],
      ["nccl_diagnostic", "warning", "gpu_inventory", [15], "0xcd"],
      ["nccl_diagnostic", "warning", "cuda_driver", [8, 9], C],
      ["nccl_diagnostic", "warning", "nvidia_driver", [8], C],
    ]);
    expect(f[0]?.summary).toMatch(
      /^NCCL RAS diagnostics: ranks 8-15 have a different number of GPUs per node than rank 0 \(8\), among the 16 ranks of communicator /,
    );
    expect(f[1]?.summary).toContain("rank 15 has a different GPU model than rank 0 (NVIDIA H100 80GB HBM3)");
    expect(f[2]?.summary).toContain("ranks 8,9 have a different CUDA driver version than rank 0 (12080)");
    expect(f[3]?.summary).toContain("rank 8 has a different NVIDIA driver version than rank 0 (570.133.20)");
  });

  it("an NCCL_* mismatch names the variable and each value with its ranks (the lines after it); the odd ranks are the finding's", () => {
    const f = findings(
      `[INFO] NCCL environment: mismatch across 16 ranks in comm ${C} for NCCL_IB_HCA`,
      "[INFO] NCCL environment: NCCL_IB_HCA=mlx5_0,mlx5_3 on rank(s) {0,1,2,3,4,5,6,7,...} (N=12)",
      "[INFO] NCCL environment: NCCL_IB_HCA=(unset) on rank(s) {12,13,14,15}",
      `[INFO] NCCL environment: mismatch across 16 ranks in comm ${C} for NCCL_ALGO`,
      "[INFO] NCCL environment: NCCL_ALGO=Ring on rank(s) {0}",
      "[INFO] NCCL environment: NCCL_ALGO=Tree on rank(s) {1}",
      `[INFO] NCCL environment: 2 NCCL_* env var(s) differ across ranks in comm ${C}`,
    );
    expect(f.map(brief)).toEqual([
      ["nccl_diagnostic", "warning", "nccl_env", [12, 13, 14, 15], C],
      ["nccl_diagnostic", "warning", "nccl_env", [0, 1], C],
    ]);
    expect(f[0]?.summary).toBe(
      `NCCL RAS diagnostics: NCCL_IB_HCA is not the same on all 16 ranks of communicator ${C}: NCCL_IB_HCA=mlx5_0,mlx5_3 on ranks 0-7 and 4 more, unset on ranks 12-15. ` +
        "Ranks with different NCCL settings can pick different networks or algorithms, and then hang or run slow: set NCCL_IB_HCA the same for every rank (the launcher's environment, the container image).",
    );
    expect(f[0]?.evidence).toEqual(["diag.txt:1", "diag.txt:2", "diag.txt:3"]);
    expect(f[1]?.summary).toContain("NCCL_ALGO=Ring on rank 0, NCCL_ALGO=Tree on rank 1.");
    // The value lines missing (an excerpt): still named, and said so.
    const alone = findings(`[INFO] NCCL environment: mismatch across 16 ranks in comm ${C} for NCCL_PROTO`);
    expect(alone[0]?.summary).toContain(
      "NCCL_PROTO is not the same on all 16 ranks of communicator 0x7f3a9c2e5d1b4a60 (the lines with each value are not in this log).",
    );
  });

  it("ranks that did not answer: one warning per communicator naming every check that missed them", () => {
    const f = findings(
      `[INFO] GPU inventory: diagnostics incomplete, gathered 15/16 ranks in comm ${C}/0x5be1c0d2a3f49e87/0x1d7e44a09c3b2f15`,
      `[INFO] CUDA driver version: diagnostics incomplete, gathered 15/16 ranks in comm ${C}/0x5be1c0d2a3f49e87/0x1d7e44a09c3b2f15`,
      `[INFO] ECC: diagnostics incomplete, gathered 15/16 ranks in comm ${C}/0x5be1c0d2a3f49e87/0x1d7e44a09c3b2f15`,
      "[INFO] ECC: diagnostics incomplete, gathered 6/8 ranks in comm 0x1234/0x5be1c0d2a3f49e87/0x1d7e44a09c3b2f15",
    );
    expect(f.map(brief)).toEqual([
      ["nccl_diagnostic", "warning", "incomplete", [], C],
      ["nccl_diagnostic", "warning", "incomplete", [], "0x1234"],
    ]);
    expect(f[0]).toMatchObject({ count: 1, evidence: ["diag.txt:1", "diag.txt:2", "diag.txt:3"] });
    expect(f[0]?.summary).toMatch(
      /^NCCL RAS diagnostics gathered only 15 of 16 ranks of communicator 0x7f3a9c2e5d1b4a60 \(GPU inventory, CUDA driver version, ECC\): 1 rank did not answer, so these checks say nothing about it\. /,
    );
    expect(f[1]).toMatchObject({ count: 2 });
    expect(f[1]?.summary).toContain("2 ranks did not answer, so these checks say nothing about them.");
  });

  it("rdma_topo, IOMMU, ATS and Paths problems in NCCL's words, with what to do", () => {
    const f = findings(
      `[INFO] rdma_topo check: failed on rank(s) {0,1} across 16/16 ranks in comm ${C}; first rank 0 exit 1: DMA direct incorrect`,
      `[INFO] IOMMU mode: enabled (DMA remapping) for 32 relevant device(s) across 16/16 ranks in comm ${C}`,
      `[INFO] ATS state: disabled on 4 rank/NIC pair(s) across 4/16 ranks in comm ${C}`,
      `[INFO] ATS state: ATSCtl disabled on 4 rank/NIC pair(s) in comm ${C}; first rank 0 NIC 0000:0c:00.0`,
      `[INFO] Paths: self+NVL+DIS(2/16) across 16 ranks in comm ${C}`,
    );
    expect(f.map(brief)).toEqual([
      ["nccl_diagnostic", "warning", "rdma_topo", [0, 1], C],
      ["nccl_diagnostic", "warning", "iommu", [], C],
      ["nccl_diagnostic", "warning", "ats", [], C],
      ["nccl_diagnostic", "warning", "paths", [], C],
    ]);
    expect(f[0]?.summary).toMatch(
      /^NCCL RAS diagnostics: rdma_topo check failed on ranks 0,1 of communicator 0x7f3a9c2e5d1b4a60 \(rank 0: exit 1, "DMA direct incorrect"\)\. /,
    );
    expect(f[1]?.summary).toMatch(
      /^NCCL RAS diagnostics, IOMMU mode of communicator 0x7f3a9c2e5d1b4a60: enabled \(DMA remapping\) for 32 relevant device\(s\) across 16\/16 ranks\. .*iommu=pt/,
    );
    // The summary line and its detail line are one finding.
    expect(f[2]?.summary).toContain(
      "ATS state of communicator 0x7f3a9c2e5d1b4a60: disabled on 4 rank/NIC pair(s) across 4/16 ranks; ATSCtl disabled on 4 rank/NIC pair(s); first rank 0 NIC 0000:0c:00.0.",
    );
    expect(f[2]?.evidence).toEqual(["diag.txt:3", "diag.txt:4"]);
    expect(f[3]?.summary).toMatch(/^NCCL RAS diagnostics, Paths of communicator 0x7f3a9c2e5d1b4a60: self\+NVL\+DIS\(2\/16\) across 16 ranks\. DIS means /);
  });

  it("Xid: reset the GPU is critical, restart the application and the rest a warning; SXid: Fatal is critical", () => {
    const f = findings(
      `[INFO] Xid 79 detected at least 64 times on host gpu-node-04. The NVIDIA Xid catalog recommends resetting the affected GPU. Follow the documented GPU-reset capabilities and limitations: ${XID_DOC}`,
      `[INFO] Xid 94 detected 1 time on host gpu-node-04. Restart the affected application. For guidance, see the NVIDIA Xid documentation: ${XID_DOC}`,
      `[INFO] Xid 31 detected 2 times on host gpu-node-05. For the recommended response, see the NVIDIA Xid documentation: ${XID_DOC}`,
      `[INFO] Xid 13 detected 1 time on host old-node. A pre-Ampere GPU was detected on this host. For guidance, see the archived NVIDIA Xid documentation: ${XID_DOC}`,
      `[INFO] SXid 20034 detected 1 time (NVSwitch driver reported Fatal, link(s) {7}) on host gpu-node-04. See the NVIDIA Fabric Manager documentation for the recommended response: ${FM_DOC}`,
      `[INFO] SXid 12028 detected 4 times (NVSwitch driver reported Non-fatal, link(s) {32,33}) on host gpu-node-04. See the NVIDIA Fabric Manager documentation for the recommended response: ${FM_DOC}`,
    );
    expect(f.map((x) => [x.kind, x.severity, x.code, x.host, x.count, x.action ?? null, x.comm_id])).toEqual([
      ["gpu_xid", "critical", 79, "gpu-node-04", 64, "reset_gpu", null],
      ["gpu_xid", "warning", 94, "gpu-node-04", 1, "restart_job", null],
      ["gpu_xid", "warning", 31, "gpu-node-05", 2, null, null],
      ["gpu_xid", "warning", 13, "old-node", 1, null, null],
      ["nvswitch_sxid", "critical", 20034, "gpu-node-04", 1, null, null],
      ["nvswitch_sxid", "warning", 12028, "gpu-node-04", 4, null, null],
    ]);
    expect(f[0]?.summary).toMatch(
      /^NCCL RAS diagnostics: the kernel log of gpu-node-04 reported Xid 79 at least 64 times\. NVIDIA's Xid catalogue says to reset the GPU/,
    );
    expect(f[1]?.summary).toMatch(/^NCCL RAS diagnostics: the kernel log of gpu-node-04 reported Xid 94 once\. .*restart the application/);
    expect(f[4]?.summary).toMatch(/reported NVSwitch SXid 20034 \(Fatal, link\(s\) \{7\}\) once\. A fatal SXid .* Drain the node\.$/);
    expect(f[5]?.summary).toContain("reported NVSwitch SXid 12028 (Non-fatal, link(s) {32,33}) 4 times.");
  });

  it("the same answer twice (or a line repeated) is one finding per problem with the lines of both; Xid counts add up", () => {
    const answer = [
      `[INFO] ECC: uncorrected volatile errors on rank(s) {11} (worst=1) across 16 ranks in comm ${C}`,
      `[INFO] NCCL environment: mismatch across 16 ranks in comm ${C} for NCCL_IB_HCA`,
      "[INFO] NCCL environment: NCCL_IB_HCA=mlx5_0 on rank(s) {0}",
      "[INFO] NCCL environment: NCCL_IB_HCA=(unset) on rank(s) {1}",
      `[INFO] Xid 94 detected 1 time on host gpu-node-04. Restart the affected application. For guidance, see the NVIDIA Xid documentation: ${XID_DOC}`,
      `[INFO] Xid 94 detected 2 times on host gpu-node-05. Restart the affected application. For guidance, see the NVIDIA Xid documentation: ${XID_DOC}`,
    ];
    const once = findings(...answer);
    const twice = findings(...answer, ...answer.map((l) => l.replace("worst=1", "worst=3")));
    expect(twice.map(brief)).toEqual(once.map(brief));
    expect(twice.map((f) => f.evidence)).toEqual([
      ["diag.txt:1", "diag.txt:7"],
      ["diag.txt:2", "diag.txt:3", "diag.txt:4", "diag.txt:8"],
      ["diag.txt:5", "diag.txt:11"],
      ["diag.txt:6", "diag.txt:12"],
    ]);
    // The first line's words; a later worst count adds no sentence.
    expect(twice[0]?.summary).toBe(once[0]?.summary);
    expect(twice.filter((f) => f.kind === "gpu_xid").map((f) => [f.host, f.count])).toEqual([
      ["gpu-node-04", 2],
      ["gpu-node-05", 4],
    ]);
  });

  it("comm_id is NCCL's commId as the logs and RAS STATUS name it, without zero padding", () => {
    expect(findings("[INFO] NVLink: inactive link(s) on rank(s) {1} across 8 ranks in comm 0x00ab")[0]?.comm_id).toBe("0xab");
  });

  it("rank sets as NCCL prints them, cut at 8 with the count", () => {
    expect(rankSet("inactive link(s) on rank(s) {3,4} across 16 ranks")).toEqual({ ranks: [3, 4] });
    expect(rankSet("x on rank(s) {9,1,2,3,4,5,6,7,...} (N=40) across")).toEqual({ ranks: [1, 2, 3, 4, 5, 6, 7, 9], total: 40 });
    expect(rankSet("x on rank(s) {} across")).toEqual({ ranks: [] });
    expect(rankSet("no set here")).toBeUndefined();
    expect(rankSet("x rank(s) {1,2")).toBeUndefined();
    expect(rankSet("x rank(s) {1,x,-2,3}")).toEqual({ ranks: [1, 3] });
    const cut = findings(`[INFO] ECC: uncorrected volatile errors on rank(s) {0,1,2,3,4,5,6,7,...} (N=12) across 16 ranks in comm ${C}`);
    expect(cut[0]?.ranks).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(cut[0]?.summary).toContain("the GPU memory of ranks 0-7 and 4 more of communicator");
  });
});
