import { describe, expect, it } from "vitest";
import { diagLine, diagProblem, isFatalWarning } from "../../../collectors/infiniband/diag-errors.js";
import { readCapture } from "../../helpers/fixtures.js";

describe("diagProblem on the real error captures", () => {
  it("errors/09: ibstat's ibpanic (pid dropped, so the line is stable)", () => {
    expect(diagProblem(readCapture("tools/errors/09-ibstat-ibpanic-mlx5_an0-azhpc-images-213.txt"))).toBe(
      "ibpanic: main: stat of IB device 'mlx5_an0' failed: No such file or directory",
    );
  });

  it("errors/11: iberror explained by the ibwarn before it", () => {
    expect(diagProblem(readCapture("tools/errors/11-perfquery-ibnetdiscover-mad-rpc-open-port-failed-infiniband_exporter-26.txt"))).toBe(
      "iberror: failed: discover failed (ibwarn: mad_rpc_open_port: client_register for mgmt 1 failed)",
    );
  });

  it("errors/12: umad_init without ib_umad, behind talosctl's own prefix", () => {
    expect(diagProblem(readCapture("tools/errors/12-nvlsm-umad-init-no-ib_umad-siderolabs-docs-581.txt"))).toBe(
      "ibwarn: umad_init: can't read ABI version from /sys/class/infiniband_mad/abi_version (No such file or directory): is ib_umad module loaded?",
    );
  });

  it("ibstat/01: the ibpanic after partial output", () => {
    expect(diagProblem(readCapture("tools/ibstat/01-gpud-a100-8x-ib200-ibpanic-spaces.txt"))).toBe(
      "ibpanic: main: stat of IB device 'mlx5_8' failed: No such file or directory",
    );
  });

  it("clean captures and debug-only ibwarn lines show no problem", () => {
    expect(diagProblem(readCapture("tools/ibstat/04-gpud-h100-9ca-8ib400-1eth200-spaces.txt"))).toBeUndefined();
    expect(diagProblem(readCapture("tools/perfquery/01-infiniband_exporter-perfquery-lx-0x506b4b03005c2740.txt"))).toBeUndefined();
    expect(diagProblem("ibwarn: [7] resolve_self: debug chatter\n")).toBeUndefined();
  });
});

describe("diagLine / isFatalWarning", () => {
  it("finds the keyword at the start or after a prefix, and drops the pid", () => {
    expect(diagLine("ibwarn: [298726] mad_rpc_open_port: client_register for mgmt 1 failed")).toEqual({
      kind: "ibwarn",
      text: "mad_rpc_open_port: client_register for mgmt 1 failed",
    });
    expect(diagLine("perfquery: iberror: failed: Failed to open '(null)' port '0'")).toEqual({
      kind: "iberror",
      text: "failed: Failed to open '(null)' port '0'",
    });
    expect(diagLine("Port GUID: 0x58a2e10300a7820e")).toBeUndefined();
    expect(diagLine("myibwarn: not a diag line")).toBeUndefined();
  });

  it("tells umad / MAD port trouble from chatter", () => {
    expect(isFatalWarning("umad_init: can't read ABI version")).toBe(true);
    expect(isFatalWarning("mad_rpc_open_port: client_register for mgmt 1 failed")).toBe(true);
    expect(isFatalWarning("main: can't open UMAD port (mlx5_0:1)")).toBe(true);
    expect(isFatalWarning("resolve_self: debug chatter")).toBe(false);
  });
});
