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
});
