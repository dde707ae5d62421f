/**
 * The GPU checks: gpu.count (what nvidia-smi lists) and gpu.bus (no GPU fallen off the bus, by
 * nvidia-smi's own messages, sysfs's nvidia driver and the kernel's Xid 79).
 */
import { pciSlotKey } from "../collectors/pci.js";
import type { Expectations } from "./check-expect.js";
import { count, error, fail, isoSeconds, ok, skip, some, unusable, type NodeView, type Verdict } from "./check-result.js";

/** nvidia-smi failure kinds (ringwatch_gpu_errors_total) that say the driver or a GPU is broken, not the tool. */
const BROKEN: Readonly<Record<string, string>> = {
  driver_unreachable: "cannot communicate with the NVIDIA driver",
  nvml_init: "NVML cannot initialise",
  no_devices: "no devices were found",
  gpu_lost: "a GPU is lost",
  device_handle: "cannot open a GPU (device handle)",
};

/** Families of the gpu collector's samples and identity: a GPU with any of them is listed. */
const LISTED_BY = [
  "ringwatch_gpu_info",
  "ringwatch_gpu_power_watts",
  "ringwatch_gpu_sm_clock_hertz",
  "ringwatch_gpu_utilization_ratio",
  "ringwatch_gpu_temperature_celsius",
];

/** What nvidia-smi said is broken in this run, by kind. */
function brokenKinds(v: NodeView): string[] {
  return v.samples
    .of("ringwatch_gpu_errors_total")
    .filter((s) => s.value > 0 && s.labels.kind !== undefined && Object.hasOwn(BROKEN, s.labels.kind))
    .map((s) => s.labels.kind ?? "");
}

/** The GPUs nvidia-smi listed (their index). */
function listedGpus(v: NodeView): Set<string> {
  return new Set(LISTED_BY.flatMap((m) => v.samples.of(m).map((s) => s.labels.gpu ?? "")).filter((g) => g !== ""));
}

export function gpuCount(v: NodeView, e: Expectations): Verdict {
  const src = v.sources.get("gpu");
  const broken = brokenKinds(v);
  if (src?.state === "failed" && broken.length > 0)
    return fail(
      `nvidia-smi: ${src.reason ?? broken.join(", ")}`,
      broken.map((k) => BROKEN[k] ?? k),
    );
  const no = unusable(v, "gpu", e.gpuCount !== undefined);
  if (no) return no;
  const n = listedGpus(v).size;
  if (e.gpuCount === undefined) return ok(`${count(n, "GPU")} (no count expected)`);
  return n === e.gpuCount ? ok(`${count(n, "GPU")} (expected ${e.gpuCount})`) : fail(`${count(n, "GPU")}, expected ${e.gpuCount}`);
}

/** Xid 79 series (GPU fallen off the bus) within the window, as `GPU 3: Xid 79 at ...`. */
function xid79(v: NodeView, e: Expectations): string[] {
  const out: string[] = [];
  for (const s of v.samples.of("ringwatch_gpu_xid_errors_total")) {
    if (s.labels.xid !== "79" || s.value <= 0) continue;
    const gpu = s.labels.gpu ?? "?";
    const ts = v.samples.value("ringwatch_gpu_xid_last_timestamp_seconds", { gpu, xid: "79" });
    if (e.xidWindowMs !== undefined && ts !== undefined && ts * 1000 < v.nowMs - e.xidWindowMs) continue;
    out.push(`GPU ${gpu}: Xid 79 (fallen off the bus)${ts !== undefined ? ` at ${isoSeconds(ts)}` : ""}`);
  }
  return out;
}

/** GPUs bound to nvidia in sysfs that nvidia-smi's identity (ringwatch_gpu_info) does not list. */
function unlisted(v: NodeView): string[] | undefined {
  const info = v.samples.of("ringwatch_gpu_info");
  if (v.sysfsGpus === undefined || info.length === 0) return undefined;
  const listed = new Set(info.map((s) => pciSlotKey(s.labels.pci_bus_id ?? "")));
  return v.sysfsGpus.filter((addr) => !listed.has(pciSlotKey(addr))).map((addr) => `${addr}: bound to nvidia in sysfs, not listed by nvidia-smi`);
}

export function gpuBus(v: NodeView, e: Expectations): Verdict {
  const gpu = v.sources.get("gpu")?.state;
  const kmsg = v.sources.get("kmsg")?.state;
  const evidence: string[] = [];
  const read: string[] = [];
  if (gpu === "ok" || gpu === "failed") {
    for (const k of brokenKinds(v)) if (k === "gpu_lost" || k === "device_handle") evidence.push(`nvidia-smi: ${BROKEN[k] ?? k}`);
    if (gpu === "ok") read.push("nvidia-smi");
  }
  const missing = gpu === "ok" ? unlisted(v) : undefined;
  if (missing !== undefined) {
    evidence.push(...missing);
    read.push("sysfs");
  }
  if (kmsg === "ok") {
    evidence.push(...xid79(v, e));
    read.push("kernel log");
  }
  if (evidence.length > 0) return fail(some(evidence), evidence);
  if (read.length > 0) return ok(`no GPU off the bus (${read.join(", ")})`);
  const failed = ["gpu", "kmsg"].map((c) => v.sources.get(c)).filter((s) => s?.state === "failed");
  if (failed.length > 0) return error(`could not check: ${failed.map((s) => s?.reason ?? "").join("; ")}`);
  return skip("no source: nvidia-smi and the kernel log are not read here");
}
