/**
 * The agent binds only where told: started with --web.listen-address, the real agent holds exactly
 * one listening socket, on that address and port, and no other TCP or UDP socket is bound (read
 * from /proc/<pid>/fd and /proc/<pid>/net/{tcp,tcp6,udp,udp6}). Needs `npm run build` first.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { inetSocketsOf, inetTable, socketInodes } from "./proc-net.js";

const TCP_LISTEN = "0A";
const TCP_ESTABLISHED = "01";

let running: RunningAgent | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

/** Every collector on, as users run it, with nothing to find (no GPU, no HCA, an empty NCCL log directory). */
function defaults(): string[] {
  const empty = mkdtempSync(join(tmpdir(), "rw-bind-"));
  return [`--collector.nccl.path=${empty}`, `--path.sysfs=${empty}`, "--collector.gpu.nvidia-smi=/nonexistent/nvidia-smi"];
}

function ipv6LoopbackWorks(): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once("error", () => resolve(false));
    s.listen(0, "::1", () => s.close(() => resolve(true)));
  });
}

async function checkOnlyListener(a: RunningAgent, address: string, proto: "tcp" | "tcp6"): Promise<void> {
  const pid = a.child.pid ?? 0;
  // A scrape first, so that every collector has run and the HTTP server has served.
  const res = await fetch(`http://${proto === "tcp6" ? `[${address}]` : address}:${a.port}/metrics`);
  expect(res.status).toBe(200);
  await res.text();
  expect(socketInodes(pid).size).toBeGreaterThan(0);
  const sockets = inetSocketsOf(pid);
  const listening = sockets.filter((s) => s.proto.startsWith("tcp") && s.state === TCP_LISTEN);
  expect(listening.map((s) => ({ proto: s.proto, address: s.address, port: s.port }))).toEqual([{ proto, address, port: a.port }]);
  expect(sockets.filter((s) => s.proto.startsWith("udp"))).toEqual([]);
  // Whatever else is there is a connection of a client to that one port, not a socket of its own.
  const others = sockets.filter((s) => s.state !== TCP_LISTEN);
  for (const s of others) expect({ state: s.state, port: s.port }).toEqual({ state: TCP_ESTABLISHED, port: a.port });
}

describe("the agent binds only where told", () => {
  it("--web.listen-address=127.0.0.1:0: one listening socket, 127.0.0.1 on the port it logs, nothing else bound", async () => {
    running = await startAgent(defaults()); // the helper passes --web.listen-address=127.0.0.1:0
    await checkOnlyListener(running, "127.0.0.1", "tcp");
  });

  it("(the /proc reader finds a listener this test opens, with its address and port)", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.2", resolve));
    const addr = server.address();
    const port = typeof addr === "object" && addr ? addr.port : 0;
    try {
      const mine = inetSocketsOf(process.pid).filter((s) => s.port === port);
      expect(mine.map((s) => ({ proto: s.proto, state: s.state, address: s.address }))).toEqual([{ proto: "tcp", state: TCP_LISTEN, address: "127.0.0.2" }]);
      expect(inetTable(process.pid, "tcp").some((s) => s.port === port && s.inode === mine[0]?.inode)).toBe(true);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("--web.listen-address=[::1]:0: one listening socket, ::1 only (no IPv4, no wildcard)", async (ctx) => {
    if (!(await ipv6LoopbackWorks())) {
      if (!existsSync("/proc/net/if_inet6")) {
        // Genuinely impossible here, CI or not: the kernel has no IPv6 at all.
        console.warn("SKIPPED: the kernel has no IPv6 (/proc/net/if_inet6 is absent): the [::1] listener is not checked on this machine");
        ctx.skip();
      }
      const why =
        "::1 cannot be bound although the kernel has IPv6 (/proc/net/if_inet6 exists): is the loopback's IPv6 address disabled (sysctl net.ipv6.conf.lo.disable_ipv6)?";
      if (process.env.CI) throw new Error(why);
      console.warn(`SKIPPED: ${why} (with CI set this is a failure)`);
      ctx.skip();
    }
    running = await startAgent([...defaults(), "--web.listen-address=[::1]:0"]);
    await checkOnlyListener(running, "::1", "tcp6");
    await expect(fetch(`http://127.0.0.1:${running.port}/healthz`)).rejects.toThrow();
  });
});
