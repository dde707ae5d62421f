/**
 * The shipped Prometheus rules and Alertmanager configuration (deploy/): static checks in
 * TypeScript, then the real tools: `promtool check rules`, `promtool test rules` over
 * deploy/prometheus/tests/*.yml, `amtool check-config` and `amtool config routes test`.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { createAgent } from "../../agent/app.js";
import { parseCli } from "../../agent/config/config.js";
import { gate } from "./binaries.js";
import { alertmanagerFile, allRules, loadRuleTests, loadRules, metricNamesIn, metricNamesInText, ruleTestFiles, rulesFile } from "./rules.js";

const run = promisify(execFile);
const SEVERITIES = ["page", "critical", "warning", "info"];
const rules = allRules(loadRules());
const alerts = rules.filter((r) => r.alert);
const records = rules.filter((r) => r.record);

function exportedMetricNames(): Set<string> {
  const action = parseCli([], {});
  if (action.kind !== "run") throw new Error("expected run");
  const agent = createAgent(action.config, { logger: pino({ level: "silent" }) });
  return new Set(agent.registry.getMetricsAsArray().map((m) => m.name));
}

describe("shipped rules: static checks", () => {
  it("has the alerts and recording rules this project documents", () => {
    expect(alerts.length).toBeGreaterThanOrEqual(20);
    expect(records.length).toBeGreaterThanOrEqual(10);
    expect(new Set(alerts.map((a) => a.alert)).size).toBe(alerts.length);
    expect(new Set(records.map((r) => r.record)).size).toBe(records.length);
  });

  it("every alert has a severity, a summary, a description and a runbook_url into deploy/prometheus/README.md", () => {
    for (const a of alerts) {
      const name = a.alert ?? "";
      expect(name, name).toMatch(/^Ringwatch[A-Z][A-Za-z]+$/);
      expect(SEVERITIES, `${name} severity`).toContain(a.labels?.severity);
      expect(a.annotations?.summary, `${name} summary`).toBeTruthy();
      expect(a.annotations?.description, `${name} description`).toBeTruthy();
      expect(a.annotations?.runbook_url, `${name} runbook_url`).toBe(
        `https://github.com/ringwatch/ringwatch/blob/main/deploy/prometheus/README.md#alert-${name.toLowerCase()}`,
      );
      // the description names the node (the `node` target label) and the instance
      expect(a.annotations?.description, `${name} description names the node`).toContain("$labels.node");
    }
  });

  it("every runbook_url lands on a heading of deploy/prometheus/README.md", () => {
    const readme = readFileSync(new URL("../../deploy/prometheus/README.md", import.meta.url), "utf8");
    const anchors = new Set(
      readme
        .split("\n")
        .filter((l) => /^#+ /.test(l))
        .map((l) =>
          l
            .replace(/^#+ /, "")
            .trim()
            .toLowerCase()
            .replace(/[^a-z0-9 -]/g, "")
            .replace(/ /g, "-"),
        ),
    );
    for (const a of alerts) expect(anchors, a.alert).toContain(`alert-${(a.alert ?? "").toLowerCase()}`);
  });

  it("every recording rule is named ringwatch:<what>:<how>", () => {
    for (const r of records) expect(r.record).toMatch(/^ringwatch:[a-z0-9_]+:[a-z0-9_]+$/);
  });

  it("finds metric names in PromQL, not functions, labels, strings or durations", () => {
    expect(
      metricNamesIn(
        'label_replace(max_over_time(a_b[1d]) >= 4 and on (instance, device) c:d:e{x="y_z"}, "k", "v", "", "") or count_values without () ("mtu", f) * on (g) group_left (h) topk by (i) (1, j == bool 1e9) offset 5m',
      ).sort(),
    ).toEqual(["a_b", "c:d:e", "f", "j"]);
  });

  it("uses only metrics ringwatch exports, up, and its own recording rules", () => {
    const known = exportedMetricNames();
    expect(known.has("ringwatch_nccl_hang_suspected")).toBe(true);
    for (const r of records) known.add(r.record ?? "");
    known.add("up");
    const unknown: string[] = [];
    for (const r of rules) {
      for (const n of metricNamesIn(r.expr)) if (!known.has(n)) unknown.push(`${r.alert ?? r.record}: ${n}`);
      for (const text of Object.values(r.annotations ?? {}))
        for (const n of metricNamesInText(text)) if (!known.has(n)) unknown.push(`${r.alert} annotation: ${n}`);
    }
    expect(unknown).toEqual([]);
  });

  it("every alert has a promtool test where it fires and one where it does not; every recording rule is tested", () => {
    const tests = loadRuleTests().flatMap((f) => f.doc.tests);
    const alertTests = tests.flatMap((t) => t.alert_rule_test ?? []);
    const exprTests = tests.flatMap((t) => t.promql_expr_test ?? []);
    for (const a of alerts) {
      const mine = alertTests.filter((t) => t.alertname === a.alert);
      expect(
        mine.some((t) => (t.exp_alerts ?? []).length > 0),
        `${a.alert} fires in some test`,
      ).toBe(true);
      expect(
        mine.some((t) => (t.exp_alerts ?? []).length === 0),
        `${a.alert} does not fire in some test`,
      ).toBe(true);
    }
    for (const r of records)
      expect(
        exprTests.some((t) => metricNamesIn(t.expr).includes(r.record ?? "")),
        `${r.record} is tested`,
      ).toBe(true);
    // and the tests name no alert that does not exist
    const names = new Set(alerts.map((a) => a.alert));
    expect(alertTests.map((t) => t.alertname).filter((n) => !names.has(n))).toEqual([]);
  });

  it("the hang alert fires before the alerts it inhibits (shorter `for:`), so it reaches Alertmanager first", () => {
    const seconds = (d: string | undefined): number => {
      const m = /^(\d+)([smh])$/.exec(d ?? "0s");
      if (!m) throw new Error(`unexpected duration ${d}`);
      return Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2] as "s" | "m" | "h"];
    };
    const hang = alerts.find((a) => a.alert === "RingwatchNcclHang");
    for (const name of ["RingwatchNcclRankBehind", "RingwatchNcclRankBehindCrossNode", "RingwatchGpuHangSignature"]) {
      const target = alerts.find((a) => a.alert === name);
      expect(seconds(target?.for), name).toBeGreaterThan(seconds(hang?.for));
    }
  });

  it("alertmanager.yml matches only alerts and severities that exist", () => {
    const text = readFileSync(alertmanagerFile, "utf8");
    const names = alerts.map((a) => a.alert ?? "");
    const matchers = [...text.matchAll(/alertname(=~|=)"([^"]+)"/g)];
    expect(matchers.length).toBeGreaterThan(5);
    for (const [, op, value] of matchers) {
      const re = new RegExp(op === "=~" ? `^(?:${value})$` : `^${value}$`);
      expect(
        names.some((n) => re.test(n)),
        `alertname${op}"${value}" matches an alert`,
      ).toBe(true);
    }
    for (const [, sev] of text.matchAll(/severity="([^"]+)"/g)) expect(SEVERITIES).toContain(sev);
    // the example receivers are placeholders that can never deliver by accident
    const cfg = parse(text) as { receivers: { name: string; webhook_configs?: { url: string }[] }[] };
    for (const r of cfg.receivers) for (const w of r.webhook_configs ?? []) expect(w.url).toMatch(/\.invalid\//);
  });
});

const tools = gate(["promtool", "amtool"]);

describe.skipIf(tools.skip)(`shipped rules and Alertmanager config, checked by promtool and amtool${tools.skip ? ` (SKIPPED: ${tools.message})` : ""}`, () => {
  it("promtool and amtool are installed", () => {
    expect(tools.missing, tools.message).toEqual([]);
  });

  it.skipIf(tools.fail)("promtool check rules passes", async () => {
    const { stdout } = await run(tools.path.promtool, ["check", "rules", rulesFile]);
    expect(stdout).toContain(`SUCCESS: ${rules.length} rules found`);
  });

  it.skipIf(tools.fail)("promtool test rules passes on every test file", async () => {
    const files = ruleTestFiles();
    expect(files.length).toBeGreaterThanOrEqual(5);
    const res = await run(tools.path.promtool, ["test", "rules", ...files]).catch((e: { stdout?: string; stderr?: string }) => {
      throw new Error(`promtool test rules failed:\n${e.stdout ?? ""}${e.stderr ?? ""}`);
    });
    expect(res.stdout.match(/SUCCESS/g)).toHaveLength(files.length);
  });

  it.skipIf(tools.fail)("amtool check-config passes", async () => {
    const { stdout } = await run(tools.path.amtool, ["check-config", alertmanagerFile]);
    expect(stdout).toContain("SUCCESS");
    expect(stdout).toMatch(/\d+ inhibit rules/);
  });

  it.skipIf(tools.fail)("the merge snippet in deploy/alertmanager/README.md is a valid config that routes like the example", async () => {
    const readme = readFileSync(alertmanagerFile.replace(/alertmanager\.yml$/, "README.md"), "utf8");
    const snippet = /```yaml\n(route:[\s\S]*?)```/.exec(readme)?.[1];
    expect(snippet).toBeDefined();
    const dir = mkdtempSync(join(tmpdir(), "rw-amcfg-"));
    const file = join(dir, "merged.yml");
    writeFileSync(file, `${snippet ?? ""}receivers:\n  - name: your-default\n  - name: ringwatch-chat\n  - name: ringwatch-pager\n`);
    try {
      await run(tools.path.amtool, ["check-config", file]);
      const route = async (...labels: string[]): Promise<string> =>
        (await run(tools.path.amtool, ["config", "routes", "test", `--config.file=${file}`, ...labels])).stdout.trim();
      expect(await route("alertname=RingwatchNcclHang", "severity=page", "comm_id=0x1")).toBe("ringwatch-pager");
      expect(await route("alertname=RingwatchNcclStraggler", "severity=warning", "comm_id=0x1")).toBe("ringwatch-chat");
      expect(await route("alertname=RingwatchNcclSocketTransport", "severity=critical", "node=node-a", "pid=4242")).toBe("ringwatch-chat");
      // A transport alert has no comm_id: it takes the route that groups it per node.
      const tree = (
        await run(tools.path.amtool, [
          "config",
          "routes",
          "test",
          `--config.file=${file}`,
          "--tree",
          "alertname=RingwatchNcclSocketTransport",
          "severity=critical",
          "pid=4242",
        ])
      ).stdout;
      expect(tree).toContain('{alertname=~"RingwatchNccl(SocketTransport|GpuDirectRdmaDisabled)"}');
      expect(await route("alertname=RingwatchGpuFellOff", "severity=page")).toBe("ringwatch-pager");
      expect(await route("alertname=RingwatchMtuMismatch", "severity=critical")).toBe("ringwatch-chat");
      expect(await route("alertname=SomethingElse", "severity=page")).toBe("your-default");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(tools.fail)("every alert routes by severity: page to the pager, the rest to chat", async () => {
    for (const a of alerts) {
      const sev = a.labels?.severity ?? "";
      const labels = [`alertname=${a.alert}`, `severity=${sev}`, "node=node-a", "comm_id=0x1"];
      const { stdout } = await run(tools.path.amtool, ["config", "routes", "test", `--config.file=${alertmanagerFile}`, ...labels]);
      expect(stdout.trim(), `${a.alert} (${sev})`).toBe(sev === "page" ? "ringwatch-pager" : "ringwatch-chat");
    }
  });
});
