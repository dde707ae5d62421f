/**
 * collectors/untrusted-open.ts on real files, FIFOs, devices and symlinks: what a job user can put
 * where the agent expects its log, dump or pipe.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  closeSync,
  constants,
  copyFileSync,
  lchownSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
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

  it("outside the followed paths, opens only what every local user could read anyway, whoever made the link", async () => {
    const d = testTempDir();
    chmodSync(d, 0o755);
    const roots = new TrustRoots([join(d, "logs")]);
    mkdirSync(join(d, "logs"));
    writeFileSync(join(d, "private.log"), "x\n", { mode: 0o600 });
    writeFileSync(join(d, "public.log"), "x\n", { mode: 0o644 });
    mkdirSync(join(d, "closed"), { mode: 0o700 });
    writeFileSync(join(d, "closed", "f.log"), "x\n", { mode: 0o644 });
    symlinkSync(join(d, "private.log"), join(d, "logs", "private.log"));
    symlinkSync(join(d, "public.log"), join(d, "logs", "public.log"));
    symlinkSync(join(d, "closed"), join(d, "logs", "sub"));
    expect(await refusal(openJobFile(join(d, "logs", "private.log"), roots))).toBe("EFOREIGN");
    expect(await refusal(openJobFile(join(d, "logs", "public.log"), roots))).toBe("opened");
    // Readable by others, but in a directory others cannot enter: refused, through a directory link too.
    expect(await refusal(openJobFile(join(d, "logs", "sub", "f.log"), roots))).toBe("EFOREIGN");
  });

  it("inside a root, only what the patterns ask for counts as inside", async () => {
    const d = testTempDir();
    chmodSync(d, 0o700); // nothing here is readable by every user: only the patterns let a file in
    mkdirSync(join(d, "alice", "nccl"), { recursive: true });
    mkdirSync(join(d, "bob", ".ssh"), { recursive: true });
    writeFileSync(join(d, "alice", "nccl", "a.log"), "x\n", { mode: 0o600 });
    writeFileSync(join(d, "bob", ".ssh", "id"), "x\n", { mode: 0o600 });
    symlinkSync(join(d, "bob", ".ssh", "id"), join(d, "alice", "nccl", "steal.log"));
    const roots = new TrustRoots([d], (p) => p.endsWith(".log") && p.includes("/nccl/"));
    expect(await refusal(openJobFile(join(d, "alice", "nccl", "a.log"), roots))).toBe("opened");
    expect(await refusal(openJobFile(join(d, "alice", "nccl", "steal.log"), roots))).toBe("EFOREIGN");
  });

  it.runIf(isRoot)("a job user's link swapped between a file of its own and another user's file never reads the other's", async () => {
    const d = testTempDir();
    chmodSync(d, 0o755);
    const roots = new TrustRoots([join(d, "logs")]);
    mkdirSync(join(d, "logs"), { mode: 0o777 });
    writeFileSync(join(d, "secret"), "secret\n", { mode: 0o600 });
    writeFileSync(join(d, "own.log"), "own\n", { mode: 0o644 });
    lchownSync(join(d, "own.log"), JOB_USER, JOB_USER);
    const target = join(d, "logs", "a.log");
    let reads = 0;
    let secrets = 0;
    for (let i = 0; i < 400; i++) {
      // The path is, in turn, a link to the secret and the job user's own plain file.
      try {
        symlinkSync(join(d, "secret"), `${target}.tmp`);
      } catch {
        // left over
      }
      renameSync(`${target}.tmp`, target);
      const p = openJobFile(target, roots).then(
        ({ fd }) => {
          const b = Buffer.alloc(16);
          const n = readSync(fd, b, 0, 16, 0);
          closeSync(fd);
          reads++;
          if (b.subarray(0, n).toString() === "secret\n") secrets++;
        },
        () => undefined,
      );
      copyFileSync(join(d, "own.log"), `${target}.own`);
      renameSync(`${target}.own`, target);
      await p;
    }
    expect(reads).toBeGreaterThan(0);
    expect(secrets).toBe(0);
  });
});

describe("openJobFifoForWrite and the Flight Recorder poke", () => {
  it("a FIFO with a reader gets the poke; without one, no_reader at once", async () => {
    const d = testTempDir();
    const p = join(d, "pipe_0.pipe");
    spawnSync("mkfifo", [p]);
    expect(await pokePipe(p)).toEqual({ result: "no_reader" });
    const reader = openSync(p, constants.O_RDONLY | constants.O_NONBLOCK);
    expect(await pokePipe(p)).toEqual({ result: "ok" });
    const buf = Buffer.alloc(32);
    expect(buf.subarray(0, readSync(reader, buf, 0, 32, null)).toString()).toBe("ringwatch\n");
    closeSync(reader);
  });

  it("never writes through a symlink nor into a regular file", async () => {
    const d = testTempDir();
    const victim = join(d, "agent-owned");
    writeFileSync(victim, "original\n", { mode: 0o600 });
    symlinkSync(victim, join(d, "pipe_0.pipe"));
    expect(await pokePipe(join(d, "pipe_0.pipe"))).toEqual({ result: "error", reason: "ELOOP" });
    writeFileSync(join(d, "pipe_1.pipe"), "");
    expect(await pokePipe(join(d, "pipe_1.pipe"))).toEqual({ result: "error", reason: "ENOTFIFO" });
    await expect(openJobFifoForWrite(join(d, "pipe_1.pipe"))).rejects.toBeInstanceOf(RefusedFile);
    expect(readFileSync(victim, "utf8")).toBe("original\n");
    expect(readFileSync(join(d, "pipe_1.pipe"), "utf8")).toBe("");
  });
});
