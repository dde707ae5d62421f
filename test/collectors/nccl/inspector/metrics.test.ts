/**
 * NCCL Inspector's series under the series budget (docs/metrics.md): one bus bandwidth series per
 * active communicator (the largest message size, the median of its ranks' medians), the per-rank
 * series only for communicators whose ranks the nccl collector shows, and the bandwidth drop only
 * where it fires.
 */
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { InspectorFeed } from "../../../../collectors/nccl/inspector/feed.js";
import { InspectorMetrics } from "../../../../collectors/nccl/inspector/metrics.js";
import { inspectorLine, recordSpec, type InspectorRecordSpec } from "../../../helpers/inspector-writer.js";
import { parsePromText, type Series } from "../../../helpers/exposition.js";

const T0_US = 1_760_000_000_000_000;
const MIB = 2 ** 20;

function rec(over: Partial<InspectorRecordSpec>): InspectorRecordSpec {
  return recordSpec(T0_US, { op: "AllGather", ...over });
}

/** Two ranks: 1 MiB AllReduces, and 64 MiB AllGathers taking 1 and 3 ms (rank 0), 2 and 4 ms (rank 1). */
function feed(): InspectorFeed {
  const f = new InspectorFeed({ now: () => T0_US / 1000 });
  for (const [rank, pid, times] of [
    [0, 41000, [1000, 3000]],
    [1, 41001, [2000, 4000]],
  ] as const) {
    const path = `/var/log/nccl-inspector/gpu-node-01-pid${pid}.log`;
    for (let sn = 0; sn < 4; sn++) f.line(path, inspectorLine(rec({ rank, pid, op: "AllReduce", sn, msgBytes: MIB, execUs: 100 }), "2.28"));
    times.forEach((execUs, sn) => f.line(path, inspectorLine(rec({ rank, pid, sn, msgBytes: 64 * MIB, execUs }), "2.28")));
  }
  return f;
}

async function scrape(showsRanks: (commId: string) => boolean): Promise<Series[]> {
  const registry = new Registry();
  new InspectorMetrics(registry).publish(feed().snapshot(T0_US / 1000), showsRanks);
  return parsePromText(await registry.metrics()).series;
}

describe("NCCL Inspector's series budget", () => {
  it("a healthy communicator: its bus bandwidth once, at its largest message size; no per-rank series, no drop", async () => {
    const series = await scrape(() => false);
    // AllGather of 64 MiB over 2 ranks: busbw = 64 MiB / t per record; each rank's median of its two, then their median.
    const bw = series.filter((s) => s.name === "ringwatch_nccl_comm_busbw_bytes_per_second");
    expect(bw.map((s) => s.labels)).toEqual([{ comm_id: "0xabc1", size_bucket: "16MiB_256MiB" }]);
    const busbw = (ms: number): number => (64 * MIB) / (ms / 1000);
    const rank0 = (busbw(1) + busbw(3)) / 2;
    const rank1 = (busbw(2) + busbw(4)) / 2;
    expect((bw[0]?.value ?? 0) / 1e9).toBeCloseTo((rank0 + rank1) / 2 / 1e9, 2);
    expect(series.filter((s) => s.labels.rank !== undefined)).toEqual([]);
    expect(series.filter((s) => s.name === "ringwatch_nccl_bandwidth_drop")).toEqual([]);
  });

  it("a communicator whose ranks are shown: every per-rank series, both size buckets", async () => {
    const series = await scrape((id) => id === "0xabc1");
    const perRank = series.filter((s) => s.name === "ringwatch_nccl_inspector_busbw_bytes_per_second");
    expect(perRank.map((s) => `${s.labels.rank}/${s.labels.size_bucket}`).sort()).toEqual(["0/16MiB_256MiB", "0/1MiB_16MiB", "1/16MiB_256MiB", "1/1MiB_16MiB"]);
    expect(series.filter((s) => s.name === "ringwatch_nccl_inspector_collectives_total").map((s) => [s.labels.rank, s.value])).toEqual([
      ["0", 6],
      ["1", 6],
    ]);
  });
});
