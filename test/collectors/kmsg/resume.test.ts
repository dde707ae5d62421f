/**
 * Where reading resumes, over real files: a fake procfs, a real state file. Records already read
 * in this boot are skipped; the others are handed on with their Unix time and saved; a failed save
 * is counted and logged once per run of failures.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { JournalRecord } from "../../../collectors/kmsg/parse/journal-record.js";
import type { KmsgRecord } from "../../../collectors/kmsg/parse/kmsg-record.js";
import { Resume } from "../../../collectors/kmsg/resume.js";
import { memoryLogger } from "../../helpers/memory-logger.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";

const BOOT = "770920c0-309d-4dc4-9f25-65cfd492b686";
const NOW = Date.UTC(2026, 10, 24, 2, 47);
const BOOT_MS = NOW - 86_400_000;

interface Rig {
  resume: Resume;
  state: string;
  messages: Array<[string, number]>;
  failures: () => number;
  lines: () => Array<Record<string, unknown>>;
}

function rig(opts: { saved?: object | string; stateFile?: string | null; stateDirMayBeAbsent?: boolean } = {}): Rig {
  const dir = testTempDir();
  mkdirSync(join(dir, "proc/sys/kernel/random"), { recursive: true });
  writeFileSync(join(dir, "proc/sys/kernel/random/boot_id"), BOOT + "\n");
  writeFileSync(join(dir, "proc/uptime"), "86400.00 170000.00\n");
  const state = opts.stateFile === undefined ? join(dir, "kmsg-position.json") : (opts.stateFile ?? "");
  if (opts.saved !== undefined) writeFileSync(state, typeof opts.saved === "string" ? opts.saved : JSON.stringify(opts.saved));
  const messages: Array<[string, number]> = [];
  let failures = 0;
  const { logger, lines } = memoryLogger();
  const resume = new Resume({
    procfsRoot: join(dir, "proc"),
    stateFile: opts.stateFile === null ? undefined : state,
    saveEveryMs: 60_000, // saved by flush() in these tests
    now: () => NOW,
    logger,
    onMessage: (m, atMs) => messages.push([m, atMs]),
    onSaveFailure: () => failures++,
    ...(opts.stateDirMayBeAbsent !== undefined ? { stateDirMayBeAbsent: opts.stateDirMayBeAbsent } : {}),
  });
  return { resume, state, messages, failures: () => failures, lines };
}

const kmsg = (seq: number, message: string, facility = 0): KmsgRecord => ({ seq, usec: seq * 1_000_000, level: 3, facility, message });
const journal = (cursor: string, message: string, extra: Partial<JournalRecord> = {}): JournalRecord => ({ cursor, message, ...extra });
const saved = (state: string): unknown => JSON.parse(readFileSync(state, "utf8"));

describe("Resume", () => {
  it("hands on kernel records with the boot's start plus their time, skips user-space ones, and saves the last sequence number", async () => {
    const r = rig();
    await r.resume.open();
    expect(await r.resume.restore()).toBeUndefined(); // no state file yet
    r.resume.kmsgRecord(kmsg(1, "first"));
    r.resume.kmsgRecord(kmsg(2, "from user space", 1));
    r.resume.kmsgRecord(kmsg(3, "third"));
    expect(r.messages).toEqual([
      ["first", BOOT_MS + 1000],
      ["third", BOOT_MS + 3000],
    ]);
    await r.resume.flush();
    expect(saved(r.state)).toEqual({ bootId: BOOT, kmsgSeq: 3 });
  });

  it("in the same boot, skips the records up to the saved sequence number and returns the saved recovery actions", async () => {
    const r = rig({ saved: { bootId: BOOT, kmsgSeq: 2, journalCursor: "c-9", recovery: { "0009:01:00": 4 } } });
    await r.resume.open();
    expect(await r.resume.restore()).toEqual({ "0009:01:00": 4 });
    for (const seq of [1, 2, 3]) r.resume.kmsgRecord(kmsg(seq, `m${seq}`));
    expect(r.messages.map(([m]) => m)).toEqual(["m3"]);
    expect(r.resume.journalCursor()).toBe("c-9");
    r.resume.markRecovery("0009:01:00", 0);
    await r.resume.flush();
    expect(saved(r.state)).toEqual({ bootId: BOOT, kmsgSeq: 3, journalCursor: "c-9" });
  });

  it("reads everything again after a reboot, and says so when the state file is not a position", async () => {
    const other = rig({ saved: { bootId: "00000000-0000-0000-0000-000000000000", kmsgSeq: 2 } });
    await other.resume.open();
    expect(await other.resume.restore()).toBeUndefined();
    other.resume.kmsgRecord(kmsg(1, "m1"));
    expect(other.messages).toHaveLength(1);
    expect(other.resume.journalCursor()).toBeUndefined();

    const broken = rig({ saved: "{not json" });
    await broken.resume.open();
    expect(await broken.resume.restore()).toBeUndefined();
    expect(broken.lines().map((l) => [l["level"], l["msg"]])).toEqual([
      [40, `kmsg: ${broken.state}: not a saved position (ignored); reading the whole kernel log buffer`],
    ]);
  });

  it("times journal records by their wall clock (else the boot's start plus their time since boot), skips another boot's, and keeps the cursor", async () => {
    const r = rig();
    await r.resume.open();
    await r.resume.restore();
    r.resume.journalRecord(journal("c-1", "wall", { realtimeMs: NOW - 5, bootId: BOOT.replaceAll("-", "") }));
    r.resume.journalRecord(journal("c-2", "since boot", { usec: 2_000_000 }));
    r.resume.journalRecord(journal("c-3", "no time"));
    r.resume.journalRecord(journal("c-4", "another boot", { realtimeMs: NOW, bootId: "0123456789abcdef0123456789abcdef" }));
    expect(r.messages).toEqual([
      ["wall", NOW - 5],
      ["since boot", BOOT_MS + 2000],
      ["no time", NOW],
    ]);
    expect(r.resume.journalCursor()).toBe("c-3");
    await r.resume.flush();
    expect(saved(r.state)).toEqual({ bootId: BOOT, journalCursor: "c-3" });
  });

  it("after rewind(), a restarted source skips what was read before it", async () => {
    const r = rig();
    await r.resume.open();
    await r.resume.restore();
    r.resume.kmsgRecord(kmsg(1, "m1"));
    r.resume.kmsgRecord(kmsg(2, "m2"));
    r.resume.rewind();
    for (const seq of [1, 2, 3]) r.resume.kmsgRecord(kmsg(seq, `m${seq}`));
    expect(r.messages.map(([m]) => m)).toEqual(["m1", "m2", "m3"]);
  });

  it("keeps and saves nothing after forget() (--once), nor without a state file", async () => {
    const r = rig();
    await r.resume.open();
    r.resume.forget();
    r.resume.kmsgRecord(kmsg(1, "m1"));
    r.resume.markRecovery("0009:01:00", 4);
    await r.resume.flush();
    expect(r.messages).toHaveLength(1);
    expect(() => readFileSync(r.state)).toThrow(/ENOENT/);

    const none = rig({ stateFile: null });
    await none.resume.open();
    expect(await none.resume.restore()).toBeUndefined();
    none.resume.kmsgRecord(kmsg(1, "m1"));
    await none.resume.flush();
    expect(none.failures()).toBe(0);
  });

  it("counts every failed save and logs once per run of failures", async () => {
    const dir = testTempDir();
    const r = rig({ stateFile: join(dir, "state", "kmsg-position.json") });
    await r.resume.open();
    r.resume.kmsgRecord(kmsg(1, "m1"));
    await r.resume.flush();
    await r.resume.flush();
    expect(r.failures()).toBe(2);
    const warning = `kmsg: cannot save the kernel log position to ${join(dir, "state", "kmsg-position.json")}: ENOENT; after a restart, records since the last good write are read again`;
    expect(r.lines().map((l) => l["msg"])).toEqual([warning]);

    mkdirSync(join(dir, "state"));
    await r.resume.flush();
    expect(saved(join(dir, "state", "kmsg-position.json"))).toEqual({ bootId: BOOT, kmsgSeq: 1 });
    rmSync(join(dir, "state"), { recursive: true });
    r.resume.kmsgRecord(kmsg(2, "m2"));
    await r.resume.flush();
    expect(r.failures()).toBe(3);
    expect(r.lines().map((l) => l["msg"])).toEqual([warning, warning]);
  });

  it("the default's directory missing (npm start outside systemd and the image): one info line, no failure counted, no save tried again", async () => {
    const dir = testTempDir();
    const file = join(dir, "state", "kmsg-position.json");
    const r = rig({ stateFile: file, stateDirMayBeAbsent: true });
    await r.resume.open();
    r.resume.kmsgRecord(kmsg(1, "m1"));
    await r.resume.flush();
    r.resume.kmsgRecord(kmsg(2, "m2"));
    mkdirSync(join(dir, "state")); // too late: the position is no longer kept
    await r.resume.flush();
    expect(r.failures()).toBe(0);
    expect(() => readFileSync(file)).toThrow(/ENOENT/);
    expect(r.lines().map((l) => [l["level"], l["msg"]])).toEqual([
      [
        30,
        `kmsg: cannot save the kernel log position to ${file}: ENOENT: its directory does not exist, so the read position is not kept and a restart reads the kernel's buffer again (systemd's StateDirectory= and the image create it; --collector.kmsg.state-file names another file, or none)`,
      ],
    ]);
  });

  it("the default's directory there but not writable is still a failed save (a warning)", async () => {
    const dir = testTempDir();
    // A file where the directory should be: ENOTDIR, which no uid (root included) can write through.
    writeFileSync(join(dir, "state"), "");
    const r = rig({ stateFile: join(dir, "state", "kmsg-position.json"), stateDirMayBeAbsent: true });
    await r.resume.open();
    r.resume.kmsgRecord(kmsg(1, "m1"));
    await r.resume.flush();
    expect(r.failures()).toBe(1);
    expect(r.lines().map((l) => l["level"])).toEqual([40]);
  });
});
