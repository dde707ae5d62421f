import { spawn } from "node:child_process";
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { shortHostname } from "../../../collectors/nccl/node-view.js";
import { innermostNsPid, ProcessIdentity, startTimeOf } from "../../../collectors/nccl/process-identity.js";
import { eventually } from "../../helpers/eventually.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const f of cleanup.splice(0).reverse()) f();
});

const temp = (): string => testTempDir(undefined, "rw-pid-");

/** A process directory in the real formats of status (NSpid line) and stat (starttime = field 22). */
function fakeProc(root: string, pid: number, nspid: number[], startTime: number, openFiles: string[] = []): void {
  const dir = join(root, String(pid));
  mkdirSync(join(dir, "fd"), { recursive: true });
  writeFileSync(
    join(dir, "status"),
    `Name:\tpython\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t${pid}\nNgid:\t0\nPid:\t${pid}\nPPid:\t1\nNSpid:\t${nspid.join("\t")}\nNSpgid:\t${nspid.join("\t")}\n`,
  );
  writeFileSync(
    join(dir, "stat"),
    `${pid} (python) S 1 ${pid} ${pid} 0 -1 4194560 1000 0 0 0 50 10 0 0 20 0 9 0 ${startTime} 3133440 380 18446744073709551615\n`,
  );
  openFiles.forEach((f, i) => symlinkSync(f, join(dir, "fd", String(3 + i))));
  symlinkSync("socket:[123456]", join(dir, "fd", "99"));
}

const NODE = "gpu-node-001";

describe("ProcessIdentity", () => {
  it("reads NSpid and starttime in their real formats", () => {
    expect(innermostNsPid("Name:\tpython\nNSpid:\t4242\t45\nNSpgid:\t1\n")).toBe(45);
    expect(innermostNsPid("Name:\tpython\nPid:\t7\n")).toBeUndefined();
    expect(startTimeOf("15202 (cat (x)) R 15200 15200 27912 0 -1 4194304 125 0 0 0 0 0 0 0 20 0 1 0 1062259 3133440")).toBe("1062259");
  });

  it("a real process of this node: alive while it runs, gone once it exited", async () => {
    const d = temp();
    const log = join(d, `nccl-${shortHostname()}.log`);
    writeFileSync(log, "");
    const child = spawn(process.execPath, ["-e", `require("fs").openSync(${JSON.stringify(log)}, "a"); setInterval(() => {}, 1000)`], { stdio: "ignore" });
    cleanup.push(() => child.kill("SIGKILL"));
    const pid = child.pid ?? 0;
    const id = new ProcessIdentity("/proc", shortHostname());
    const p = { key: `${shortHostname()}:${pid}`, host: shortHostname(), pid, sources: new Map([[log, 0]]) };
    await eventually(() => expect(id.alive(p)).toBe(true));
    child.kill("SIGKILL");
    await eventually(() => expect(id.alive(p)).toBe(false));
  });

  it("docker --net=host: the node's pid 45 is another process; the container's 45 is the one with the log open", () => {
    const proc = temp();
    const logs = temp();
    const log = join(logs, `nccl-${NODE}-45.log`);
    writeFileSync(log, "x\n");
    fakeProc(proc, 45, [45], 100); // a node process that happens to have pid 45
    fakeProc(proc, 4242, [4242, 45], 5000, [log]); // the rank, pid 45 in its container
    fakeProc(proc, 7000, [7000, 45], 6000); // pid 45 of another container
    let now = 0;
    const id = new ProcessIdentity(proc, NODE, () => now);
    const p = { key: `${NODE}:45`, host: NODE, pid: 45, sources: new Map([[log, 0]]) };
    expect(id.alive(p)).toBe(true);
    // Another process under the same node pid (the rank exited, the pid was reused): the rank is gone.
    rmSync(join(proc, "4242"), { recursive: true });
    fakeProc(proc, 4242, [4242], 9999);
    expect(id.alive(p)).toBe(false);
    // Not found again: no process of the node has the log open and two have pid 45 inside: unknown.
    now += 60_000;
    expect(id.alive(p)).toBeUndefined();
  });

  it("a rank of this node in a container: gone once its process is, at every look until the next scan", () => {
    const proc = temp();
    const logs = temp();
    const log = join(logs, `nccl-${NODE}-45.log`);
    writeFileSync(log, "x\n");
    fakeProc(proc, 4242, [4242, 45], 5000, [log]);
    const id = new ProcessIdentity(proc, NODE, () => 0);
    const p = { key: `${NODE}:45`, host: NODE, pid: 45, sources: new Map([[log, 0]]) };
    expect(id.alive(p)).toBe(true);
    rmSync(join(proc, "4242"), { recursive: true });
    expect(id.alive(p)).toBe(false);
    // The scan that found it is still the latest (the clock stands still): its exited pid is no candidate.
    expect(id.alive(p)).toBe(false);
    expect(id.alive(p)).toBe(false);
  });

  it("a pod's rank (its own host name) is found by its open log, and is gone when its process is", () => {
    const proc = temp();
    const logs = temp();
    const log = join(logs, "nccl-trainer-0-12.log");
    writeFileSync(log, "x\n");
    fakeProc(proc, 31337, [31337, 12], 777, [log]);
    fakeProc(proc, 12, [12], 5);
    const id = new ProcessIdentity(proc, NODE, () => 0);
    const p = { key: "trainer-0:12", host: "trainer-0", pid: 12, sources: new Map([[log, 0]]) };
    expect(id.alive(p)).toBe(true);
    rmSync(join(proc, "31337"), { recursive: true });
    expect(id.alive(p)).toBe(false);
  });

  it("another node's log on a shared file system, or a pid of this node that does not exist", () => {
    const proc = temp();
    fakeProc(proc, 1, [1], 1);
    const id = new ProcessIdentity(proc, NODE, () => 0);
    expect(id.alive({ key: "gpu-node-999:12345", host: "gpu-node-999", pid: 12345, sources: new Map([["/nonexistent", 0]]) })).toBeUndefined();
    expect(id.alive({ key: `${NODE}:12345`, host: NODE, pid: 12345, sources: new Map([["/nonexistent", 0]]) })).toBe(false);
  });

  it("without NSpid (kernels before 4.1) a pid of this node is checked as <procfs>/<pid>", () => {
    const proc = temp();
    mkdirSync(join(proc, "77"));
    writeFileSync(join(proc, "77", "status"), "Name:\tpython\nPid:\t77\n");
    const id = new ProcessIdentity(proc, NODE, () => 0);
    expect(id.alive({ key: `${NODE}:77`, host: NODE, pid: 77, sources: new Map() })).toBe(true);
    expect(id.alive({ key: `${NODE}:78`, host: NODE, pid: 78, sources: new Map() })).toBe(false);
  });
});
