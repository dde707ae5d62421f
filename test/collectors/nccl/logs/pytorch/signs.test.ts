/**
 * PyTorch's hang signs in followed logs, live: heartbeat timeouts, stuck watchdogs and dump
 * signals (real captures 77, 79, 85, 93; in 79 only rank 0's stuck line survived the excerpt) are counted per rank and sign, and watchdog timeouts per
 * rank and op type, on /metrics (ringwatch_pytorch_hang_signs_total, ..._watchdog_timeouts_total).
 */
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { NcclMetrics } from "../../../../../collectors/nccl/metrics.js";
import { parseLine } from "../../../../../collectors/nccl/logs/parse/line.js";
import { Tracker } from "../../../../../collectors/nccl/logs/state/tracker.js";
import { readCapture } from "../../../../helpers/fixtures.js";

function feed(t: Tracker, name: string): void {
  readCapture(`nccl/${name}`)
    .split("\n")
    .forEach((line, i) => {
      const ev = parseLine(line);
      if (ev) t.ingest(ev, { source: name, lineNo: i + 2 });
    });
}

describe("PyTorch hang signs, counted live", () => {
  it("77, 79, 85 and 93: every sign by rank, every watchdog timeout by rank and op type", async () => {
    const t = new Tracker();
    for (const f of [
      "77-watchdog-heartbeat-monitor-timed-out-rank144.log",
      "79-watchdog-heartbeat-subgroup-pg5.log",
      "85-watchdog-dump-signal-from-remote-rank.log",
      "93-hang-watchdog-rank0-ahead-allgather-vs-broadcast.log",
    ])
      feed(t, f);
    const registry = new Registry();
    const m = new NcclMetrics(registry, () => undefined);
    m.publish(t, [], undefined);
    const text = await registry.metrics();
    const lines = text.split("\n").filter((l) => l.startsWith("ringwatch_pytorch_"));
    expect(lines).toEqual([
      'ringwatch_pytorch_watchdog_timeouts_total{rank="2",op_type="BROADCAST"} 1',
      'ringwatch_pytorch_watchdog_timeouts_total{rank="1",op_type="BROADCAST"} 1',
      'ringwatch_pytorch_watchdog_timeouts_total{rank="0",op_type="_ALLGATHER_BASE"} 1',
      'ringwatch_pytorch_hang_signs_total{rank="144",sign="heartbeat_timeout"} 1',
      'ringwatch_pytorch_hang_signs_total{rank="144",sign="watchdog_stuck"} 1',
      'ringwatch_pytorch_hang_signs_total{rank="0",sign="heartbeat_timeout"} 1',
      'ringwatch_pytorch_hang_signs_total{rank="4",sign="heartbeat_timeout"} 1',
      'ringwatch_pytorch_hang_signs_total{rank="0",sign="watchdog_stuck"} 1',
      'ringwatch_pytorch_hang_signs_total{rank="5",sign="dump_signal"} 2',
    ]);
  });
});
