/**
 * MIG devices: which GPU, and which GPU instance of it, a MIG device id of pod-resources names.
 *
 * The device plugin names a MIG device by its UUID: `MIG-<uuid>` (drivers from R470) or, before,
 * `MIG-GPU-<gpu uuid>/<gpu instance>/<compute instance>`. The old form carries its GPU and GPU
 * instance; the new one carries neither. dcgm-exporter asks NVML for the device's parent and GPU
 * instance id; ringwatch has no NVML binding and asks nvidia-smi, through collectors/exec.ts:
 *  - `nvidia-smi -L` lists each GPU with its MIG devices under it,
 *    `  MIG 1g.10gb     Device  2: (UUID: MIG-...)`: the parent GPU, the profile, and the device's
 *    index on its GPU (its `Device N`, which is not its GPU instance id);
 *  - `nvidia-smi -q`, only when -L listed a device of the new form: each GPU's `MIG Device` blocks
 *    give `Index` and `GPU Instance ID`, joined to -L by the GPU's UUID and that index.
 * MigTable runs them only for a poll whose pod-resources answer lists a MIG device (a node without
 * MIG never forks for it), keeps the answer, and asks again after REFRESH_MS or when a MIG id
 * appears that the last answer did not list (once per such id).
 */
import type { Logger } from "pino";
import { trustedStdout, type Exec } from "../exec.js";

export const LIST_ARGS = ["-L"] as const;
export const QUERY_ARGS = ["-q"] as const;

/** How long an answer is used before nvidia-smi is asked again (MIG layouts change only when an admin re-partitions). */
export const REFRESH_MS = 5 * 60_000;

/** Below this much time left in the poll, a due refresh waits for the next poll. */
const MIN_BUDGET_MS = 500;

export interface MigDevice {
  /** The MIG device's UUID as -L prints it, lowercased: `mig-<uuid>` or `mig-gpu-<uuid>/<gi>/<ci>`. */
  uuid: string;
  /** Its GPU's UUID, lowercased. */
  gpuUuid: string;
  /** `Device N` of -L: its index among its GPU's MIG devices. */
  index: number;
  /** The profile -L names (`3g.40gb`, `1c.3g.71gb`, ...). */
  profile: string;
  /** GPU instance id, from the old-form UUID or -q; undefined when neither said. */
  gpuInstance: string | undefined;
}

const GPU_LINE = /^GPU \d+: .*\(UUID: (GPU-[^)\s]+)\)\s*$/;
const MIG_LINE = /^\s+MIG (\S+)\s+Device\s+(\d+): \(UUID: (MIG-[^)\s]+)\)\s*$/;
const OLD_FORM = /^mig-(gpu-[0-9a-f-]+)\/(\d+)\/(\d+)$/;

/** The GPU and GPU instance an old-form id (`MIG-GPU-<uuid>/<gi>/<ci>`, any case) names; undefined for any other id. */
export function oldFormMig(id: string): { gpuUuid: string; gpuInstance: string } | undefined {
  const m = OLD_FORM.exec(id.trim().toLowerCase());
  return m?.[1] !== undefined && m[2] !== undefined ? { gpuUuid: m[1], gpuInstance: String(Number(m[2])) } : undefined;
}

/** The MIG devices `nvidia-smi -L` lists, each under the GPU line before it. Other lines are skipped. */
export function parseMigList(text: string): MigDevice[] {
  const out: MigDevice[] = [];
  let gpu: string | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\r$/, "");
    const g = GPU_LINE.exec(line);
    if (g?.[1] !== undefined) {
      gpu = g[1].toLowerCase();
      continue;
    }
    const m = MIG_LINE.exec(line);
    if (gpu === undefined || m?.[1] === undefined || m[2] === undefined || m[3] === undefined) continue;
    const uuid = m[3].toLowerCase();
    out.push({ uuid, gpuUuid: gpu, index: Number(m[2]), profile: m[1], gpuInstance: oldFormMig(uuid)?.gpuInstance });
  }
  return out;
}

/**
 * GPU instance id per GPU UUID (lowercased) and MIG device index, from `nvidia-smi -q`: a GPU's
 * block starts at `GPU <bus id>` and names its UUID in `GPU UUID`; each `MIG Device` block under it
 * has `Index` and `GPU Instance ID` (the Processes section's own `GPU instance ID` lines are not in
 * one).
 */
export function parseMigQuery(text: string): Map<string, Map<number, string>> {
  const out = new Map<string, Map<number, string>>();
  let gpuUuid: string | undefined;
  let devices = new Map<number, string>();
  let block: { indent: number; index?: number; gi?: string } | undefined;
  const closeBlock = (): void => {
    if (block?.index !== undefined && block.gi !== undefined) devices.set(block.index, block.gi);
    block = undefined;
  };
  const closeGpu = (): void => {
    closeBlock();
    if (gpuUuid !== undefined && devices.size > 0) out.set(gpuUuid, devices);
    gpuUuid = undefined;
    devices = new Map();
  };
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\r$/, "");
    if (/^GPU [0-9A-Fa-f]+:[0-9A-Fa-f:.]+\s*$/.test(line)) {
      closeGpu();
      continue;
    }
    const trimmed = line.trim();
    if (trimmed === "") continue;
    const indent = line.length - line.trimStart().length;
    if (block !== undefined && indent <= block.indent) closeBlock();
    if (trimmed === "MIG Device") {
      block = { indent };
      continue;
    }
    const kv = /^([^:]+?)\s*: (.*)$/.exec(trimmed);
    if (kv?.[1] === undefined || kv[2] === undefined) continue;
    const [key, value] = [kv[1], kv[2].trim()];
    if (block !== undefined && indent === block.indent + 4) {
      if (key === "Index" && /^\d+$/.test(value)) block.index = Number(value);
      else if (key === "GPU Instance ID" && /^\d+$/.test(value)) block.gi = String(Number(value));
    } else if (block === undefined && key === "GPU UUID" && /^GPU-/i.test(value)) {
      gpuUuid = value.toLowerCase();
    }
  }
  closeGpu();
  return out;
}

/** -L's devices with the GPU instance ids -q gave, where the UUID did not carry one. */
export function joinMig(list: readonly MigDevice[], query: ReadonlyMap<string, ReadonlyMap<number, string>>): MigDevice[] {
  return list.map((d) => (d.gpuInstance !== undefined ? d : { ...d, gpuInstance: query.get(d.gpuUuid)?.get(d.index) }));
}

export interface MigTableOptions {
  exec: Exec;
  /** The nvidia-smi to run (--collector.job.nvidia-smi). */
  nvidiaSmi: string;
  /** Limit of each nvidia-smi run, ms (--collector.timeout); also bounded by what is left of the poll. */
  timeoutMs: number;
  /** Clock for the answer's age (ms). */
  now: () => number;
  log: Logger;
  refreshMs?: number;
}

/** The MIG devices nvidia-smi listed, kept between polls. */
export class MigTable {
  private devices = new Map<string, MigDevice>();
  private fetchedAt: number | undefined;
  /** MIG ids asked for that the last answer did not list: they do not trigger another refresh. */
  private missed = new Set<string>();
  private logged = new Map<string, string>();

  constructor(private readonly opts: MigTableOptions) {}

  /**
   * The MIG devices by lowercased UUID, for the MIG ids (lowercased, suffix dropped) pod-resources
   * listed this poll. No id: no fork. `budgetMs`: what is left of the poll.
   */
  async lookup(ids: ReadonlySet<string>, budgetMs: number): Promise<ReadonlyMap<string, MigDevice>> {
    if (ids.size === 0 || !this.due(ids)) return this.devices;
    if (budgetMs < MIN_BUDGET_MS) {
      this.opts.log.debug("job: too little of the poll left to ask nvidia-smi about MIG devices; next poll");
      return this.devices;
    }
    await this.refresh(ids, budgetMs);
    return this.devices;
  }

  private due(ids: ReadonlySet<string>): boolean {
    if (this.fetchedAt === undefined || this.opts.now() - this.fetchedAt >= (this.opts.refreshMs ?? REFRESH_MS)) return true;
    for (const id of ids) if (!this.devices.has(id) && !this.missed.has(id)) return true;
    return false;
  }

  private async refresh(ids: ReadonlySet<string>, budgetMs: number): Promise<void> {
    const started = performance.now();
    const left = (): number => Math.floor(Math.min(this.opts.timeoutMs, budgetMs - (performance.now() - started)));
    this.fetchedAt = this.opts.now();
    const list = await this.opts.exec.run(this.opts.nvidiaSmi, LIST_ARGS, { timeoutMs: left(), maxBytes: 1024 * 1024 });
    if (!list.ok) {
      // The last answer stays: a layout changes only when its pods are gone, and their ids with them.
      if (list.notFound)
        this.note(
          "list",
          "info",
          `${this.opts.nvidiaSmi} not found: MIG devices in pod-resources are mapped only where their id names its GPU (MIG-GPU-<uuid>/<gi>/<ci>); the others stay in ringwatch_job_unmatched_devices`,
        );
      else
        this.note("list", "warn", `nvidia-smi -L failed (${list.problem ?? "?"}): MIG devices in pod-resources are not mapped to their GPU until it answers`);
      this.missed = new Set([...ids].filter((id) => !this.devices.has(id)));
      return;
    }
    this.note("list", "info", "");
    let devices = parseMigList(trustedStdout(list));
    if (devices.some((d) => d.gpuInstance === undefined)) {
      // -q prints some 30 KiB per GPU: 8 GPUs stay far below this limit.
      const limit = left();
      const q = limit >= MIN_BUDGET_MS ? await this.opts.exec.run(this.opts.nvidiaSmi, QUERY_ARGS, { timeoutMs: limit, maxBytes: 4 * 1024 * 1024 }) : undefined;
      if (q?.ok) {
        this.note("query", "info", "");
        devices = joinMig(devices, parseMigQuery(trustedStdout(q)));
      } else {
        this.note(
          "query",
          "warn",
          `nvidia-smi -q failed (${q?.problem ?? "too little of the poll left"}): MIG devices are mapped to their GPU with gpu_instance empty`,
        );
      }
    }
    this.devices = new Map(devices.map((d) => [d.uuid, d]));
    this.missed = new Set([...ids].filter((id) => !this.devices.has(id)));
    if (this.missed.size > 0) this.opts.log.debug({ ids: [...this.missed] }, "job: MIG ids in pod-resources that nvidia-smi -L does not list");
  }

  /** One log line per change of a command's state; "" is fine again. */
  private note(what: string, level: "info" | "warn", msg: string): void {
    const before = this.logged.get(what);
    if (before === msg || (before === undefined && msg === "")) return;
    this.logged.set(what, msg);
    if (msg === "") this.opts.log.info(`job: nvidia-smi ${what === "list" ? "-L" : "-q"} answers again: MIG devices are mapped`);
    else if (level === "info") this.opts.log.info(`job: ${msg}`);
    else this.opts.log.warn(`job: ${msg}`);
  }
}
