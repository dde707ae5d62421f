import { appendFileSync, chmodSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { Follower } from "../../../collectors/follow/follower.js";
import { deniedUser, runScriptAs, sharedTempDir, stageBuild } from "../../helpers/staged-build.js";
import { eventually, follow, Recorder } from "./helpers.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";

/** Follows a directory whose one file the running user cannot read; prints what it saw as JSON. */
const EACCES_SCRIPT = `
import { accessSync, constants } from "node:fs";
const [followerUrl, dir, denied] = process.argv.slice(1);
const { Follower } = await import(followerUrl);
let access = "readable";
try { accessSync(denied, constants.R_OK); } catch (e) { access = e.code; }
const reported = [];
const lines = [];
const f = new Follower({ paths: [dir], sweepIntervalMs: 100, removeGraceMs: 200 }, {
  onLines: (_file, got) => lines.push(...got),
  onReadError: (path, code) => reported.push([path, code]),
});
await f.start();
const { readErrors, files } = f.stats();
await f.stop();
console.log(JSON.stringify({ access, readErrors, reported, lines, files }));
`;

const denied = vi.hoisted(() => new Set<string>());

// Root reads every file whatever its mode: inject EACCES at open() to test it everywhere.
vi.mock("../../../collectors/untrusted-open.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../../collectors/untrusted-open.js")>();
  return {
    ...real,
    openJobFile: (p: string, roots: InstanceType<typeof real.TrustRoots>) =>
      denied.has(p) ? Promise.reject(Object.assign(new Error(`EACCES: ${p}`), { code: "EACCES" })) : real.openJobFile(p, roots),
  };
});

describe("Follower errors", () => {
  it("counts an unreadable file in readErrors and retries it on the sweep", async () => {
    const d = testTempDir();
    const p = join(d, "locked.log");
    writeFileSync(p, "secret\n");
    writeFileSync(join(d, "open.log"), "fine\n");
    denied.add(p);
    const { rec, f } = await follow({ paths: [d], sweepIntervalMs: 100 });
    expect(rec.lines()).toEqual(["fine"]); // start() did not wait on (or throw for) the locked file
    await eventually(() => expect(f.stats().readErrors).toBeGreaterThanOrEqual(2)); // retried
    denied.delete(p);
    await eventually(() => expect(rec.lines("locked.log")).toEqual(["secret"]));
    const errors = f.stats().readErrors;
    appendFileSync(p, "more\n");
    await eventually(() => expect(rec.lines("locked.log")).toEqual(["secret", "more"]));
    expect(f.stats().readErrors).toBe(errors);
  });

  // Root reads a mode-000 file, so the real case runs in a child process as a user the mode denies:
  // nobody when this test is root (CI), this user otherwise; it runs the built follower (dist/) from
  // a copy every user can read (the checkout may lie under a 0700 home directory).
  it("counts a real EACCES (chmod 000) without throwing, and reads the other file", async () => {
    const staged = stageBuild("rw-follow-eacces-");
    const d = sharedTempDir("rw-follow-eacces-logs-");
    try {
      const p = join(d, "mode000.log");
      writeFileSync(p, "x\n");
      chmodSync(p, 0o000);
      writeFileSync(join(d, "open.log"), "fine\n");
      const r = await runScriptAs(staged, EACCES_SCRIPT, [staged.module("collectors/follow/follower.js"), d, p], deniedUser);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const out = JSON.parse(r.stdout) as { access: string; readErrors: number; reported: [string, string][]; lines: string[]; files: number };
      expect(out.access).toBe("EACCES"); // the reader really cannot read it (else this proves nothing)
      expect(out.readErrors).toBeGreaterThanOrEqual(1);
      expect(out.reported).toContainEqual([p, "EACCES"]);
      expect(out.lines).toEqual(["fine"]);
      expect(out.files).toBe(2);
    } finally {
      chmodSync(join(d, "mode000.log"), 0o644);
      rmSync(d, { recursive: true, force: true });
      staged.remove();
    }
  });

  it("goes on when a handler throws, counting handlerErrors", async () => {
    const d = testTempDir();
    const p = join(d, "h.log");
    writeFileSync(p, "");
    const rec = new Recorder();
    let calls = 0;
    const throwing = Object.assign(rec, {
      onLines: (...args: Parameters<Recorder["onLines"]>) => {
        calls++;
        if (calls === 1) throw new Error("parser bug");
        Recorder.prototype.onLines.apply(rec, args);
      },
    });
    const { f } = await follow({ paths: [d] }, throwing);
    appendFileSync(p, "lost\n");
    await eventually(() => expect(f.stats().handlerErrors).toBe(1));
    appendFileSync(p, "kept\n");
    await eventually(() => expect(rec.lines()).toEqual(["kept"]));
  });

  it("rejects bad options at construction", () => {
    expect(() => new Follower({ paths: [] }, new Recorder())).toThrow(/paths/);
    expect(() => new Follower({ paths: ["/x"], maxLineBytes: 0 }, new Recorder())).toThrow(/maxLineBytes/);
    expect(() => new Follower({ paths: ["/x"], headBytes: 1.5 }, new Recorder())).toThrow(/headBytes/);
  });

  it("start() twice is an error; stop() is idempotent and ends watching", async () => {
    const d = testTempDir();
    const { rec, f } = await follow({ paths: [d] });
    await expect(f.start()).rejects.toThrow(/once/);
    await f.stop();
    await f.stop();
    writeFileSync(join(d, "after-stop.log"), "nothing\n");
    await f.flush();
    // A second follower sees the new file: by then the stopped one would have seen it too.
    const second = await follow({ paths: [d] });
    await eventually(() => expect(second.rec.lines()).toEqual(["nothing"]));
    expect(rec.got).toEqual([]);
    expect(f.stats().files).toBe(0);
  });
});
