/**
 * collectors/untrusted-open.ts on real files, FIFOs, devices and symlinks: what a job user can put
 * where the agent expects its log, dump or pipe.
 */
import { spawnSync } from "node:child_process";
import { closeSync, constants, lchownSync, mkdirSync, openSync, readFileSync, readSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openJobFifoForWrite, openJobFile, RefusedFile, TrustRoots } from "../../../collectors/untrusted-open.js";
import { pokePipe } from "../../../collectors/nccl/flight-recorder/live-pipes.js";
import { isRoot } from "../../helpers/staged-build.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";

const JOB_USER = 4242;

function refusal(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => "opened",
    (e: unknown) => (e instanceof RefusedFile ? e.code : ((e as NodeJS.ErrnoException).code ?? String(e))),
  );
}

describe("openJobFile", () => {
  it("opens a regular file in the roots and reads it through the descriptor", async () => {
    const d = testTempDir();
    writeFileSync(join(d, "a.log"), "hello\n");
    const { fd, st } = await openJobFile(join(d, "a.log"), new TrustRoots([d]));
    const buf = Buffer.alloc(16);
    const n = readSync(fd, buf, 0, 16, 0);
    closeSync(fd);
    expect(buf.subarray(0, n).toString()).toBe("hello\n");
    expect(st.size).toBe(6);
  });

  it("refuses a FIFO at once, with no writer (a plain open would wait forever)", async () => {
    const d = testTempDir();
    spawnSync("mkfifo", [join(d, "p.log")]);
    symlinkSync(join(d, "p.log"), join(d, "link.log"));
    expect(await refusal(openJobFile(join(d, "p.log"), new TrustRoots([d])))).toBe("ENOTREG");
    expect(await refusal(openJobFile(join(d, "link.log"), new TrustRoots([d])))).toBe("ENOTREG");
  });

  it("refuses a link to a device", async () => {
    const d = testTempDir();
    symlinkSync("/dev/zero", join(d, "zero.log"));
    expect(await refusal(openJobFile(join(d, "zero.log"), new TrustRoots([d])))).toBe("ENOTREG");
  });

  it("passes the system's own errors through (ENOENT, ELOOP)", async () => {
    const d = testTempDir();
    symlinkSync(join(d, "b"), join(d, "a"));
    symlinkSync(join(d, "a"), join(d, "b"));
    expect(await refusal(openJobFile(join(d, "missing.log"), new TrustRoots([d])))).toBe("ENOENT");
    expect(await refusal(openJobFile(join(d, "a"), new TrustRoots([d])))).toBe("ELOOP");
  });

  it.runIf(isRoot)("outside the roots, follows a link only to a file of the link's owner (or a link of root's)", async () => {
    const d = testTempDir();
    const roots = new TrustRoots([join(d, "logs")]);
    mkdirSync(join(d, "logs"));
    writeFileSync(join(d, "root-only"), "x\n", { mode: 0o600 });
    symlinkSync(join(d, "root-only"), join(d, "logs", "job.log"));
    lchownSync(join(d, "logs", "job.log"), JOB_USER, JOB_USER);
    expect(await refusal(openJobFile(join(d, "logs", "job.log"), roots))).toBe("EFOREIGN");
    // The same link made by root (the operator): followed.
    symlinkSync(join(d, "root-only"), join(d, "logs", "op.log"));
    expect(await refusal(openJobFile(join(d, "logs", "op.log"), roots))).toBe("opened");
    // A link through a job user's directory link: the directory link is the job user's too.
    mkdirSync(join(d, "secret-dir"));
    writeFileSync(join(d, "secret-dir", "f.log"), "x\n", { mode: 0o600 });
    symlinkSync(join(d, "secret-dir"), join(d, "logs", "sub"));
    lchownSync(join(d, "logs", "sub"), JOB_USER, JOB_USER);
    expect(await refusal(openJobFile(join(d, "logs", "sub", "f.log"), roots))).toBe("EFOREIGN");
  });
});

describe("openJobFifoForWrite and the Flight Recorder poke", () => {
  it("a FIFO with a reader gets the poke; without one, no_reader at once", () => {
    const d = testTempDir();
    const p = join(d, "pipe_0.pipe");
    spawnSync("mkfifo", [p]);
    expect(pokePipe(p)).toEqual({ result: "no_reader" });
    const reader = openSync(p, constants.O_RDONLY | constants.O_NONBLOCK);
    expect(pokePipe(p)).toEqual({ result: "ok" });
    const buf = Buffer.alloc(32);
    expect(buf.subarray(0, readSync(reader, buf, 0, 32, null)).toString()).toBe("ringwatch\n");
    closeSync(reader);
  });

  it("never writes through a symlink nor into a regular file", () => {
    const d = testTempDir();
    const victim = join(d, "agent-owned");
    writeFileSync(victim, "original\n", { mode: 0o600 });
    symlinkSync(victim, join(d, "pipe_0.pipe"));
    expect(pokePipe(join(d, "pipe_0.pipe"))).toEqual({ result: "error", reason: "ELOOP" });
    writeFileSync(join(d, "pipe_1.pipe"), "");
    expect(pokePipe(join(d, "pipe_1.pipe"))).toEqual({ result: "error", reason: "ENOTFIFO" });
    expect(() => openJobFifoForWrite(join(d, "pipe_1.pipe"))).toThrow(RefusedFile);
    expect(readFileSync(victim, "utf8")).toBe("original\n");
    expect(readFileSync(join(d, "pipe_1.pipe"), "utf8")).toBe("");
  });
});
