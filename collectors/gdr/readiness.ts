/**
 * Pure: what a module list says about GPUDirect RDMA readiness.
 */
import type { KernelModule } from "./parse-modules.js";

/** Current name first, then the MLNX_OFED-era name. */
export const PEERMEM_MODULES = ["nvidia_peermem", "nv_peer_mem"] as const;

/** Modules reported by ringwatch_gdr_module_loaded (a fixed set: bounded cardinality). */
export const CONTEXT_MODULES = ["nvidia", "nvidia_peermem", "nv_peer_mem", "ib_core", "mlx5_core", "ib_umad", "nvidia_fs", "gdrdrv"] as const;
export type ContextModule = (typeof CONTEXT_MODULES)[number];

export interface GdrReading {
  /** nvidia_peermem or nv_peer_mem is loaded. */
  peermemLoaded: boolean;
  /** ib_core's "used by" list names a loaded peermem module (gpud's check). */
  peermemIbCoreUser: boolean;
  /** Each context module: loaded or not. */
  loaded: Record<ContextModule, boolean>;
}

/**
 * A module counts as loaded when it is listed and not on its way in or out: /proc/modules'
 * `Loading` (init still running, possibly hung) and `Unloading` do not count. lsmod prints no
 * state, so every module it lists counts.
 */
export function isLoaded(mod: KernelModule | undefined): boolean {
  return mod !== undefined && (mod.state === undefined || mod.state === "Live");
}

export function assessGdr(modules: readonly KernelModule[]): GdrReading {
  const byName = new Map<string, KernelModule>();
  for (const m of modules) if (!byName.has(m.name)) byName.set(m.name, m);

  const loadedPeermem = PEERMEM_MODULES.filter((n) => isLoaded(byName.get(n)));
  const ibCore = byName.get("ib_core");
  const ibCoreUsers = isLoaded(ibCore) && ibCore ? ibCore.users : [];

  const loaded = {} as Record<ContextModule, boolean>;
  for (const n of CONTEXT_MODULES) loaded[n] = isLoaded(byName.get(n));

  return {
    peermemLoaded: loadedPeermem.length > 0,
    peermemIbCoreUser: loadedPeermem.some((n) => ibCoreUsers.includes(n)),
    loaded,
  };
}
