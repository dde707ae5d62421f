/**
 * --web.config.file: the Prometheus exporter-toolkit web configuration (tls_server_config,
 * http_server_config, basic_auth_users, rate_limit), parsed as strictly as exporter-toolkit does
 * (unknown keys, wrong types and bad values are errors). Pure: reading the certificates is tls.ts's job.
 * https://github.com/prometheus/exporter-toolkit/blob/master/docs/web-configuration.md
 */
import { dirname, isAbsolute, join } from "node:path";
import { parse as parseYaml } from "yaml";
import { parseDuration } from "../../collectors/settings/duration.js";

export class WebConfigError extends Error {
  override readonly name = "WebConfigError";
}

export const CLIENT_AUTH_TYPES = [
  "NoClientCert",
  "RequestClientCert",
  "RequireAnyClientCert",
  "VerifyClientCertIfGiven",
  "RequireAndVerifyClientCert",
] as const;
export type ClientAuthType = (typeof CLIENT_AUTH_TYPES)[number];

/** exporter-toolkit's TLS version names → Node's. */
export const TLS_VERSIONS = { TLS10: "TLSv1", TLS11: "TLSv1.1", TLS12: "TLSv1.2", TLS13: "TLSv1.3" } as const;
export type TlsVersionName = keyof typeof TLS_VERSIONS;

export interface TlsServerSettings {
  certFile: string | undefined;
  cert: string | undefined;
  keyFile: string | undefined;
  key: string | undefined;
  clientCaFile: string | undefined;
  clientCa: string | undefined;
  clientAuth: ClientAuthType;
  /** undefined = no SAN check. */
  clientAllowedSans: string[] | undefined;
  minVersion: TlsVersionName;
  maxVersion: TlsVersionName;
  /** Go names (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256); empty = the default list. */
  cipherSuites: string[];
  preferServerCipherSuites: boolean;
  /** Go names (X25519, CurveP256); empty = the default list. */
  curvePreferences: string[];
}

export interface WebSettings {
  path: string;
  /** undefined: no TLS section, or one that sets nothing (exporter-toolkit then serves plain HTTP). */
  tls: TlsServerSettings | undefined;
  /** Accepted and ignored: the server speaks HTTP/1.1. */
  http2: boolean;
  headers: Record<string, string>;
  /** user → bcrypt hash; empty = no basic auth. */
  users: Map<string, string>;
  /** undefined = no rate limit. */
  rateLimit: { intervalMs: number; burst: number } | undefined;
}

/** Headers exporter-toolkit lets a web config set, with their allowed values (undefined = any). */
const EXTRA_HEADERS: Record<string, readonly string[] | undefined> = {
  "Strict-Transport-Security": undefined,
  "X-Content-Type-Options": ["nosniff"],
  "X-Frame-Options": ["deny", "sameorigin"],
  "X-XSS-Protection": undefined,
  "Content-Security-Policy": undefined,
};

/** Cipher suites Go's tls.CipherSuites() offers (the secure ones), Go name → OpenSSL name. TLS 1.3 suites are not configurable in Go either. */
export const CIPHER_SUITES: Record<string, string | null> = {
  TLS_RSA_WITH_AES_128_CBC_SHA: "AES128-SHA",
  TLS_RSA_WITH_AES_256_CBC_SHA: "AES256-SHA",
  TLS_RSA_WITH_AES_128_GCM_SHA256: "AES128-GCM-SHA256",
  TLS_RSA_WITH_AES_256_GCM_SHA384: "AES256-GCM-SHA384",
  TLS_AES_128_GCM_SHA256: null,
  TLS_AES_256_GCM_SHA384: null,
  TLS_CHACHA20_POLY1305_SHA256: null,
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: "ECDHE-ECDSA-AES128-SHA",
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: "ECDHE-ECDSA-AES256-SHA",
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: "ECDHE-RSA-AES128-SHA",
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: "ECDHE-RSA-AES256-SHA",
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: "ECDHE-ECDSA-AES128-GCM-SHA256",
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: "ECDHE-ECDSA-AES256-GCM-SHA384",
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: "ECDHE-RSA-AES128-GCM-SHA256",
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: "ECDHE-RSA-AES256-GCM-SHA384",
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: "ECDHE-RSA-CHACHA20-POLY1305",
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: "ECDHE-ECDSA-CHACHA20-POLY1305",
};

/** exporter-toolkit's curve names → OpenSSL's. */
export const CURVES: Record<string, string> = { CurveP256: "P-256", CurveP384: "P-384", CurveP521: "P-521", X25519: "X25519" };

const BCRYPT_HASH = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/;

type Obj = Record<string, unknown>;

function fail(path: string, what: string): never {
  throw new WebConfigError(`web config file ${path}: ${what}`);
}

/** A mapping with only the given keys (exporter-toolkit unmarshals strictly); null counts as empty. */
function mapping(path: string, where: string, v: unknown, keys: readonly string[]): Obj {
  if (v === null || v === undefined) return {};
  if (typeof v !== "object" || Array.isArray(v)) fail(path, `${where} must be a mapping`);
  for (const k of Object.keys(v)) if (!keys.includes(k)) fail(path, `unknown field "${k}"${where === "top level" ? "" : ` in ${where}`}`);
  return v as Obj;
}

function optString(path: string, where: string, v: unknown): string | undefined {
  if (v === null || v === undefined || v === "") return undefined;
  if (typeof v !== "string") fail(path, `${where} must be a string`);
  return v;
}

function optBool(path: string, where: string, v: unknown, dflt: boolean): boolean {
  if (v === null || v === undefined) return dflt;
  if (typeof v !== "boolean") fail(path, `${where} must be true or false`);
  return v;
}

function stringList(path: string, where: string, v: unknown): string[] | undefined {
  if (v === null || v === undefined) return undefined;
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) fail(path, `${where} must be a list of strings`);
  return v;
}

function oneOf<T extends string>(path: string, where: string, v: string | undefined, allowed: readonly T[], dflt: T): T {
  if (v === undefined) return dflt;
  if (!(allowed as readonly string[]).includes(v)) fail(path, `invalid ${where} "${v}" (expected one of ${allowed.join(", ")})`);
  return v as T;
}

function fileIn(dir: string, p: string | undefined): string | undefined {
  return p === undefined || isAbsolute(p) ? p : join(dir, p);
}

function parseTls(path: string, raw: unknown): TlsServerSettings | undefined {
  const t = mapping(path, "tls_server_config", raw, [
    "cert",
    "key",
    "client_ca",
    "cert_file",
    "key_file",
    "client_auth_type",
    "client_ca_file",
    "client_allowed_sans",
    "min_version",
    "max_version",
    "cipher_suites",
    "prefer_server_cipher_suites",
    "curve_preferences",
  ]);
  const s = (k: string): string | undefined => optString(path, `tls_server_config.${k}`, t[k]);
  const dir = dirname(path);
  const versions = Object.keys(TLS_VERSIONS) as TlsVersionName[];
  const minVersion = oneOf(path, "tls_server_config.min_version", s("min_version"), versions, "TLS12");
  const maxVersion = oneOf(path, "tls_server_config.max_version", s("max_version"), versions, "TLS13");
  const cipherSuites = stringList(path, "tls_server_config.cipher_suites", t.cipher_suites) ?? [];
  for (const c of cipherSuites) if (!(c in CIPHER_SUITES)) fail(path, `unknown cipher: ${c}`);
  const curvePreferences = stringList(path, "tls_server_config.curve_preferences", t.curve_preferences) ?? [];
  for (const c of curvePreferences) if (!(c in CURVES)) fail(path, `unknown curve: ${c}`);
  let clientAuthText = s("client_auth_type");
  if (clientAuthText === "RequireClientCert") clientAuthText = "RequireAnyClientCert"; // kept by exporter-toolkit for compatibility
  const settings: TlsServerSettings = {
    cert: s("cert"),
    key: s("key"),
    clientCa: s("client_ca"),
    certFile: fileIn(dir, s("cert_file")),
    keyFile: fileIn(dir, s("key_file")),
    clientCaFile: fileIn(dir, s("client_ca_file")),
    clientAuth: oneOf(path, "tls_server_config.client_auth_type", clientAuthText, CLIENT_AUTH_TYPES, "NoClientCert"),
    clientAllowedSans: stringList(path, "tls_server_config.client_allowed_sans", t.client_allowed_sans),
    minVersion,
    maxVersion,
    cipherSuites,
    preferServerCipherSuites: optBool(path, "tls_server_config.prefer_server_cipher_suites", t.prefer_server_cipher_suites, true),
    curvePreferences,
  };
  const enabled = [settings.certFile, settings.cert, settings.keyFile, settings.key, settings.clientCaFile, settings.clientCa, clientAuthText].some(
    (x) => x !== undefined,
  );
  if (!enabled) return undefined;
  if (settings.certFile === undefined && settings.cert === undefined) fail(path, "tls_server_config: missing one of cert or cert_file");
  if (settings.keyFile === undefined && settings.key === undefined) fail(path, "tls_server_config: missing one of key or key_file");
  if ((settings.clientCaFile !== undefined || settings.clientCa !== undefined) && settings.clientAuth === "NoClientCert") {
    fail(path, "tls_server_config: client CA's have been configured without a Client Auth Policy");
  }
  if (settings.clientAllowedSans !== undefined && settings.clientAuth !== "RequireAnyClientCert" && settings.clientAuth !== "RequireAndVerifyClientCert") {
    fail(path, "tls_server_config: client_allowed_sans requires client_auth_type to be one of RequireAnyClientCert or RequireAndVerifyClientCert");
  }
  if (versions.indexOf(minVersion) > versions.indexOf(maxVersion))
    fail(path, `tls_server_config: min_version ${minVersion} is above max_version ${maxVersion}`);
  return settings;
}

function parseHeaders(path: string, raw: unknown): Record<string, string> {
  const h = mapping(path, "http_server_config.headers", raw, Object.keys(EXTRA_HEADERS));
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(h)) {
    const v = optString(path, `header ${name}`, value);
    if (v === undefined) continue;
    const allowed = EXTRA_HEADERS[name];
    if (allowed && !allowed.includes(v)) fail(path, `invalid value for ${name}: expected one of ${allowed.join(", ")}, got "${v}"`);
    out[name] = v;
  }
  return out;
}

function parseUsers(path: string, raw: unknown): Map<string, string> {
  const users = new Map<string, string>();
  if (raw === null || raw === undefined) return users;
  if (typeof raw !== "object" || Array.isArray(raw)) fail(path, "basic_auth_users must be a mapping of user: bcrypt hash");
  for (const [user, hash] of Object.entries(raw as Obj)) {
    if (typeof hash !== "string") fail(path, `basic_auth_users: the password of "${user}" must be a bcrypt hash string`);
    const m = BCRYPT_HASH.exec(hash);
    const cost = Number(m?.[1]);
    if (!m || cost < 4 || cost > 31)
      fail(path, `basic_auth_users: the password of "${user}" is not a bcrypt hash ($2a$, $2b$ or $2y$, cost 04..31, 60 characters)`);
    users.set(user, hash);
  }
  return users;
}

function parseRateLimit(path: string, raw: unknown): WebSettings["rateLimit"] {
  const r = mapping(path, "rate_limit", raw, ["interval", "burst"]);
  let intervalMs = 0;
  if (r.interval !== undefined && r.interval !== null) {
    const ms = typeof r.interval === "string" ? (r.interval.trim() === "0" ? 0 : parseDuration(r.interval)) : r.interval === 0 ? 0 : undefined;
    if (ms === undefined) fail(path, `rate_limit.interval: invalid duration ${JSON.stringify(r.interval)}`);
    intervalMs = ms;
  }
  let burst = 0;
  if (r.burst !== undefined && r.burst !== null) {
    if (typeof r.burst !== "number" || !Number.isInteger(r.burst) || r.burst < 0) fail(path, "rate_limit.burst must be a whole number >= 0");
    burst = r.burst;
  }
  return intervalMs > 0 ? { intervalMs, burst } : undefined;
}

/** Parses the text of a web config file; relative file names are taken from the file's directory, as exporter-toolkit does. */
export function parseWebConfig(text: string, path: string): WebSettings {
  let doc: unknown;
  try {
    // YAML 1.1, like the Go yaml.v2 that exporter-toolkit uses (yes/no are booleans there too).
    doc = parseYaml(text, { version: "1.1", uniqueKeys: true });
  } catch (err) {
    fail(path, `not valid YAML: ${(err instanceof Error ? err.message : String(err)).split("\n")[0] ?? ""}`);
  }
  const top = mapping(path, "top level", doc, ["tls_server_config", "http_server_config", "basic_auth_users", "rate_limit"]);
  const http = mapping(path, "http_server_config", top.http_server_config, ["http2", "headers"]);
  return {
    path,
    tls: parseTls(path, top.tls_server_config),
    http2: optBool(path, "http_server_config.http2", http.http2, true),
    headers: parseHeaders(path, http.headers),
    users: parseUsers(path, top.basic_auth_users),
    rateLimit: parseRateLimit(path, top.rate_limit),
  };
}
