/** The nccl collector's settings as module.ts reads them; its reconfigure() takes them on SIGHUP. */
import type { FlightRecorderOptions } from "./flight-recorder/watch.js";
import type { RasAddress } from "./ras/client.js";
import type { SeriesOptions } from "./series.js";
import type { LiveStacksSettings } from "./stacks/live/watch.js";

export interface NcclSettings {
  /** Directories or globs to follow. */
  paths: string[];
  hangThresholdMs: number;
  maxCommunicators: number;
  /** --collector.nccl.rank-series and --collector.nccl.max-series (series.ts). */
  series: SeriesOptions;
  retireAfterMs: number;
  checkPids: boolean;
  polling: boolean | "auto";
  /** NCCL RAS queries during a hang; undefined when --no-collector.nccl.ras. */
  ras: RasSettings | undefined;
  /** PyTorch Flight Recorder dumps; undefined when --collector.nccl.flight-recorder.dump is empty. */
  flightRecorder: FlightRecorderOptions | undefined;
  /** NCCL Inspector output directories or globs; empty: off. */
  inspectorPaths: string[];
  /** --collector.nccl.stacks.*: Python stacks of the suspect communicators' processes (stacks/live/). */
  stacks: LiveStacksSettings;
}

/** --collector.nccl.ras-*: how NCCL RAS is asked (docs/nccl.md, production mode). */
export interface RasSettings {
  address: RasAddress;
  intervalMs: number;
  /** One querier per job (--collector.nccl.ras-querier=elected); false: every node asks. */
  elected: boolean;
  settleMs: number;
  pollKnownDefective: boolean;
  /** The other nodes' agents' port; 0: never read (no takeover). */
  peerPort: number;
  /** The addresses RAS names this node by; empty: the interfaces'. */
  nodeAddresses: string[];
  /** --collector.nccl.ras-inspector-switch's window; undefined: the switch is off. */
  inspectorWindowMs: number | undefined;
}
