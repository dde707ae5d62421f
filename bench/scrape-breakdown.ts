/**
 * Where one /metrics response of the bench node spends its time, inside one process: the built
 * agent (dist/) is created in-process on the bench node (fakes, sysfs tree, 16 NCCL logs growing
 * at 2,000 lines/s in a writer child), then registry.metrics() is timed N times, and every
 * metric's get() (its collect callback and its values) on its own; the rest of registry.metrics()
 * is prom-client's text formatting; then the families with the most series. Not part of
 * `npm run bench`; run it by hand:
 *   npm run build && npm run build:bench && node .bench/bench/scrape-breakdown.js [iterations] [family-prefix]
 */
import { join } from "node:path";
import { pino } from "pino";
import type { Metric, Registry } from "prom-client";
import { createAgent } from "../agent/app.js";
import { parseCli } from "../agent/config/config.js";
import { coverage } from "./coverage.js";
import { makeBenchNode } from "./node-fixture.js";
import { percentile } from "./scrape-client.js";
import { startWriter } from "./writer-proc.js";

const iterations = Number(process.argv[2] ?? 300);
/** Every family whose name starts with this is listed with its series count (third argument). */
const listPrefix = process.argv[3];
const node = makeBenchNode();
Object.assign(process.env, node.env); // the fakes are this process's children
const ncclDir = join(node.root, "nccl-breakdown");
const action = parseCli(["--web.listen-address=127.0.0.1:0", ...node.agentFlags({ pollInterval: "5s", ncclDir })], process.env);
if (action.kind !== "run") throw new Error("unexpected CLI action");
const agent = createAgent(action.config, { logger: pino({ level: "silent" }) });
await agent.start();
const writer = startWriter(ncclDir, 2000, 3600);
const registry: Registry = agent.registry;
try {
  for (let i = 0; ; i++) {
    if (coverage(await registry.metrics()).complete) break;
    if (i > 150) throw new Error("the agent never covered the bench node");
    await new Promise((r) => setTimeout(r, 200));
  }
  const total: number[] = [];
  const perMetric = new Map<string, number>();
  const seriesPerFamily = new Map<string, number>();
  let series = 0;
  let bytes = 0;
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    const text = await registry.metrics();
    total.push(performance.now() - t0);
    bytes = Buffer.byteLength(text);
    for (const m of registry.getMetricsAsArray() as unknown as Metric[]) {
      const t1 = performance.now();
      const got = await m.get();
      const name = got.name;
      perMetric.set(name, (perMetric.get(name) ?? 0) + (performance.now() - t1));
      if (i === 0) {
        series += got.values.length;
        seriesPerFamily.set(name, got.values.length);
      }
    }
    await new Promise((r) => setImmediate(r));
  }
  total.sort((a, b) => a - b);
  const getSum = [...perMetric.values()].reduce((a, b) => a + b, 0) / iterations;
  const mean = total.reduce((a, b) => a + b, 0) / iterations;
  console.log(
    `registry.metrics(): ${series} series, ${bytes} B; p50 ${percentile(total, 50).toFixed(2)} ms, p99 ${percentile(total, 99).toFixed(2)} ms, mean ${mean.toFixed(2)} ms over ${iterations}`,
  );
  console.log(`  every metric's get() together: ${getSum.toFixed(2)} ms; formatting (the rest): ${(mean - getSum).toFixed(2)} ms`);
  console.log("  slowest get() (ms per scrape):");
  for (const [name, ms] of [...perMetric.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15))
    console.log(`    ${(ms / iterations).toFixed(3).padStart(7)}  ${name}`);
  console.log("  most series (first scrape; a histogram's buckets, sum and count each count):");
  for (const [name, n] of [...seriesPerFamily.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 15))
    console.log(`    ${String(n).padStart(7)}  ${name}`);
  const ib = [...seriesPerFamily.entries()].filter(([name]) => name.startsWith("ringwatch_infiniband_"));
  console.log(
    `  ringwatch_infiniband_*: ${ib.reduce((a, [, n]) => a + n, 0)} series in ${ib.filter(([, n]) => n > 0).length} families with series (${ib.length} registered)`,
  );
  if (listPrefix !== undefined) {
    console.log(`  every family starting with ${listPrefix}:`);
    for (const [name, n] of [...seriesPerFamily.entries()].filter(([name]) => name.startsWith(listPrefix)).sort((a, b) => a[0].localeCompare(b[0])))
      console.log(`    ${String(n).padStart(7)}  ${name}`);
  }
} finally {
  await writer.stop().catch(() => undefined);
  await agent.stop();
  node.remove();
}
