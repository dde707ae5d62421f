/**
 * Recognises the failure messages nvidia-smi prints on stdout (instead of data) when the driver,
 * NVML or one GPU is broken. Prefix/indexOf checks only: this runs on the dmon hot path.
 */

export type NvsmiFailureKind =
  "driver_unreachable" | "no_devices" | "device_handle" | "gpu_lost" | "nvml_init" | "not_supported" | "command_failed" | "invalid_field" | "permission";

export interface NvsmiFailure {
  kind: NvsmiFailureKind;
  /** The line as printed (trimmed). */
  message: string;
  /** PCI bus id named by the message (`0000:07:00.0`), when it names one. */
  pciBusId?: string;
}

/** Every kind, for pre-initialising counters and for docs. */
export const FAILURE_KINDS: readonly NvsmiFailureKind[] = [
  "driver_unreachable",
  "no_devices",
  "device_handle",
  "gpu_lost",
  "nvml_init",
  "not_supported",
  "command_failed",
  "invalid_field",
  "permission",
];

const HANDLE_PREFIX = "Unable to determine the device handle for ";

/**
 * `Unable to determine the device handle for GPU0000:07:00.0: Unknown Error` (new) or
 * `... for GPU 0000:0B:00.0: Unknown Error` (old): the bus id runs to the next `: `.
 */
function deviceHandle(line: string): NvsmiFailure {
  let rest = line.slice(HANDLE_PREFIX.length);
  if (rest.startsWith("GPU") || rest.startsWith("gpu")) rest = rest.slice(3);
  rest = rest.trimStart();
  const end = rest.indexOf(": ");
  const busId = end > 0 ? rest.slice(0, end) : undefined;
  const lost = line.includes("GPU is lost");
  const failure: NvsmiFailure = { kind: lost ? "gpu_lost" : "device_handle", message: line };
  if (busId !== undefined && busId.indexOf(" ") < 0 && busId.indexOf(":") > 0) failure.pciBusId = busId;
  return failure;
}

/**
 * The failure a line reports, or undefined when it is not a known nvidia-smi failure message.
 * `line` may carry surrounding whitespace.
 */
export function classifyFailure(raw: string): NvsmiFailure | undefined {
  const line = raw.trim();
  if (line.length === 0) return undefined;
  const c = line.charCodeAt(0);
  // Data rows start with a digit: bail out before any string search.
  if (c >= 48 && c <= 57) return undefined;
  if (line.startsWith(HANDLE_PREFIX)) return deviceHandle(line);
  if (line.startsWith("NVIDIA-SMI has failed")) return { kind: "driver_unreachable", message: line };
  if (line.startsWith("No devices were found")) return { kind: "no_devices", message: line };
  if (line.startsWith("Failed to initialize NVML")) return { kind: "nvml_init", message: line };
  if (line.startsWith("Not supported on the device")) return { kind: "not_supported", message: line };
  if (line.startsWith("Failed to process command line")) return { kind: "command_failed", message: line };
  if (line.startsWith("Insufficient Permissions")) return { kind: "permission", message: line };
  if (line.startsWith("Field ") && line.includes(" is not a valid field to query")) {
    return { kind: "invalid_field", message: line };
  }
  if (line.includes("GPU is lost")) return { kind: "gpu_lost", message: line };
  return undefined;
}
