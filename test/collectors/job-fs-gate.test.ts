/**
 * The file-system gate: calls that never return (a dead NFS server, a stopped FUSE daemon) hold
 * at most perMount threads of one mount and total threads of all, are abandoned after stallMs,
 * and their mount then fails fast until they return. The calls here are promises the test settles,
 * on a mount table given by path prefix; test/security/stalled-mount.test.ts has the real mount.
 */
import { fstatSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FsGate, gateSizeFor, isStalled, threadPoolSize, type NotAnswering } from "../../collectors/job-fs-gate.js";
import { MountTable, parseMountPoints } from "../../collectors/mount-table.js";
import { eventually } from "../helpers/eventually.js";
import { testTempDir } from "../helpers/test-temp-dir.js";

const mounts = { mountOf: (p: string) => (p.startsWith("/nfs/") ? "/nfs" : p.startsWith("/fuse/") ? "/fuse" : "/") };

/** Resolves once fd is closed (fstat says EBADF); fails the test after 10 s. */
async function closedEventually(fd: number): Promise<void> {
  await eventually(() => {
    try {
      fstatSync(fd);
      return undefined;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === "EBADF" ? true : undefined;
    }
  }, 10_000);
}

/** A call the test ends: started tells whether the gate ran it. */
function call<T>(): { op: () => Promise<T>; started: () => boolean; finish: (v: T) => void; fail: (e: Error) => void } {
  let started = false;
  let finish: (v: T) => void = () => undefined;
  let fail: (e: Error) => void = () => undefined;
  const p = new Promise<T>((res, rej) => {
    finish = res;
    fail = rej;
  });
  return {
    op: () => {
      started = true;
      return p;
    },
    started: () => started,
    finish: (v) => finish(v),
    fail: (e) => fail(e),
  };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe("FsGate", () => {
  it("runs at most perMount calls on one mount and total on all; the others wait their turn", async () => {
    const gate = new FsGate({ perMount: 2, total: 3, stallMs: 60_000, mounts });
    const a = [call<number>(), call<number>(), call<number>()];
    const runs = a.map((c, i) => gate.run(`/nfs/f${i}`, c.op));
    const b = call<number>();
    const other = gate.run("/var/log/x", b.op);
    const c = call<number>();
    const third = gate.run("/fuse/y", c.op);
    await tick();
    expect(a.map((x) => x.started())).toEqual([true, true, false]);
    expect(b.started()).toBe(true); // another mount: room within total
    expect(c.started()).toBe(false); // total (3) reached
    a[0]?.finish(10);
    expect(await runs[0]).toBe(10);
    await tick();
    expect(a[2]?.started()).toBe(true); // the first waiter with room: /nfs has one free again
    expect(c.started()).toBe(false);
    b.finish(20);
    expect(await other).toBe(20);
    await tick();
    expect(c.started()).toBe(true);
    a[1]?.fail(Object.assign(new Error("gone"), { code: "ENOENT" }));
    await expect(runs[1]).rejects.toMatchObject({ code: "ENOENT" });
    a[2]?.finish(3);
    c.finish(4);
    expect(await Promise.all([runs[2], third])).toEqual([3, 4]);
    expect(gate.stalledMounts()).toEqual([]);
  });

  it("abandons a call after stallMs: the caller gets ESTALLED, the mount fails fast, its waiters too, other mounts go on", async () => {
    const gate = new FsGate({ perMount: 1, total: 2, stallMs: 50, mounts });
    const changes: [string, NotAnswering | null][] = [];
    gate.onChange((m, now) => changes.push([m, now]));
    const stuck = call<{ fd: number }>();
    const late: number[] = [];
    const t0 = performance.now();
    const first = gate.run("/nfs/job/rank0.log", stuck.op, (v) => late.push(v.fd));
    const waiter = call<number>();
    const queued = gate.run("/nfs/job/rank1.log", waiter.op);
    const err: unknown = await first.catch((e: unknown) => e);
    expect(isStalled(err)).toBe(true);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(45);
    expect((err as Error).message).toBe("/nfs/job/rank0.log: the file system at /nfs is not answering");
    await expect(queued).rejects.toMatchObject({ code: "ESTALLED" });
    expect(waiter.started()).toBe(false);
    expect(gate.notAnswering("/nfs/job/other.log")).toMatchObject({ mount: "/nfs", path: "/nfs/job/rank0.log" });
    expect(gate.notAnswering("/var/log/x")).toBeUndefined();
    expect(gate.abandoned).toBe(1);
    // Fails fast: no call is run on it, not even one.
    const never = call<number>();
    await expect(gate.run("/nfs/job/rank2.log", never.op)).rejects.toMatchObject({ code: "ESTALLED" });
    expect(never.started()).toBe(false);
    // The stuck call still holds its thread: one of the two left, and another mount gets it.
    const local = call<string>();
    const ok = gate.run("/var/log/nccl/a.log", local.op);
    await tick();
    expect(local.started()).toBe(true);
    local.finish("read");
    expect(await ok).toBe("read");
    // The server answers: the late value goes to `late` (an fd to close), and the mount answers again.
    stuck.finish({ fd: 42 });
    await tick();
    await tick();
    expect(late).toEqual([42]);
    expect(gate.abandoned).toBe(0);
    expect(gate.notAnswering("/nfs/job/rank0.log")).toBeUndefined();
    expect(changes.map(([m, now]) => [m, now === null ? "answering" : now.path])).toEqual([
      ["/nfs", "/nfs/job/rank0.log"],
      ["/nfs", "answering"],
    ]);
    const again = call<number>();
    const p = gate.run("/nfs/job/rank0.log", again.op);
    await tick();
    expect(again.started()).toBe(true);
    again.finish(7);
    expect(await p).toBe(7);
  });

  it("a stuck mount holds at most perMount threads, whatever number of calls are asked of it", async () => {
    const gate = new FsGate({ perMount: 1, total: 2, stallMs: 30, mounts });
    const ops = Array.from({ length: 50 }, () => call<number>());
    const runs = ops.map((c, i) => gate.run(`/fuse/f${i}`, c.op).catch((e: unknown) => e));
    const results = await Promise.all(runs);
    expect(ops.filter((c) => c.started())).toHaveLength(1);
    expect(results.every(isStalled)).toBe(true);
    expect(gate.abandoned).toBe(1);
  });

  it("closes a descriptor of a mount that does not answer only once it answers again", async () => {
    const gate = new FsGate({ perMount: 1, total: 2, stallMs: 30, mounts });
    const stuck = call<number>();
    await expect(gate.run("/nfs/a", stuck.op)).rejects.toMatchObject({ code: "ESTALLED" });
    const fd = openSync("/dev/null", "r"); // a real descriptor, opened "on /nfs"
    gate.close("/nfs/a", fd);
    await tick();
    expect(fstatSync(fd).isCharacterDevice()).toBe(true); // still open: a close there would wait too
    stuck.finish(1);
    await closedEventually(fd);
    expect(gate.notAnswering("/nfs/a")).toBeUndefined();
  });
});

describe("FsGate closes", () => {
  it("a close that waited its turn on a mount that then stops answering is kept, and done once it answers", async () => {
    const gate = new FsGate({ perMount: 1, total: 2, stallMs: 50, mounts });
    const stuck = call<number>();
    const first = gate.run("/nfs/a", stuck.op).catch((e: unknown) => e);
    const fd = openSync("/dev/null", "r");
    gate.close("/nfs/b", fd); // queued behind the stuck call
    expect(isStalled(await first)).toBe(true);
    await tick();
    expect(fstatSync(fd).isCharacterDevice()).toBe(true); // refused before it ran: not lost, not closed yet
    expect(gate.busy).toBe(1); // the stuck call still holds its thread
    stuck.finish(1);
    await closedEventually(fd);
    expect(gate.busy).toBe(0);
  });
});

describe("the gate's size", () => {
  it("leaves two of libuv's threads to the rest of the agent", () => {
    expect(gateSizeFor(4)).toEqual({ total: 2, perMount: 1 });
    expect(gateSizeFor(16)).toEqual({ total: 14, perMount: 7 });
    expect(gateSizeFor(1)).toEqual({ total: 1, perMount: 1 });
  });

  it("reads UV_THREADPOOL_SIZE as libuv does (4 when unset or not a count)", () => {
    expect(threadPoolSize({})).toBe(4);
    expect(threadPoolSize({ UV_THREADPOOL_SIZE: "16" })).toBe(16);
    expect(threadPoolSize({ UV_THREADPOOL_SIZE: "zero" })).toBe(4);
    expect(threadPoolSize({ UV_THREADPOOL_SIZE: "4096" })).toBe(1024);
  });
});

describe("MountTable", () => {
  it("reads the mount points of a real mountinfo, escapes included, longest first", () => {
    const text = [
      "22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/root rw",
      "98 22 0:48 / /mnt/nfs rw,relatime shared:40 - nfs4 srv:/export rw,vers=4.2",
      "99 98 0:49 / /mnt/nfs/deep\\040dir rw,relatime shared:41 - fuse.bindfs bindfs rw,user_id=0",
    ].join("\n");
    expect(parseMountPoints(text)).toEqual(["/mnt/nfs/deep dir", "/mnt/nfs", "/"]);
  });

  it("places a path on the longest mount point above it (this machine's /proc/self/mountinfo)", () => {
    const t = new MountTable();
    const points = parseMountPoints(readFileSync("/proc/self/mountinfo", "utf8"));
    expect(points).toContain("/");
    expect(t.mountOf("/proc/self/status")).toBe("/proc");
    expect(t.mountOf("/procfoo/x")).toBe(points.find((p) => p === "/" || "/procfoo/x".startsWith(p + "/")));
    expect(new MountTable("/nonexistent/mountinfo").mountOf("/proc/self")).toBe("/");
  });

  it("remembers a folder's mount, but not for an entry of it that is a mount point itself", () => {
    const dir = testTempDir();
    const info = join(dir, "mountinfo");
    writeFileSync(info, ["22 1 0:21 / / rw - ext4 /dev/root rw", "99 22 0:49 / /jobs/mnt rw - fuse.bindfs bindfs rw"].join("\n"));
    const t = new MountTable(info);
    expect(t.mountOf("/jobs/a.log")).toBe("/");
    expect(t.mountOf("/jobs/mnt")).toBe("/jobs/mnt"); // the folder /jobs/ is cached as "/", its mount point is not
    expect(t.mountOf("/jobs/mnt/rank0.log")).toBe("/jobs/mnt");
    expect(t.mountOf("/jobs/mntx/rank0.log")).toBe("/");
    expect(t.mountOf("/jobs/b.log")).toBe("/");
  });
});
