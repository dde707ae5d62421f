/**
 * The ringwatch_infiniband_* families, and the snapshot → samples mapping. Publishing replaces
 * every family's series in one synchronous step, so ports that vanished disappear.
 */
import type { Counter, Gauge, Registry } from "prom-client";
import { counter, gauge, publishCounter, publishGauge, type Labels, type Sample } from "../publish.js";
import { isSaturated, LEGACY_COUNTERS, PMA_WIDTH, PORT_COUNTERS, type CounterDef } from "./counters.js";
import { HW_COUNTERS } from "./hw-counters.js";
import type { IbDevice, IbPort } from "./types.js";

export const PREFIX = "ringwatch_infiniband_";

const PORT_LABELS = ["device", "port"] as const;
const INFO_LABELS = ["device", "port", "link_layer", "board_id", "firmware_version", "hca_type", "node_guid"] as const;
const COUNTER_LABELS = ["device", "port", "counter"] as const;

interface GaugeDef {
  name: string;
  help: string;
  labels: readonly string[];
}

const GAUGES: readonly GaugeDef[] = [
  { name: "state_id", help: "Logical state of the port (1: down, 2: init, 3: armed, 4: active, 5: active defer).", labels: PORT_LABELS },
  {
    name: "physical_state_id",
    help: "Physical state of the port (1: sleep, 2: polling, 3: disabled, 4: port configuration training, 5: link up, 6: link error recovery, 7: phy test).",
    labels: PORT_LABELS,
  },
  { name: "rate_bytes_per_second", help: "Signalling rate of the port in bytes per second (Gb/s × 125,000,000).", labels: PORT_LABELS },
  {
    name: "info",
    help: "Identity of the port and its HCA (link_layer, board_id, firmware_version, hca_type, node_guid where known); value is always 1.",
    labels: INFO_LABELS,
  },
  {
    name: "counters_saturated",
    help: "1 when a fixed-width PortCounters counter sits at its maximum (it has stopped counting; rates read 0), else 0.",
    labels: COUNTER_LABELS,
  },
  {
    name: "counters_unreadable",
    help: "Counter files of the port that could not be read or parsed in the last update (N/A (no PMA), EINVAL, EACCES...); they are skipped.",
    labels: PORT_LABELS,
  },
];

const HW_COUNTER = "hw_counters_total";
const HW_HELP =
  "Driver counters from ports/<n>/hw_counters that --collector.infiniband.hw-counters allows but that have no family of their own (counter label: the kernel's file name).";
/** hw_counters files published under their own family, not under hw_counters_total. */
const HW_NAMED_FILES: ReadonlySet<string> = new Set(HW_COUNTERS.map((d) => d.file));

export type SampleSet = Map<string, Sample[]>;

function push(set: SampleSet, name: string, labels: Labels, value: number | undefined): void {
  if (value === undefined || !Number.isFinite(value)) return;
  let list = set.get(name);
  if (!list) set.set(name, (list = []));
  list.push({ labels, value });
}

function pushCounters(set: SampleSet, defs: readonly CounterDef[], values: Record<string, number>, labels: Labels): void {
  for (const d of defs) {
    const v = values[d.file];
    if (v !== undefined) push(set, d.metric, labels, v * d.scale);
  }
}

function infoLabels(device: IbDevice, port: IbPort, base: Labels): Labels {
  const labels: Labels = { ...base };
  const add = (k: string, v: string | undefined): void => {
    if (v !== undefined && v !== "") labels[k] = v;
  };
  add("link_layer", port.linkLayer);
  add("board_id", device.boardId);
  add("firmware_version", device.firmwareVersion);
  add("hca_type", device.hcaType);
  add("node_guid", device.nodeGuid);
  return labels;
}

/** Samples per metric name (without the prefix) for a snapshot. */
export function buildSamples(devices: readonly IbDevice[]): SampleSet {
  const set: SampleSet = new Map();
  for (const device of devices) {
    for (const port of device.ports) {
      const labels: Labels = { device: device.name, port: String(port.port) };
      push(set, "state_id", labels, port.state);
      push(set, "physical_state_id", labels, port.physState);
      push(set, "rate_bytes_per_second", labels, port.rateBytesPerSecond);
      push(set, "info", infoLabels(device, port, labels), 1);
      push(set, "counters_unreadable", labels, port.unreadable);
      pushCounters(set, PORT_COUNTERS, port.counters, labels);
      pushCounters(set, LEGACY_COUNTERS, port.countersExt, labels);
      pushCounters(set, HW_COUNTERS, port.hwCounters, labels);
      for (const [name, value] of Object.entries(port.hwCounters)) if (!HW_NAMED_FILES.has(name)) push(set, HW_COUNTER, { ...labels, counter: name }, value);
      for (const file of port.fixedWidth) {
        const v = port.counters[file];
        if (v !== undefined && PMA_WIDTH[file] !== undefined) push(set, "counters_saturated", { ...labels, counter: file }, isSaturated(file, v) ? 1 : 0);
      }
    }
  }
  return set;
}

export interface InfinibandMetrics {
  /** Replaces every series with the snapshot's. */
  publish(devices: readonly IbDevice[]): void;
  /** Withdraws every series (the source failed: stale data is never served as current). */
  clear(): void;
}

export function createInfinibandMetrics(registry: Registry): InfinibandMetrics {
  const gauges = new Map<string, Gauge<string>>();
  const counters = new Map<string, Counter<string>>();
  for (const g of GAUGES) gauges.set(g.name, gauge(registry, PREFIX + g.name, g.help, g.labels));
  for (const d of [...PORT_COUNTERS, ...LEGACY_COUNTERS, ...HW_COUNTERS]) counters.set(d.metric, counter(registry, PREFIX + d.metric, d.help, PORT_LABELS));
  counters.set(HW_COUNTER, counter(registry, PREFIX + HW_COUNTER, HW_HELP, COUNTER_LABELS));

  const publishSet = (set: SampleSet): void => {
    for (const [name, g] of gauges) publishGauge(g, set.get(name) ?? []);
    for (const [name, c] of counters) publishCounter(c, set.get(name) ?? []);
  };
  return {
    publish: (devices) => publishSet(buildSamples(devices)),
    clear: () => publishSet(new Map()),
  };
}
