/**
 * The gpu collector's Prometheus metrics: which dmon column feeds which metric, unit conversion
 * to base units, and publishing/withdrawing one GPU's series. See README.md for the table.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import type { DmonColumn, DmonValues } from "./parse-dmon.js";
import type { GpuIdentity } from "./parse-query.js";
import { FAILURE_KINDS, type NvsmiFailureKind } from "./failures.js";

const MIB = 1_048_576;
const MHZ = 1_000_000;

export interface ColumnMetric {
  name: string;
  help: string;
  /** Source columns, first present wins (`gtemp`, else `temp` on the oldest drivers). */
  columns: readonly DmonColumn[];
  /** Multiply dmon's value by this to get the base unit. */
  scale: number;
}

/** Every dmon column ringwatch maps, with its metric. Label: {gpu} = dmon index. */
export const COLUMN_METRICS: readonly ColumnMetric[] = [
  {
    name: "ringwatch_gpu_utilization_ratio",
    help: "SM utilization (dmon sm) as a ratio 0-1. A GPU spinning in a stuck NCCL kernel reads ~1.",
    columns: ["sm"],
    scale: 0.01,
  },
  { name: "ringwatch_gpu_memory_utilization_ratio", help: "Memory-bandwidth busy time (dmon mem) as a ratio 0-1.", columns: ["mem"], scale: 0.01 },
  { name: "ringwatch_gpu_encoder_utilization_ratio", help: "Video encoder utilization (dmon enc) as a ratio 0-1.", columns: ["enc"], scale: 0.01 },
  { name: "ringwatch_gpu_decoder_utilization_ratio", help: "Video decoder utilization (dmon dec) as a ratio 0-1.", columns: ["dec"], scale: 0.01 },
  { name: "ringwatch_gpu_jpeg_utilization_ratio", help: "JPEG decoder utilization (dmon jpg) as a ratio 0-1.", columns: ["jpg"], scale: 0.01 },
  { name: "ringwatch_gpu_ofa_utilization_ratio", help: "Optical flow accelerator utilization (dmon ofa) as a ratio 0-1.", columns: ["ofa"], scale: 0.01 },
  { name: "ringwatch_gpu_power_watts", help: "Power draw in watts (dmon pwr).", columns: ["pwr"], scale: 1 },
  {
    name: "ringwatch_gpu_temperature_celsius",
    help: "GPU temperature in degrees Celsius (dmon gtemp; temp on old drivers).",
    columns: ["gtemp", "temp"],
    scale: 1,
  },
  {
    name: "ringwatch_gpu_memory_temperature_celsius",
    help: "Memory (HBM) temperature in degrees Celsius (dmon mtemp); absent where the board has no sensor.",
    columns: ["mtemp"],
    scale: 1,
  },
  { name: "ringwatch_gpu_sm_clock_hertz", help: "SM (processor) clock in hertz (dmon pclk MHz x 1e6).", columns: ["pclk"], scale: MHZ },
  { name: "ringwatch_gpu_memory_clock_hertz", help: "Memory clock in hertz (dmon mclk MHz x 1e6).", columns: ["mclk"], scale: MHZ },
  {
    name: "ringwatch_gpu_power_violation_ratio",
    help: "Share of the last interval the GPU was held back by its power limit (dmon pviol %), 0-1.",
    columns: ["pviol"],
    scale: 0.01,
  },
  {
    name: "ringwatch_gpu_thermal_violation_active",
    help: "1 when the GPU was held back by a thermal limit in the last interval (dmon tviol), else 0.",
    columns: ["tviol"],
    scale: 1,
  },
  { name: "ringwatch_gpu_framebuffer_used_bytes", help: "Framebuffer memory used in bytes (dmon fb MiB x 1048576).", columns: ["fb"], scale: MIB },
  { name: "ringwatch_gpu_bar1_used_bytes", help: "BAR1 memory used in bytes (dmon bar1 MiB x 1048576).", columns: ["bar1"], scale: MIB },
  {
    name: "ringwatch_gpu_cc_protected_memory_used_bytes",
    help: "Confidential-computing protected memory used in bytes (dmon ccpm MiB x 1048576).",
    columns: ["ccpm"],
    scale: MIB,
  },
  {
    name: "ringwatch_gpu_ecc_single_bit_errors",
    help: "Single-bit ECC errors as printed by dmon sbecc (a count kept by the driver, not reset by ringwatch).",
    columns: ["sbecc"],
    scale: 1,
  },
  {
    name: "ringwatch_gpu_ecc_double_bit_errors",
    help: "Double-bit ECC errors as printed by dmon dbecc (a count kept by the driver, not reset by ringwatch).",
    columns: ["dbecc"],
    scale: 1,
  },
  {
    name: "ringwatch_gpu_pcie_replay_errors",
    help: "PCIe replay errors as printed by dmon pci (a count kept by the driver, not reset by ringwatch).",
    columns: ["pci"],
    scale: 1,
  },
  {
    name: "ringwatch_gpu_pcie_receive_bytes_per_second",
    help: "PCIe receive throughput in bytes per second (dmon rxpci MB/s, MB taken as MiB like dmon's fb).",
    columns: ["rxpci"],
    scale: MIB,
  },
  {
    name: "ringwatch_gpu_pcie_transmit_bytes_per_second",
    help: "PCIe transmit throughput in bytes per second (dmon txpci MB/s, MB taken as MiB like dmon's fb).",
    columns: ["txpci"],
    scale: MIB,
  },
];

/** The metric value a row gives for one mapping, or undefined when its columns are absent. */
export function columnValue(spec: ColumnMetric, values: DmonValues): number | undefined {
  for (const c of spec.columns) {
    const v = values[c];
    if (v !== undefined) return v * spec.scale;
  }
  return undefined;
}

export class GpuMetrics {
  /** Registered first: its collect hook runs before any other gpu metric is read at scrape time. */
  readonly up: Gauge;
  readonly restarts: Counter;
  readonly errors: Counter<"kind">;
  readonly malformed: Counter;
  private readonly columns: { spec: ColumnMetric; gauge: Gauge<"gpu"> }[];
  private readonly info: Gauge<"gpu" | "uuid" | "name" | "pci_bus_id" | "driver_version">;
  private readonly powerLimit: Gauge<"gpu">;

  constructor(registry: Registry, onCollect: () => void) {
    this.up = new Gauge({
      name: "ringwatch_gpu_dmon_up",
      help: "1 while the nvidia-smi dmon child is running and delivered a sample within 3 intervals, else 0.",
      registers: [registry],
      collect: onCollect,
    });
    this.up.set(0);
    this.columns = COLUMN_METRICS.map((spec) => ({
      spec,
      gauge: new Gauge({ name: spec.name, help: spec.help, labelNames: ["gpu"], registers: [registry] }),
    }));
    this.info = new Gauge({
      name: "ringwatch_gpu_info",
      help: "GPU identity from nvidia-smi --query-gpu; value is always 1. gpu = nvidia-smi/dmon index.",
      labelNames: ["gpu", "uuid", "name", "pci_bus_id", "driver_version"],
      registers: [registry],
    });
    this.powerLimit = new Gauge({
      name: "ringwatch_gpu_power_limit_watts",
      help: "Enforced power limit in watts (nvidia-smi power.limit).",
      labelNames: ["gpu"],
      registers: [registry],
    });
    this.restarts = new Counter({
      name: "ringwatch_gpu_dmon_restarts_total",
      help: "Times the nvidia-smi dmon child was started again after it exited, stalled or could not start.",
      registers: [registry],
    });
    this.errors = new Counter({
      name: "ringwatch_gpu_errors_total",
      help: "nvidia-smi failure messages seen, by kind (gpu_lost: a GPU fell off the bus; device_handle: NVML could not open a GPU; driver_unreachable, nvml_init, no_devices, not_supported, ...).",
      labelNames: ["kind"],
      registers: [registry],
    });
    for (const kind of FAILURE_KINDS) this.errors.inc({ kind }, 0);
    this.malformed = new Counter({
      name: "ringwatch_gpu_dmon_malformed_lines_total",
      help: "Lines from nvidia-smi dmon that were neither header, sample nor known failure message, or had the wrong number of fields.",
      registers: [registry],
    });
  }

  /** Replace one GPU's sample series with this row's values; absent columns lose their series. */
  publishRow(gpu: string, values: DmonValues): void {
    for (const { spec, gauge } of this.columns) {
      const v = columnValue(spec, values);
      if (v === undefined || !Number.isFinite(v)) gauge.remove({ gpu });
      else gauge.set({ gpu }, v);
    }
  }

  /** Remove every sample series of one GPU. */
  withdrawGpu(gpu: string): void {
    for (const { gauge } of this.columns) gauge.remove({ gpu });
  }

  /** Remove every sample series of every GPU. */
  withdrawAllSamples(): void {
    for (const { gauge } of this.columns) gauge.reset();
  }

  /** Replace identity series (info, power limit). */
  publishIdentity(gpus: readonly GpuIdentity[]): void {
    this.info.reset();
    this.powerLimit.reset();
    for (const g of gpus) {
      this.info.set(
        {
          gpu: g.index,
          uuid: g.uuid ?? "",
          name: g.name ?? "",
          pci_bus_id: g.pciBusId ?? "",
          driver_version: g.driverVersion ?? "",
        },
        1,
      );
      if (g.powerLimitWatts !== undefined) this.powerLimit.set({ gpu: g.index }, g.powerLimitWatts);
    }
  }

  countError(kind: NvsmiFailureKind): void {
    this.errors.inc({ kind });
  }
}
