/**
 * What one ringwatch exposition covers of the bench node: GPUs, InfiniBand ports, gdr, mtu and
 * NCCL communicators. A scrape is "complete" when it has all of them. A communicator is counted by
 * its ringwatch_nccl_hang_suspected series, which every communicator with a rank on the node has
 * (0 while healthy); the per-rank series (ringwatch_nccl_rank_info) exist only while a
 * communicator is suspect, or with --collector.nccl.rank-series=always (docs/metrics.md, NCCL
 * series budget), so rankSeries is 0 for the healthy bench job by default.
 */
import { COMMUNICATORS } from "./nccl-job.js";
import { GPUS, HCA_PORTS } from "./node-fixture.js";

export interface Coverage {
  gpus: number;
  hcaPorts: number;
  gdr: boolean;
  mtuDevices: number;
  communicators: number;
  rankSeries: number;
  complete: boolean;
}

const count = (text: string, prefix: string): number => {
  let n = 0;
  let at = text.indexOf(`\n${prefix}`);
  while (at >= 0) {
    n++;
    at = text.indexOf(`\n${prefix}`, at + 1);
  }
  return n;
};

export function coverage(text: string): Coverage {
  const comms = new Set<string>();
  for (const m of text.matchAll(/^ringwatch_nccl_hang_suspected\{[^}]*comm_id="([^"]*)"/gm)) comms.add(m[1] ?? "");
  const c = {
    gpus: count(text, "ringwatch_gpu_power_watts{"),
    hcaPorts: count(text, "ringwatch_infiniband_state_id{"),
    gdr: /^ringwatch_gdr_peermem_loaded 1$/m.test(text),
    mtuDevices: count(text, "ringwatch_network_mtu_bytes{"),
    communicators: comms.size,
    rankSeries: count(text, "ringwatch_nccl_rank_info{"),
  };
  return { ...c, complete: c.gpus === GPUS && c.hcaPorts === HCA_PORTS && c.gdr && c.mtuDevices > 0 && c.communicators === COMMUNICATORS };
}

/** Value of an unlabelled sample, e.g. nodejs_heap_size_used_bytes. */
export function plainSample(text: string, name: string): number | undefined {
  const m = new RegExp(`^${name} (\\S+)`, "m").exec(text);
  return m ? Number(m[1]) : undefined;
}
