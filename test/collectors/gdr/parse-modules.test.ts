import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseLsmod, parseLsmodLine, parseProcModules, parseProcModulesLine, type KernelModule } from "../../../collectors/gdr/parse-modules.js";
import { assessGdr, type ContextModule } from "../../../collectors/gdr/readiness.js";
import { listFixtures, readCapture } from "../../helpers/fixtures.js";
import { procfsFixtures } from "./deps.js";

type Loaded = Partial<Record<ContextModule, boolean>>;

interface Golden {
  count: number;
  peermemLoaded: boolean;
  peermemIbCoreUser: boolean;
  /** Context modules expected loaded; every other context module must read false. */
  loaded: ContextModule[];
  ibCoreUsers: string[] | null;
  some: KernelModule[];
}

const all = (loaded: ContextModule[]): Loaded => {
  const out: Loaded = {};
  for (const m of ["nvidia", "nvidia_peermem", "nv_peer_mem", "ib_core", "mlx5_core", "ib_umad", "nvidia_fs", "gdrdrv"] as const) {
    out[m] = loaded.includes(m);
  }
  return out;
};

const IB_CORE_USERS_8 = ["rdma_cm", "ib_ipoib", "iw_cm", "ib_umad", "rdma_ucm", "ib_uverbs", "mlx5_ib", "ib_cm"];
const IB_CORE_USERS_9 = ["rdma_cm", "ib_ipoib", "nvidia_peermem", "iw_cm", "ib_umad", "rdma_ucm", "ib_uverbs", "mlx5_ib", "ib_cm"];

const LSMOD_GOLDEN: Record<string, Golden> = {
  "01-vectorflow-gx-v100s-580-peermem-mlx5.txt": {
    count: 16,
    peermemLoaded: true,
    // MLNX OFED on 6.8: nvidia_peermem hangs off ib_uverbs, ib_core does not list it.
    peermemIbCoreUser: false,
    loaded: ["nvidia", "nvidia_peermem", "ib_core", "mlx5_core"],
    ibCoreUsers: IB_CORE_USERS_8,
    some: [
      // size column overflowing its alignment
      { name: "nvidia", size: 104153088, refcount: 2, users: ["nvidia_uvm", "nvidia_peermem"], state: undefined },
      { name: "nvidia_peermem", size: 16384, refcount: 0, users: [], state: undefined },
      { name: "ib_uverbs", size: 212992, refcount: 3, users: ["nvidia_peermem", "rdma_ucm", "mlx5_ib"], state: undefined },
      { name: "pci_hyperv_intf", size: 12288, refcount: 1, users: ["mlx5_core"], state: undefined },
    ],
  },
  "03-gpud-pr39-lsmod-peermem-h100.txt": {
    count: 3,
    peermemLoaded: true,
    peermemIbCoreUser: true,
    loaded: ["nvidia", "nvidia_peermem", "ib_core"],
    ibCoreUsers: IB_CORE_USERS_9,
    some: [
      { name: "nvidia_peermem", size: 16384, refcount: 0, users: [], state: undefined },
      { name: "ib_core", size: 434176, refcount: 9, users: IB_CORE_USERS_9, state: undefined },
      { name: "nvidia", size: 56717312, refcount: 550, users: ["nvidia_uvm", "nvidia_peermem", "nvidia_modeset"], state: undefined },
    ],
  },
  "04-nvidia-cloud-native-docs-gds-rdma-EDITED-DOCS.txt": {
    count: 7,
    peermemLoaded: true,
    peermemIbCoreUser: true,
    loaded: ["nvidia", "nvidia_peermem", "ib_core", "nvidia_fs"],
    ibCoreUsers: IB_CORE_USERS_9,
    some: [
      { name: "nvidia_fs", size: 245760, refcount: 0, users: [], state: undefined },
      { name: "nvidia", size: 39059456, refcount: 115, users: ["nvidia_uvm", "nvidia_peermem", "nvidia_modeset"], state: undefined },
      { name: "drm", size: 491520, refcount: 6, users: ["drm_kms_helper", "drm_vram_helper", "nvidia", "mgag200", "ttm"], state: undefined },
    ],
  },
};

describe("parseLsmod on every real lsmod capture", () => {
  it("has a golden entry for each capture", () => {
    expect(listFixtures("tools/lsmod", ".txt")).toEqual(Object.keys(LSMOD_GOLDEN).sort());
  });

  for (const [file, g] of Object.entries(LSMOD_GOLDEN)) {
    it(file, () => {
      const list = parseLsmod(readCapture(`tools/lsmod/${file}`));
      expect(list.invalidLines).toBe(0);
      expect(list.sawHeader).toBe(false);
      expect(list.modules).toHaveLength(g.count);
      for (const m of g.some) expect(list.modules.find((x) => x.name === m.name)).toEqual(m);
      expect(list.modules.find((x) => x.name === "ib_core")?.users ?? null).toEqual(g.ibCoreUsers);
      const r = assessGdr(list.modules);
      expect(r.peermemLoaded).toBe(g.peermemLoaded);
      expect(r.peermemIbCoreUser).toBe(g.peermemIbCoreUser);
      expect(r.loaded).toEqual(all(g.loaded));
    });
  }
});

describe("parseLsmod", () => {
  it("skips the real header and reads a module without users", () => {
    const text = "Module                  Size  Used by\nnvidia_peermem         16384  0\nib_core               434176  2 nvidia_peermem,mlx5_ib\n";
    const list = parseLsmod(text);
    expect(list.sawHeader).toBe(true);
    expect(list.invalidLines).toBe(0);
    expect(list.modules.map((m) => m.name)).toEqual(["nvidia_peermem", "ib_core"]);
    expect(list.modules[1]?.users).toEqual(["nvidia_peermem", "mlx5_ib"]);
  });

  it("a header alone is a valid, empty list", () => {
    const list = parseLsmod("Module                  Size  Used by\n");
    expect(list).toEqual({ modules: [], invalidLines: 0, sawHeader: true });
  });

  it("counts lines that are not lsmod output instead of guessing", () => {
    const list = parseLsmod("lsmod: command not found\nnvidia 12 x\n\nnvidia 39059456 115 nvidia_uvm\n");
    expect(list.invalidLines).toBe(2);
    expect(list.modules.map((m) => m.name)).toEqual(["nvidia"]);
  });

  it("rejects a /proc/modules line", () => {
    expect(parseLsmodLine("nvidia_peermem 16384 0 - Live 0x0000000000000000 (OE)")).toBeNull();
  });
});

describe("parseProcModules", () => {
  it("reads the kernel's line format with taints and comma-terminated users", () => {
    expect(parseProcModulesLine("nvidia 56717312 550 nvidia_peermem,nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (POE)")).toEqual({
      name: "nvidia",
      size: 56717312,
      refcount: 550,
      users: ["nvidia_peermem", "nvidia_uvm", "nvidia_modeset"],
      state: "Live",
    });
  });

  it("reads '-' users, [permanent], and kernels without module unloading", () => {
    expect(parseProcModulesLine("nvidia_peermem 16384 0 - Live 0xffffffffc1a2b000")?.users).toEqual([]);
    expect(parseProcModulesLine("crc32c_intel 24576 3 [permanent], Live 0x0000000000000000")?.users).toEqual([]);
    expect(parseProcModulesLine("ib_core 434176 - - Live 0x0000000000000000")).toEqual({
      name: "ib_core",
      size: 434176,
      refcount: undefined,
      users: [],
      state: "Live",
    });
  });

  it("rejects an lsmod line, a bad state and a bad address", () => {
    expect(parseProcModulesLine("nvidia_peermem         16384  0")).toBeNull();
    expect(parseProcModulesLine("nvidia_peermem 16384 0 - Dead 0x0000000000000000")).toBeNull();
    expect(parseProcModulesLine("nvidia_peermem 16384 0 - Live 0xZZ")).toBeNull();
    expect(parseProcModulesLine("nvidia_peermem 16384 0 - Live 0x0 OE")).toBeNull();
  });

  it("lsmod text is not /proc/modules", () => {
    const list = parseProcModules(readCapture("tools/lsmod/03-gpud-pr39-lsmod-peermem-h100.txt"));
    expect(list.modules).toEqual([]);
    expect(list.invalidLines).toBe(3);
  });
});

interface ProcGolden {
  count: number;
  peermemLoaded: boolean;
  peermemIbCoreUser: boolean;
  loaded: ContextModule[];
  invalidLines: number;
}

const PROC_GOLDEN: Record<string, ProcGolden> = {
  "gdr-h100-peermem": {
    count: 18,
    peermemLoaded: true,
    peermemIbCoreUser: true,
    loaded: ["nvidia", "nvidia_peermem", "ib_core", "mlx5_core", "ib_umad"],
    invalidLines: 0,
  },
  "gdr-legacy-nv-peer-mem": {
    count: 10,
    peermemLoaded: true,
    peermemIbCoreUser: true,
    loaded: ["nvidia", "nv_peer_mem", "ib_core", "mlx5_core", "ib_umad"],
    invalidLines: 0,
  },
  "gdr-no-peermem": {
    count: 8,
    peermemLoaded: false,
    peermemIbCoreUser: false,
    loaded: ["nvidia", "ib_core", "mlx5_core", "ib_umad"],
    invalidLines: 0,
  },
  "gdr-peermem-via-uverbs": {
    count: 8,
    peermemLoaded: true,
    peermemIbCoreUser: false,
    loaded: ["nvidia", "nvidia_peermem", "ib_core", "mlx5_core"],
    invalidLines: 0,
  },
  "gdr-plain-vm": { count: 10, peermemLoaded: false, peermemIbCoreUser: false, loaded: [], invalidLines: 0 },
  "gdr-peermem-loading": {
    count: 8,
    // Loading (init not finished) does not count; neither does ib_umad's Unloading.
    peermemLoaded: false,
    peermemIbCoreUser: false,
    loaded: ["nvidia", "ib_core", "mlx5_core", "nvidia_fs", "gdrdrv"],
    invalidLines: 0,
  },
  "gdr-no-module-unload": {
    count: 4,
    peermemLoaded: true,
    peermemIbCoreUser: false,
    loaded: ["nvidia", "nvidia_peermem", "ib_core", "mlx5_core"],
    invalidLines: 0,
  },
  "gdr-garbage": { count: 0, peermemLoaded: false, peermemIbCoreUser: false, loaded: [], invalidLines: 3 },
};

describe("parseProcModules on the synthetic /proc/modules files", () => {
  for (const [dir, g] of Object.entries(PROC_GOLDEN)) {
    it(dir, () => {
      const list = parseProcModules(readFileSync(join(procfsFixtures, dir, "modules"), "utf8"));
      expect(list.modules).toHaveLength(g.count);
      expect(list.invalidLines).toBe(g.invalidLines);
      const r = assessGdr(list.modules);
      expect(r.peermemLoaded).toBe(g.peermemLoaded);
      expect(r.peermemIbCoreUser).toBe(g.peermemIbCoreUser);
      expect(r.loaded).toEqual(all(g.loaded));
    });
  }

  it("legacy nv_peer_mem is named in ib_core's users", () => {
    const list = parseProcModules(readFileSync(join(procfsFixtures, "gdr-legacy-nv-peer-mem", "modules"), "utf8"));
    expect(list.modules.find((m) => m.name === "ib_core")?.users[0]).toBe("nv_peer_mem");
    expect(list.modules.find((m) => m.name === "nv_peer_mem")).toEqual({
      name: "nv_peer_mem",
      size: 16384,
      refcount: 0,
      users: [],
      state: "Live",
    });
  });
});

describe("assessGdr", () => {
  const mod = (name: string, users: string[] = [], state: string | undefined = "Live"): KernelModule => ({
    name,
    size: 1,
    refcount: 0,
    users,
    state,
  });

  it("an ib_core user that is not loaded itself does not count", () => {
    const r = assessGdr([mod("ib_core", ["nvidia_peermem"])]);
    expect(r.peermemLoaded).toBe(false);
    expect(r.peermemIbCoreUser).toBe(false);
  });

  it("an Unloading ib_core does not vouch for peermem", () => {
    const r = assessGdr([mod("nvidia_peermem"), mod("ib_core", ["nvidia_peermem"], "Unloading")]);
    expect(r.peermemLoaded).toBe(true);
    expect(r.peermemIbCoreUser).toBe(false);
  });

  it("an empty list reads all zero", () => {
    const r = assessGdr([]);
    expect(r.peermemLoaded).toBe(false);
    expect(Object.values(r.loaded).some(Boolean)).toBe(false);
  });
});
