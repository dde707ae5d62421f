/**
 * Forms the thirtieth blind set brought, from its real captures (test/fixtures/nccl-pasted 773, 776,
 * 783): gdb's backtrace of Horovod's coordinator waiting in MPI_Gather, a port ibv_devinfo shows
 * down, and a py-spy dump whose thread waits in NCCL through vLLM's and SGLang's ctypes wrapper.
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../collectors/nccl/analyze/analyze.js";
import { nativeWait } from "../../../../collectors/nccl/logs/native/gdb-backtrace.js";
import { PastedPortStates } from "../../../../collectors/infiniband/pasted-port-state.js";
import { KernelLines } from "../../../../agent/analyze-kernel.js";
import { brief, pastedText, seriousFindings } from "../../../helpers/pasted.js";

describe("gdb's backtrace of Horovod's coordinator in MPI_Gather (773)", () => {
  it("the capture: a hang_suspected warning naming MPI's call and Horovod's caller", () => {
    const fs = seriousFindings(pastedText("773-"));
    expect(brief(fs)).toEqual([["hang_suspected", "warning", []]]);
    expect(fs[0]?.summary).toContain("stopped inside MPI's MPI_Gather (called from horovod::common::(anonymous namespace)::RunLoopOnce)");
  });

  it("PMPI_ is the same call; an NCCL call outside it wins; MPI's progress engine alone is no call", () => {
    expect(nativeWait(["opal_progress", "PMPI_Allreduce", "main"])).toEqual({ call: "MPI_Allreduce", wait: "mpi", caller: "main" });
    expect(nativeWait(["opal_progress", "PMPI_Barrier", "ncclCommInitRank"])).toMatchObject({ call: "ncclCommInitRank", wait: "init" });
    expect(nativeWait(["btl_openib_component_progress", "opal_progress", "mca_pml_ob1_send"])).toBeUndefined();
  });
});

describe("a port that ibv_devinfo shows down (776)", () => {
  it("the capture: mlx5_0 port 1 PORT_DOWN is a hca_error warning; the Active ports are none", () => {
    const fs = analyzeLogs([{ name: "x.log", text: pastedText("776-") }], new KernelLines()).findings.filter((f) => f.severity !== "info");
    expect(brief(fs)).toEqual([["hca_error", "warning", []]]);
    expect(fs[0]).toMatchObject({ device: "mlx5_0 port 1", event: "port_other" });
    expect(fs[0]?.summary).toContain("ibv_devinfo: state DOWN)");
  });

  it("each port of each hca_id, read at its state", () => {
    const p = new PastedPortStates();
    const rows = [
      "hca_id: mlx5_2",
      "        phys_port_cnt: 2",
      "                port:   1",
      "                        state:  PORT_ACTIVE (4)",
      "                port:   2",
      "                        state:  PORT_INIT (2)",
    ];
    const read = rows.map((r) => p.line(r)).filter((r) => r !== undefined);
    expect(read.map((r) => [r.hca, r.port, r.state, r.trouble, r.tool])).toEqual([
      ["mlx5_2", 1, "ACTIVE", "active", "ibv_devinfo"],
      ["mlx5_2", 2, "INIT", "other", "ibv_devinfo"],
    ]);
    expect(new PastedPortStates().line("                        state:  PORT_DOWN (1)")).toBeUndefined();
  });
});

describe("a py-spy dump waiting in NCCL through vLLM's and SGLang's ctypes wrapper (783)", () => {
  it("the capture: the idle forward thread in ncclCommWindowRegister (pynccl_wrapper.py) is a hang_suspected warning", () => {
    const fs = seriousFindings(pastedText("783-"));
    expect(brief(fs)).toEqual([["hang_suspected", "warning", []]]);
    expect(fs[0]?.summary).toContain("ncclCommWindowRegister");
  });
});
