/**
 * SIGHUP reloads the configuration without losing state, against the real built agent: a YAML
 * config file is changed on disk, the process gets a real SIGHUP, and the effect is read from its
 * logs and /metrics. Needs `npm run build` first.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import { afterEach, describe, expect, it } from "vitest";
import { eventually, fakesDir, sample, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { ncclModule } from "../../collectors/nccl/module.js";
import { fixturesDir } from "../helpers/fixtures.js";
import { tempDir } from "../helpers/temp-dir.js";
import { createCa, serverCert } from "../security/pki.js";

const COMM = "0x7e1fa5d00d00c0de";
/** Collectives the communicator's slowest rank entered (both ranks here move together). */
const PROGRESS = `ringwatch_nccl_comm_slowest_rank_progress{comm_id="${COMM}"}`;
let running: RunningAgent | undefined;
let ranks: ChildProcess[] = [];

afterEach(async () => {
  for (const r of ranks) r.kill("SIGTERM");
  ranks = [];
  await running?.stop();
  running = undefined;
});

/** A procfs tree whose modules file has one line that is not in the /proc/modules format: the gdr collector logs it at debug level on every poll. */
function procfsWithJunk(): string {
  const dir = tempDir("rw-reload-");
  const modules = readFileSync(join(fixturesDir, "procfs/gdr-h100-peermem/modules"), "utf8");
  writeFileSync(join(dir, "modules"), `${modules}this line is not a module\n`);
  return dir;
}

interface Yaml {
  level: string;
  threshold: string;
  extra?: string;
}

function writeConfig(path: string, procfs: string, ncclDir: string, y: Yaml): void {
  writeFileSync(
    path,
    `# ringwatch test configuration
log:
  level: ${y.level}
path:
  procfs: ${procfs}
collector:
  gpu: {enabled: false}
  infiniband: {enabled: false}
  mtu: {enabled: false}
  gdr:
    interval: 1s
  nccl:
    path: [${ncclDir}]
    hang-threshold: ${y.threshold}
    check-pids: false
    # The healthy communicator's threshold (ringwatch_nccl_hang_threshold_seconds) is on /metrics.
    rank-series: always
${y.extra ?? ""}`,
  );
}

const DEBUG_LINE = '"gdr: skipped unparsable module lines"';
const count = (a: RunningAgent, needle: string): number => a.logs().filter((l) => l.includes(needle)).length;
const parsed = (a: RunningAgent, msg: string): Array<Record<string, unknown>> =>
  a
    .logs()
    .filter((l) => l.includes(`"msg":"${msg}"`))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

function startRanks(dir: string, n: number): void {
  ranks = Array.from({ length: n }, (_, r) =>
    spawn(process.execPath, [join(fakesDir, "nccl-rank"), dir, String(r), String(n), COMM], {
      env: { ...process.env, FAKE_RANK_PERIOD_MS: "100" },
      stdio: "ignore",
    }),
  );
}

describe("SIGHUP reloads the configuration, keeping state", () => {
  it("applies a new log level and hang threshold from the YAML file; counts the reload; a broken file is counted, logged once and changes nothing", async () => {
    const procfs = procfsWithJunk();
    const ncclDir = tempDir("rw-reload-");
    const cfg = join(tempDir("rw-reload-"), "ringwatch.yml");
    writeConfig(cfg, procfs, ncclDir, { level: "info", threshold: "120s" });
    const a = (running = await startAgent([`--config.file=${cfg}`]));
    startRanks(ncclDir, 2);

    const before = await eventually(async () => {
      const t = await a.scrape();
      return sample(t, `ringwatch_nccl_hang_threshold_seconds{comm_id="${COMM}"}`) === 120 && (sample(t, PROGRESS) ?? 0) > 5 ? t : undefined;
    }, 20_000);
    expect(sample(before, 'ringwatch_collector_success{collector="gdr"}')).toBe(1);
    expect(sample(before, 'ringwatch_config_reloads_total{result="success"}')).toBe(0);
    expect(sample(before, 'ringwatch_config_reloads_total{result="failure"}')).toBe(0);
    const loadedAt = sample(before, "ringwatch_config_last_reload_success_timestamp_seconds") ?? 0;
    expect(loadedAt).toBeGreaterThan(Date.now() / 1000 - 60);
    const collectivesBefore = sample(before, PROGRESS) ?? 0;
    // At info level the gdr collector's debug line is not written, though every 1 s poll has it.
    await new Promise((r) => setTimeout(r, 2500));
    expect(count(a, DEBUG_LINE)).toBe(0);

    // ── A valid change: debug level, a 7 s hang threshold, a new telemetry path (that one needs a restart).
    writeConfig(cfg, procfs, ncclDir, { level: "debug", threshold: "7s", extra: "web:\n  telemetry-path: /other\n" });
    a.child.kill("SIGHUP");
    const reloaded = await eventually(() => Promise.resolve(parsed(a, "configuration reloaded")[0]), 5000);
    // What the nccl module declares it applies live decides the expectation; the agent's report
    // (reconfigured) is then checked against it, not taken as the expectation.
    const ncclLive = ncclModule.reloadable.includes("collector.nccl.hang-threshold");
    expect(reloaded.reconfigured).toEqual(ncclLive ? ["nccl"] : []);
    expect(reloaded).toMatchObject({ ok: true, needs_restart: ncclLive ? ["web.telemetry-path"] : ["web.telemetry-path", "collector.nccl.hang-threshold"] });
    expect(reloaded.applied).toEqual(ncclLive ? ["log.level", "collector.nccl.hang-threshold"] : ["log.level"]);
    // The collectors' own (child) loggers follow the new level: the debug line appears.
    await eventually(() => Promise.resolve(count(a, DEBUG_LINE) > 0 ? true : undefined), 5000);
    const warning = parsed(a, "--web.telemetry-path changed; it takes effect after a restart");
    expect(warning).toHaveLength(1);
    expect(warning[0]).toMatchObject({ level: 40, setting: "--web.telemetry-path", running: "/metrics", wanted: "/other" });
    const after = await a.scrape(); // still at the old path
    expect(sample(after, 'ringwatch_config_reloads_total{result="success"}')).toBe(1);
    expect(sample(after, 'ringwatch_config_reloads_total{result="failure"}')).toBe(0);
    expect(sample(after, "ringwatch_config_last_reload_success_timestamp_seconds") ?? 0).toBeGreaterThan(loadedAt);
    // State kept: the communicator and its progress were not reset by the reload.
    expect(sample(after, PROGRESS) ?? 0).toBeGreaterThan(collectivesBefore);

    if (ncclLive) {
      // The nccl collector took the new threshold live.
      await eventually(async () => (sample(await a.scrape(), `ringwatch_nccl_hang_threshold_seconds{comm_id="${COMM}"}`) === 7 ? true : undefined), 10_000);
    } else {
      // Without reconfigure() the collector keeps its threshold, and the log says so.
      const w = parsed(a, "--collector.nccl.hang-threshold changed; it takes effect after a restart (collector nccl cannot change it while running)");
      expect(w[0]).toMatchObject({ running: "2m", wanted: "7s", collectors: ["nccl"] });
      expect(sample(after, `ringwatch_nccl_hang_threshold_seconds{comm_id="${COMM}"}`)).toBe(120);
    }

    // ── A broken file: one error line, counted, nothing changes, the agent keeps serving.
    writeFileSync(cfg, "log:\n  level: [debug\n");
    a.child.kill("SIGHUP");
    const failed = await eventually(() => Promise.resolve(parsed(a, "configuration reload failed; keeping the running configuration")[0]), 5000);
    expect(String(failed.reason)).toContain(cfg);
    expect(String(failed.reason)).not.toContain("\n");
    const broken = await a.scrape();
    expect(sample(broken, 'ringwatch_config_reloads_total{result="failure"}')).toBe(1);
    expect(sample(broken, 'ringwatch_config_reloads_total{result="success"}')).toBe(1);
    expect(sample(broken, "ringwatch_config_last_reload_success_timestamp_seconds")).toBe(
      sample(after, "ringwatch_config_last_reload_success_timestamp_seconds"),
    );
    // Still at debug level, still following the ranks.
    const debugLines = count(a, DEBUG_LINE);
    await eventually(() => Promise.resolve(count(a, DEBUG_LINE) > debugLines ? true : undefined), 5000);
    expect(sample(broken, PROGRESS) ?? 0).toBeGreaterThan(collectivesBefore);

    // ── An invalid value (not YAML trouble): the same.
    writeConfig(cfg, procfs, ncclDir, { level: "verbose", threshold: "7s" });
    a.child.kill("SIGHUP");
    await eventually(() => Promise.resolve(parsed(a, "configuration reload failed; keeping the running configuration").length === 2 ? true : undefined), 5000);
    expect(String(parsed(a, "configuration reload failed; keeping the running configuration")[1]?.reason)).toMatch(/invalid value "verbose" for --log.level/);
    expect(sample(await a.scrape(), 'ringwatch_config_reloads_total{result="failure"}')).toBe(2);

    // ── Back to info: the debug lines stop.
    writeConfig(cfg, procfs, ncclDir, { level: "info", threshold: "7s" });
    a.child.kill("SIGHUP");
    await eventually(() => Promise.resolve(parsed(a, "configuration reloaded").length === 2 ? true : undefined), 5000);
    const quiet = count(a, DEBUG_LINE);
    await new Promise((r) => setTimeout(r, 2500));
    expect(count(a, DEBUG_LINE)).toBe(quiet);
    expect(a.child.exitCode).toBeNull();
  });

  it("reads --web.config.file again on SIGHUP: a new file with basic auth applies at once; one that turns TLS on waits for a restart; a broken one fails the reload", async () => {
    const dir = tempDir("rw-reload-");
    const cfg = join(dir, "ringwatch.yml");
    const point = (webFile: string): void => writeFileSync(cfg, `web:\n  config:\n    file: ${webFile}\n`);
    const open = join(dir, "open.yml");
    writeFileSync(open, "# no TLS, no auth\n");
    const auth = join(dir, "auth.yml");
    writeFileSync(auth, `basic_auth_users:\n  prometheus: "${bcrypt.hashSync("s3cret", 4)}"\n`);
    point(open);
    const a = (running = await startAgent([
      "--no-collector.gpu",
      "--no-collector.infiniband",
      "--no-collector.gdr",
      "--no-collector.mtu",
      "--no-collector.nccl",
      `--config.file=${cfg}`,
    ]));
    const withPassword = { headers: { authorization: `Basic ${Buffer.from("prometheus:s3cret").toString("base64")}` } };
    expect((await fetch(`${a.url}/healthz`)).status).toBe(200);

    point(auth);
    a.child.kill("SIGHUP");
    await eventually(() => Promise.resolve(parsed(a, "configuration reloaded")[0]), 5000);
    expect((await fetch(`${a.url}/healthz`)).status).toBe(401);
    expect((await fetch(`${a.url}/healthz`, withPassword)).status).toBe(200);

    const pki = createCa("reload-ca");
    const server = serverCert(pki);
    const tls = join(dir, "tls.yml");
    writeFileSync(tls, `tls_server_config:\n  cert_file: ${server.cert}\n  key_file: ${server.key}\n`);
    point(tls);
    a.child.kill("SIGHUP");
    const second = await eventually(() => Promise.resolve(parsed(a, "configuration reloaded")[1]), 5000);
    expect(second).toMatchObject({ ok: true, needs_restart: ["web.config.file"] });
    expect(parsed(a, "--web.config.file changed; it takes effect after a restart")[0]).toMatchObject({ running: auth, wanted: `${tls} (turns TLS on)` });
    expect((await fetch(`${a.url}/healthz`)).status).toBe(401); // still plain HTTP, still the password
    expect((await fetch(`${a.url}/healthz`, withPassword)).status).toBe(200);

    const broken = join(dir, "broken.yml");
    writeFileSync(broken, "basic_auth_users:\n  prometheus: hunter2\n");
    point(broken);
    a.child.kill("SIGHUP");
    const failed = await eventually(() => Promise.resolve(parsed(a, "configuration reload failed; keeping the running configuration")[0]), 5000);
    expect(String(failed.reason)).toMatch(/password of "prometheus" is not a bcrypt hash/);
    const m = await (await fetch(`${a.url}/metrics`, withPassword)).text();
    expect(sample(m, 'ringwatch_config_reloads_total{result="success"}')).toBe(2);
    expect(sample(m, 'ringwatch_config_reloads_total{result="failure"}')).toBe(1);
    expect((await fetch(`${a.url}/healthz`)).status).toBe(401);
  });
});
