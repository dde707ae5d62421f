import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { CollectorDeps } from "../../../collectors/collector.js";
import { createGdrCollector } from "../../../collectors/gdr/collector.js";
import { fakesDir, procfsFixtures, series, valueOf } from "./deps.js";
import { byLabel, collectorError, useToolRig } from "../../helpers/collector-deps.js";
const LSMOD = join(fakesDir, "lsmod");
const H100 = "03-gpud-pr39-lsmod-peermem-h100.txt";

const rig = useToolRig("ringwatch-gdr-");
const calls = rig.calls;
let tmp: string;
let deps: CollectorDeps;

beforeEach(() => {
  deps = rig.deps();
  tmp = rig.tmp();
});

/** A procfs root with no `modules` file: the lsmod path. */
function emptyProcfs(): string {
  const dir = join(tmp, "proc");
  mkdirSync(dir);
  return dir;
}

const moduleMap = (): Promise<Record<string, number>> => byLabel(deps.registry, "ringwatch_gdr_module_loaded", "module");

describe("gdr collector", () => {
  it("prefers /proc/modules and never runs lsmod when it exists", async () => {
    vi.stubEnv("FAKE_LSMOD", H100); // would say peermem is loaded
    const c = createGdrCollector(deps, { procfsRoot: join(procfsFixtures, "gdr-no-peermem"), lsmod: LSMOD });
    expect(c.mode).toBe("poll");
    expect(c.name).toBe("gdr");
    await c.update?.();
    expect(await valueOf(deps.registry, "ringwatch_gdr_peermem_loaded")).toBe(0);
    expect(await valueOf(deps.registry, "ringwatch_gdr_peermem_ib_core_user")).toBe(0);
    expect(await series(deps.registry, "ringwatch_gdr_source_info")).toEqual([{ labels: { source: "procfs" }, value: 1 }]);
    expect(calls()).toEqual([]);
  });

  it("publishes no series before its first reading (no false 0)", async () => {
    createGdrCollector(deps, { procfsRoot: join(procfsFixtures, "gdr-h100-peermem"), lsmod: LSMOD });
    expect(await series(deps.registry, "ringwatch_gdr_peermem_loaded")).toEqual([]);
    expect(await series(deps.registry, "ringwatch_gdr_peermem_ib_core_user")).toEqual([]);
  });

  it("publishes peermem, ib_core user and the context modules from /proc/modules", async () => {
    const c = createGdrCollector(deps, { procfsRoot: join(procfsFixtures, "gdr-h100-peermem"), lsmod: LSMOD });
    await c.once();
    expect(await valueOf(deps.registry, "ringwatch_gdr_peermem_loaded")).toBe(1);
    expect(await valueOf(deps.registry, "ringwatch_gdr_peermem_ib_core_user")).toBe(1);
    expect(await moduleMap()).toEqual({
      nvidia: 1,
      nvidia_peermem: 1,
      nv_peer_mem: 0,
      ib_core: 1,
      mlx5_core: 1,
      ib_umad: 1,
      nvidia_fs: 0,
      gdrdrv: 0,
    });
  });

  it("legacy nv_peer_mem counts as peermem", async () => {
    const c = createGdrCollector(deps, { procfsRoot: join(procfsFixtures, "gdr-legacy-nv-peer-mem"), lsmod: LSMOD });
    await c.update?.();
    expect(await valueOf(deps.registry, "ringwatch_gdr_peermem_loaded")).toBe(1);
    expect(await valueOf(deps.registry, "ringwatch_gdr_peermem_ib_core_user")).toBe(1);
    expect(await valueOf(deps.registry, "ringwatch_gdr_module_loaded", { module: "nv_peer_mem" })).toBe(1);
    expect(await valueOf(deps.registry, "ringwatch_gdr_module_loaded", { module: "nvidia_peermem" })).toBe(0);
  });

  it("a host without NVIDIA or RDMA modules is a valid reading of zeros", async () => {
    const c = createGdrCollector(deps, { procfsRoot: join(procfsFixtures, "gdr-plain-vm"), lsmod: LSMOD });
    await c.update?.();
    expect(await valueOf(deps.registry, "ringwatch_gdr_peermem_loaded")).toBe(0);
    const mods = await moduleMap();
    expect(Object.keys(mods)).toHaveLength(8);
    expect(Object.values(mods).every((v) => v === 0)).toBe(true);
  });

  it("an empty /proc/modules (no module loaded) is valid too", async () => {
    const root = emptyProcfs();
    writeFileSync(join(root, "modules"), "");
    const c = createGdrCollector(deps, { procfsRoot: root, lsmod: LSMOD });
    await c.update?.();
    expect(await valueOf(deps.registry, "ringwatch_gdr_peermem_loaded")).toBe(0);
    expect(await valueOf(deps.registry, "ringwatch_gdr_source_info", { source: "procfs" })).toBe(1);
    expect(calls()).toEqual([]);
  });

  it("falls back to lsmod when <procfs>/modules is absent", async () => {
    vi.stubEnv("FAKE_LSMOD", H100);
    const c = createGdrCollector(deps, { procfsRoot: emptyProcfs(), lsmod: LSMOD });
    await c.update?.();
    expect(calls()).toEqual(["lsmod"]);
    expect(await series(deps.registry, "ringwatch_gdr_source_info")).toEqual([{ labels: { source: "lsmod" }, value: 1 }]);
    expect(await valueOf(deps.registry, "ringwatch_gdr_peermem_loaded")).toBe(1);
    expect(await valueOf(deps.registry, "ringwatch_gdr_peermem_ib_core_user")).toBe(1);
    expect(await valueOf(deps.registry, "ringwatch_gdr_module_loaded", { module: "mlx5_core" })).toBe(0);
  });

  it("lsmod: peermem used only by ib_uverbs (lsmod/01) reads loaded but not an ib_core user", async () => {
    vi.stubEnv("FAKE_LSMOD", "01-vectorflow-gx-v100s-580-peermem-mlx5.txt");
    const c = createGdrCollector(deps, { procfsRoot: emptyProcfs(), lsmod: LSMOD });
    await c.update?.();
    expect(await valueOf(deps.registry, "ringwatch_gdr_peermem_loaded")).toBe(1);
    expect(await valueOf(deps.registry, "ringwatch_gdr_peermem_ib_core_user")).toBe(0);
    expect(await valueOf(deps.registry, "ringwatch_gdr_module_loaded", { module: "mlx5_core" })).toBe(1);
  });

  it("lsmod: nvidia_fs on the GPU Operator docs capture (lsmod/04)", async () => {
    vi.stubEnv("FAKE_LSMOD", "04-nvidia-cloud-native-docs-gds-rdma-EDITED-DOCS.txt");
    const c = createGdrCollector(deps, { procfsRoot: emptyProcfs(), lsmod: LSMOD });
    await c.update?.();
    expect(await valueOf(deps.registry, "ringwatch_gdr_module_loaded", { module: "nvidia_fs" })).toBe(1);
    expect(await valueOf(deps.registry, "ringwatch_gdr_module_loaded", { module: "gdrdrv" })).toBe(0);
  });

  it("neither /proc/modules nor lsmod: absent, and earlier series are withdrawn", async () => {
    const root = emptyProcfs();
    writeFileSync(join(root, "modules"), readFileSync(join(procfsFixtures, "gdr-h100-peermem", "modules")));
    const c = createGdrCollector(deps, { procfsRoot: root, lsmod: join(tmp, "no-such-lsmod") });
    await c.update?.();
    expect(await valueOf(deps.registry, "ringwatch_gdr_peermem_loaded")).toBe(1);
    rmSync(join(root, "modules"));
    const err = await collectorError(c.update!());
    expect(err.absent).toBe(true);
    expect(await series(deps.registry, "ringwatch_gdr_peermem_loaded")).toEqual([]);
    expect(await series(deps.registry, "ringwatch_gdr_module_loaded")).toEqual([]);
    expect(await series(deps.registry, "ringwatch_gdr_source_info")).toEqual([]);
  });

  it("a hung lsmod is killed by the timeout and fails the update", async () => {
    vi.stubEnv("FAKE_LSMOD_MODE", "hang");
    const c = createGdrCollector(deps, { procfsRoot: emptyProcfs(), lsmod: LSMOD, timeoutMs: 300 });
    const t0 = Date.now();
    const err = await collectorError(c.update!());
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(err.absent).toBe(false);
    expect(err.message).toMatch(/timed out/);
    expect(deps.exec.running()).toBe(0);
  });

  it("lsmod printing garbage fails the update", async () => {
    vi.stubEnv("FAKE_LSMOD_MODE", "garble");
    const c = createGdrCollector(deps, { procfsRoot: emptyProcfs(), lsmod: LSMOD });
    const err = await collectorError(c.update!());
    expect(err.absent).toBe(false);
    expect(err.message).toMatch(/neither the lsmod header nor a module line/);
  });

  it("lsmod exiting non-zero fails the update with its message", async () => {
    vi.stubEnv("FAKE_LSMOD_MODE", "fail");
    // The file lsmod reads is there (this machine's /proc/modules may not be: a sandbox).
    const lsmodSource = join(procfsFixtures, "gdr-h100-peermem", "modules");
    const c = createGdrCollector(deps, { procfsRoot: emptyProcfs(), lsmod: LSMOD, lsmodSource });
    const err = await collectorError(c.update!());
    expect(err.absent).toBe(false);
    expect(err.message).toMatch(/exit code 1: libkmod: ERROR/);
  });

  it("lsmod failing where the file it reads does not exist either (no loadable modules, a sandbox): absent, not failed", async () => {
    vi.stubEnv("FAKE_LSMOD_MODE", "fail");
    const lsmodSource = join(tmp, "no-proc", "modules");
    const c = createGdrCollector(deps, { procfsRoot: emptyProcfs(), lsmod: LSMOD, lsmodSource });
    const err = await collectorError(c.update!());
    expect(err.absent).toBe(true);
    expect(err.message).toBe(
      `no module list: neither ${join(tmp, "proc", "modules")} nor ${lsmodSource} exists, and ${LSMOD}, which reads ${lsmodSource}, failed`,
    );
    expect(await series(deps.registry, "ringwatch_gdr_module_loaded")).toEqual([]);
  });

  it("a /proc/modules that is not in the modules format fails the update, not lsmod", async () => {
    vi.stubEnv("FAKE_LSMOD", H100);
    const c = createGdrCollector(deps, { procfsRoot: join(procfsFixtures, "gdr-garbage"), lsmod: LSMOD });
    const err = await collectorError(c.update!());
    expect(err.absent).toBe(false);
    expect(err.message).toMatch(/modules format/);
    expect(calls()).toEqual([]);
  });

  it("an unreadable <procfs>/modules (a directory) is a CollectorError, not a crash", async () => {
    const root = emptyProcfs();
    mkdirSync(join(root, "modules"));
    const c = createGdrCollector(deps, { procfsRoot: root, lsmod: LSMOD });
    const err = await collectorError(c.update!());
    expect(err.absent).toBe(false);
    expect(err.message).toMatch(/EISDIR/);
  });
});
