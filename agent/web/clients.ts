/**
 * Who a connection comes from, and how much of the server one client may hold. Every local user
 * can connect from loopback and from any of the host's own addresses, so all of them are one
 * client, "this host", for connections; any other address (Prometheus, a pod in its own network
 * namespace) is a client of its own. For password checks a local connection is told apart further
 * by the user that owns its socket (localUserOf: the kernel's socket table), so one local user's
 * flood of wrong passwords does not keep a scraper on the node, run by another user, waiting. No
 * client may take more than its share of the connections or of the pending bcrypt checks, so a
 * local user cannot use them all up and lock Prometheus out.
 */
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { performance } from "node:perf_hooks";
import { networkInterfaces } from "node:os";
import { addressKey, socketsAt } from "../../collectors/proc-net.js";

export const THIS_HOST = "this host";

/** The client a remote address belongs to: THIS_HOST or the plain address. */
export type ClientOf = (remoteAddress: string | undefined) => string;

/** `::ffff:10.0.0.1` → `10.0.0.1`, `fe80::1%eth0` → `fe80::1`, `10.0.0.1` → `10.0.0.1`. */
export function plainAddress(address: string): string {
  const percent = address.indexOf("%");
  const a = percent < 0 ? address : address.slice(0, percent);
  return a.toLowerCase().startsWith("::ffff:") && a.includes(".") ? a.slice(7) : a;
}

/** 127.0.0.0/8 and ::1 (a plain address). */
export function isLoopback(a: string): boolean {
  return a.startsWith("127.") || a === "::1";
}

/** The host's own addresses, plain; undefined when they cannot be read (e.g. no file descriptor left). */
function hostAddresses(): Set<string> | undefined {
  try {
    const out = new Set<string>();
    for (const list of Object.values(networkInterfaces())) for (const i of list ?? []) out.add(plainAddress(i.address));
    return out;
  } catch {
    return undefined;
  }
}

/** ClientOf for this host; its addresses are read again at most every refreshMs (an address may come and go). */
export function hostClients(refreshMs = 10_000, now: () => number = Date.now, addresses: () => Set<string> | undefined = hostAddresses): ClientOf {
  let own = new Set<string>();
  let readAt = Number.NEGATIVE_INFINITY;
  return (remote) => {
    if (remote === undefined) return THIS_HOST; // a socket already closed: nothing it holds lasts
    const a = plainAddress(remote);
    if (isLoopback(a)) return THIS_HOST;
    if (now() - readAt >= refreshMs) {
      own = addresses() ?? own;
      readAt = now();
    }
    return own.has(a) ? THIS_HOST : a;
  };
}

/** The ends of a TCP connection, as Node's socket gives them. */
export interface Ends {
  remoteAddress?: string | undefined;
  remotePort?: number | undefined;
  localAddress?: string | undefined;
  localPort?: number | undefined;
}

const localUsers = new WeakMap<object, string>();

/**
 * A connection of this host, told apart by the user that owns the client's socket: the row of
 * /proc/self/net/tcp{,6} whose local end is the connection's remote end and whose remote end is
 * ours. THIS_HOST when it cannot be found (the socket closed, /proc unreadable). Asked only when a
 * password check must start; the tables are read asynchronously and at most every TABLES_MS (a
 * node with tens of thousands of sockets has tables of megabytes): a socket not in the last
 * tables waits for the next read.
 */
export async function localUserOf(socket: Ends & object, tables: (notBefore: number) => Promise<[string, 4 | 6][]> = ownTcpTables): Promise<string> {
  const known = localUsers.get(socket);
  if (known !== undefined) return known;
  const key = socket.remoteAddress !== undefined ? addressKey(socket.remoteAddress) : undefined;
  if (key === undefined || socket.remotePort === undefined) return THIS_HOST;
  // Tables read after now hold this socket (it is open now, or gone).
  for (const [text, family] of await tables(performance.now())) {
    const own = socketsAt(text, family, key, socket.remotePort).find((s) => s.remotePort === socket.localPort);
    if (own !== undefined) {
      const who = `${THIS_HOST} (uid ${own.uid})`;
      localUsers.set(socket, who);
      return who;
    }
  }
  return THIS_HOST;
}

/** The tables are read at most this often, whatever the number of new connections. */
const TABLES_MS = 100;
let lastRead: { startedMs: number; tables: Promise<[string, 4 | 6][]> } | undefined;
let nextRead: { startedMs: number; tables: Promise<[string, 4 | 6][]> } | undefined;

/** Tables whose read starts at notBefore or later: the last read, or one shared read at most every TABLES_MS. */
function ownTcpTables(notBefore: number): Promise<[string, 4 | 6][]> {
  if (lastRead !== undefined && lastRead.startedMs >= notBefore) return lastRead.tables;
  if (nextRead !== undefined) return nextRead.tables;
  const startAt = lastRead === undefined ? performance.now() : Math.max(performance.now(), lastRead.startedMs + TABLES_MS);
  const tables = new Promise<void>((r) => setTimeout(r, Math.max(0, startAt - performance.now()))).then(async () => {
    const read = { startedMs: performance.now(), tables };
    const got = await Promise.all(
      (["tcp", "tcp6"] as const).map(async (name, i): Promise<[string, 4 | 6] | undefined> => {
        const text = await readFile(`/proc/self/net/${name}`, "latin1").catch(() => undefined);
        return text === undefined ? undefined : [text, i === 0 ? 4 : 6];
      }),
    );
    lastRead = read;
    nextRead = undefined;
    return got.filter((t) => t !== undefined);
  });
  nextRead = { startedMs: startAt, tables };
  return tables;
}

/** Counts what each client holds: at most `total` in all and `perClient` for any one client. */
export class Shares {
  private readonly held = new Map<string, number>();
  private count = 0;

  constructor(
    readonly total: number,
    readonly perClient: number,
  ) {}

  /** Takes one for the client; false (nothing taken) when the client or everyone is at the limit. */
  take(client: string): boolean {
    const mine = this.held.get(client) ?? 0;
    if (this.count >= this.total || mine >= this.perClient) return false;
    this.held.set(client, mine + 1);
    this.count++;
    return true;
  }

  /** Gives back one that take() gave. */
  give(client: string): void {
    const mine = this.held.get(client) ?? 0;
    if (mine <= 0) return;
    if (mine === 1) this.held.delete(client);
    else this.held.set(client, mine - 1);
    this.count--;
  }

  heldBy(client: string): number {
    return this.held.get(client) ?? 0;
  }

  get used(): number {
    return this.count;
  }
}

/** The soft "Max open files" of /proc/<pid>/limits text; undefined if absent or unlimited. */
export function openFileLimit(limitsText: string): number | undefined {
  for (const line of limitsText.split("\n")) {
    if (!line.startsWith("Max open files")) continue;
    const soft = line.slice("Max open files".length).trim().split(" ")[0];
    return soft !== undefined && /^\d+$/.test(soft) ? Number(soft) : undefined;
  }
  return undefined;
}

/** Connections at most, and file descriptors left to the rest of the agent (followed logs, tools' pipes). */
export const MAX_CONNECTIONS = 512;
export const RESERVED_FDS = 128;
const MIN_CONNECTIONS = 16;

/**
 * The connection limits for an open-file limit: MAX_CONNECTIONS, fewer where the limit leaves less
 * than RESERVED_FDS descriptors besides them (at least 16); one client may hold half of them.
 */
export function connectionLimits(fdLimit: number | undefined): { total: number; perClient: number } {
  const total = fdLimit === undefined ? MAX_CONNECTIONS : Math.max(MIN_CONNECTIONS, Math.min(MAX_CONNECTIONS, fdLimit - RESERVED_FDS));
  return { total, perClient: Math.max(1, Math.floor(total / 2)) };
}

/** This process's open-file limit (Node raises the soft limit to the hard one at start). */
export function ownOpenFileLimit(): number | undefined {
  try {
    return openFileLimit(readFileSync("/proc/self/limits", "utf8"));
  } catch {
    return undefined;
  }
}
