import { pino } from "pino";
import { Counter, Gauge, Histogram, Registry, Summary } from "prom-client";
import { describe, expect, it } from "vitest";
import { createAgent } from "../../../agent/app.js";
import { parseCli } from "../../../agent/config/config.js";
import { exposition } from "../../../agent/web/exposition.js";
import { repoRoot } from "../../helpers/agent-process.js";

describe("exposition", () => {
  it("is byte for byte prom-client's text for every metric type, odd label values and special values", async () => {
    const r = new Registry();
    const g = new Gauge({ name: "t_gauge", help: 'help with \\ backslash,\nnewline and "quotes"', labelNames: ["a", "b"], registers: [r] });
    g.set({ a: 'q"uote', b: "back\\slash" }, 1.5);
    g.set({ a: "new\nline", b: "ünïcødé" }, Number.NaN);
    g.set({ a: "", b: "x" }, Number.POSITIVE_INFINITY);
    g.set({ a: "neg", b: "inf" }, Number.NEGATIVE_INFINITY);
    g.set({ a: "big", b: "n" }, 2 ** 64);
    const c = new Counter({ name: "t_total", help: "a counter", labelNames: ["kind"], registers: [r] });
    c.inc({ kind: "x" }, 3);
    c.inc(0.25);
    new Gauge({ name: "t_empty", help: "no samples", labelNames: ["x"], registers: [r] });
    const h = new Histogram({ name: "t_seconds", help: "a histogram", labelNames: ["op"], buckets: [0.1, 1], registers: [r] });
    h.observe({ op: "read" }, 0.05);
    h.observe({ op: "write" }, 3);
    const s = new Summary({ name: "t_summary", help: "a summary", percentiles: [0.5, 0.99], registers: [r] });
    s.observe(4);
    expect(await exposition(r)).toBe(await r.metrics());
  });

  it("renders the agent's own registry as prom-client does", async () => {
    const a = parseCli(
      ["--once", "--no-collector.gpu", "--no-collector.infiniband", "--no-collector.gdr", "--no-collector.mtu", `--collector.nccl.path=${repoRoot}/test/fixtures/nccl`, "--collector.nccl.check-pids=false"],
      {},
    );
    if (a.kind !== "run") throw new Error("not a run");
    const agent = createAgent(a.config, { logger: pino({ level: "silent" }) });
    const text = await agent.runOnce();
    expect(text).toContain("ringwatch_nccl_rank_collectives_total{");
    expect(await exposition(agent.registry)).toBe(await agent.registry.metrics());
  });
});
