/**
 * Forms the fortieth blind set brought, from log files committed to public repositories
 * (test/fixtures/nccl-pasted 866-879): a cut pid glued before a short host name, and NCCL's own
 * word that one GPU does not use GPUDirect RDMA beside its HCA's word that the HCA can.
 */
import { describe, expect, it } from "vitest";
import { brief, pastedText, seriousFindings } from "../../../helpers/pasted.js";

describe("forms the fortieth blind set brought (868, 873)", () => {
  it("a cut pid glued before a short host name (`80356ljm:803564`, set 40's 868) is that process too; letters before it are another host", () => {
    expect(seriousFindings(pastedText("868-"))).toEqual([]);
    // The same lines with the torn text made a name of letters: `xyljm` is no cut pid, so a second host, and sockets between them.
    const other = pastedText("868-").replaceAll("80356ljm:803564", "xyljm:803564").replaceAll("80ljm:803564", "xyljm:803564");
    expect(brief(seriousFindings(other))).toEqual([["socket_transport", "warning", [1]]]);
  });

  it("`GPU Direct RDMA Enabled for HCA 0` beside `Disabled for GPU 81000 / HCA 0 (distance 6 > 4)` (873): that GPU does not use it, a gdr_disabled", () => {
    const fs = seriousFindings(pastedText("873-"));
    expect(brief(fs)).toEqual([["gdr_disabled", "warning", []]]);
    expect(fs[0]?.summary).toContain("GPUDirect RDMA is off on n013:67375: GPU 81000 / HCA 0 (distance 6 > 4)");
    // A GPU that says it uses it (`Enabled for GPU 81000 / HCA 0 (distance 4 <= 4)`) is no finding.
    const on = pastedText("873-").replaceAll("Disabled for GPU 81000 / HCA 0 (distance 6 > 4)", "Enabled for GPU 81000 / HCA 0 (distance 4 <= 4)");
    expect(seriousFindings(on)).toEqual([]);
  });

  it("on one node (P2P channels, one host), the HCA's Enabled beside a GPU's distance line is no finding: NCCL prints both at init there too", () => {
    expect(
      seriousFindings(
        "n013:67370:67380 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\nn013:67370:67380 [0] NCCL INFO Using network IB\nn013:67370:67380 [0] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'\nn013:67370:67380 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 81000 / HCA 0 (distance 6 > 4)\nn013:67371:67381 [1] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\nn013:67371:67381 [1] NCCL INFO Using network IB\nn013:67371:67381 [1] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'\nn013:67371:67381 [1] NCCL INFO GPU Direct RDMA Disabled for GPU 81000 / HCA 0 (distance 6 > 4)\nn013:67370:67380 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\nn013:67371:67381 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/IPC\nn013:67370:67380 [0] NCCL INFO comm 0x55d0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 commId 0xabc - Init COMPLETE\nn013:67371:67381 [1] NCCL INFO comm 0x55d1 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 81000 commId 0xabc - Init COMPLETE",
      ),
    ).toEqual([]);
  });

  it("a host whose name is digits and another host's name (`10ljm`, `ljm`), the same pids: two hosts, not a torn line (the digits start no pid)", () => {
    expect(
      brief(
        seriousFindings(
          "ljm:803564:803574 [0] NCCL INFO NET/IB : No device found.\nljm:803564:803574 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.5788<0>\nljm:803564:803574 [0] NCCL INFO Using network Socket\n10ljm:803564:803574 [0] NCCL INFO NET/IB : No device found.\n10ljm:803564:803574 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.11915<0>\n10ljm:803564:803574 [0] NCCL INFO Using network Socket\nljm:803564:803574 [0] NCCL INFO comm 0x5551 rank 0 nranks 2 cudaDev 0 busId 1b000 - Init START\n10ljm:803564:803574 [0] NCCL INFO comm 0x5552 rank 1 nranks 2 cudaDev 0 busId 1b000 - Init START\nljm:803564:803574 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0\n10ljm:803564:803574 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [send] via NET/Socket/0",
        ),
      ),
    ).toEqual([["socket_transport", "warning", [0, 1]]]);
  });
});
