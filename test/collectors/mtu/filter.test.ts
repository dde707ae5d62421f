import { describe, expect, it } from "vitest";
import { DEFAULT_DEVICE_EXCLUDE, keepDevice } from "../../../collectors/mtu/filter.js";

describe("device filter", () => {
  it("by default drops per-pod, per-VM and overlay interfaces", () => {
    for (const d of [
      "veth3f2a1b",
      "cali8d2f0e1a2b3",
      "lxc4e1f0c2d",
      "lxc_health",
      "tap0",
      "vnet3",
      "gke1a2b3c4d",
      "azv9f8e7d6c",
      "flannel.1",
      "cni0",
      "tunl0",
      "vxlan.calico",
      "genev_sys_6081",
    ]) {
      expect(keepDevice(d, {}), d).toBe(false);
    }
  });

  it("by default keeps node interfaces, fabric ports, bonds and VLANs", () => {
    for (const d of ["lo", "eth0", "ib0", "ib0.8001", "ibP257s71127", "mlx5_ib0", "enP27815s1", "eno1", "bond0", "bond0.100", "docker0", "cilium_host"]) {
      expect(keepDevice(d, {}), d).toBe(true);
    }
  });

  it("include keeps only matches; exclude still applies after it", () => {
    const include = /^(ib|mlx5_)/;
    expect(keepDevice("ib0", { include })).toBe(true);
    expect(keepDevice("eth0", { include })).toBe(false);
    expect(keepDevice("ib0", { include, exclude: /^ib0$/ })).toBe(false);
  });

  it("a given exclude replaces the default", () => {
    expect(keepDevice("veth1", { exclude: /^docker/ })).toBe(true);
    expect(keepDevice("docker0", { exclude: /^docker/ })).toBe(false);
    // what the README suggests to keep everything
    expect(keepDevice("veth1", { exclude: /^$/ })).toBe(true);
  });

  it("a /g expression gives the same answer every time", () => {
    const exclude = /^veth/g;
    expect([1, 2, 3].map(() => keepDevice("veth1", { exclude }))).toEqual([false, false, false]);
  });

  it("the default is the documented expression", () => {
    expect(DEFAULT_DEVICE_EXCLUDE.source).toBe("^(veth|cali|lxc|tap|tun|flannel|cni|vxlan|genev|vnet|gke|azv)");
  });
});
