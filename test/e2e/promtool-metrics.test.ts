/**
 * The agent's scrape passes Debian's `promtool check metrics` (parse and lint, exit 0). promtool
 * lints only families that have series, so twice: a real scrape of the built agent with every
 * collector on fakes and real-format trees (gpu, infiniband, gdr, mtu), two fake NCCL ranks writing
 * their logs (the per-rank series, which a healthy communicator has with
 * --collector.nccl.rank-series=always, and the per-process ones) and prom-client's process metrics;
 * and every family the agent registers, given one series each.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { pino } from "pino";
import type { Metric } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgent } from "../../agent/app.js";
import { parseCli } from "../../agent/config/config.js";
import { GPUD_DUMP, makeTree, type Tree } from "../collectors/infiniband/trees.js";
import { gate } from "../deploy/binaries.js";
import { eventually, fakesDir, sample, samplesOf, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { promtoolCheckMetrics } from "../helpers/check-metrics.js";
import { parsePromText } from "../helpers/exposition.js";
import { fakeEnv, fakeFlags, tempDir } from "./env.js";

const tools = gate(["promtool"]);
const COMM = "0x6c1e7e5a1d2c3b4a";

let tree: Tree;
let agent: RunningAgent | undefined;
const ranks: ChildProcess[] = [];
beforeAll(() => {
  tree = makeTree(GPUD_DUMP);
});
afterAll(async () => {
  for (const r of ranks) r.kill("SIGTERM");
  await agent?.stop();
  tree.remove();
});

describe.skipIf(tools.skip)(`the agent's scrape under promtool check metrics${tools.skip ? ` (SKIPPED: ${tools.message})` : ""}`, () => {
  it("a full scrape (every collector, NCCL per-rank series, process metrics) exits 0 with nothing to say", async () => {
    const dir = tempDir();
    agent = await startAgent([...fakeFlags(tree.root), `--collector.nccl.path=${dir}`, "--collector.nccl.rank-series=always"], fakeEnv());
    for (const r of [0, 1]) {
      ranks.push(
        spawn(process.execPath, [join(fakesDir, "nccl-rank"), dir, String(r), "2", COMM], {
          env: { ...process.env, FAKE_RANK_PERIOD_MS: "100" },
          stdio: "ignore",
        }),
      );
    }
    const a = agent;
    const text = await eventually(async () => {
      const t = await a.scrape();
      const up = ["gpu", "infiniband", "gdr", "mtu", "nccl"].every((c) => sample(t, `ringwatch_collector_success{collector="${c}"}`) === 1);
      const ncclUp = samplesOf(t, "ringwatch_nccl_rank_progress").length === 2 && samplesOf(t, "ringwatch_nccl_process_transport_info").length === 2;
      return up && ncclUp && samplesOf(t, "ringwatch_gpu_power_watts").length > 0 ? t : undefined;
    }, 30_000);
    const { types } = parsePromText(text);
    // Every family promtool would lint is there, with series.
    for (const family of [
      "ringwatch_infiniband_state_id",
      "ringwatch_network_mtu_bytes",
      "ringwatch_nccl_rank_info",
      "ringwatch_nccl_rank_progress",
      "ringwatch_nccl_rank_last_progress_timestamp_seconds",
      "ringwatch_nccl_comm_slowest_rank_progress",
      "ringwatch_nccl_hang_suspected",
      "ringwatch_nccl_process_transport_info",
      "ringwatch_nccl_process_net_device_info",
      "ringwatch_nccl_series_dropped",
      "process_cpu_seconds_total",
      "nodejs_heap_size_used_bytes",
      "nodejs_active_handles",
    ]) {
      expect(samplesOf(text, family).length, family).toBeGreaterThan(0);
    }
    expect(sample(text, `ringwatch_nccl_rank_progress{comm_id="${COMM}",rank="0"}`)).toBeGreaterThan(0);
    // The lints behind the renames, read here too: `_total` only on counters, `_count`, `_sum`, `_bucket` only on histograms and summaries.
    const misnamed = [...types].filter(
      ([name, type]) => (name.endsWith("_total") && type !== "counter") || (/_(count|sum|bucket)$/.test(name) && type !== "histogram" && type !== "summary"),
    );
    expect(misnamed).toEqual([]);
    // Renamed, then removed (docs/metrics.md, Contract changes).
    for (const gone of [
      "ringwatch_nccl_rank_last_op_count",
      "ringwatch_nccl_rank_last_op_number",
      "ringwatch_nccl_rank_collectives_total",
      "ringwatch_nccl_transport_info",
      "ringwatch_nccl_rank_net_device_info",
      "ringwatch_nccl_rank_job_info",
    ])
      expect(types.has(gone), gone).toBe(false);

    if (tools.fail) throw new Error(tools.message);
    const check = await promtoolCheckMetrics(tools.path.promtool, text);
    expect({ code: check.code, stdout: check.stdout, stderr: check.stderr }).toEqual({ code: 0, stdout: "", stderr: "" });
  });

  it("every family the agent registers, one series each, exits 0 with nothing to say", async () => {
    const action = parseCli([], {});
    if (action.kind !== "run") throw new Error("expected run");
    const registry = createAgent(action.config, { logger: pino({ level: "silent" }) }).registry;
    let text = "";
    for (const m of registry.getMetricsAsArray() as unknown as (Metric & { name: string; help: string; labelNames?: readonly string[] })[]) {
      const type = String((await m.get()).type);
      const labels = (m.labelNames ?? []).map((l) => `${l}="x"`);
      const series = (suffix: string, extra: string[] = []): string => {
        const all = [...labels, ...extra];
        return `${m.name}${suffix}${all.length > 0 ? `{${all.join(",")}}` : ""} 1\n`;
      };
      text += `# HELP ${m.name} ${m.help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}\n# TYPE ${m.name} ${type}\n`;
      if (type === "histogram") text += series("_bucket", ['le="+Inf"']) + series("_sum") + series("_count");
      else if (type === "summary") text += series("", ['quantile="0.5"']) + series("_sum") + series("_count");
      else text += series("");
    }
    expect(text).toContain("# TYPE ringwatch_nccl_rank_progress gauge");
    expect(text).toContain("# TYPE ringwatch_nccl_comm_slowest_rank_progress gauge");
    expect(text).not.toContain("ringwatch_nccl_rank_last_op_number");
    expect(text).toContain("# TYPE nodejs_active_handles gauge");
    expect(text.match(/^# TYPE /gm)?.length).toBeGreaterThan(150);
    if (tools.fail) throw new Error(tools.message);
    const check = await promtoolCheckMetrics(tools.path.promtool, text);
    expect({ code: check.code, stdout: check.stdout, stderr: check.stderr }).toEqual({ code: 0, stdout: "", stderr: "" });
  });
});
