/**
 * The release artifacts as operators get them (`npm run package`, scripts/package.mjs): the single
 * executable run from an empty folder (its version, the kubelet's proto, the Flight Recorder
 * worker and bcrypt's worker all embedded), the tarball's contents, lintian on the .deb, and the
 * .deb installed with dpkg -i, run, verified by systemd-analyze, removed and purged with nothing
 * left behind. Needs root (dpkg -i), dpkg-dev, binutils and lintian: CI installs them (.ci/run).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentMain, fakesDir, repoRoot, sample, samplesOf, startAgent, type RunningAgent, eventually } from "../helpers/agent-process.js";
import { fixturesDir } from "../helpers/fixtures.js";
import { gpuPod, startPodResourcesServer, type FakePodResources } from "../helpers/pod-resources-server.js";
import { tempDir } from "../helpers/temp-dir.js";
import { DMON_H100_LOAD, QUERY_H100 } from "../e2e/env.js";

const VERSION = (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string }).version;
const TOOLS = ["dpkg-deb", "dpkg-shlibdeps", "strip", "lintian", "systemd-analyze"];
const missing = TOOLS.filter((t) => spawnSync(t, ["--version"]).error !== undefined);
const isRoot = process.getuid?.() === 0;
const able = missing.length === 0 && isRoot;
if (!able) console.warn(`release artifacts not tested here: ${isRoot ? `missing ${missing.join(", ")}` : "not root (dpkg -i)"}`);
// In CI a missing tool fails the tests instead of skipping them.
const suite = able || process.env.CI ? describe : describe.skip;

const DEB_ARCH = process.arch === "x64" ? "amd64" : process.arch;
const ARCH = process.arch === "x64" ? "amd64" : process.arch;
const FR = join(fixturesDir, "fr/h100-2026-11-24");
const LOGS = join(fixturesDir, "nccl-device/h100-2026-11-24");

let out = "";
let exe = "";
const agents: RunningAgent[] = [];
const servers: FakePodResources[] = [];

function run(file: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(file, args, { encoding: "utf8", timeout: 120_000, cwd: opts.cwd, env: { ...process.env, ...opts.env }, maxBuffer: 64 << 20 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The files and links under the folders an install touches, the dpkg database and apt's lists aside. */
function systemFiles(): Set<string> {
  const roots = [
    "/usr/bin",
    "/usr/lib/systemd",
    "/usr/lib/sysusers.d",
    "/usr/share/doc",
    "/usr/share/man/man1",
    "/usr/share/lintian/overrides",
    "/etc",
    "/var/lib",
  ];
  const found = new Set<string>();
  const walk = (dir: string): void => {
    if (dir === "/var/lib/dpkg" || dir === "/var/lib/apt" || dir === "/etc/ld.so.cache") return;
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(dir, n);
      found.add(p);
      try {
        if (statSync(p, { throwIfNoEntry: false })?.isDirectory() === true && !p.startsWith("/proc")) walk(p);
      } catch {
        // vanished while walked
      }
    }
  };
  for (const r of roots) walk(r);
  return found;
}

function purgeIfInstalled(): void {
  if (run("dpkg-query", ["-W", "ringwatch"]).code === 0) run("dpkg", ["--purge", "ringwatch"]);
}

suite("release artifacts (npm run package)", () => {
  beforeAll(() => {
    expect(missing, "tools the packaging needs").toEqual([]);
    expect(isRoot, "dpkg -i needs root").toBe(true);
    purgeIfInstalled();
    out = tempDir("rw-release-");
    execFileSync(process.execPath, [join(repoRoot, "scripts/package.mjs"), `--out=${out}`], { stdio: ["ignore", "pipe", "inherit"], timeout: 540_000 });
    // Alone in an empty folder: nothing beside it to read.
    exe = join(tempDir("rw-exe-"), "ringwatch");
    copyFileSync(join(out, `ringwatch-${VERSION}-linux-${ARCH}`, "ringwatch"), exe);
    execFileSync("chmod", ["755", exe]);
  }, 600_000);

  afterAll(async () => {
    for (const a of agents.splice(0)) await a.stop("SIGTERM");
    for (const s of servers.splice(0)) await s.close();
    if (able) purgeIfInstalled();
  });

  it("the executable knows its version with no package.json beside it", () => {
    const r = run(exe, ["--version"], { cwd: "/" });
    expect(r.stdout).toBe(`ringwatch ${VERSION} (node ${process.versions.node})\n`);
    expect(r.code).toBe(0);
  });

  it("analyze in the executable gives dist/'s report to the byte, Flight Recorder dumps read in its embedded worker", () => {
    const args = ["analyze", "--json", FR, LOGS];
    const fromExe = run(exe, args, { cwd: "/" });
    const fromDist = run(process.execPath, [agentMain, ...args], { cwd: "/" });
    expect(fromExe.code).toBe(fromDist.code);
    expect(fromExe.stdout).toBe(fromDist.stdout);
    // The dumps were read (a worker that cannot start leaves them unread, with one stderr line each).
    const report = JSON.parse(fromExe.stdout) as { findings: { kind: string; source?: string }[] };
    expect(report.findings.map((f) => f.kind)).toContain("rank_behind");
    expect(fromExe.stderr).not.toMatch(/not a readable Flight Recorder dump/);
  });

  it("the executable serves /metrics: the fake tools, the pod-resources API from its embedded proto, basic auth through bcrypt", async () => {
    const dir = tempDir();
    const socket = join(dir, "kubelet.sock");
    const uuid = "GPU-00000000-0000-0000-0000-000000000000";
    servers.push(await startPodResourcesServer(socket, [gpuPod("train", "llama-worker-0", "trainer", [uuid])]));
    const webConfig = join(dir, "web.yml");
    writeFileSync(webConfig, `basic_auth_users:\n  prom: ${bcrypt.hashSync("s3cret", 4)}\n`);
    const a = await startAgent(
      [
        `--collector.gpu.nvidia-smi=${join(fakesDir, "nvidia-smi")}`,
        "--collector.gpu.interval=1s",
        "--no-collector.infiniband",
        "--no-collector.gdr",
        "--no-collector.mtu",
        "--no-collector.nccl",
        `--collector.job.pod-resources-socket=${socket}`,
        `--collector.job.nvidia-smi=${join(fakesDir, "nvidia-smi")}`,
        "--collector.job.interval=1s",
        "--collector.timeout=3s",
        `--web.config.file=${webConfig}`,
      ],
      { FAKE_NVSMI_DMON: DMON_H100_LOAD, FAKE_NVSMI_QUERY: QUERY_H100, FAKE_NVSMI_PACE_MS: "250" },
      60_000,
      { executable: exe },
    );
    agents.push(a);
    expect((await fetch(`${a.url}/metrics`)).status).toBe(401);
    const auth = { authorization: `Basic ${Buffer.from("prom:s3cret").toString("base64")}` };
    expect((await fetch(`${a.url}/metrics`, { headers: { authorization: `Basic ${Buffer.from("prom:wrong").toString("base64")}` } })).status).toBe(401);
    const text = await eventually(async () => {
      const res = await fetch(`${a.url}/metrics`, { headers: auth });
      const t = await res.text();
      return res.status === 200 && samplesOf(t, "ringwatch_gpu_job_info").length > 0 && samplesOf(t, "ringwatch_gpu_utilization_ratio").length > 0
        ? t
        : undefined;
    }, 30_000);
    expect(sample(text, 'ringwatch_job_source_up{source="pod_resources"}')).toBe(1);
    expect(samplesOf(text, "ringwatch_gpu_job_info")[0]).toContain('namespace="train",pod="llama-worker-0",container="trainer"');
    expect(samplesOf(text, "ringwatch_build_info")).toEqual([`ringwatch_build_info{version="${VERSION}",nodejs_version="${process.versions.node}"} 1`]);
  }, 90_000);

  it("the tarball holds the executable, the unit, the defaults, the docs and the licenses", () => {
    const tgz = join(out, `ringwatch-${VERSION}-linux-${ARCH}.tar.gz`);
    const names = run("tar", ["-tzf", tgz]).stdout.trim().split("\n");
    const top = `ringwatch-${VERSION}-linux-${ARCH}/`;
    for (const f of [
      "ringwatch",
      "systemd/ringwatch.service",
      "systemd/ringwatch.env",
      "README.md",
      "LICENSES",
      "docs/metrics.md",
      "examples/prometheus/ringwatch-rules.yml",
    ]) {
      expect(names).toContain(top + f);
    }
    expect(names.every((n) => n.startsWith(top))).toBe(true);
    const licenses = run("tar", ["-xzOf", tgz, `${top}LICENSES`]).stdout;
    // Node.js's license, and one stanza per bundled npm package (prom-client among them).
    expect(licenses).toMatch(/^License: Node\.js$/m);
    expect(licenses).toMatch(/^Comment: npm package prom-client \d/m);
  });

  it("lintian finds no error or warning on the .deb, and every override it carries is used", () => {
    const deb = join(out, `ringwatch_${VERSION}_${DEB_ARCH}.deb`);
    // -I shows the info tags too, among them unused-override for an override that matched nothing.
    const r = run("lintian", ["--fail-on", "error,warning", "--tag-display-limit", "0", "-I", deb]);
    const tags = r.stdout.split("\n").filter((l) => /^[EW]: /.test(l));
    expect(tags).toEqual([]);
    expect(r.stdout).not.toMatch(/unused-override|mismatched-override/);
    expect(r.stdout).toMatch(/^I: ringwatch: /m);
    expect(r.code).toBe(0);
  }, 180_000);

  it("installs with dpkg -i, runs (--version, --once on the fakes, analyze on a capture), passes systemd-analyze verify, and leaves nothing after a purge", () => {
    const deb = join(out, `ringwatch_${VERSION}_${DEB_ARCH}.deb`);
    const before = systemFiles();
    const install = run("dpkg", ["-i", deb]);
    // systemd-sysusers says what it made; nothing else may be said.
    expect(install.stderr.split("\n").filter((l) => l !== "" && !/^Creating (group|user) 'ringwatch'/.test(l))).toEqual([]);
    expect(install.code).toBe(0);

    expect(run("/usr/bin/ringwatch", ["--version"]).stdout).toBe(`ringwatch ${VERSION} (node ${process.versions.node})\n`);
    expect(run("getent", ["passwd", "ringwatch"]).stdout).toMatch(/^ringwatch:x:\d+:\d+:[^:]*:\/nonexistent:\/usr\/sbin\/nologin$/m);
    expect(run("dpkg-query", ["-W", "-f", "${Conffiles}", "ringwatch"]).stdout).toMatch(/\/etc\/default\/ringwatch [0-9a-f]{32}/);
    const verify = run("systemd-analyze", ["verify", "/usr/lib/systemd/system/ringwatch.service"]);
    expect(verify.stderr.trim()).toBe("");
    expect(verify.code).toBe(0);

    const once = run(
      "/usr/bin/ringwatch",
      [
        "--once",
        `--collector.gpu.nvidia-smi=${join(fakesDir, "nvidia-smi")}`,
        "--no-collector.infiniband",
        "--no-collector.gdr",
        "--no-collector.mtu",
        "--no-collector.nccl",
        "--no-collector.job",
        "--collector.kmsg.state-file=",
      ],
      { env: { FAKE_NVSMI_DMON: DMON_H100_LOAD, FAKE_NVSMI_QUERY: QUERY_H100 } },
    );
    expect(once.code).toBe(0);
    expect(sample(once.stdout, 'ringwatch_collector_success{collector="gpu"}')).toBe(1);
    expect(samplesOf(once.stdout, "ringwatch_gpu_utilization_ratio").length).toBeGreaterThan(0);
    const analyzed = run("/usr/bin/ringwatch", ["analyze", FR, LOGS], { cwd: "/" });
    expect(analyzed.stdout).toMatch(/^VERDICT: Flight Recorder, process group 0 \(default_pg\): rank 1 enqueued collectives only up to #81/m);
    const installed = run("dpkg-query", ["-L", "ringwatch"]).stdout.trim().split("\n");
    expect(installed).toContain("/usr/bin/ringwatch");
    expect(installed).toContain("/usr/lib/systemd/system/ringwatch.service");

    // Remove keeps the conffile; purge takes it, the state folder and the user.
    expect(run("dpkg", ["--remove", "ringwatch"]).code).toBe(0);
    expect(existsSync("/usr/bin/ringwatch")).toBe(false);
    expect(existsSync("/etc/default/ringwatch")).toBe(true);
    expect(run("dpkg", ["--purge", "ringwatch"]).code).toBe(0);
    expect(existsSync("/etc/default/ringwatch")).toBe(false);
    expect(run("getent", ["passwd", "ringwatch"]).code).not.toBe(0);
    expect(run("getent", ["group", "ringwatch"]).code).not.toBe(0);
    const after = systemFiles();
    expect([...after].filter((p) => !before.has(p)).sort()).toEqual([]);
    expect([...before].filter((p) => !after.has(p)).sort()).toEqual([]);
  }, 120_000);
});
