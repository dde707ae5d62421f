/**
 * The journal as the kmsg collector's source, through the real exec path and the fake journalctl
 * (test/fakes/journalctl): it resumes after the cursor, publishes the source once journalctl
 * reads (a record, or 2 s running), says why journalctl ended and asks for a restart, and reports
 * no source at all where neither the device nor journalctl is there. (System journal files it
 * may not read are covered by journal.integration.test.ts, which can drop root.)
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createExec } from "../../../collectors/exec.js";
import { HealthLog } from "../../../collectors/kmsg/health-log.js";
import { JournalSource, RUNNING_AFTER_MS } from "../../../collectors/kmsg/journal-source.js";
import { KmsgMetrics } from "../../../collectors/kmsg/metrics.js";
import { RestartBackoff } from "../../../collectors/kmsg/restart-backoff.js";
import { fakesDir, series } from "../../helpers/collector-deps.js";
import { eventually } from "../../helpers/eventually.js";
import { journalRecords } from "../../helpers/kernel-log.js";
import { memoryLogger } from "../../helpers/memory-logger.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";

const FAKE = join(fakesDir, "journalctl");
const BOOT = "770920c0-309d-4dc4-9f25-65cfd492b686";
const GROUP = "the journal files' group (adm on Debian and Ubuntu, systemd-journal elsewhere)";

let sources: JournalSource[] = [];
/** What the sources' stopped() hook says. */
let stopped = false;
afterEach(async () => {
  stopped = true;
  for (const s of sources) await s.kill();
  sources = [];
  stopped = false;
  vi.unstubAllEnvs();
});

interface Rig {
  source: JournalSource;
  registry: Registry;
  status: HealthLog;
  backoff: RestartBackoff;
  messages: string[];
  restarts: () => number;
  lines: () => Array<Record<string, unknown>>;
  calls: string;
}

function rig(env: Record<string, string>, opts: { journalctl?: string; cursor?: string } = {}): Rig {
  const dir = testTempDir();
  const calls = join(dir, "calls.log");
  vi.stubEnv("FAKE_JOURNAL_LOG", calls);
  vi.stubEnv("FAKE_JOURNAL", join(dir, "none.json"));
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  const registry = new Registry();
  const { logger, lines } = memoryLogger();
  const status = new HealthLog(logger);
  const backoff = new RestartBackoff(1000, 60_000);
  const messages: string[] = [];
  let restarts = 0;
  const source = new JournalSource(createExec(), { journalctl: opts.journalctl ?? FAKE }, new KmsgMetrics(registry), status, backoff, {
    onRecord: (r) => messages.push(r.message),
    cursor: () => opts.cursor,
    restart: () => restarts++,
    stopped: () => stopped,
  });
  sources.push(source);
  return { source, registry, status, backoff, messages, restarts: () => restarts, lines, calls };
}

const sourceSeries = async (r: Rig): Promise<unknown[]> => (await series(r.registry, "ringwatch_kmsg_source")).map((s) => s.labels["source"]);

describe("JournalSource", () => {
  it("resumes after the cursor, publishes the source at the first record, and is healthy with the delay reset", async () => {
    const dir = testTempDir();
    const journal = join(dir, "journal.json");
    writeFileSync(journal, journalRecords(["first", "second", "third"], { bootId: BOOT }));
    const cursor = (JSON.parse(readFileSync(journal, "utf8").split("\n")[0] ?? "") as { __CURSOR: string }).__CURSOR;
    const r = rig({ FAKE_JOURNAL: journal }, { cursor });
    r.backoff.schedule(() => undefined);
    r.backoff.cancel();
    expect(r.backoff.nextDelayMs).toBe(2000);
    await r.source.start(undefined);
    expect(r.source.running).toBe(true);
    await eventually(() => expect(r.messages).toEqual(["second", "third"]));
    expect(await sourceSeries(r)).toEqual(["journal"]);
    expect(r.status.health()).toEqual({ ok: true });
    expect(r.backoff.nextDelayMs).toBe(1000);
    expect(readFileSync(r.calls, "utf8").trim().split(" ").slice(1)).toEqual(["-k", "-f", "-o", "json", "--no-tail", "--no-pager", `--after-cursor=${cursor}`]);
    expect(r.lines()).toEqual([]);
  });

  it("counts a journalctl that keeps running without a record as reading, after 2 s", async () => {
    const r = rig({});
    await r.source.start(undefined);
    expect(await sourceSeries(r)).toEqual([]);
    expect(r.status.ok).toBe(false);
    await eventually(() => r.status.ok, { timeoutMs: RUNNING_AFTER_MS + 5000 });
    expect(await sourceSeries(r)).toEqual(["journal"]);
    expect(r.source.running).toBe(true);
  });

  it("on a refusal: withdraws the source, quotes journalctl with the fix and the device's reason, asks for a restart, logs once", async () => {
    const r = rig({ FAKE_JOURNAL_MODE: "denied" });
    await r.source.start("cannot open /dev/kmsg: EPERM");
    await eventually(() => r.restarts() === 1);
    expect(r.source.running).toBe(false);
    expect(await sourceSeries(r)).toEqual([]);
    const reason = `journalctl may read none of the journal's files (No journal files were opened due to insufficient permissions.): add ringwatch's user to ${GROUP}; and cannot open /dev/kmsg: EPERM`;
    expect(r.status.health()).toEqual({ ok: false, reason });
    await r.source.start("cannot open /dev/kmsg: EPERM");
    await eventually(() => r.restarts() === 2);
    expect(r.lines().map((l) => [l["level"], l["msg"]])).toEqual([[40, `kmsg: ${reason}`]]);
  });

  it("with no device and no journalctl: absent, without a restart; with no journalctl alone: its exit, and a restart", async () => {
    const dir = testTempDir();
    const missing = join(dir, "no-journalctl");
    const both = rig({}, { journalctl: missing });
    await both.source.start("cannot open /dev/kmsg: ENOENT");
    await eventually(() => !both.source.running); // the exit, handled in one step
    expect(both.status.health()).toEqual({ ok: false, absent: true, reason: `cannot open /dev/kmsg: ENOENT; and ${missing} is not available` });
    expect(both.restarts()).toBe(0);

    const alone = rig({}, { journalctl: missing });
    await alone.source.start(undefined);
    await eventually(() => alone.restarts() === 1);
    expect(alone.status.health()).toEqual({ ok: false, reason: `${missing}: not found or not executable` });
  });

  it("once stopped, an exit changes nothing and asks for no restart", async () => {
    const r = rig({});
    await r.source.start(undefined);
    stopped = true;
    await r.source.kill();
    await eventually(() => !r.source.running);
    expect(r.restarts()).toBe(0);
    expect(r.status.health()).toEqual({ ok: false, starting: true, reason: "starting" });
  });
});
