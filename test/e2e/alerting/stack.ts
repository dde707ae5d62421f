/**
 * A real Prometheus + Alertmanager stack on loopback, started by a test: free ports, temporary
 * storage, test copies of the shipped rules (only `for:` shortened) and of the shipped Alertmanager
 * config (receivers pointed at a webhook server in the test, grouping waits shortened), and a webhook
 * receiver that records every notification.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { parse, stringify } from "yaml";

import { tempDir } from "../../helpers/temp-dir.js";

export { tempDir };

/** A port free on 127.0.0.1 right now (bound, read, released). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolvePort(port));
    });
  });
}

export interface Proc {
  name: string;
  child: ChildProcess;
  /** stdout + stderr so far (the tools log to stderr). */
  output(): string;
  /** SIGTERM, then SIGKILL after graceMs; resolves once the process has exited. */
  stop(graceMs?: number): Promise<void>;
}

export function startProcess(name: string, file: string, args: string[], env: NodeJS.ProcessEnv = {}): Proc {
  const child = spawn(file, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const keep = (d: Buffer): void => {
    out += d.toString("utf8");
    if (out.length > 200_000) out = out.slice(-100_000);
  };
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  child.on("error", (err) => (out += `\nspawn error: ${err.message}\n`));
  const exited = new Promise<void>((res) => {
    if (child.exitCode !== null || child.signalCode !== null) res();
    else child.once("exit", () => res());
  });
  return {
    name,
    child,
    output: () => out,
    async stop(graceMs = 5000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Polls url until it answers 200, or throws with the process' output. */
export async function waitReady(proc: Proc, url: string, timeoutMs = 20_000): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`${proc.name} exited with ${proc.child.exitCode}:\n${proc.output()}`);
    try {
      const res = await fetch(url);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() - t0 > timeoutMs) throw new Error(`${proc.name} not ready at ${url} after ${timeoutMs} ms:\n${proc.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// ------------------------------------------------------------------------------------------------
// Test copies of the shipped configuration

interface RuleDoc {
  groups: { name: string; rules: Record<string, unknown>[] }[];
}

/** The shipped rules with every `for:` replaced by `forValue`; nothing else changes. */
export function rulesWithShortFor(shipped: string, forValue: string): string {
  const doc = parse(shipped) as RuleDoc;
  for (const g of doc.groups) for (const r of g.rules) if ("for" in r) r.for = forValue;
  return stringify(doc, { lineWidth: 0 });
}

interface RouteDoc {
  group_wait?: string;
  group_interval?: string;
  routes?: RouteDoc[];
}
interface AmDoc {
  route: RouteDoc;
  receivers: { name: string; webhook_configs?: { url: string }[] }[];
}

/**
 * The shipped Alertmanager config with every webhook URL pointed at `${hookBase}/<receiver name>`
 * and group_wait / group_interval shortened wherever they are set; routes, grouping and inhibitions
 * are left as shipped.
 */
export function alertmanagerForTest(shipped: string, hookBase: string, wait = "1s", interval = "1s"): string {
  const doc = parse(shipped) as AmDoc;
  const shorten = (r: RouteDoc): void => {
    if (r.group_wait !== undefined) r.group_wait = wait;
    if (r.group_interval !== undefined) r.group_interval = interval;
    for (const c of r.routes ?? []) shorten(c);
  };
  shorten(doc.route);
  for (const rc of doc.receivers) for (const w of rc.webhook_configs ?? []) w.url = `${hookBase}/${rc.name}`;
  return stringify(doc, { lineWidth: 0 });
}

// ------------------------------------------------------------------------------------------------
// Alertmanager, Prometheus, webhook

export interface Alertmanager extends Proc {
  url: string;
  dir: string;
}

export async function startAlertmanager(binary: string, configText: string): Promise<Alertmanager> {
  const dir = tempDir("rw-am-");
  const config = join(dir, "alertmanager.yml");
  writeFileSync(config, configText);
  const port = await freePort();
  const proc = startProcess("alertmanager", binary, [
    `--config.file=${config}`,
    `--storage.path=${join(dir, "data")}`,
    `--web.listen-address=127.0.0.1:${port}`,
    "--cluster.listen-address=", // no gossip port
    "--log.level=warn",
  ]);
  const url = `http://127.0.0.1:${port}`;
  const am: Alertmanager = {
    ...proc,
    url,
    dir,
    async stop(graceMs) {
      await proc.stop(graceMs);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await waitReady(proc, `${url}/-/ready`);
  } catch (err) {
    await am.stop();
    throw err;
  }
  return am;
}

export interface Target {
  url: string;
  labels: Record<string, string>;
}

export interface Prometheus extends Proc {
  url: string;
  dir: string;
  query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
}

export async function startPrometheus(binary: string, opts: { rules: string; targets: Target[]; alertmanager: string; job?: string }): Promise<Prometheus> {
  const dir = tempDir("rw-prom-");
  const rulesFile = join(dir, "ringwatch-rules.yml");
  writeFileSync(rulesFile, opts.rules);
  const config = {
    global: { scrape_interval: "1s", scrape_timeout: "1s", evaluation_interval: "1s" },
    rule_files: [rulesFile],
    alerting: { alertmanagers: [{ api_version: "v2", static_configs: [{ targets: [new URL(opts.alertmanager).host] }] }] },
    scrape_configs: [
      {
        job_name: opts.job ?? "ringwatch",
        static_configs: opts.targets.map((t) => ({ targets: [new URL(t.url).host], labels: t.labels })),
      },
    ],
  };
  const configFile = join(dir, "prometheus.yml");
  writeFileSync(configFile, stringify(config));
  const port = await freePort();
  const proc = startProcess("prometheus", binary, [
    `--config.file=${configFile}`,
    `--storage.tsdb.path=${join(dir, "data")}`,
    `--web.listen-address=127.0.0.1:${port}`,
    "--log.level=warn",
  ]);
  const url = `http://127.0.0.1:${port}`;
  const prom: Prometheus = {
    ...proc,
    url,
    dir,
    async stop(graceMs) {
      await proc.stop(graceMs);
      rmSync(dir, { recursive: true, force: true });
    },
    async query(expr) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
      const body = (await res.json()) as { status: string; data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
      if (body.status !== "success") throw new Error(`query ${expr}: ${JSON.stringify(body)}`);
      return body.data.result;
    },
  };
  try {
    await waitReady(proc, `${url}/-/ready`);
  } catch (err) {
    await prom.stop();
    throw err;
  }
  return prom;
}

/** One alert as Alertmanager's webhook sends it. */
export interface HookAlert {
  status: "firing" | "resolved";
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
}
/** One notification (webhook payload version 4). */
export interface Notification {
  receiver: string;
  status: "firing" | "resolved";
  alerts: HookAlert[];
  groupLabels: Record<string, string>;
  /** Milliseconds since the epoch at which the test received it. */
  receivedAt: number;
  /** The path it was posted to (/<receiver name>). */
  path: string;
}

export interface Webhook {
  url: string;
  notifications: Notification[];
  close(): Promise<void>;
}

export async function startWebhook(): Promise<Webhook> {
  const notifications: Notification[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (body += d));
    req.on("end", () => {
      try {
        notifications.push({ ...(JSON.parse(body) as Omit<Notification, "receivedAt" | "path">), receivedAt: Date.now(), path: req.url ?? "" });
        res.writeHead(200).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((res) => server.listen(0, "127.0.0.1", res));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    notifications,
    close: () =>
      new Promise((res) => {
        server.closeAllConnections();
        server.close(() => res());
      }),
  };
}

/** Posts alerts straight to Alertmanager's v2 API (startsAt now, no endsAt). */
export async function postAlerts(amUrl: string, alerts: { labels: Record<string, string>; annotations?: Record<string, string> }[]): Promise<void> {
  const now = new Date().toISOString();
  const res = await fetch(`${amUrl}/api/v2/alerts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(alerts.map((a) => ({ labels: a.labels, annotations: a.annotations ?? {}, startsAt: now }))),
  });
  if (res.status !== 200) throw new Error(`POST /api/v2/alerts: ${res.status} ${await res.text()}`);
}

export interface AmAlert {
  labels: Record<string, string>;
  status: { state: "active" | "suppressed" | "unprocessed"; inhibitedBy: string[]; silencedBy: string[] };
  fingerprint: string;
}

/** Alertmanager's view of its alerts, inhibited ones included. */
export async function amAlerts(amUrl: string): Promise<AmAlert[]> {
  const res = await fetch(`${amUrl}/api/v2/alerts?inhibited=true&silenced=true&active=true&unprocessed=true`);
  if (res.status !== 200) throw new Error(`GET /api/v2/alerts: ${res.status}`);
  return (await res.json()) as AmAlert[];
}

export function readText(file: string): string {
  return readFileSync(file, "utf8");
}
