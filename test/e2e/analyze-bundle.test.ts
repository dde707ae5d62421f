/**
 * `ringwatch analyze` on a bundle as users have it: node folders, rotated and compressed logs, a
 * SOURCES.md and a saved /metrics page beside them, a glob the shell did not expand, and
 * --fail-on for scripts. The built CLI as a child process, on real capture files.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { Report } from "../../collectors/nccl/verdict/report.js";
import { runAgent } from "../helpers/agent-process.js";
import { fixturesDir } from "../helpers/fixtures.js";
import { tempDir } from "./env.js";
import { zstdRawFrame } from "./analyze-zstd-raw.js";

const PASTED = join(fixturesDir, "nccl-pasted");
/** PyTorch's watchdog fired on ranks 0, 2, 3, 4, 6 of PG 1 (five ranks, criticals). */
const WATCHDOG = join(PASTED, "01-watchdog-pt2.4-reduce-scatter-pg1-seq7753-five-ranks.log");
/** NCCL on sockets between two ranks: a warning, at worst. */
const SOCKET = join(PASTED, "41-socket-mpirun-tags-indented-k8s-mpijob-2rank-net-socket.log");
/** Two nodes' init, nothing wrong. */
const CLEAN = join(PASTED, "47-ib-2.4.7-ib-disable-0-two-nodes-init-only-nothing-wrong.log");
/** Another watchdog capture (ranks 3, 11, 12, 14, 15): quoted in a README, it would read as a hang. */
const OTHER_WATCHDOG = join(PASTED, "07-watchdog-pt2.4-launcher-stderr-prefix-reduce-seq2070-two-nodes.log");

const P = "ringwatch: analyze: ";

/** A saved scrape of a ringwatch agent that saw a hang: what today's analyze read as one. */
const SCRAPE = [
  "# HELP ringwatch_nccl_hang_suspected 1 while this communicator, with a live rank on this node, has made no progress for the hang threshold, by any evidence (ringwatch_nccl_hang_evidence; docs/nccl.md).",
  "# TYPE ringwatch_nccl_hang_suspected gauge",
  'ringwatch_nccl_hang_suspected{comm_id="0x7f3a9c2e5d1b4a60"} 1',
  "# HELP ringwatch_build_info Version of ringwatch.",
  "# TYPE ringwatch_build_info gauge",
  'ringwatch_build_info{version="0.1.0"} 1',
  "",
].join("\n");

type Row = [string, string, number[], string[]];

function rows(stdout: string): Row[] {
  const report = JSON.parse(stdout) as Report;
  return report.findings.map((f) => [f.kind, f.severity, f.ranks, f.evidence]);
}

/** The findings of the capture as the file itself gives them, with its evidence under another name. */
async function expected(files: string[], rename: (e: string) => string = (e) => e): Promise<Row[]> {
  const r = await runAgent(["analyze", "--json", ...files]);
  expect(r.code).toBe(0);
  return rows(r.stdout).map(([k, s, ranks, ev]) => [k, s, ranks, ev.map(rename)]);
}

/**
 * bundle/
 *   SOURCES.md              quotes a watchdog line
 *   metrics.prom            a saved /metrics page
 *   node1/rank.log          the watchdog capture
 *   node2/back -> ..        a link back up the tree
 *   node2/logs/job.log      the sockets capture
 *   node2/.cache/old.log    a dot folder
 */
function bundle(): string {
  const b = join(tempDir(), "bundle");
  mkdirSync(join(b, "node1"), { recursive: true });
  mkdirSync(join(b, "node2", "logs"), { recursive: true });
  mkdirSync(join(b, "node2", ".cache"), { recursive: true });
  writeFileSync(join(b, "SOURCES.md"), `# Sources\n\nThe job's logs, as collected. The hang:\n\n${readFileSync(OTHER_WATCHDOG, "utf8")}`);
  writeFileSync(join(b, "metrics.prom"), SCRAPE);
  copyFileSync(WATCHDOG, join(b, "node1", "rank.log"));
  copyFileSync(SOCKET, join(b, "node2", "logs", "job.log"));
  copyFileSync(OTHER_WATCHDOG, join(b, "node2", ".cache", "old.log"));
  symlinkSync("..", join(b, "node2", "back"));
  return b;
}

const hasZstd = spawnSync("zstd", ["--version"]).status === 0;

describe("ringwatch analyze on a bundle", () => {
  it("reads node1/ and node2/ below the folder named, skips SOURCES.md, the scrape, dot folders and a link back up, one line each", async () => {
    const b = bundle();
    const r = await runAgent(["analyze", "--json", b]);
    expect(r.code).toBe(0);
    // What the listing skips is said first, what the reading skips (by its content) after.
    expect(r.stderr).toBe(
      `${P}skipped ${b}/SOURCES.md: Markdown, not a log\n` +
        `${P}skipped ${b}/node2/back: the folder ${b}, read already (a symbolic link to it)\n` +
        `${P}skipped ${b}/metrics.prom: a Prometheus metrics scrape, not a log\n`,
    );
    const node1 = join(b, "node1", "rank.log");
    const node2 = join(b, "node2", "logs", "job.log");
    const got = rows(r.stdout);
    // The same findings as the two captures named one by one: nothing from SOURCES.md, the scrape or .cache/.
    expect(got).toEqual(await expected([node1, node2]));
    const brief = got.map(([k, s, ranks]) => [k, s, ranks]);
    expect(brief).toContainEqual(["watchdog_timeout", "critical", [0, 2, 3, 4, 6]]); // node1
    expect(brief).toContainEqual(["socket_transport", "warning", [0, 1]]); // node2: rank 0, and rank 1 at the other end of its socket channel
    // Nothing of the watchdog capture quoted in SOURCES.md and kept in .cache/ (ranks 3, 11, 12, 14, 15).
    expect(got.filter(([, , ranks]) => ranks.some((r) => r > 6))).toEqual([]);
    expect(got.flatMap(([, , , ev]) => ev).filter((e) => !e.startsWith(`${node1}:`) && !e.startsWith(`${node2}:`))).toEqual([]);
    expect(got.find(([k]) => k === "watchdog_timeout")?.[3][0]).toBe(`${node1}:2`);
    expect(got.find(([k]) => k === "socket_transport")?.[3][0]).toBe(`${node2}:11`);
    const text = await runAgent(["analyze", b]);
    expect(text.stdout.split("\n")[0]).toMatch(/^ringwatch analyze: 2 file\(s\), \d+ lines/);
  });

  it("a saved /metrics page named alone is no log: skipped, exit 2 (it read as a hang before)", async () => {
    const b = bundle();
    const r = await runAgent(["analyze", join(b, "metrics.prom")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`${P}skipped ${b}/metrics.prom: a Prometheus metrics scrape, not a log\n${P}none of the inputs could be read\n`);
    // A Markdown file named on the command line is read (someone pasted a log into it).
    const md = await runAgent(["analyze", "--json", join(b, "SOURCES.md")]);
    expect(md.code).toBe(0);
    expect(md.stderr).toBe("");
    expect(rows(md.stdout).map(([k, , ranks]) => [k, ranks])).toContainEqual(["watchdog_timeout", [3, 11, 12, 14, 15]]);
  });

  it("reads .gz and .zst logs, known by their first bytes whatever their name (logrotate's .log.1.gz)", async () => {
    const dir = tempDir();
    const text = readFileSync(WATCHDOG);
    writeFileSync(join(dir, "rank.log.1.gz"), gzipSync(text));
    writeFileSync(join(dir, "rank.log.2"), gzipSync(text)); // compressed, named like a plain log
    writeFileSync(join(dir, "rank.log.3.zst"), zstdRawFrame(text));
    const want = await expected([WATCHDOG]);
    for (const name of ["rank.log.1.gz", "rank.log.2", "rank.log.3.zst"]) {
      const path = join(dir, name);
      const r = await runAgent(["analyze", "--json", path]);
      expect(r.code, name).toBe(0);
      expect(r.stderr, name).toBe("");
      expect(rows(r.stdout), name).toEqual(want.map(([k, s, ranks, ev]) => [k, s, ranks, ev.map((e) => e.replace(WATCHDOG, path))]));
    }
  }, 60_000);

  it.skipIf(!hasZstd)("reads a log compressed by the zstd command", async () => {
    const dir = tempDir();
    const path = join(dir, "rank.log.zst");
    const z = spawnSync("zstd", ["-q", "-19", WATCHDOG, "-o", path]);
    expect(z.status).toBe(0);
    const r = await runAgent(["analyze", "--json", path]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(rows(r.stdout)).toEqual((await expected([WATCHDOG])).map(([k, s, ranks, ev]) => [k, s, ranks, ev.map((e) => e.replace(WATCHDOG, path))]));
  });

  it("a .gz cut short is read up to the cut, with a line saying so", async () => {
    const dir = tempDir();
    const gz = gzipSync(readFileSync(WATCHDOG));
    const path = join(dir, "rank.log.1.gz");
    writeFileSync(path, gz.subarray(0, gz.length - 40));
    const r = await runAgent(["analyze", "--json", path]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      new RegExp(`^${P}${path.replace(/[.]/g, "\\.")}: gzip data cut short after \\d+ decompressed bytes; what came before is read\\n$`),
    );
    expect(rows(r.stdout).map(([k]) => k)).toContain("watchdog_timeout");
  });

  it("expands a quoted glob: *, ** and [...]; Markdown among its matches is skipped", async () => {
    const b = bundle();
    copyFileSync(CLEAN, join(b, "node2", "logs", "init.log"));
    const r = await runAgent(["analyze", "--json", `${b}/node[12]/**/*.log`]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    const node1 = join(b, "node1", "rank.log");
    const node2 = join(b, "node2", "logs", "job.log");
    expect(rows(r.stdout)).toEqual(await expected([node1, join(b, "node2", "logs", "init.log"), node2]));
    unlinkSync(join(b, "node2", "back"));
    const star = await runAgent(["analyze", "--json", `${b}/*`]);
    expect(star.code).toBe(0);
    expect(star.stderr).toBe(`${P}skipped ${b}/SOURCES.md: Markdown, not a log\n${P}skipped ${b}/metrics.prom: a Prometheus metrics scrape, not a log\n`);
    expect(rows(star.stdout)).toEqual(await expected([node1, join(b, "node2", "logs", "init.log"), node2]));
    const none = await runAgent(["analyze", `${b}/*.txt`]);
    expect(none.code).toBe(2);
    expect(none.stderr).toBe(`${P}cannot read ${b}/*.txt: no file matches this pattern\n${P}none of the inputs could be read\n`);
  }, 60_000);

  it("skips binary files and JSON that is no RAS report; reads logs with copytruncate's NULs, a crash's zeroed block, a stray NUL", async () => {
    const dir = tempDir();
    // A program left in the log folder: the first 64 kB of node's own executable.
    writeFileSync(join(dir, "a.out"), readFileSync(process.execPath).subarray(0, 64 * 1024));
    writeFileSync(join(dir, "job.json"), '{"job": "llm-64", "step": 1200}\n');
    const socket = readFileSync(SOCKET);
    writeFileSync(join(dir, "truncated.log"), Buffer.concat([Buffer.alloc(8192), socket]));
    const crashed = Buffer.concat([socket.subarray(0, 200), Buffer.alloc(4096), Buffer.from("\0\n"), socket.subarray(200)]);
    writeFileSync(join(dir, "x-crashed.log"), crashed);
    const r = await runAgent(["analyze", "--json", join(dir, "a.out"), join(dir, "job.json"), join(dir, "truncated.log")]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`${P}skipped ${dir}/a.out: binary, not a log\n${P}skipped ${dir}/job.json: JSON, not a RAS report\n`);
    expect(rows(r.stdout).map(([k, s, ranks]) => [k, s, ranks])).toEqual([
      ["socket_transport", "warning", [0, 1]],
      ["hang_suspected", "info", [0, 1]],
    ]);
    const c = await runAgent(["analyze", "--json", join(dir, "x-crashed.log")]);
    expect([c.code, c.stderr]).toEqual([0, ""]);
    expect(rows(c.stdout).map(([k]) => k)).toEqual(["socket_transport", "hang_suspected"]);
  });

  it("stops descending more than 16 folders below the folder named, with a line", async () => {
    const b = join(tempDir(), "deep");
    let d = b;
    for (let i = 1; i <= 17; i++) d = join(d, `d${i}`);
    mkdirSync(d, { recursive: true });
    copyFileSync(WATCHDOG, join(d, "rank.log"));
    copyFileSync(SOCKET, join(b, "d1", "job.log"));
    const r = await runAgent(["analyze", "--json", b]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`${P}skipped ${d}: more than 16 folders below ${b}\n`);
    expect(rows(r.stdout).map(([k]) => k)).toEqual(["socket_transport", "hang_suspected"]);
  });
});

describe("ringwatch analyze --fail-on", () => {
  it("exit 1 when a finding at or above the severity is found, 0 otherwise; without it, 0", async () => {
    const cases: [string[], number][] = [
      [[WATCHDOG], 0],
      [["--fail-on=critical", WATCHDOG], 1],
      [["--fail-on", "critical", WATCHDOG], 1],
      [["--fail-on=warning", WATCHDOG], 1],
      [[SOCKET], 0],
      [["--fail-on=warning", SOCKET], 1],
      [["--fail-on=critical", SOCKET], 0],
      [["--fail-on=warning", CLEAN], 0],
      [["--json", "--fail-on=critical", CLEAN, SOCKET], 0],
    ];
    for (const [args, code] of cases) {
      const r = await runAgent(["analyze", ...args]);
      expect([args.join(" "), r.code, r.stderr]).toEqual([args.join(" "), code, ""]);
      expect(r.stdout).not.toBe("");
    }
  }, 90_000);

  it("a bad value exits 2 with one clear line, before reading anything", async () => {
    const bad = await runAgent(["analyze", "--fail-on=error", WATCHDOG]);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toBe(
      `${P}--fail-on takes warning or critical, not "error" (usage: ringwatch analyze [--json] [--fail-on=warning|critical] FILE|DIR|GLOB|- ...)\n`,
    );
    const none = await runAgent(["analyze", WATCHDOG, "--fail-on"]);
    expect(none.code).toBe(2);
    expect(none.stderr.split("\n")).toEqual([
      `${P}--fail-on needs a value (usage: ringwatch analyze [--json] [--fail-on=warning|critical] FILE|DIR|GLOB|- ...)`,
      "",
    ]);
    const help = await runAgent(["analyze", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--fail-on=warning|critical   exit 1 when a finding of that severity or worse is found, else 0");
  });
});
