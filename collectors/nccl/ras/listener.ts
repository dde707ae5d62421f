/**
 * Is a RAS service listening, and since when: so that no query reaches a job whose processes are
 * still starting (NCCL issue 1669: a query during communicator init crashed the job). Where the
 * service's address is this node's (loopback, or one of its addresses: the host network), the
 * kernel's socket tables say it without a connection: a LISTEN socket at the address or at the
 * wildcard, in <procfs>/net/tcp or tcp6, named by its inode (a new inode is a new service: a new
 * job). Elsewhere (a job in its own network namespace, `NCCL_RAS_ADDR` set to its address) a bare
 * TCP connection, closed at once without a command, tells it.
 */
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { addressKey, socketsAt, TCP_LISTEN } from "../../proc-net.js";
import type { RasAddress } from "./client.js";

export type ListenerSeen = { kind: "listening"; inode: number } | { kind: "none" } | { kind: "unknown" };

const WILDCARD4 = "00000000000000000000ffff00000000";
const WILDCARD6 = "00000000000000000000000000000000";

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || host.startsWith("127.");
}

/** The LISTEN socket of the service at `address` in this network namespace's tables. */
export function listenerOf(procfsRoot: string, address: RasAddress, isLocal: (host: string) => boolean): ListenerSeen {
  const host = address.host.replace(/^\[|\]$/g, "");
  const keys = host === "localhost" ? [addressKey("127.0.0.1"), addressKey("::1")] : [addressKey(host)];
  const known = keys.filter((k): k is string => k !== undefined);
  if (known.length === 0) return { kind: "unknown" };
  for (const table of ["tcp", "tcp6"] as const) {
    let text: string;
    try {
      text = readFileSync(join(procfsRoot, "net", table), "latin1");
    } catch {
      continue; // no IPv6 in this kernel, or no procfs: judged below
    }
    const family = table === "tcp" ? 4 : 6;
    const candidates = family === 4 ? [...known.filter((k) => k.startsWith(WILDCARD4.slice(0, 24))), WILDCARD4] : [...known, WILDCARD6];
    for (const key of candidates) {
      for (const s of socketsAt(text, family, key, address.port)) if (s.state === TCP_LISTEN && s.inode !== 0) return { kind: "listening", inode: s.inode };
    }
  }
  return isLoopback(host) || isLocal(host) ? { kind: "none" } : { kind: "unknown" };
}

/** A bare connection to the service, closed at once: does anything accept it? */
export function accepts(address: RasAddress, deadlineMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: address.host.replace(/^\[|\]$/g, ""), port: address.port });
    const timer = setTimeout(() => end(false), deadlineMs);
    const end = (ok: boolean): void => {
      clearTimeout(timer);
      s.destroy();
      resolve(ok);
    };
    s.once("connect", () => end(true));
    s.once("error", () => end(false));
  });
}
