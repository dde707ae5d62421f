/**
 * A counter file nobody may read (chmod 000, a real EACCES from the kernel) skips that counter
 * only. Root reads a mode-000 file, so the reader runs in a child process as a user the mode
 * denies: nobody when this test is root (CI), this user otherwise. It runs the built reader
 * (dist/collectors/infiniband/sysfs.js) from a copy every user can read (staged-build.ts): the
 * checkout may lie under a 0700 home directory.
 */
import { chmodSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertReachableByAll, deniedUser, runScriptAs, stageBuild, type StagedBuild } from "../../helpers/staged-build.js";
import { GPUD_DUMP, makeTree, type Tree } from "./trees.js";

/** Reads the tree as the running user; prints mlx5_0's first port, the device count and whether `denied` was readable. */
const READ_SCRIPT = `
import { accessSync, constants } from "node:fs";
const [sysfsUrl, root, denied] = process.argv.slice(1);
const { listDevices, readInfinibandSysfs } = await import(sysfsUrl);
let access = "readable";
try { accessSync(denied, constants.R_OK); } catch (e) { access = e.code; }
const names = (await listDevices(root)) ?? [];
const { devices } = await readInfinibandSysfs(root, names, {});
const port = devices.find((d) => d.name === "mlx5_0")?.ports[0] ?? null;
console.log(JSON.stringify({ access, devices: devices.length, port }));
`;

interface Read {
  access: string;
  devices: number;
  port: { counters: Record<string, number>; unreadable: number } | null;
}

let staged: StagedBuild;
let tree: Tree;
beforeAll(() => {
  staged = stageBuild("rw-ib-eacces-");
});
afterAll(() => staged.remove());

describe("one unreadable sysfs file", () => {
  beforeAll(() => {
    tree = makeTree(GPUD_DUMP);
    chmodSync(tree.root, 0o755); // a fresh temp directory is 0700
    assertReachableByAll(tree.root);
  });
  afterAll(() => tree.remove());

  async function read(denied: string): Promise<Read> {
    const r = await runScriptAs(staged, READ_SCRIPT, [staged.module("collectors/infiniband/sysfs.js"), tree.root, denied], deniedUser);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout) as Read;
  }

  it("an unreadable file (chmod 000, EACCES) skips that counter only", async () => {
    const file = join(tree.root, "class/infiniband/mlx5_0/ports/1/counters/port_rcv_errors");
    const before = await read(file);
    // The same reader, before the chmod: every counter is there and nothing is unreadable.
    expect(before.access).toBe("readable");
    expect(before.port?.counters.port_rcv_errors).toBe(14);
    expect(before.port?.unreadable).toBe(0);
    chmodSync(file, 0o000);
    try {
      const after = await read(file);
      expect(after.access).toBe("EACCES"); // the reader really cannot read it (else this proves nothing)
      expect(after.port?.counters.port_rcv_errors).toBeUndefined();
      expect(after.port?.counters.symbol_error).toBe(0);
      expect(after.port?.unreadable).toBe(1);
      expect(Object.keys(after.port?.counters ?? {}).sort()).toEqual(
        Object.keys(before.port?.counters ?? {})
          .filter((k) => k !== "port_rcv_errors")
          .sort(),
      );
      expect(after.devices).toBe(before.devices);
    } finally {
      chmodSync(file, 0o644);
    }
  });
});
