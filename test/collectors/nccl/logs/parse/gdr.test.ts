/** GPUDirect RDMA lines in every form NCCL 2.3-2.30 and aws-ofi-nccl write (net.ts), with and without a header. */
import { describe, expect, it } from "vitest";
import { parseLine } from "../../../../../collectors/nccl/logs/parse/line.js";

const H = "n1:10:11 [2] NCCL INFO ";

describe("GPU Direct RDMA Disabled", () => {
  it.each([
    ["NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no module)", { scope: "hca", hca: 0, hcaName: "mlx5_0", reason: "no module" }],
    ["NET/AWS Libfabric : GPU Direct RDMA Disabled for HCA 3 'rdmap16s27'", { scope: "hca", hca: 3, hcaName: "rdmap16s27" }],
    [
      "NET/IB : GPU Direct RDMA Disabled for GPU 0[1] / HCA 2 'mlx5_2' (no module or not supported by GPU)",
      { scope: "gpu", gpu: "0[1]", hca: 2, reason: "no module or not supported by GPU" },
    ],
    // 2.3-2.4 name the HCA; a paste may cut the reason (nccl-pasted 382: `(not supported b`).
    [
      "NET/IB : GPU Direct RDMA Disabled for GPU 0 / HCA mlx4_0 (not supported by GPU)",
      { scope: "gpu", gpu: "0", hcaName: "mlx4_0", reason: "not supported by GPU" },
    ],
    ["NET/IB : GPU Direct RDMA Disabled for GPU 0 / HCA mlx4_0 (not supported b", { scope: "gpu", reason: "not supported b" }],
    ["GPU Direct RDMA Disabled for GPU ca000 / HCA 0 (distance 7 > 4)", { scope: "gpu", gpu: "ca000", hca: 0, distance: 7, limit: 4 }],
    ["GPU Direct RDMA Disabled for GPU 3 / HCA 1a (distance 5 > 4)", { scope: "gpu", gpu: "3", distance: 5, limit: 4 }],
    ["GPU Direct RDMA Disabled for GPU/0-18000 (rank 3) - NET/0-0 (distance 7 > 4)", { scope: "gpu", gpu: "0-18000", rank: 3, distance: 7, limit: 4 }],
    [
      "GPU Direct RDMA Disabled for GPU/0-18000 (rank 3) - NET/0-2 ( using PXN via GPU/0-1b000, distance 6 > 4)",
      { scope: "gpu", rank: 3, distance: 6, limit: 4 },
    ],
    [
      "NET/OFI Could not disable CUDA API usage for HMEM, disabling GDR",
      { scope: "net", reason: "NET/OFI Could not disable CUDA API usage for HMEM, disabling GDR" },
    ],
  ])("%s", (msg, fields) => {
    expect(parseLine(`${H}${msg}`)).toMatchObject({ kind: "gdr", enabled: false, host: "n1", pid: 10, ...fields });
  });

  it("NET/Socket's (2.19+ says it of every socket interface: TCP never reads GPU memory) is no GDR event", () => {
    expect(parseLine(`${H}NET/Socket : GPU Direct RDMA Disabled for HCA 0 'lo'`)).toBeUndefined();
    expect(parseLine(`${H}NET/IBext_v8 : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'`)).toMatchObject({ kind: "gdr", enabled: false, hcaName: "mlx5_0" });
  });

  it("2.29+ enabled form keeps distance and read", () => {
    expect(parseLine(`${H}GPU Direct RDMA Enabled for GPU/0-18000 (rank 1) - NET/0-0 (distance 3 <= 4, read 1, mode Default)`)).toMatchObject({
      kind: "gdr",
      enabled: true,
      rank: 1,
      distance: 3,
      limit: 4,
      read: true,
    });
  });

  it("the plugin's WARN that GDR is off stays a WARN, marked gdrDisabled", () => {
    expect(
      parseLine("ip-10-36-29-253:84:2553 [0] platform_config_endpoint:626 NCCL WARN NET/OFI GDR disabled on GDR-supported instance type p4d.24xlarge"),
    ).toMatchObject({ kind: "warn", warnKind: "other", gdrDisabled: true, host: "ip-10-36-29-253", pid: 84 });
    expect(parseLine("h:1:2 [0] net.cc:1 NCCL WARN NET/OFI Initializing plugin failed")).not.toHaveProperty("gdrDisabled");
  });

  it("quoted alone from `NCCL INFO`, or with the device tag only: headerless, the tag's device kept", () => {
    expect(parseLine("NCCL INFO GPU Direct RDMA Disabled for GPU ca000 / HCA 0 (distance 7 > 4)")).toMatchObject({
      kind: "gdr",
      enabled: false,
      headerless: true,
      gpu: "ca000",
      distance: 7,
      limit: 4,
    });
    const ev = parseLine(" [1] NCCL INFO NET/OFI Could not disable CUDA API usage for HMEM, disabling GDR");
    expect(ev).toMatchObject({ kind: "gdr", enabled: false, scope: "net", headerless: true, cudaDev: 1 });
    expect(ev).not.toHaveProperty("host");
    expect(parseLine('[0] NCCL INFO NET/OFI Setting NCCL_PROTO to "simple"')).toBeUndefined();
    expect(parseLine("we saw NCCL INFO GPU Direct RDMA Disabled for GPU ca000 in the log")).toBeUndefined();
  });
});
