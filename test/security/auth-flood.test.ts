/**
 * Wrong passwords cannot starve the right one. 200 clients (auth-flood.mjs, a process of its own)
 * keep sending wrong passwords for the user Prometheus scrapes with, each one never sent before, so
 * that every one would need a bcrypt check; a real scrape with the right password must be answered
 * within Prometheus' default scrape timeout (10 s) all the same. Before the password checks were
 * bounded, the first scrape after a start or a web config reload waited behind the whole flood
 * (19 s here, 61.6 s on the node where it was found). Needs `npm run build` first.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { request, type IncomingHttpHeaders } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import pino from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { BasicAuth } from "../../agent/web/auth.js";
import { plainAddress } from "../../agent/web/clients.js";
import { createMetricsServer } from "../../agent/web/server.js";
import { eventually, sample, startAgent, type RunningAgent } from "../helpers/agent-process.js";

const NO_COLLECTORS = ["--collector.disable-defaults"];
/** Prometheus' default scrape_timeout: a scrape answered later than this is a failed scrape. */
const SCRAPE_TIMEOUT_MS = 10_000;
const CLIENTS = 200;
// Cost 10, the cost of the docs' example and of exporter-toolkit's decoy.
const HASH = bcrypt.hashSync("s3cret", 10);
const USERS = `basic_auth_users:\n  prometheus: "${HASH}"\n`;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function start(yaml: string): Promise<{ agent: RunningAgent; config: string }> {
  const config = join(mkdtempSync(join(tmpdir(), "rw-flood-")), "web.yml");
  writeFileSync(config, yaml);
  const agent = await startAgent([...NO_COLLECTORS, `--web.config.file=${config}`]);
  cleanups.push(() => agent.stop());
  return { agent, config };
}

interface Scrape {
  status: number;
  ms: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** GET over a new connection, as a scraper that has none open; `from` is the local address to connect from. */
function scrape(port: number, password: string | undefined, from = "127.0.0.1"): Promise<Scrape> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const headers = password === undefined ? {} : { authorization: `Basic ${Buffer.from(`prometheus:${password}`).toString("base64")}` };
    const req = request({ host: "127.0.0.1", port, path: "/metrics", localAddress: from, agent: false, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: Math.round(performance.now() - t0), headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

interface Flood {
  /** Resolves once the flood has had `more` answers beyond those it had when called. */
  answers(more: number): Promise<void>;
  /** Stops it; the number of answers of each status. */
  stop(): Promise<Record<string, number>>;
}

/**
 * Starts auth-flood.mjs against the URL; resolves once every client has had a first answer. As
 * `user`: its code is given inline (-e), since that user may not reach this checkout.
 */
async function startFlood(url: string, user?: { uid: number; gid: number }): Promise<Flood> {
  const script = join(import.meta.dirname, "auth-flood.mjs");
  const args = [`${url}/metrics`, String(CLIENTS), "prometheus"];
  const child: ChildProcess =
    user === undefined
      ? spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "inherit"] })
      : spawn(process.execPath, ["--input-type=module", "-e", readFileSync(script, "utf8"), "auth-flood", ...args], {
          stdio: ["ignore", "pipe", "inherit"],
          uid: user.uid,
          gid: user.gid,
          cwd: "/",
        });
  const lines: string[] = [];
  let partial = "";
  let answers = 0;
  let waiting: { at: number; resolve: () => void }[] = [];
  let underWay: () => void = () => undefined;
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve())); // after its output
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    const got = (partial + d).split("\n");
    partial = got.pop() ?? "";
    for (const line of got) {
      lines.push(line);
      if (line === "flooding") underWay();
      if (line.startsWith("answers ")) answers = Number(line.slice(8));
    }
    const due = waiting.filter((w) => answers >= w.at);
    waiting = waiting.filter((w) => answers < w.at);
    for (const w of due) w.resolve();
  });
  cleanups.push(async () => {
    if (child.exitCode === null) child.kill("SIGKILL");
    await exited;
  });
  await new Promise<void>((resolve, reject) => {
    underWay = resolve;
    void exited.then(() => reject(new Error(`the flood exited before it was under way: ${lines.join("\n")}`)));
  });
  return {
    answers: (more) => new Promise((resolve) => waiting.push({ at: answers + more, resolve })),
    async stop() {
      child.kill("SIGTERM");
      await exited;
      return JSON.parse(lines.at(-1) ?? partial) as Record<string, number>;
    },
  };
}

describe("basic auth under a flood of wrong passwords", () => {
  it("serves a scrape whose password was checked before, during the flood and after a reload of the web config", { timeout: 120_000 }, async () => {
    const { agent, config } = await start(USERS);
    expect((await scrape(agent.port, "s3cret")).status).toBe(200); // Prometheus' first scrape, before the flood
    const flood = await startFlood(agent.url);

    const during = await scrape(agent.port, "s3cret");
    expect(during.status).toBe(200);
    expect(during.ms, "scrape during the flood").toBeLessThan(SCRAPE_TIMEOUT_MS);

    // An unrelated change: the file is re-read (a certificate rotation re-reads it the same way).
    writeFileSync(config, `${USERS}http_server_config:\n  headers:\n    X-Frame-Options: deny\n`);
    // In force once a response carries the new header (one without a password needs no check)...
    await eventually(async () => ((await scrape(agent.port, undefined)).headers["x-frame-options"] === "deny" ? true : undefined), {
      timeoutMs: 60_000,
      what: "the reloaded web config's header",
    });
    // ...and the flood has since had as many answers as it has clients: every client's check that
    // a new, empty cache would have queued is now ahead of the scrape.
    await flood.answers(CLIENTS);
    const afterReload = await scrape(agent.port, "s3cret");
    expect(afterReload.status).toBe(200);
    expect(afterReload.headers["x-frame-options"]).toBe("deny");
    expect(afterReload.ms, "scrape after the reload, during the flood").toBeLessThan(SCRAPE_TIMEOUT_MS);
    expect(sample(afterReload.body, 'ringwatch_web_config_reloads_total{result="success"}')).toBe(1);
    // The flood's refused checks are counted (the flood had answers before this scrape was served).
    expect(sample(afterReload.body, 'ringwatch_web_refused_total{reason="password_checks_busy"}')).toBeGreaterThan(0);
    expect(sample(afterReload.body, 'ringwatch_web_refused_total{reason="connection_limit"}')).toBe(0);

    const answers = await flood.stop();
    expect(answers["401"]).toBeGreaterThan(0); // wrong passwords were checked...
    expect(answers["429"]).toBeGreaterThan(0); // ...and those beyond the limit of pending checks refused at once
    console.info(`right password during the flood: ${during.ms} ms; after a reload: ${afterReload.ms} ms; flood answers ${JSON.stringify(answers)}`);
  });

  it("answers a first scrape from the flooding host at once with 429 and Retry-After, not after the flood's checks", { timeout: 120_000 }, async () => {
    const { agent } = await start(USERS);
    const flood = await startFlood(agent.url);
    // While this host holds its share of pending checks (the flood's), a password not checked before is
    // asked to come back, at once. Between two of the flood's answers its share can have room (on a
    // busy machine the flood's process lags): then the password is checked (401 for these). Fresh wrong
    // passwords are tried until the share is full at the moment of one; the right one is not spent on
    // it (once checked, it would be answered from the cache).
    let first: Scrape | undefined;
    const seen: number[] = [];
    for (let i = 0; i < 100 && first === undefined; i++) {
      const probe = await scrape(agent.port, `never-sent-${i}`);
      seen.push(probe.status);
      if (probe.status === 429) first = probe;
    }
    expect(seen.filter((s) => s !== 429 && s !== 401)).toEqual([]);
    if (first === undefined) throw new Error(`no 429 in 100 first scrapes during the flood: ${seen.join(",")}`);
    expect(first.headers["retry-after"]).toBe("1");
    expect(first.ms, "429 during the flood").toBeLessThan(SCRAPE_TIMEOUT_MS);
    await flood.stop();
    // The flood's last checks still run, then the share is free again and the password is checked.
    const after = await eventually(async () => ((await scrape(agent.port, "s3cret")).status === 200 ? true : undefined), {
      what: "a 200 once the flood stopped",
    });
    expect(after).toBe(true);
    console.info(`first scrape from the flooding host: ${first.status} in ${first.ms} ms, after ${seen.length - 1} checked`);
  });

  it.runIf(process.getuid?.() === 0)(
    "serves the first scrape of another local user at once while one local user floods (users told apart by their sockets' owner)",
    { timeout: 120_000 },
    async () => {
      const { agent } = await start(USERS);
      const flood = await startFlood(agent.url, { uid: 65534, gid: 65534 });
      const first = await scrape(agent.port, "s3cret");
      expect(first.status).toBe(200);
      expect(first.ms, "first scrape of another local user during the flood").toBeLessThan(SCRAPE_TIMEOUT_MS);
      const answers = await flood.stop();
      expect(answers["429"]).toBeGreaterThan(0); // the flooding user was beyond its share all along
      console.info(`first scrape of another local user during a local flood: ${first.status} in ${first.ms} ms; flood answers ${JSON.stringify(answers)}`);
    },
  );

  // Prometheus scrapes from an address of its own. On this machine every address is the host's own,
  // so here the server tells clients apart by their exact address, as it tells a remote one from
  // this host; the flood connects from 127.0.0.1 and the scrape from 127.0.0.2.
  it("serves the first scrape of a client at another address while the flood runs: it is not queued behind the flood", { timeout: 120_000 }, async () => {
    const loaded = { settings: undefined, tls: undefined, auth: new BasicAuth(new Map([["prometheus", HASH]])), limiter: undefined };
    const server = createMetricsServer(new Registry(), pino({ level: "silent" }), {
      telemetryPath: "/metrics",
      version: "test",
      web: { path: undefined, loaded },
      clientOf: (a) => (a === undefined ? "gone" : plainAddress(a)),
    });
    const port = await server.listen({ host: "127.0.0.1", port: 0 });
    cleanups.push(() => server.close(100));
    const flood = await startFlood(`http://127.0.0.1:${port}`);
    const first = await scrape(port, "s3cret", "127.0.0.2");
    expect(first.status).toBe(200);
    expect(first.ms, "first scrape of another client during the flood").toBeLessThan(SCRAPE_TIMEOUT_MS);
    const again = await scrape(port, "s3cret", "127.0.0.2");
    expect(again.status).toBe(200);
    const answers = await flood.stop();
    expect(answers["429"]).toBeGreaterThan(0); // the flood was beyond its share all along
    console.info(`first scrape of another client during the flood: ${first.ms} ms, then ${again.ms} ms; flood answers ${JSON.stringify(answers)}`);
  });
});
