import { pino } from "pino";
import { Counter, Gauge, Histogram, Registry, Summary } from "prom-client";
import { describe, expect, it } from "vitest";
import { createAgent } from "../../../agent/app.js";
import { parseCli } from "../../../agent/config/config.js";
import { exposition } from "../../../agent/web/exposition.js";
import { repoRoot } from "../../helpers/agent-process.js";
import { parsePromText } from "../../helpers/exposition.js";

describe("exposition", () => {
  it("is byte for byte prom-client's text for every metric type, odd label values and special values", async () => {
    // Label values with control characters differ on purpose: the next test.
    const r = new Registry();
    const g = new Gauge({ name: "t_gauge", help: 'help with \\ backslash,\nnewline and "quotes"', labelNames: ["a", "b"], registers: [r] });
    g.set({ a: 'q"uote', b: "back\\slash" }, 1.5);
    g.set({ a: "new\\nline", b: "ünïcødé\u00a0" }, Number.NaN);
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

  it("writes each control character of a label value as \\xNN and is otherwise prom-client's text", async () => {
    const raw = [
      "esc\u001b[31mred",
      "bel\u0007",
      "cr\rlf\n",
      "del\u007f",
      "nel\u0085c1\u009f",
      "nul\u0000tab\t",
      'mix\\"\u001b"',
      "edges\u001f\u0020\u007e\u00a0",
    ];
    // What a job's value must read as in Prometheus, by a regex here (the agent uses no regex to escape).
    const shown = (v: string): string => v.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
    const r = new Registry();
    const oracle = new Registry();
    const g = new Gauge({ name: "t_info", help: "crafted values", labelNames: ["v", "w"], registers: [r] });
    const o = new Gauge({ name: "t_info", help: "crafted values", labelNames: ["v", "w"], registers: [oracle] });
    raw.forEach((v, i) => {
      g.set({ v, w: "plain" }, i);
      o.set({ v: shown(v), w: "plain" }, i);
    });
    const text = await exposition(r);
    expect(text).toBe(await oracle.metrics());
    expect(text).toContain('t_info{v="esc\\\\x1b[31mred",w="plain"} 0');
    expect(text).toContain('t_info{v="cr\\\\x0dlf\\\\x0a",w="plain"} 2');
    // No raw control is left in the text but its line ends, and every value reads back escaped.
    expect([...text].filter((c) => c !== "\n" && shown(c) !== c)).toEqual([]);
    expect(parsePromText(text).series.map((s) => s.labels.v)).toEqual(raw.map(shown));
  });

  it("renders the agent's own registry as prom-client does", async () => {
    const a = parseCli(
      [
        "--once",
        "--no-collector.gpu",
        "--no-collector.infiniband",
        "--no-collector.gdr",
        "--no-collector.mtu",
        `--collector.nccl.path=${repoRoot}/test/fixtures/nccl`,
        "--collector.nccl.check-pids=false",
      ],
      {},
    );
    if (a.kind !== "run") throw new Error("not a run");
    const agent = createAgent(a.config, { logger: pino({ level: "silent" }) });
    const text = await agent.runOnce();
    expect(text).toContain("ringwatch_nccl_comm_slowest_rank_progress{");
    expect(await exposition(agent.registry)).toBe(await agent.registry.metrics());
  });
});
