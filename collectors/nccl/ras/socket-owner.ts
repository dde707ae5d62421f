/**
 * Whose socket answered a RAS query? What a RAS service says counts as this node's evidence only
 * when a process of an NCCL rank answered: any local user can listen on 127.0.0.1:28028 while no
 * job does and serve a made-up report (a hang, a dead process, a rank behind).
 *
 * The socket that answered is the one that accepted the agent's connection: in <procfs>/net/tcp or
 * tcp6 (the agent's own network namespace, where it connected), the entry whose local end is the
 * service's address and port and whose remote end is the agent's. That is exact: another listener
 * on the same port (`::1` beside `127.0.0.1`, a wildcard) cannot pass for it. The entry gives the
 * socket's inode and owner (an accepted socket has its listener's uid). Then, in this order:
 *  - `rank`: the inode is among the fds (`socket:[inode]` in <procfs>/<pid>/fd) of a live process of
 *    a rank the followed logs know (readable as root, with CAP_SYS_PTRACE, or as the same user);
 *  - `root`: the socket belongs to uid 0: only root (or a container running as root) can make
 *    one, and root can already do anything to this node;
 *  - `uid`: the fds of a known rank's process cannot be read, and the socket's uid is that
 *    process's (effective or file-system uid, <procfs>/<pid>/status). Weaker: any process of
 *    that user passes;
 *  - else it is not believed: `unseen` (no such socket in the tables, or no file holds it),
 *    `no_rank` (no rank process is known on this node), `not_a_rank` (it is none of theirs).
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { addressKey, socketsAt, TCP_LISTEN, type TcpSocket } from "../../proc-net.js";

export interface Endpoint {
  address: string;
  port: number;
}

/** A connection to a RAS service, as the agent's socket sees it. */
export interface RasConnection {
  server: Endpoint;
  client: Endpoint;
}

export type SocketOwner =
  | { trusted: true; by: "rank" | "uid"; pid: number; uid: number; inode: number }
  | { trusted: true; by: "root"; uid: 0; inode: number }
  | { trusted: false; why: "unseen"; ranks: number }
  | { trusted: false; why: "no_rank" | "not_a_rank"; uid: number; inode: number; ranks: number };

/** The server's end of the connection in <procfs>/net/tcp{,6}, with a file holding it; else undefined. */
export function serverSocket(procfsRoot: string, c: RasConnection): TcpSocket | undefined {
  const server = addressKey(c.server.address);
  const client = addressKey(c.client.address);
  if (server === undefined || client === undefined) return undefined;
  // An IPv4 connection shows in tcp, or in tcp6 (IPv4-mapped) when a dual-stack socket accepted it.
  const tables = server.startsWith("00000000000000000000ffff") ? (["tcp", "tcp6"] as const) : (["tcp6"] as const);
  for (const table of tables) {
    let text: string;
    try {
      text = readFileSync(join(procfsRoot, "net", table), "latin1");
    } catch {
      continue; // no IPv6 in this kernel
    }
    for (const s of socketsAt(text, table === "tcp" ? 4 : 6, server, c.server.port)) {
      if (s.state === TCP_LISTEN || s.remotePort !== c.client.port || s.remote !== client) continue;
      return s.inode !== 0 ? s : undefined;
    }
  }
  return undefined;
}

/** The effective and file-system uids of a status file's `Uid:` line (real, effective, saved, fs). */
export function statusUids(status: string): number[] {
  const at = status.startsWith("Uid:") ? 0 : status.indexOf("\nUid:") + 1;
  if (at === 0 && !status.startsWith("Uid:")) return [];
  const end = status.indexOf("\n", at);
  const f = status
    .slice(at + 4, end < 0 ? undefined : end)
    .split("\t")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  const out: number[] = [];
  for (const i of [1, 3]) {
    const v = Number(f[i]);
    if (f[i] !== undefined && Number.isSafeInteger(v) && v >= 0) out.push(v);
  }
  return out;
}

/** Does process pid hold the socket (an fd linking to `link`): true, false, or why that cannot be told. */
function holds(procfsRoot: string, pid: number, link: string): boolean | "unreadable" | "gone" {
  const dir = join(procfsRoot, String(pid), "fd");
  let fds: string[];
  try {
    fds = readdirSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === "ENOENT" || code === "ESRCH" ? "gone" : "unreadable";
  }
  for (const fd of fds) {
    try {
      if (readlinkSync(join(dir, fd)) === link) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}

/**
 * Who holds the socket that answered, judged against the node pids (in procfsRoot) of the live
 * processes of the ranks the logs know. `first`: a pid to look at first (the last one that answered).
 */
export function socketOwner(procfsRoot: string, c: RasConnection, rankPids: readonly number[], first?: number): SocketOwner {
  const ranks = new Set(rankPids).size;
  const sock = serverSocket(procfsRoot, c);
  if (sock === undefined) return { trusted: false, why: "unseen", ranks };
  const link = `socket:[${sock.inode}]`;
  const unique = [...new Set(rankPids)];
  const order = first !== undefined && unique.includes(first) ? [first, ...unique.filter((p) => p !== first)] : unique;
  const unreadable: number[] = [];
  for (const pid of order) {
    const h = holds(procfsRoot, pid, link);
    if (h === true) return { trusted: true, by: "rank", pid, uid: sock.uid, inode: sock.inode };
    if (h === "unreadable") unreadable.push(pid);
  }
  if (sock.uid === 0) return { trusted: true, by: "root", uid: 0, inode: sock.inode };
  for (const pid of unreadable) {
    let uids: number[];
    try {
      uids = statusUids(readFileSync(join(procfsRoot, String(pid), "status"), "latin1"));
    } catch {
      continue; // gone meanwhile
    }
    if (uids.includes(sock.uid)) return { trusted: true, by: "uid", pid, uid: sock.uid, inode: sock.inode };
  }
  return { trusted: false, why: ranks === 0 ? "no_rank" : "not_a_rank", uid: sock.uid, inode: sock.inode, ranks };
}

/** Why an owner is not believed, in words for the log. */
export function refusal(o: SocketOwner, procfsRoot: string): string {
  if (o.trusted) return "";
  if (o.why === "unseen")
    return `the socket that answered is not in ${join(procfsRoot, "net")}/tcp or tcp6 with a process holding it, so its owner cannot be told`;
  if (o.why === "no_rank") return `its socket belongs to uid ${o.uid}, not root, and the followed logs name no live NCCL rank process on this node`;
  return `its socket (uid ${o.uid}) is held by none of the ${o.ranks} live NCCL rank process${o.ranks === 1 ? "" : "es"} the followed logs name on this node, nor by their user`;
}

/** How an owner was believed, in words for the log. */
export function belief(o: SocketOwner): string {
  if (!o.trusted) return "";
  if (o.by === "rank") return `held by rank process ${o.pid}`;
  if (o.by === "root") return "owned by root";
  return `owned by uid ${o.uid}, the user of rank process ${o.pid} (whose sockets cannot be read)`;
}
