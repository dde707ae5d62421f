/**
 * journalctl that cannot read the journal, through the real exec path.
 *
 * 1. The fake journalctl's refusals (test/fakes/journalctl): the collector's health says what is
 *    wrong and how to fix it, no source is published, and a refusal that repeats at every restart
 *    is logged once.
 * 2. This machine's journalctl, where there is one, on real directories: it refuses as the fake
 *    does (the same line, and so the same problem), and the built agent reports it on /metrics and
 *    in one log line. A mode-000 file means nothing to root, so when this test is root, journalctl
 *    and the agent run as nobody, the agent from a copy of the build every user can read.
 * 3. Some system journal files unreadable: journalctl reads the others and says nothing. The agent
 *    (as that user, with the fake journalctl) reports the skipped files and counts what it reads.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Collector } from "../../../collectors/collector.js";
import { createKmsgCollector } from "../../../collectors/kmsg/collector.js";
import { journalArgs, journalProblem } from "../../../collectors/kmsg/journal.js";
import { eventually, sample, startAgent, type RunningAgent } from "../../helpers/agent-process.js";
import { fakesDir, makeDeps, series } from "../../helpers/collector-deps.js";
import { journalRecords } from "../../helpers/kernel-log.js";
import { deniedUser, sharedTempDir, stageBuild, type StagedBuild } from "../../helpers/staged-build.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";

const FAKE = join(fakesDir, "journalctl");
const GROUP = "the journal files' group (adm on Debian and Ubuntu, systemd-journal elsewhere)";
const MACHINE = "0123456789abcdef0123456789abcdef";

// ───────────────────────────── 1. the fake's refusals, in-process

let running: Collector | undefined;
afterEach(async () => {
  await running?.stop?.();
  running = undefined;
  vi.unstubAllEnvs();
});

function startCollector(
  mode: string,
  journalDirectory: string | undefined,
): { c: Collector; deps: ReturnType<typeof makeDeps>; logs: string[]; calls: string } {
  const dir = testTempDir();
  const calls = join(dir, "calls.log");
  vi.stubEnv("FAKE_JOURNAL_MODE", mode);
  vi.stubEnv("FAKE_JOURNAL_LOG", calls);
  vi.stubEnv("FAKE_JOURNAL", join(dir, "none.json"));
  const logs: string[] = [];
  const deps = { ...makeDeps(), logger: pino({ level: "info" }, { write: (s: string) => void logs.push(s) }) };
  const c = createKmsgCollector(deps, {
    source: "journal",
    device: join(dir, "no-kmsg"),
    journalctl: FAKE,
    ...(journalDirectory !== undefined ? { journalDirectory } : {}),
    procfsRoot: dir,
    sysfsRoot: dir,
  });
  c.start?.();
  running = c;
  return { c, deps, logs, calls };
}

async function failure(c: Collector): Promise<string> {
  const h = await eventually(() => (c.health?.().starting !== true && c.health?.().ok === false ? c.health?.() : undefined));
  expect(h.absent).not.toBe(true);
  return h.reason ?? "";
}

describe("journalctl refuses (the fake, through the real exec path)", () => {
  it("every file unreadable: one warning naming the group, however often journalctl is restarted", async () => {
    const d = testTempDir();
    const { c, deps, logs, calls } = startCollector("denied", d);
    expect(await failure(c)).toBe(
      `journalctl -D ${d} may read none of the journal files there (No journal files were opened due to insufficient permissions.): run ringwatch with ${GROUP} as a supplemental group`,
    );
    // Restarted after 1 s and 2 s: the third run fails the same way.
    await eventually(() => (readFileSync(calls, "utf8").trim().split("\n").length >= 3 ? true : undefined), 10_000);
    const warnings = logs.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.msg.startsWith("kmsg:"));
    expect(warnings).toEqual([{ ...warnings[0], level: 40, msg: `kmsg: ${c.health?.().reason ?? ""}` }]);
    expect(await series(deps.registry, "ringwatch_kmsg_source")).toEqual([]);
    expect(c.health?.().ok).toBe(false);
  });

  it("the system journal (no -D), every file unreadable: the user needs the group", async () => {
    const { c } = startCollector("denied", undefined);
    expect(await failure(c)).toBe(
      `journalctl may read none of the journal's files (No journal files were opened due to insufficient permissions.): add ringwatch's user to ${GROUP}`,
    );
  });

  it("the directory missing, unreadable, or holding no journal", async () => {
    const absent = join(testTempDir(), "var/log/journal");
    expect(await failure(startCollector("no-directory", absent).c)).toBe(
      `the journal directory ${absent} does not exist (Failed to open ${absent}: No such file or directory): mount the host's /var/log/journal there, or /run/log/journal where the host keeps its journal in memory`,
    );
    await running?.stop?.();
    const closed = testTempDir();
    expect(await failure(startCollector("directory-denied", closed).c)).toBe(
      `the journal directory ${closed} may not be read (Failed to open ${closed}: Permission denied): run ringwatch with ${GROUP} as a supplemental group`,
    );
    await running?.stop?.();
    const empty = testTempDir();
    const noBoot = `journalctl -D ${empty} finds no journal of a boot there (%s): the directory holds no journal files; mount the host's persistent journal (/var/log/journal) there, or /run/log/journal where the host keeps its journal in memory`;
    expect(await failure(startCollector("no-boot", empty).c)).toBe(noBoot.replace("%s", "No journal boot entry found from the specified boot (+0)."));
    await running?.stop?.();
    expect(await failure(startCollector("no-boot-v252", empty).c)).toBe(
      noBoot.replace("%s", "Data from the specified boot (+0) is not available: No such boot ID in journal"),
    );
  });
});

// ───────────────────────────── 2 and 3. this machine's journalctl, and the agent as a denied user

const which = spawnSync("sh", ["-c", "command -v journalctl"], { encoding: "utf8" });
const realJournalctl = which.status === 0 ? which.stdout.trim() : undefined;
if (realJournalctl === undefined) console.warn("journalctl not installed: the real journalctl's refusals are not checked on this machine");

/** journalctl -k -f -o json ... -D dir, run as the denied user: its exit status and stderr. */
function journalctl(file: string, dir: string, env: NodeJS.ProcessEnv = {}): { status: number | null; stderr: string } {
  const r = spawnSync(file, journalArgs({ journalctl: file, directory: dir }), {
    encoding: "utf8",
    timeout: 10_000,
    env: { ...process.env, ...env },
    ...(deniedUser ? { uid: deniedUser.uid, gid: deniedUser.gid } : {}),
  });
  return { status: r.status, stderr: r.stderr };
}

let shared: string;
let staged: StagedBuild | undefined;
beforeAll(() => {
  shared = sharedTempDir("rw-journal-");
});
afterAll(() => {
  chmodSync(shared, 0o755);
  rmSync(shared, { recursive: true, force: true });
  staged?.remove();
});

/** A journal directory in journald's layout: <dir>/<machine-id>/ with the given files (all 0644 first). */
function journalDir(name: string, files: string[]): string {
  const d = join(shared, name);
  mkdirSync(join(d, MACHINE), { recursive: true, mode: 0o755 });
  chmodSync(d, 0o755);
  chmodSync(join(d, MACHINE), 0o755);
  for (const f of files) writeFileSync(join(d, MACHINE, f), "", { mode: 0o644 });
  return d;
}

async function agentOn(dir: string, journalctlPath: string, env: NodeJS.ProcessEnv = {}): Promise<RunningAgent> {
  if (deniedUser && staged === undefined) staged = stageBuild("rw-journal-agent-");
  const flags = [
    "--collector.disable-defaults",
    "--collector.kmsg",
    "--collector.kmsg.source=journal",
    `--collector.kmsg.journal-directory=${dir}`,
    `--collector.kmsg.journalctl=${journalctlPath}`,
    "--collector.kmsg.state-file=",
  ];
  return startAgent(flags, env, 30_000, { ...(deniedUser ? { user: deniedUser } : {}), ...(staged ? { main: staged.agentMain } : {}) });
}

const kmsgWarnings = (a: RunningAgent): string[] =>
  a
    .logs()
    .map((l) => (JSON.parse(l) as { msg: string }).msg)
    .filter((m) => m.startsWith("kmsg:"));

(realJournalctl !== undefined ? describe : describe.skip)(`this machine's journalctl (as ${deniedUser ? "nobody" : "this user"})`, () => {
  const real = realJournalctl ?? "journalctl";

  it("refuses as the fake does: the same line, the same exit status", () => {
    const unreadable = journalDir("unreadable", ["system.journal", "user-1000.journal"]);
    chmodSync(join(unreadable, MACHINE, "system.journal"), 0o000);
    const closed = journalDir("closed", ["system.journal"]);
    chmodSync(closed, 0o000);
    const cases: Array<[string, string, string[]]> = [
      [unreadable, "denied", []],
      [join(shared, "absent"), "no-directory", []],
      [closed, "directory-denied", []],
      [journalDir("empty", []), "no-boot", ["no-boot-v252"]],
    ];
    try {
      for (const [dir, mode, alternatives] of cases) {
        const r = journalctl(real, dir);
        const p = journalProblem(r.stderr);
        expect(r.status, r.stderr).toBe(1);
        expect(p, r.stderr).toBeDefined();
        const fakeLines = [mode, ...alternatives].map((m) => journalProblem(journalctl(FAKE, dir, { FAKE_JOURNAL_MODE: m }).stderr));
        expect(fakeLines.map((f) => f?.kind)).toContain(p?.kind);
        expect(
          fakeLines.map((f) => f?.line),
          `${mode}: the fake's line is not the real one`,
        ).toContain(p?.line);
      }
    } finally {
      chmodSync(closed, 0o755);
    }
  });

  it("the built agent: every system journal file unreadable is kmsg's failure on /metrics, logged once", async () => {
    const dir = journalDir("agent-unreadable", ["system.journal"]);
    chmodSync(join(dir, MACHINE, "system.journal"), 0o000);
    const a = await agentOn(dir, real);
    try {
      const text = await eventually(async () => {
        const t = await a.scrape();
        return sample(t, 'ringwatch_collector_success{collector="kmsg"}') === 0 && kmsgWarnings(a).length > 0 ? t : undefined;
      }, 15_000);
      expect(sample(text, 'ringwatch_kmsg_source{source="journal"}')).toBeUndefined();
      await new Promise((r) => setTimeout(r, 3500)); // two restarts of journalctl
      expect(kmsgWarnings(a)).toEqual([
        `kmsg: journalctl -D ${dir} may read none of the journal files there (No journal files were opened due to insufficient permissions.): run ringwatch with ${GROUP} as a supplemental group`,
      ]);
    } finally {
      await a.stop();
    }
  });

  it("the built agent: an empty journal directory (a host without a persistent journal) names the mount", async () => {
    const dir = journalDir("agent-empty", []);
    const a = await agentOn(dir, real);
    try {
      await eventually(
        async () => (sample(await a.scrape(), 'ringwatch_collector_success{collector="kmsg"}') === 0 && kmsgWarnings(a).length > 0 ? true : undefined),
        15_000,
      );
      expect(kmsgWarnings(a)).toEqual([
        expect.stringMatching(
          new RegExp(
            `^kmsg: journalctl -D ${dir} finds no journal of a boot there \\(.*specified boot.*\\): the directory holds no journal files; mount the host's persistent journal`,
          ),
        ),
      ]);
    } finally {
      await a.stop();
    }
  });
});

describe(`system journal files journalctl skips in silence (the agent as ${deniedUser ? "nobody" : "this user"}, the fake journalctl)`, () => {
  it("counts what it reads, and reports the skipped files as kmsg's failure", async () => {
    const dir = journalDir("partial", ["system.journal", "system@0005f1e2d3c4b5a6-0123456789abcdef.journal~", "user-1000.journal"]);
    chmodSync(join(dir, MACHINE, "system.journal"), 0o000);
    chmodSync(join(dir, MACHINE, "user-1000.journal"), 0o000); // no kernel messages there: not counted
    const fake = join(shared, "journalctl");
    copyFileSync(FAKE, fake);
    chmodSync(fake, 0o755);
    const records = join(shared, "partial.json");
    const bootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    writeFileSync(
      records,
      journalRecords(["mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link DOWN", "mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE"], { bootId }),
      { mode: 0o644 },
    );
    const a = await agentOn(dir, fake, { FAKE_JOURNAL: records, FAKE_JOURNAL_MODE: "normal" });
    try {
      const text = await eventually(async () => {
        const t = await a.scrape();
        return sample(t, "ringwatch_kmsg_records_total") === 2 && kmsgWarnings(a).length > 0 ? t : undefined;
      }, 15_000);
      await new Promise((r) => setTimeout(r, 2500)); // past the 2 s after which a quiet journalctl counts as healthy
      const later = await a.scrape();
      expect(sample(later, 'ringwatch_collector_success{collector="kmsg"}')).toBe(0);
      expect(sample(text, 'ringwatch_kmsg_source{source="journal"}')).toBe(1);
      expect(kmsgWarnings(a)).toEqual([
        `kmsg: journalctl -D ${dir} skips 1 of the 2 system journal files there, which hold the kernel's messages (${join(dir, MACHINE, "system.journal")}: EACCES): run ringwatch with ${GROUP} as a supplemental group`,
      ]);
    } finally {
      await a.stop();
    }
  });
});
