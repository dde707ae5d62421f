import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listDevices, readInfinibandSysfs } from "../../../collectors/infiniband/sysfs.js";
import type { IbDevice, IbPort } from "../../../collectors/infiniband/types.js";
import { counterOracle, GPUD_DUMP, makeTrees, NODE_EXPORTER_TTAR, PROCFS_TTAR, type Trees } from "./trees.js";

let trees: Trees;
beforeAll(() => {
  trees = makeTrees();
});
afterAll(() => trees.remove());

async function read(root: string): Promise<IbDevice[]> {
  return (await readInfinibandSysfs(root, (await listDevices(root)) ?? [])).devices;
}

function port(devices: IbDevice[], device: string, n: number): IbPort {
  const p = devices.find((d) => d.name === device)?.ports.find((x) => x.port === n);
  if (!p) throw new Error(`no ${device} port ${n}`);
  return p;
}

describe("every counter file of every real tree", () => {
  it.each([
    [NODE_EXPORTER_TTAR, "nodeExporter"],
    [PROCFS_TTAR, "procfs"],
    [GPUD_DUMP, "gpud"],
  ] as const)("%s: numbers read as written, N/A absent, lifespan not a counter", async (rel, key) => {
    const devices = await read(trees[key]);
    const oracle = counterOracle(rel);
    expect(oracle.length).toBeGreaterThan(20);
    for (const e of oracle) {
      const p = port(devices, e.device, e.port);
      const got = (e.dir === "counters" ? p.counters : e.dir === "counters_ext" ? p.countersExt : p.hwCounters)[e.name];
      const want = /^\d+$/.test(e.text) && !(e.dir === "hw_counters" && e.name === "lifespan") ? Number(e.text) : undefined;
      expect(got, `${e.device}/${e.port}/${e.dir}/${e.name}`).toBe(want);
    }
  });
});

describe("node_exporter's tree (i40iw0 without PMA, mlx4_0 with counters_ext)", () => {
  it("reads device and port attributes", async () => {
    const devices = await read(trees.nodeExporter);
    expect(devices.map((d) => [d.name, d.boardId, d.firmwareVersion, d.hcaType, d.nodeGuid, d.ports.length])).toEqual([
      ["i40iw0", "I40IW Board ID", "0.2", "I40IW", undefined, 1],
      ["mlx4_0", "SM_1141000001000", "2.31.5050", "MT4099", undefined, 2],
    ]);
    const i40 = port(devices, "i40iw0", 1);
    expect([i40.state, i40.physState, i40.rateBytesPerSecond, i40.linkLayer]).toEqual([4, 5, 1_250_000_000, "InfiniBand"]);
    expect(i40.counters).toEqual({});
    expect(i40.unreadable).toBe(17);
    expect(port(devices, "mlx4_0", 2).rateBytesPerSecond).toBe(5_000_000_000);
  });

  it("marks only PortCounters fields as fixed-width", async () => {
    const p = port(await read(trees.nodeExporter), "mlx4_0", 1);
    expect(p.fixedWidth).toContain("port_xmit_wait");
    expect(p.fixedWidth).toContain("link_downed");
    expect(p.fixedWidth).not.toContain("unicast_rcv_packets");
    expect(p.fixedWidth).not.toContain("multicast_xmit_packets");
    expect(p.fixedWidth).not.toContain("port_rcv_discards");
  });
});

describe("procfs' tree (hfi1_0, mlx4_0, mlx5_0 with hw_counters)", () => {
  it("reads attributes, normalises node_guid, keeps odd link_layer text", async () => {
    const devices = await read(trees.procfs);
    const hfi = devices.find((d) => d.name === "hfi1_0");
    expect(hfi?.hcaType).toBeUndefined();
    expect(hfi?.boardId).toBe("HPE 100Gb 1-port OP101 QSFP28 x16 PCIe Gen3 with Intel Omni-Path Adapter");
    expect(devices.find((d) => d.name === "mlx5_0")?.nodeGuid).toBe("0x0a7fbc1245efd23b");
    expect(port(devices, "mlx4_0", 2).linkLayer).toBe("InfiniBand");
    const mlx5 = port(devices, "mlx5_0", 1);
    expect([mlx5.state, mlx5.physState, mlx5.rateBytesPerSecond]).toEqual([4, 4, 3_125_000_000]);
    expect(Object.keys(mlx5.hwCounters)).toHaveLength(24);
    expect(mlx5.hwCounters.local_ack_timeout_err).toBe(131);
  });
});

describe("gpud's H100 tree (8 × NDR400 + RoCE bond)", () => {
  it("reads 9 devices with their rates and link layers", async () => {
    const devices = await read(trees.gpud);
    expect(devices.map((d) => d.name)).toEqual(["mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9", "mlx5_bond_0"]);
    for (const d of devices.slice(0, 8)) {
      expect([d.hcaType, d.firmwareVersion, d.ports[0]?.rateBytesPerSecond, d.ports[0]?.linkLayer]).toEqual(["MT4129", "28.41.1000", 50e9, "InfiniBand"]);
    }
    const bond = devices[8];
    expect([bond?.hcaType, bond?.ports[0]?.rateBytesPerSecond, bond?.ports[0]?.linkLayer, bond?.ports[0]?.state]).toEqual(["MT41692", 25e9, "Ethernet", 4]);
  });

  it("keeps every port's unreadable count at 0 on a clean tree", async () => {
    for (const d of await read(trees.gpud)) for (const p of d.ports) expect(p.unreadable, d.name).toBe(0);
  });
});

describe("listDevices", () => {
  it("returns undefined without the class directory and names otherwise", async () => {
    expect(await listDevices("/nonexistent-ringwatch")).toBeUndefined();
    expect(await listDevices(trees.nodeExporter)).toEqual(["i40iw0", "mlx4_0"]);
  });
});
