/**
 * Forms the twenty-seventh blind set brought, from its real captures (test/fixtures/nccl-pasted
 * 714, 718, 721): mlx5_core's firmware commands that never completed, a GPU that lspci lists at
 * revision ff, and PyTorch's ncclUniqueId fetch that timed out.
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../collectors/nccl/analyze/analyze.js";
import { parseNicEvent } from "../../../../collectors/kmsg/parse/nic.js";
import { goneGpu } from "../../../../collectors/gpu/pasted-lspci.js";
import { uniqueIdWait } from "../../../../collectors/nccl/logs/pytorch/unique-id-wait.js";
import { KernelLines } from "../../../../agent/analyze-kernel.js";
import type { Finding } from "../../../../collectors/nccl/verdict/report.js";
import { brief, pastedText, seriousFindings } from "../../../helpers/pasted.js";

/** The findings at warning and above, the kernel's and tools' lines read as the CLI reads them. */
const withKernel = (text: string): Finding[] => analyzeLogs([{ name: "x.log", text }], new KernelLines()).findings.filter((f) => f.severity !== "info");

describe("mlx5_core's firmware commands that never completed (714)", () => {
  it("the capture (eight lines of one HCA on b1360): one critical hca_error, a firmware fault, counted eight times", () => {
    const fs = withKernel(pastedText("714-"));
    expect(brief(fs)).toEqual([["hca_error", "critical", []]]);
    expect(fs[0]).toMatchObject({ device: "0000:61:00.0", host: "b1360", event: "firmware_error", count: 8 });
  });

  it("both of the driver's words, and no other command line", () => {
    const kind = (l: string): string | undefined => parseNicEvent(l)?.kind;
    expect(kind("mlx5_core 0000:61:00.0: wait_func_handle_exec_timeout:1104:(pid 141183): cmd[22]: CREATE_DCT(0x710) No done completion")).toBe(
      "firmware_error",
    );
    expect(kind("mlx5_core 0000:61:00.0: wait_func:1132:(pid 141181): CREATE_DCT(0x710) timeout. Will cause a leak of a command resource")).toBe(
      "firmware_error",
    );
    expect(kind("mlx5_core 0000:61:00.0: mlx5_cmd_out_err:838:(pid 1): QUERY_VPORT_COUNTER(0x770) op_mod(0x0) failed, status bad parameter(0x3)")).toBe(
      "command_error",
    );
    expect(kind("mlx5_core 0000:61:00.0: E-Switch: Enable: mode(LEGACY), nvfs(0), active vports(0)")).toBeUndefined();
  });
});

describe("a GPU that lspci lists at revision ff (718)", () => {
  it("the capture (three GPUs, the one at 1c:00 at rev ff in all four functions): one critical gpu_pcie_error of that GPU", () => {
    const fs = withKernel(pastedText("718-"));
    expect(brief(fs)).toEqual([["gpu_pcie_error", "critical", []]]);
    expect(fs[0]).toMatchObject({ device: "0000:1c:00.0", event: "off_bus", count: 1 });
  });

  it("lspci's forms (-nn, -D, pdsh's host); the GPU's other functions, another vendor and a GPU that answers are none", () => {
    expect(goneGpu("1c:00.0 VGA compatible controller: NVIDIA Corporation TU102GL [Quadro RTX 6000/8000] (rev ff)")).toEqual({
      pci: "0000:1c:00.0",
      name: "TU102GL [Quadro RTX 6000/8000]",
    });
    expect(goneGpu("node7: 0000:b5:00.0 3D controller [0302]: NVIDIA Corporation GA100 [A100 SXM4 80GB] [10de:20b2] (rev ff)")).toEqual({
      pci: "0000:b5:00.0",
      host: "node7",
      name: "GA100 [A100 SXM4 80GB] [10de:20b2]",
    });
    expect(goneGpu("10000:01:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev ff)  \r")?.pci).toBe("10000:01:00.0");
    expect(goneGpu("1c:00.1 Audio device: NVIDIA Corporation TU102 High Definition Audio Controller (rev ff)")).toBeUndefined();
    expect(goneGpu("61:00.0 Infiniband controller: Mellanox Technologies MT28908 Family [ConnectX-6] (rev ff)")).toBeUndefined();
    expect(goneGpu("1d:00.0 VGA compatible controller: NVIDIA Corporation TU102GL [Quadro RTX 6000/8000] (rev a1)")).toBeUndefined();
    expect(goneGpu("see 1c:00.0 VGA compatible controller: NVIDIA Corporation TU102GL (rev ff)")).toBeUndefined();
  });
});

describe("PyTorch's ncclUniqueId fetch that timed out (721)", () => {
  it("the capture (PyTorch 1.x's `retreiving`): rank 0 behind, rank 1 waiting, and no network error", () => {
    const fs = seriousFindings(pastedText("721-"));
    expect(brief(fs)).toEqual([["rank_behind", "critical", [0]]]);
    expect(fs[0]?.waiting_ranks).toEqual([1]);
  });

  it("2.x's wait timeout too; a subgroup's key names no rank; a reset on the fetch is no wait", () => {
    expect(
      uniqueIdWait(
        "[rank3]: torch.distributed.DistBackendError: [3] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: wait timeout after 600000ms, keys: /default_pg//0",
        "l:1",
      ),
    ).toEqual({ rank: 3, peer: 0, where: "l:1" });
    expect(
      uniqueIdWait(
        "RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '2', but store->get('2') got error: Socket Timeout",
        "l:1",
      ),
    ).toEqual({ where: "l:1" });
    expect(
      uniqueIdWait(
        "RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer",
        "l:1",
      ),
    ).toBeUndefined();
  });
});
