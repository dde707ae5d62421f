/**
 * HTTP basic auth against the bcrypt hashes of basic_auth_users. A successful check is cached,
 * keyed by user, configured hash and a SHA-256 of the password sent, so a scrape every 15 s costs
 * one bcrypt, not one per scrape; the password itself is never kept. A wrong password costs one
 * bcrypt whether the user exists or not: an unknown user is checked against the costliest
 * configured hash, so timing does not tell which users exist.
 */
import { createHash } from "node:crypto";
import bcrypt from "bcryptjs";

const CACHE_MAX = 100;

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

function costOf(hash: string): number {
  return Number(hash.slice(4, 6));
}

export class BasicAuth {
  private readonly cache = new Map<string, true>();
  /** Checked against when the user is unknown; the result is then thrown away. */
  private readonly decoy: string;
  /** bcrypt runs one at a time: it is CPU-bound and would only slow every request down in parallel. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly users: ReadonlyMap<string, string>) {
    let decoy = "";
    for (const h of users.values()) if (decoy === "" || costOf(h) > costOf(decoy)) decoy = h;
    this.decoy = decoy;
  }

  get enabled(): boolean {
    return this.users.size > 0;
  }

  /** True when the Authorization header carries a configured user and its password. */
  async check(header: string | undefined): Promise<boolean> {
    if (!this.enabled) return true;
    const cred = parseBasicAuth(header);
    if (!cred) return false;
    const hash = this.users.get(cred.user);
    const key = `${cred.user}\0${hash ?? ""}\0${createHash("sha256").update(cred.password).digest("hex")}`;
    if (hash !== undefined && this.cache.has(key)) return true;
    const ok = await this.compare(cred.password, hash ?? this.decoy);
    if (!ok || hash === undefined) return false;
    if (this.cache.size >= CACHE_MAX) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.set(key, true);
    return true;
  }

  private compare(password: string, hash: string): Promise<boolean> {
    const run = this.queue.then(() => bcrypt.compare(password, hash));
    this.queue = run.catch(() => undefined);
    return run.catch(() => false);
  }
}
