/**
 * HTTP basic auth against the bcrypt hashes of basic_auth_users, bounded so that wrong passwords
 * cannot starve the right one:
 *
 * - Every result is cached, failures too, as exporter-toolkit does: keyed by the user, the hash it
 *   was checked against, whether the user was configured, and a keyed hash (HMAC) of the password
 *   sent; the password itself is never kept. A wrong password sent again costs no bcrypt, and a
 *   cached failure can never refuse a right password after the config changed (its key names the
 *   old hash). Successes and failures are kept apart, so a flood of wrong passwords cannot push
 *   the right one out. The caches live as long as the server: a reload keeps every entry whose
 *   user still has the same hash (a certificate rotation or an unrelated change empties nothing).
 * - An unknown user is checked against a fixed decoy hash of the configured users' cost and cached
 *   the same way, so neither the first answer nor a repeated one tells users apart.
 * - bcrypt runs one check at a time (bcryptjs yields to the event loop every 100 ms, so cached
 *   checks and scrapes are served in between). At most MAX_PENDING checks wait or run, and at most
 *   MAX_PENDING_PER_CLIENT for one client (clients.ts); beyond that the request is answered 429
 *   at once. The same credentials sent again while their check runs wait for that check.
 */
import { createHmac, randomBytes } from "node:crypto";
import { BcryptThread } from "./bcrypt-thread.js";
import { Shares } from "./clients.js";

/** Checks that may wait or run at once, in all and for one client. */
export const MAX_PENDING = 8;
export const MAX_PENDING_PER_CLIENT = 2;
/** Cached results: right passwords (only someone who knows one can add one) and wrong ones. */
export const PASSED_MAX = 100;
export const FAILED_MAX = 1000;

/** exporter-toolkit's decoy (a bcrypt hash of "fakepassword"), without its `$2y$10$` prefix: the cost is chosen here. */
const DECOY_BODY = "QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi";

export interface Credentials {
  user: string;
  password: string;
}

/** The credentials of an `Authorization: Basic ...` header (scheme case-insensitive), or undefined. */
export function parseBasicAuth(header: string | undefined): Credentials | undefined {
  if (!header) return undefined;
  const m = /^basic\s+(\S+)\s*$/i.exec(header);
  if (!m?.[1]) return undefined;
  const text = Buffer.from(m[1], "base64").toString("utf8");
  const colon = text.indexOf(":");
  if (colon < 0) return undefined;
  return { user: text.slice(0, colon), password: text.slice(colon + 1) };
}

/** `$2y$10$...` → 10. */
export function costOf(hash: string): number {
  return Number(hash.slice(4, 6));
}

/** The cost most configured hashes have (the higher one on a tie); 10, exporter-toolkit's, when there are none. */
function commonCost(hashes: Iterable<string>): number {
  const counts = new Map<number, number>();
  for (const h of hashes) counts.set(costOf(h), (counts.get(costOf(h)) ?? 0) + 1);
  let best = 10;
  let bestCount = 0;
  for (const [cost, n] of counts) if (n > bestCount || (n === bestCount && cost > best)) [best, bestCount] = [cost, n];
  return best;
}

/** basic_auth_users of one web config: who is configured, with which hash. */
export class BasicAuth {
  /** Checked against when the user is unknown, so that it costs what a known user's check costs. */
  readonly decoy: string;

  constructor(private readonly users: ReadonlyMap<string, string>) {
    this.decoy = `$2y$${String(commonCost(users.values())).padStart(2, "0")}$${DECOY_BODY}`;
  }

  get enabled(): boolean {
    return this.users.size > 0;
  }

  /** The configured hash of a user; undefined for an unknown one. */
  hashOf(user: string): string | undefined {
    return this.users.get(user);
  }

  entries(): IterableIterator<[string, string]> {
    return this.users.entries();
  }
}

export type AuthVerdict = "ok" | "denied" | "busy";

interface Cached {
  /** Keyed hash of the user name. */
  user: string;
  hash: string;
  known: boolean;
}

/** A Map kept in use order, the least recently used dropped beyond max. */
class Lru<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}

  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  set(key: string, v: V): void {
    this.map.delete(key);
    this.map.set(key, v);
    if (this.map.size > this.max) {
      const oldest = this.map.keys().next();
      if (!oldest.done) this.map.delete(oldest.value);
    }
  }

  /** Drops every entry for which keep() is false. */
  retain(keep: (v: V) => boolean): void {
    for (const [k, v] of this.map) if (!keep(v)) this.map.delete(k);
  }

  get size(): number {
    return this.map.size;
  }
}

/** The password checks of one server, across every web config it is given (reloads included). */
export class PasswordChecks {
  private readonly secret = randomBytes(32);
  private readonly passed = new Lru<Cached>(PASSED_MAX);
  private readonly failed = new Lru<Cached>(FAILED_MAX);
  /** Checks waiting or running, by cache key: the same credentials sent again wait for the same check. */
  private readonly running = new Map<string, Promise<boolean>>();
  private readonly slots: Shares;
  /** bcrypt runs one check at a time: it is CPU-bound, and checks in parallel would only all be late. */
  private readonly bcrypt = new BcryptThread();
  /** The config whose users the caches were last pruned for. */
  private prunedFor: BasicAuth | undefined;

  constructor(limits: { total: number; perClient: number } = { total: MAX_PENDING, perClient: MAX_PENDING_PER_CLIENT }) {
    this.slots = new Shares(limits.total, limits.perClient);
  }

  /** Checks waiting or running now. */
  get pending(): number {
    return this.slots.used;
  }

  /** Cached results: right passwords and wrong ones. */
  get cached(): { passed: number; failed: number } {
    return { passed: this.passed.size, failed: this.failed.size };
  }

  /**
   * "ok" when basic auth is off or the header carries a configured user and its password,
   * "busy" when the check would have to wait beyond the limits (answer 429), else "denied".
   */
  /** client: who asks (clients.ts), or how to find out: asked only when a check must start. */
  async check(auth: BasicAuth, header: string | undefined, client: string | (() => Promise<string>)): Promise<AuthVerdict> {
    if (!auth.enabled) return "ok";
    const cred = parseBasicAuth(header);
    if (!cred) return "denied";
    this.prune(auth);
    const configured = auth.hashOf(cred.user);
    const entry: Cached = { user: this.mac(cred.user), hash: configured ?? auth.decoy, known: configured !== undefined };
    const key = this.mac(`${entry.user}\0${entry.hash}\0${entry.known ? "known" : "unknown"}\0${cred.password}`);
    if (this.passed.get(key) !== undefined) return "ok";
    if (this.failed.get(key) !== undefined) return "denied";
    let run = this.running.get(key);
    if (run === undefined) {
      const who = typeof client === "string" ? client : await client();
      run = this.running.get(key); // the same check may have started while `who` was found
      if (run === undefined) {
        if (!this.slots.take(who)) return "busy";
        run = this.compare(cred.password, entry.hash).then((match) => {
          const ok = match && entry.known;
          (ok ? this.passed : this.failed).set(key, entry);
          return ok;
        });
        this.running.set(key, run);
        void run.finally(() => {
          this.running.delete(key);
          this.slots.give(who);
        });
      }
    }
    return (await run) ? "ok" : "denied";
  }

  private mac(text: string): string {
    return createHmac("sha256", this.secret).update(text).digest("base64");
  }

  /** A new config: keeps the entries of users whose hash is unchanged (and of unknown users, while the decoy is). */
  private prune(auth: BasicAuth): void {
    if (auth === this.prunedFor) return;
    this.prunedFor = auth;
    const hashes = new Map<string, string>();
    for (const [user, hash] of auth.entries()) hashes.set(this.mac(user), hash);
    const valid = (e: Cached): boolean => (e.known ? hashes.get(e.user) === e.hash : !hashes.has(e.user) && e.hash === auth.decoy);
    this.passed.retain(valid);
    this.failed.retain(valid);
  }

  private compare(password: string, hash: string): Promise<boolean> {
    return this.bcrypt.compare(password, hash);
  }

  /** Ends the bcrypt worker (the server closed). */
  stop(): void {
    this.bcrypt.stop();
  }
}
