/**
 * The EFA driver's kernel lines (drivers/infiniband/hw/efa): its RDMA-device form
 * (`infiniband <dev>: `, no address) and its PCI form (`efa <pci>: `). The real captures
 * (test/fixtures/kmsg/42-, 43-) hold only refused commands; the other phrases follow the driver's
 * format strings (efa_com.c).
 */
import { describe, expect, it } from "vitest";
import { KernelEvents } from "../../../collectors/kmsg/parse/events.js";
import { parseNicEvent } from "../../../collectors/kmsg/parse/nic.js";

const kindOf = (line: string): [string | undefined, string | undefined, string | undefined] => {
  const e = parseNicEvent(line);
  return [e?.kind, e?.pci, e?.name];
};

describe("EFA kernel lines", () => {
  it("an admin command the device never completed is a device fault; a refused one is a failed command", () => {
    expect(
      kindOf(
        "[ 8812.112233] infiniband rdmap16s27: The device didn't send any completion for admin cmd CREATE_QP(1) status 2 (id: 41, sq producer: 77, sq consumer: 76, cq consumer: 76)",
      ),
    ).toEqual(["firmware_error", undefined, "rdmap16s27"]);
    expect(kindOf("infiniband efa_0: Admin queue is closed")).toEqual(["firmware_error", undefined, "efa_0"]);
    expect(kindOf("[1038619.687627] infiniband efa_0: Failed to process command REG_MR (opcode 7) comp_status 1 err -12")).toEqual([
      "command_error",
      undefined,
      "efa_0",
    ]);
  });

  it("the PCI form at probe: a device that is not ready", () => {
    expect(kindOf("[    5.101010] efa 0000:00:1d.0: Device isn't ready, abort com init")).toEqual(["probe_failed", "0000:00:1d.0", undefined]);
  });

  it("is no event: the verbs' echo of a refusal, the device's setup lines, another driver's RDMA-device lines", () => {
    expect(parseNicEvent("[1038619.695161] infiniband efa_0: Failed to register mr [-12]")).toBeUndefined();
    expect(parseNicEvent("[39435.060730] infiniband efa_0: IB device registered")).toBeUndefined();
    expect(parseNicEvent("[68998.638853] efa 0000:4f:00.0: Setup irq:1861 name:efa-mgmnt@pci:0000:4f:00.0")).toBeUndefined();
    // mlx5_ib's syndrome row with no `error cqe on cqn` line before it is no completion's (completion.ts).
    expect(new KernelEvents().read("[ 4929.694630] infiniband rocep33s0f0: mlx5_poll_one:530:(pid 0): syndrome 0x5, vendor syndrome 0xf9")).toEqual([]);
    expect(parseNicEvent("infiniband mlx5_0: RoCE: enabled; app reported WC error: 12")).toBeUndefined();
    // A word that merely ends in "efa", and a process named like the prefix.
    expect(parseNicEvent("chefa 0000:00:1d.0: Failed to process command")).toBeUndefined();
    expect(parseNicEvent("myinfiniband efa_0: Failed to process command REG_MR")).toBeUndefined();
    // Other RDMA drivers' devices use the same ib core prefix: their words are not EFA's.
    expect(parseNicEvent("infiniband bnxt_re0: Admin queue is closed")).toBeUndefined();
    expect(parseNicEvent("infiniband mlx5_0: Failed to process command")).toBeUndefined();
  });

  it("finds the prefix after a tab, and past an earlier 'infiniband ' that opens none", () => {
    expect(kindOf("\tinfiniband efa_0: Admin queue is closed")).toEqual(["firmware_error", undefined, "efa_0"]);
    expect(kindOf("the infiniband stack: infiniband efa_0: Admin queue is closed")).toEqual(["firmware_error", undefined, "efa_0"]);
  });
});
