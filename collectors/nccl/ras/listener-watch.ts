/**
 * Whether a RAS service listens at the watch's address, followed over time (ras/listener.ts reads
 * it): the kernel's socket tables at most every 2 s, where a LISTEN socket under a new inode is a
 * new service (a new job), and none is no job. Where the tables cannot tell (a service in another
 * network namespace), a bare connection tells, one at a time and at most once an interval.
 */
import type { RasAddress } from "./client.js";
import { accepts, listenerOf, type ListenerSeen } from "./listener.js";

/** How often the watch looks whether a service listens (a read of <procfs>/net/tcp: about 1 ms at 10,000 sockets). */
const LISTENER_CHECK_MS = 2000;
/** Deadline of a bare connection that tells whether a service in another network namespace listens. */
const ACCEPT_DEADLINE_MS = 2000;

/**
 * What a look found: `new` (a service listens, under an inode not seen before), `replaced` (the
 * same, where another one listened before: a new job), `none`, or `unknown` (the tables do not
 * tell); undefined: nothing to do (not looked now, or the same service listens).
 */
export type ListenerChange = "new" | "replaced" | "none" | "unknown";

/** Where to look, read at each look: the settings may change (SIGHUP). */
export interface ListenerPlace {
  isLocal: (host: string) => boolean;
  procfsRoot: string;
  address: RasAddress;
}

export class ListenerWatch {
  /** What the tables showed last. */
  seen: ListenerSeen = { kind: "unknown" };
  private inode: number | undefined;
  private checkedMs: number | undefined;
  private acceptCheck: Promise<void> | undefined;
  private acceptCheckedMs: number | undefined;

  constructor(private readonly place: () => ListenerPlace) {}

  /** Looks in the tables, unless it did in the last 2 s. */
  look(now: number): ListenerChange | undefined {
    if (this.checkedMs !== undefined && now - this.checkedMs < LISTENER_CHECK_MS && now >= this.checkedMs) return undefined;
    this.checkedMs = now;
    const { isLocal, procfsRoot, address } = this.place();
    const seen = listenerOf(procfsRoot, address, isLocal);
    this.seen = seen;
    if (seen.kind === "listening") {
      if (seen.inode === this.inode) return undefined;
      const replaced = this.inode !== undefined;
      this.inode = seen.inode;
      return replaced ? "replaced" : "new";
    }
    if (seen.kind === "none") this.inode = undefined;
    return seen.kind;
  }

  /** A bare connection to the service, unless one is under way or was made in the last interval; `accepted` when it is. */
  knock(now: number, address: RasAddress, intervalMs: number, accepted: () => void): void {
    if (this.acceptCheck !== undefined) return;
    if (this.acceptCheckedMs !== undefined && now - this.acceptCheckedMs < intervalMs && now >= this.acceptCheckedMs) return;
    this.acceptCheckedMs = now;
    this.acceptCheck = accepts(address, ACCEPT_DEADLINE_MS)
      .then((ok) => {
        if (ok) accepted();
      })
      .finally(() => (this.acceptCheck = undefined));
  }
}
