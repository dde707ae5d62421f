/**
 * The web config in force, re-read when its file or a certificate, key or client CA file it names
 * changes (inode, size, mtime or ctime), checked on every new connection and request, as
 * exporter-toolkit re-reads it, so certificates rotate without a restart. A file that has become
 * invalid is logged once and counted; the last good config stays in force. Turning TLS on or off
 * needs a restart (the listener is either HTTP or HTTPS).
 */
import { readFileSync, statSync } from "node:fs";
import type { Logger } from "pino";
import { loadTlsMaterial, type TlsMaterial } from "./tls.js";
import { BasicAuth } from "./auth.js";
import { WebConfigError, parseWebConfig, type WebSettings } from "./config.js";
import { RateLimiter } from "./rate-limit.js";

export interface LoadedWebConfig {
  /** undefined: no --web.config.file (plain HTTP, no auth). */
  settings: WebSettings | undefined;
  tls: TlsMaterial | undefined;
  auth: BasicAuth;
  limiter: RateLimiter | undefined;
}

export const NO_WEB_CONFIG: LoadedWebConfig = { settings: undefined, tls: undefined, auth: new BasicAuth(new Map()), limiter: undefined };

function readSettings(path: string): WebSettings {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new WebConfigError(`cannot read web config file ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  return parseWebConfig(text, path);
}

function build(settings: WebSettings): LoadedWebConfig {
  return {
    settings,
    tls: settings.tls ? loadTlsMaterial(settings.tls, settings.path) : undefined,
    auth: new BasicAuth(settings.users),
    limiter: settings.rateLimit ? new RateLimiter(settings.rateLimit.intervalMs, settings.rateLimit.burst) : undefined,
  };
}

/** Reads and checks a web config file completely (certificates and key included); throws WebConfigError with one line. */
export function loadWebConfig(path: string | undefined): LoadedWebConfig {
  return path === undefined ? NO_WEB_CONFIG : build(readSettings(path));
}

function fileState(path: string): string {
  try {
    const s = statSync(path);
    return `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
  } catch {
    return "-";
  }
}

/** The config file and every certificate, key and CA file the given settings name. */
function filesOf(path: string | undefined, ...settings: (WebSettings | undefined)[]): string[] {
  if (path === undefined) return [];
  const files = new Set([path]);
  for (const t of settings.map((s) => s?.tls)) for (const f of [t?.certFile, t?.keyFile, t?.clientCaFile]) if (f !== undefined) files.add(f);
  return [...files];
}

export interface WebReloadListener {
  (result: "success" | "failure"): void;
}

export class WebConfigSource {
  private loaded: LoadedWebConfig;
  private path: string | undefined;
  /** Files whose state decides whether to re-read, and their state at the last attempt. */
  private watched: string[];
  private signature: string;
  /** Whether the listener speaks TLS; fixed for the life of the server. */
  readonly tls: boolean;

  constructor(
    path: string | undefined,
    initial: LoadedWebConfig,
    private readonly logger: Logger,
    private readonly onReload: WebReloadListener = () => undefined,
  ) {
    this.path = path;
    this.loaded = initial;
    this.tls = initial.tls !== undefined;
    this.watched = filesOf(path, initial.settings);
    this.signature = this.currentSignature();
  }

  /** The config in force, re-read first if one of its files changed. */
  current(): LoadedWebConfig {
    if (this.path === undefined) return this.loaded;
    // The files' state before they are read: a write still under way when they are read (a file
    // truncated, then written) changes it again, and the next look reads the whole file. Taken after
    // the read, it would match the finished file and the torn read would stay in force.
    const before = new Map(this.watched.map((f) => [f, fileState(f)]));
    const sig = this.watched.map((f) => before.get(f)).join("|");
    if (sig === this.signature) return this.loaded;
    const path = this.path;
    // An empty config file is one being written (truncated, not yet filled): the last config stays
    // in force, unrecorded, until the file has content (a reload never drops basic auth for a torn read).
    if (before.get(path)?.split(":")[2] === "0") return this.loaded;
    let settings: WebSettings | undefined;
    try {
      settings = readSettings(path);
      const next = build(settings);
      if (this.modeChanged(next)) throw new WebConfigError(`web config file ${path}: turning TLS ${next.tls ? "on" : "off"} needs a restart`);
      this.loaded = next;
      this.logger.info({ file: path, tls: next.tls !== undefined, basic_auth: next.auth.enabled }, "web config reloaded");
      this.onReload("success");
    } catch (err) {
      this.logger.error({ reason: err instanceof Error ? err.message : String(err) }, "web config reload failed; keeping the previous web config");
      this.onReload("failure");
    } finally {
      // Watch what the new file names, so that a missing certificate that appears later is picked up.
      this.watched = filesOf(path, settings, this.loaded.settings);
      this.signature = this.watched.map((f) => before.get(f) ?? fileState(f)).join("|");
    }
    return this.loaded;
  }

  /**
   * SIGHUP: puts a config that loadWebConfig() has already checked in force. Returns false, and
   * keeps the old one, when it would turn TLS on or off.
   */
  replace(path: string | undefined, next: LoadedWebConfig): boolean {
    const applies = !this.modeChanged(next);
    if (applies) {
      this.path = path;
      this.loaded = next;
    }
    // Either way the files as they are now have been looked at: no second report from current().
    if (applies || path === this.path) {
      this.watched = filesOf(path, next.settings, this.loaded.settings);
      this.signature = this.currentSignature();
    }
    return applies;
  }

  private modeChanged(next: LoadedWebConfig): boolean {
    return (next.tls !== undefined) !== this.tls;
  }

  private currentSignature(): string {
    return this.watched.map(fileState).join("|");
  }
}
