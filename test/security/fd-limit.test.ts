/**
 * Running short of file descriptors does not end the agent. Idle connections cannot use up its
 * open-file limit (the server caps them, in all and per client, and closes the idle ones), and a
 * tool it cannot start for want of a descriptor is a collector failure. Before, 200 idle
 * connections under `ulimit -n 200` ended the agent within 25 s: the next launch of a tool failed
 * with EMFILE and nothing handled the error. The real built agent, its mtu collector running the
 * fake `ip` every second; the limits are set from outside with prlimit (util-linux), as a shell's
 * ulimit or systemd's LimitNOFILE= would set them. Needs `npm run build` first.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { connectionLimits, openFileLimit } from "../../agent/web/clients.js";
import { followAgentOutput } from "../helpers/agent-output.js";
import { agentMain, eventually, fakesDir, sample, startAgent } from "../helpers/agent-process.js";
import { fixturesDir } from "../helpers/fixtures.js";
import { tempDir } from "../helpers/temp-dir.js";
import { inetSocketsOf } from "./proc-net.js";

const hasPrlimit = spawnSync("prlimit", ["--version"]).status === 0;
if (!hasPrlimit && process.env.CI) throw new Error("prlimit (util-linux) is missing; CI needs it for the open-file limit tests");

/** TCP state LISTEN in /proc/net/tcp. */
const LISTEN = "0A";
const ONLY_MTU = ["--collector.disable-defaults", "--collector.mtu", "--collector.mtu.interval=1s"];

const children: ChildProcess[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const c of children.splice(0)) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    const gone = new Promise((resolve) => c.once("exit", resolve));
    c.kill("SIGKILL");
    await gone;
  }
});

/** Flags and environment for the mtu collector on the fake ip, which logs each start to the returned file. */
function mtuOnFake(): { args: string[]; env: NodeJS.ProcessEnv; calls: string } {
  const calls = join(tempDir("rw-fd-"), "calls.log");
  writeFileSync(calls, "");
  const env = {
    FAKE_IP_MODE: "no-json",
    FAKE_IP_TEXT: join(fixturesDir, "tools/ip_link/02-usernetes-azure-ip-addr-ipoib-4092-docker0.txt"),
    FAKE_CALL_LOG: calls,
  };
  return { args: [...ONLY_MTU, `--collector.mtu.ip=${join(fakesDir, "ip")}`], env, calls };
}

const launches = (calls: string): number =>
  readFileSync(calls, "utf8")
    .split("\n")
    .filter((l) => l.startsWith("ip ")).length;

function softLimitOf(pid: number): number {
  const limit = openFileLimit(readFileSync(`/proc/${pid}/limits`, "utf8"));
  if (limit === undefined) throw new Error(`no open-file limit for ${pid}`);
  return limit;
}

function setSoftLimit(pid: number, soft: number): void {
  const r = spawnSync("prlimit", [`--pid=${pid}`, `--nofile=${soft}:`], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`prlimit: ${r.stderr}`);
  expect(softLimitOf(pid)).toBe(soft);
}

/** GET /metrics over the given keep-alive agent (or a new connection); the status and body. */
function get(port: number, agent: Agent | false = false): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: "/metrics", agent }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

interface Idle {
  socket: Socket;
  /** What the server sent (an idle connection gets nothing, or 408 when it is timed out). */
  received: string;
  closed: boolean;
}

/** Opens n connections that never send a byte. */
function openIdle(port: number, n: number): Idle[] {
  return Array.from({ length: n }, () => {
    const socket = connect(port, "127.0.0.1");
    sockets.push(socket);
    const idle: Idle = { socket, received: "", closed: false };
    socket.setEncoding("utf8");
    socket.on("data", (d: string) => (idle.received += d));
    socket.on("error", () => undefined); // a refused connection is reset: expected
    socket.on("close", () => (idle.closed = true));
    return idle;
  });
}

describe.skipIf(!hasPrlimit)("running short of file descriptors", () => {
  it(
    "under an open-file limit of 200, 300 idle connections leave the agent up, launching its tools, and serving once they are closed",
    { timeout: 120_000 },
    async () => {
      const { args, env, calls } = mtuOnFake();
      // The agent started under the limit, as `ulimit -n 200` or LimitNOFILE=200 starts it.
      const child = spawn("prlimit", ["--nofile=200:200", "--", process.execPath, agentMain, "--web.listen-address=127.0.0.1:0", ...args], {
        env: { ...process.env, ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      children.push(child);
      const out = followAgentOutput(child, 30_000); // time to start on a busy machine
      const { port } = await out.listening;
      expect(softLimitOf(child.pid ?? 0)).toBe(200);
      await eventually(async () => sample((await get(port)).body, 'ringwatch_collector_success{collector="mtu"}') === 1, { what: "mtu collector up" });

      const { perClient } = connectionLimits(200);
      expect(perClient).toBe(36); // 200 - 128 descriptors kept for the rest = 72 connections, half per client
      // The scrapes' connections are gone on the agent's side too, so that the idle ones have the whole share.
      const pid = child.pid ?? 0;
      await eventually(() => inetSocketsOf(pid).filter((s) => s.proto.startsWith("tcp") && s.state !== LISTEN).length === 0, {
        what: "no connection left open",
      });
      const idle = openIdle(port, 300);
      // The server holds this host's share and closes every other connection at once, unanswered.
      await eventually(() => idle.filter((i) => i.closed && i.received === "").length === 300 - perClient, {
        what: "the connections beyond the share closed",
        timeoutMs: 30_000,
      });
      expect(idle.filter((i) => !i.closed)).toHaveLength(perClient);
      // Meanwhile the collector goes on starting its tool: descriptors are left for it.
      const before = launches(calls);
      await eventually(() => launches(calls) >= before + 2, { what: "two more launches of the tool", timeoutMs: 30_000 });
      expect(
        idle.filter((i) => !i.closed),
        "launched while the connections were held",
      ).toHaveLength(perClient);
      // The held ones, idle, are closed by the server: 408 once no request came in HEADERS_TIMEOUT_MS.
      await eventually(() => idle.every((i) => i.closed), { what: "every idle connection closed by the server", timeoutMs: 60_000 });
      const timedOut = idle.filter((i) => i.received !== "");
      expect(timedOut).toHaveLength(perClient);
      for (const i of timedOut) expect(i.received).toMatch(/^HTTP\/1\.1 408 /);

      expect(child.exitCode).toBeNull();
      const after = await get(port);
      expect(after.status).toBe(200);
      expect(sample(after.body, 'ringwatch_collector_success{collector="mtu"}')).toBe(1);
      expect(out.lines.filter((l) => l.includes("EMFILE"))).toEqual([]);
    },
  );

  it("a tool that cannot be started for want of a descriptor is a collector failure; the agent stays up and recovers", { timeout: 120_000 }, async () => {
    const { args, env } = mtuOnFake();
    const a = await startAgent(args, env, 30_000);
    children.push(a.child);
    const pid = a.child.pid ?? 0;
    // A scraper's keep-alive connection, open before the descriptors run out, as Prometheus holds one.
    const scraper = new Agent({ keepAlive: true, maxSockets: 1 });
    await eventually(async () => sample((await get(a.port, scraper)).body, 'ringwatch_collector_success{collector="mtu"}') === 1, { what: "mtu collector up" });

    // No descriptor left: the soft limit lowered to what the agent has open now.
    const refused: Idle[] = [];
    const limit = softLimitOf(pid);
    setSoftLimit(pid, readdirSync(`/proc/${pid}/fd`).length);
    try {
      // New connections cannot be accepted now; the server must live through that too.
      refused.push(...openIdle(a.port, 50));
      const failed = await eventually(() => a.logs().find((l) => l.includes('"collector":"mtu"') && l.includes('"collector failed"') && l.includes("EMFILE")), {
        what: "the mtu collector's failure logged",
        timeoutMs: 30_000,
      });
      expect(JSON.parse(failed)).toMatchObject({ level: 40, reason: `${join(fakesDir, "ip")}: cannot start: EMFILE (too many open files in the agent)` });
      const during = await get(a.port, scraper);
      expect(during.status).toBe(200);
      expect(sample(during.body, 'ringwatch_collector_success{collector="mtu"}')).toBe(0);
      expect(a.child.exitCode).toBeNull();
    } finally {
      if (a.child.exitCode === null) setSoftLimit(pid, limit);
    }
    // The connections it could not accept are not left behind: libuv closes them at once while it
    // has its spare descriptor, and those still queued when it lost the race for that descriptor are
    // accepted once the limit is back and closed as idle (408).
    await eventually(() => refused.every((i) => i.closed), { what: "connections that could not be accepted closed", timeoutMs: 60_000 });
    await eventually(() => a.logs().some((l) => l.includes('"collector":"mtu"') && l.includes('"collector recovered"')), {
      what: "the mtu collector recovered",
      timeoutMs: 30_000,
    });
    const after = await get(a.port);
    expect(after.status).toBe(200);
    expect(sample(after.body, 'ringwatch_collector_success{collector="mtu"}')).toBe(1);
    scraper.destroy();
  });
});
