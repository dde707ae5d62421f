import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listDevices, nodeFs, readInfinibandSysfs, type SysfsFs } from "../../../collectors/infiniband/sysfs.js";
import type { IbDevice } from "../../../collectors/infiniband/types.js";
import { GPUD_DUMP, makeTree, type Tree } from "./trees.js";

let tree: Tree;
let port1: string;
beforeEach(() => {
  tree = makeTree(GPUD_DUMP);
  port1 = join(tree.root, "class/infiniband/mlx5_0/ports/1");
});
afterEach(() => {
  tree.remove();
});

async function read(fs?: SysfsFs, concurrency?: number): Promise<IbDevice[]> {
  const names = (await listDevices(tree.root)) ?? [];
  return (await readInfinibandSysfs(tree.root, names, { fs, concurrency })).devices;
}

function mlx50(devices: IbDevice[]): IbDevice {
  const d = devices.find((x) => x.name === "mlx5_0");
  if (!d) throw new Error("mlx5_0 lost");
  return d;
}

function failing(codes: Record<string, string>): SysfsFs {
  return {
    readdir: (p) => nodeFs.readdir(p),
    readFile: (p) => {
      for (const [suffix, code] of Object.entries(codes)) {
        if (p.endsWith(suffix)) return Promise.reject(Object.assign(new Error(`${code}: ${p}`), { code }));
      }
      return nodeFs.readFile(p);
    },
  };
}

describe("one odd file skips that counter only", () => {
  it("N/A (no PMA), a directory (EISDIR) and garbage each skip one counter and are counted", async () => {
    writeFileSync(join(port1, "counters/symbol_error"), "N/A (no PMA)\n");
    rmSync(join(port1, "counters/link_downed"));
    mkdirSync(join(port1, "counters/link_downed"));
    writeFileSync(join(port1, "hw_counters/out_of_buffer"), "\u0000garbage");
    const d = mlx50(await read());
    const p = d.ports[0];
    expect(p?.counters.symbol_error).toBeUndefined();
    expect(p?.counters.link_downed).toBeUndefined();
    expect(p?.hwCounters.out_of_buffer).toBeUndefined();
    expect(p?.unreadable).toBe(3);
    expect(p?.counters.port_rcv_errors).toBe(14);
    expect(p?.counters.excessive_buffer_overrun_errors).toBe(15);
    expect(Object.keys(p?.counters ?? {})).toHaveLength(19);
    expect([d.firmwareVersion, p?.state, p?.rateBytesPerSecond]).toEqual(["28.41.1000", 4, 50e9]);
  });

  // A real chmod 000 needs a reader the mode denies (a child process as nobody when this runs as
  // root): sysfs-unreadable.integration.test.ts.

  it("EINVAL, EOPNOTSUPP and EACCES from the kernel skip those counters only", async () => {
    const fs = failing({
      "mlx5_0/ports/1/counters/port_xmit_wait": "EINVAL",
      "mlx5_0/ports/1/counters/symbol_error": "EOPNOTSUPP",
      "mlx5_0/ports/1/hw_counters/rx_write_requests": "EACCES",
    });
    const devices = await read(fs);
    const p = mlx50(devices).ports[0];
    expect(p?.counters.port_xmit_wait).toBeUndefined();
    expect(p?.counters.symbol_error).toBeUndefined();
    expect(p?.hwCounters.rx_write_requests).toBeUndefined();
    expect(p?.counters.port_rcv_data).toBe(230539874932483);
    expect(p?.unreadable).toBe(3);
    expect(devices).toHaveLength(9);
    expect(devices.find((d) => d.name === "mlx5_1")?.ports[0]?.unreadable).toBe(0);
  });

  it("an unreadable attribute leaves that attribute absent, not the port", async () => {
    const fs = failing({ "mlx5_0/ports/1/state": "EIO", "mlx5_0/fw_ver": "EACCES" });
    const d = mlx50(await read(fs));
    expect(d.firmwareVersion).toBeUndefined();
    expect(d.hcaType).toBe("MT4129");
    expect(d.ports[0]?.state).toBeUndefined();
    expect(d.ports[0]?.physState).toBe(5);
    expect(d.ports[0]?.counters.symbol_error).toBe(0);
  });

  it("an unlistable ports directory keeps the device without ports", async () => {
    const fs: SysfsFs = {
      readFile: (p) => nodeFs.readFile(p),
      readdir: (p) => (p.endsWith("mlx5_0/ports") ? Promise.reject(Object.assign(new Error("EACCES"), { code: "EACCES" })) : nodeFs.readdir(p)),
    };
    const devices = await read(fs);
    expect(mlx50(devices).ports).toEqual([]);
    expect(mlx50(devices).hcaType).toBe("MT4129");
    expect(devices.find((d) => d.name === "mlx5_1")?.ports).toHaveLength(1);
  });
});

describe("bounded parallel reads", () => {
  it("never has more than `concurrency` reads in flight, and does overlap them", async () => {
    let inFlight = 0;
    let max = 0;
    const slow = async <T>(f: () => Promise<T>): Promise<T> => {
      inFlight++;
      max = Math.max(max, inFlight);
      await new Promise((r) => setTimeout(r, 1));
      try {
        return await f();
      } finally {
        inFlight--;
      }
    };
    const fs: SysfsFs = { readFile: (p) => slow(() => nodeFs.readFile(p)), readdir: (p) => slow(() => nodeFs.readdir(p)) };
    const devices = await read(fs, 4);
    expect(devices).toHaveLength(9);
    expect(max).toBe(4);
  });
});
