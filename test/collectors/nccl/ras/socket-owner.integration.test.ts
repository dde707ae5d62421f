/**
 * Whose socket answered (collectors/nccl/ras/socket-owner.ts), on real sockets and processes: a
 * listener in this process, the fake RAS service run as nobody (65534) on 127.0.0.1, ::1 and a
 * dual-stack wildcard; then a procfs tree of our own (the real tcp capture, fd links we make) to show
 * that <path.procfs> is what is read, and how a process whose fds cannot be read is judged by its uid.
 */
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { connectionOf } from "../../../../collectors/nccl/ras/client.js";
import { serverSocket, socketOwner, statusUids, type RasConnection } from "../../../../collectors/nccl/ras/socket-owner.js";
import { fixturesDir } from "../../../helpers/fixtures.js";
import { rasServices } from "../../../helpers/ras-service.js";
import { isRoot, NOBODY } from "../../../helpers/staged-build.js";
import { testTempDir } from "../../../helpers/test-temp-dir.js";

const service = rasServices();
/** Sockets of this process, both ends: destroyed after each test, and the servers closed. */
const open: Socket[] = [];
const servers: Server[] = [];

afterEach(async () => {
  for (const s of open.splice(0)) s.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A server in this process that greets as RAS does. */
function greeter(): Server {
  const srv = createServer((s) => {
    open.push(s);
    s.write("SERVER PROTOCOL 2\n");
  });
  servers.push(srv);
  return srv;
}

/** Connects, waits for the greeting (the server has accepted), and gives both ends. */
async function greeted(host: string, port: number): Promise<RasConnection> {
  const sock = connect({ host, port });
  open.push(sock);
  await new Promise<void>((resolve, reject) => {
    sock.once("error", reject);
    sock.once("data", () => resolve());
    sock.once("connect", () => sock.write("CLIENT PROTOCOL 2\n"));
  });
  const c = connectionOf(sock);
  if (c === undefined) throw new Error("no connection");
  return c;
}

/** A pid that ran and exited (its /proc entry is gone). */
async function exitedPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((r) => child.once("exit", r));
  return child.pid ?? -1;
}

describe("socketOwner on this machine's /proc", () => {
  it.skipIf(!isRoot)("a listener of this process: believed as the rank's (its fds), else as root's", async () => {
    const srv = greeter();
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    const port = (srv.address() as { port: number }).port;
    const c = await greeted("127.0.0.1", port);
    const sock = serverSocket("/proc", c);
    expect(sock?.localPort).toBe(port);
    expect(sock?.remotePort).toBe(c.client.port);
    expect(sock?.uid).toBe(0);
    expect(socketOwner("/proc", c, [process.pid])).toEqual({ trusted: true, by: "rank", pid: process.pid, uid: 0, inode: sock?.inode });
    expect(socketOwner("/proc", c, [])).toEqual({ trusted: true, by: "root", uid: 0, inode: sock?.inode });
  });

  it.skipIf(!isRoot)("the fake RAS service run as nobody: believed only when its pid is a known rank's", async () => {
    const s = await service("SERVER\n", "ok", { user: NOBODY });
    const pid = s.child.pid ?? -1;
    const c = await greeted("127.0.0.1", s.port);
    const inode = serverSocket("/proc", c)?.inode;
    expect(inode).toBeGreaterThan(0);
    expect(socketOwner("/proc", c, [process.pid, pid])).toEqual({ trusted: true, by: "rank", pid, uid: 65534, inode });
    // The last rank that answered is looked at first; the answer is the same.
    expect(socketOwner("/proc", c, [process.pid, pid], pid)).toEqual({ trusted: true, by: "rank", pid, uid: 65534, inode });
    expect(socketOwner("/proc", c, [process.pid])).toEqual({ trusted: false, why: "not_a_rank", uid: 65534, inode, ranks: 1 });
    expect(socketOwner("/proc", c, [])).toEqual({ trusted: false, why: "no_rank", uid: 65534, inode, ranks: 0 });
    // A known pid that has exited counts for nothing.
    expect(socketOwner("/proc", c, [await exitedPid()])).toEqual({ trusted: false, why: "not_a_rank", uid: 65534, inode, ranks: 1 });
  });

  it.skipIf(!isRoot)("IPv6: a listener on ::1, and an IPv4 client of a dual-stack listener (tcp6, IPv4-mapped)", async () => {
    const v6 = await service("SERVER\n", "ok", { user: NOBODY, addr: "[::1]:0" });
    const c6 = await greeted("::1", v6.port);
    expect(c6.server.address).toBe("::1");
    expect(socketOwner("/proc", c6, [v6.child.pid ?? -1])).toMatchObject({ trusted: true, by: "rank", uid: 65534 });
    expect(socketOwner("/proc", c6, [])).toMatchObject({ trusted: false, why: "no_rank", uid: 65534 });

    const dual = await service("SERVER\n", "ok", { user: NOBODY, addr: "[::]:0" });
    const c4 = await greeted("127.0.0.1", dual.port);
    expect(c4.server.address).toBe("127.0.0.1");
    expect(serverSocket("/proc", c4)?.uid).toBe(65534);
    expect(socketOwner("/proc", c4, [dual.child.pid ?? -1])).toMatchObject({ trusted: true, by: "rank", pid: dual.child.pid });
  });

  it("a connection the tables do not hold: unseen, whatever the ranks", () => {
    const c: RasConnection = { server: { address: "127.0.0.1", port: 1 }, client: { address: "127.0.0.1", port: 2 } };
    expect(serverSocket("/proc", c)).toBeUndefined();
    expect(socketOwner("/proc", c, [process.pid])).toEqual({ trusted: false, why: "unseen", ranks: 1 });
    expect(socketOwner("/proc", { ...c, server: { address: "not an address", port: 1 } }, [])).toEqual({ trusted: false, why: "unseen", ranks: 0 });
  });

  it("statusUids: the effective and file-system uids of a status file", () => {
    expect(statusUids("Name:\tx\nUmask:\t0022\nState:\tS\nUid:\t1000\t1001\t1002\t1003\nGid:\t5\t5\t5\t5\n")).toEqual([1001, 1003]);
    expect(statusUids("Uid:\t7\t7\t7\t7\n")).toEqual([7, 7]);
    expect(statusUids("Name:\tx\nGid:\t5\t5\t5\t5\n")).toEqual([]);
    expect(statusUids("Uid:\tx\n")).toEqual([]);
    const own = process.getuid?.() ?? -1;
    expect(statusUids(readFileSync("/proc/self/status", "latin1"))).toEqual([own, own]);
  });
});

describe("socketOwner on a procfs of our own (--path.procfs)", () => {
  /** The real tcp/tcp6 capture, and processes: pid → fd links (or a status only: fds not readable). */
  function procfs(pids: Record<number, { fds?: string[]; uid: number }>): string {
    const root = testTempDir();
    cpSync(join(fixturesDir, "procfs/ras-listeners/net"), join(root, "net"), { recursive: true });
    // The captures' line 1 names their source; the kernel's text follows.
    for (const t of ["tcp", "tcp6"]) {
      const p = join(root, "net", t);
      const text = readFileSync(p, "utf8");
      writeFileSync(p, text.slice(text.indexOf("\n") + 1));
    }
    for (const [pid, p] of Object.entries(pids)) {
      mkdirSync(join(root, pid));
      writeFileSync(join(root, pid, "status"), `Name:\trank\nUid:\t${p.uid}\t${p.uid}\t${p.uid}\t${p.uid}\n`);
      if (p.fds === undefined)
        writeFileSync(join(root, pid, "fd"), ""); // not a directory: its fds cannot be listed
      else {
        mkdirSync(join(root, pid, "fd"));
        p.fds.forEach((target, i) => symlinkSync(target, join(root, pid, "fd", String(i))));
      }
    }
    return root;
  }
  // The capture's connection to the listener run as uid 65534: its accepted end is inode 9677.
  const toNobody: RasConnection = { server: { address: "127.0.0.1", port: 28028 }, client: { address: "127.0.0.1", port: 48238 } };
  // Root's ::1 listener, from [::1]:48814: inode 9680.
  const toRoot: RasConnection = { server: { address: "::1", port: 28028 }, client: { address: "::1", port: 48814 } };

  it("finds the accepted socket by both ends, in tcp and in tcp6 (IPv4-mapped too)", () => {
    const root = procfs({});
    expect(serverSocket(root, toNobody)).toMatchObject({ inode: 9677, uid: 65534 });
    expect(serverSocket(root, toRoot)).toMatchObject({ inode: 9680, uid: 0 });
    expect(serverSocket(root, { server: { address: "127.0.0.1", port: 28029 }, client: { address: "127.0.0.1", port: 40870 } })).toMatchObject({ inode: 9681 });
    // The listener's own row is not the answer, nor the client's end.
    expect(serverSocket(root, { server: { address: "127.0.0.1", port: 28028 }, client: { address: "0.0.0.0", port: 0 } })).toBeUndefined();
    expect(serverSocket(root, { server: toNobody.client, client: toNobody.server })?.inode).toBe(9676);
  });

  it("the rank whose fds hold the socket; another process's fds do not make it one", () => {
    const root = procfs({
      4242: { fds: ["/dev/null", "socket:[9676]", "socket:[9677]"], uid: 65534 },
      4343: { fds: ["socket:[9661]", "pipe:[1]"], uid: 65534 },
    });
    expect(socketOwner(root, toNobody, [4343, 4242])).toEqual({ trusted: true, by: "rank", pid: 4242, uid: 65534, inode: 9677 });
    // 4343 holds the listener, not the connection that answered, and shares its user: readable fds decide.
    expect(socketOwner(root, toNobody, [4343])).toEqual({ trusted: false, why: "not_a_rank", uid: 65534, inode: 9677, ranks: 1 });
    expect(socketOwner(root, toNobody, [4141])).toEqual({ trusted: false, why: "not_a_rank", uid: 65534, inode: 9677, ranks: 1 }); // no such process
    expect(socketOwner(root, toRoot, [])).toEqual({ trusted: true, by: "root", uid: 0, inode: 9680 });
  });

  it("fds that cannot be read: the socket's uid against the rank process's (the weaker check)", () => {
    const root = procfs({ 5151: { uid: 65534 }, 5252: { uid: 1000 } });
    expect(socketOwner(root, toNobody, [5151])).toEqual({ trusted: true, by: "uid", pid: 5151, uid: 65534, inode: 9677 });
    expect(socketOwner(root, toNobody, [5252])).toEqual({ trusted: false, why: "not_a_rank", uid: 65534, inode: 9677, ranks: 1 });
    expect(socketOwner(root, toNobody, [5252, 5151])).toMatchObject({ trusted: true, by: "uid", pid: 5151 });
  });
});
