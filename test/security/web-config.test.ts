/**
 * The web config file: parsed as strictly as exporter-toolkit parses it, checked completely at
 * start (certificates, key, bcrypt hashes), and a bad one stops the real agent with exit code 2 and
 * one line on stderr.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bcrypt from "bcryptjs";
import { beforeAll, describe, expect, it } from "vitest";
import { parseBasicAuth } from "../../agent/web/auth.js";
import { WebConfigError, parseWebConfig } from "../../agent/web/config.js";
import { RateLimiter } from "../../agent/web/rate-limit.js";
import { WebConfigSource, loadWebConfig } from "../../agent/web/source.js";
import { runAgent } from "../helpers/agent-process.js";
import { createCa, serverCert, type Issued, type Pki } from "./pki.js";

const HASH = "$2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze"; // exporter-toolkit's docs/web-config.yml

function file(text: string, name = "web.yml"): string {
  const p = join(mkdtempSync(join(tmpdir(), "rw-wc-")), name);
  writeFileSync(p, text);
  return p;
}

describe("parseWebConfig", () => {
  it("reads every field of exporter-toolkit's format, with its defaults", () => {
    const s = parseWebConfig(
      `
tls_server_config:
  cert_file: server.crt
  key_file: /etc/ringwatch/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.crt
  client_allowed_sans: [prometheus]
  min_version: TLS13
  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]
  prefer_server_cipher_suites: false
  curve_preferences: [X25519, CurveP256]
http_server_config:
  http2: false
  headers:
    X-Frame-Options: sameorigin
    Strict-Transport-Security: max-age=31536000
basic_auth_users:
  alice: ${HASH}
rate_limit:
  interval: 1s
  burst: 10
`,
      "/etc/ringwatch/web.yml",
    );
    expect(s.tls).toEqual({
      cert: undefined,
      key: undefined,
      clientCa: undefined,
      certFile: "/etc/ringwatch/server.crt", // relative to the file's directory, as exporter-toolkit does
      keyFile: "/etc/ringwatch/server.key",
      clientCaFile: "/etc/ringwatch/ca.crt",
      clientAuth: "RequireAndVerifyClientCert",
      clientAllowedSans: ["prometheus"],
      minVersion: "TLS13",
      maxVersion: "TLS13",
      cipherSuites: ["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"],
      preferServerCipherSuites: false,
      curvePreferences: ["X25519", "CurveP256"],
    });
    expect(s.http2).toBe(false);
    expect(s.headers).toEqual({ "X-Frame-Options": "sameorigin", "Strict-Transport-Security": "max-age=31536000" });
    expect([...s.users]).toEqual([["alice", HASH]]);
    expect(s.rateLimit).toEqual({ intervalMs: 1000, burst: 10 });

    const d = parseWebConfig(`tls_server_config:\n  cert_file: a\n  key_file: b\n`, "/x/web.yml");
    expect(d.tls).toMatchObject({ clientAuth: "NoClientCert", minVersion: "TLS12", maxVersion: "TLS13", preferServerCipherSuites: true, cipherSuites: [] });
    expect(d.http2).toBe(true);
    expect(d.users.size).toBe(0);
    expect(d.rateLimit).toBeUndefined();
  });

  it("treats an empty file, or a TLS section that sets nothing, as plain HTTP (like exporter-toolkit)", () => {
    expect(parseWebConfig("", "/w.yml")).toMatchObject({ tls: undefined, headers: {}, rateLimit: undefined });
    expect(parseWebConfig("tls_server_config:\n  min_version: TLS13\n", "/w.yml").tls).toBeUndefined();
    expect(parseWebConfig("basic_auth_users:\n", "/w.yml").users.size).toBe(0);
  });

  it.each([
    ["an unknown top-level key", "tls_config:\n  cert_file: a\n", /unknown field "tls_config"/],
    ["an unknown TLS key", "tls_server_config:\n  cert_file: a\n  key_file: b\n  certfile: c\n", /unknown field "certfile" in tls_server_config/],
    ["an unknown http_server_config key", "http_server_config:\n  http3: true\n", /unknown field "http3"/],
    ["a header that cannot be configured", "http_server_config:\n  headers:\n    X-Powered-By: me\n", /unknown field "X-Powered-By"/],
    [
      "a header value that is not allowed",
      "http_server_config:\n  headers:\n    X-Frame-Options: allow\n",
      /X-Frame-Options: expected one of deny, sameorigin/,
    ],
    ["a cert without a key", "tls_server_config:\n  cert_file: a\n", /missing one of key or key_file/],
    ["a key without a cert", "tls_server_config:\n  key_file: a\n", /missing one of cert or cert_file/],
    [
      "an unknown client_auth_type",
      "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: Always\n",
      /invalid tls_server_config.client_auth_type "Always"/,
    ],
    [
      "a client CA without a client auth policy",
      "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: c\n",
      /client CA's have been configured without a Client Auth Policy/,
    ],
    [
      "client_allowed_sans without a required certificate",
      "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: VerifyClientCertIfGiven\n  client_allowed_sans: [x]\n",
      /client_allowed_sans requires/,
    ],
    ["an unknown TLS version", "tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS14\n", /invalid tls_server_config.min_version "TLS14"/],
    [
      "min_version above max_version",
      "tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS13\n  max_version: TLS12\n",
      /min_version TLS13 is above max_version TLS12/,
    ],
    [
      "an unknown cipher",
      "tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [TLS_RSA_WITH_RC4_128_SHA]\n",
      /unknown cipher: TLS_RSA_WITH_RC4_128_SHA/,
    ],
    ["an unknown curve", "tls_server_config:\n  cert_file: a\n  key_file: b\n  curve_preferences: [P-256]\n", /unknown curve: P-256/],
    ["a password in clear", "basic_auth_users:\n  alice: hunter2\n", /password of "alice" is not a bcrypt hash/],
    ["a truncated hash", `basic_auth_users:\n  alice: "${HASH.slice(0, 50)}"\n`, /not a bcrypt hash/],
    ["a hash of cost 3", `basic_auth_users:\n  alice: "${HASH.replace("$10$", "$03$")}"\n`, /not a bcrypt hash/],
    ["users as a list", "basic_auth_users:\n  - alice\n", /basic_auth_users must be a mapping/],
    ["a number as a path", "tls_server_config:\n  cert_file: 12\n  key_file: b\n", /cert_file must be a string/],
    ["a bad rate limit", "rate_limit:\n  interval: soon\n", /rate_limit.interval: invalid duration/],
    ["a duplicate key", "basic_auth_users:\n  a: x\n  a: y\n", /not valid YAML: Map keys must be unique/],
    ["a list at the top", "- a\n", /top level must be a mapping/],
  ])("rejects %s", (_what, text, want) => {
    expect(() => parseWebConfig(text, "/w.yml")).toThrow(WebConfigError);
    expect(() => parseWebConfig(text, "/w.yml")).toThrow(want);
  });

  it("error messages are one line and name the file", () => {
    try {
      parseWebConfig("tls_server_config: [\n", "/etc/w.yml");
      expect.unreachable();
    } catch (err) {
      expect((err as Error).message).toMatch(/^web config file \/etc\/w\.yml: not valid YAML/);
      expect((err as Error).message).not.toContain("\n");
    }
  });
});

describe("loadWebConfig (reads the certificates)", () => {
  let pki: Pki;
  let server: Issued;
  let other: Issued;
  beforeAll(() => {
    pki = createCa("load-ca");
    server = serverCert(pki);
    other = serverCert(pki, "other", "other");
  });

  it("loads a good TLS config, relative file names from the config file's directory", () => {
    const loaded = loadWebConfig(file(`tls_server_config:\n  cert_file: ${server.cert}\n  key_file: ${server.key}\n`));
    expect(loaded.tls?.requestCert).toBe(false);
    expect(loaded.tls?.files).toEqual([server.cert, server.key]);
    const relative = loadWebConfig(fileIn(pki.dir, "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"));
    expect(relative.tls?.files).toEqual([join(pki.dir, "server.crt"), join(pki.dir, "server.key")]);
  });

  it("takes inline PEM (cert, key, client_ca) as well", () => {
    const indent = (pem: string): string =>
      pem
        .trim()
        .split("\n")
        .map((l) => `    ${l}`)
        .join("\n");
    const text = `tls_server_config:\n  cert: |\n${indent(readFileSync(server.cert, "utf8"))}\n  key: |\n${indent(readFileSync(server.key, "utf8"))}\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca: |\n${indent(readFileSync(pki.caCert, "utf8"))}\n`;
    const loaded = loadWebConfig(file(text));
    expect(loaded.tls?.files).toEqual([]);
    expect(loaded.tls?.context.cert).toContain("BEGIN CERTIFICATE");
    expect(loaded.tls?.context.ca).toContain("BEGIN CERTIFICATE");
    expect(loaded.tls).toMatchObject({ requestCert: true, rejectUnauthorized: true });
    const mismatched = text.replace(indent(readFileSync(server.key, "utf8")), indent(readFileSync(other.key, "utf8")));
    expect(() => loadWebConfig(file(mismatched))).toThrow(/\(cert, key\): .*key values mismatch/);
  });

  it.each([
    ["a missing web config file", () => "/nonexistent/web.yml", /cannot read web config file \/nonexistent\/web.yml: ENOENT/],
    [
      "a missing cert file",
      () => file(`tls_server_config:\n  cert_file: /nonexistent/tls.crt\n  key_file: /nonexistent/tls.key\n`),
      /failed to read cert_file \(\/nonexistent\/tls.crt\): ENOENT/,
    ],
    [
      "a key that does not match the certificate",
      () => file(`tls_server_config:\n  cert_file: ${server.cert}\n  key_file: ${other.key}\n`),
      /failed to load the TLS certificate and key .*key values mismatch/,
    ],
    [
      "a key file that is no key",
      () => file(`tls_server_config:\n  cert_file: ${server.cert}\n  key_file: ${server.cert}\n`),
      /failed to load the TLS certificate and key/,
    ],
  ])("rejects %s", (_what, path, want) => {
    expect(() => loadWebConfig(path())).toThrow(want);
  });
});

function fileIn(dir: string, text: string): string {
  const p = join(dir, "web-rel.yml");
  writeFileSync(p, text);
  return p;
}

describe("a bad web config at start: exit 2, one line on stderr", () => {
  let pki: Pki;
  let server: Issued;
  beforeAll(() => {
    pki = createCa("exit-ca");
    server = serverCert(pki);
  });

  it.each([
    ["a missing file", () => "/nonexistent/web.yml", /^ringwatch: cannot read web config file \/nonexistent\/web.yml: ENOENT$/],
    ["invalid YAML", () => file("tls_server_config: [\n"), /^ringwatch: web config file .*: not valid YAML/],
    ["an unknown key", () => file("basic_auth:\n  a: b\n"), /^ringwatch: web config file .*: unknown field "basic_auth"$/],
    [
      "an unreadable certificate",
      () => file(`tls_server_config:\n  cert_file: /nonexistent/tls.crt\n  key_file: ${server.key}\n`),
      /failed to read cert_file \(\/nonexistent\/tls.crt\): ENOENT$/,
    ],
    [
      "an unreadable key",
      () => file(`tls_server_config:\n  cert_file: ${server.cert}\n  key_file: /nonexistent/tls.key\n`),
      /failed to read key_file \(\/nonexistent\/tls.key\): ENOENT$/,
    ],
    [
      "a bad bcrypt hash",
      () => file(`basic_auth_users:\n  prometheus: "${bcrypt.hashSync("x", 4).slice(0, 40)}"\n`),
      /password of "prometheus" is not a bcrypt hash/,
    ],
  ])("%s", async (_what, path, want) => {
    const t0 = Date.now();
    const r = await runAgent([`--web.config.file=${path()}`, "--web.listen-address=127.0.0.1:0", "--no-collector.gpu", "--no-collector.nccl"], {}, 10_000);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    const lines = r.stderr.split("\n").filter((l) => l !== "");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(want);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it("takes the file from the environment and from --config.file too", async () => {
    const bad = file("nope: 1\n");
    const viaEnv = await runAgent(["--web.listen-address=127.0.0.1:0"], { RINGWATCH_WEB_CONFIG_FILE: bad });
    expect(viaEnv.code).toBe(2);
    expect(viaEnv.stderr).toMatch(/unknown field "nope"/);
    const viaYaml = await runAgent(["--web.listen-address=127.0.0.1:0", `--config.file=${file(`web:\n  config:\n    file: ${bad}\n`, "ringwatch.yml")}`]);
    expect(viaYaml.code).toBe(2);
    expect(viaYaml.stderr).toMatch(/unknown field "nope"/);
  });
});

describe("parseBasicAuth", () => {
  it.each([
    ["Basic " + Buffer.from("alice:pa:ss").toString("base64"), { user: "alice", password: "pa:ss" }],
    ["basic " + Buffer.from("bob:").toString("base64"), { user: "bob", password: "" }],
    ["BASIC " + Buffer.from("ünï:cødé").toString("base64"), { user: "ünï", password: "cødé" }],
    ["Basic " + Buffer.from("nocolon").toString("base64"), undefined],
    ["Bearer abc", undefined],
    ["Basic", undefined],
    [undefined, undefined],
  ])("%j", (header, want) => expect(parseBasicAuth(header)).toEqual(want));
});

describe("RateLimiter (rate_limit)", () => {
  it("allows a burst, then one request per interval", () => {
    let now = 0;
    const r = new RateLimiter(1000, 2, () => now);
    expect([r.allow(), r.allow(), r.allow()]).toEqual([true, true, false]);
    now = 999;
    expect(r.allow()).toBe(false);
    now = 1000;
    expect(r.allow()).toBe(true);
    expect(r.allow()).toBe(false);
    now = 60_000; // a long pause refills only up to the burst
    expect([r.allow(), r.allow(), r.allow()]).toEqual([true, true, false]);
  });

  it("burst 0 allows nothing, as Go's rate.Limiter", () => {
    const r = new RateLimiter(1000, 0, () => 5000);
    expect(r.allow()).toBe(false);
  });
});

describe("the web config re-read while it is written", () => {
  const users = `basic_auth_users:\n  prometheus: ${HASH}\n`;
  const quiet = { info: () => undefined, error: () => undefined } as unknown as import("pino").Logger;

  it("a file truncated and not yet written keeps the last config (basic auth stays on), and the finished file is read", () => {
    const path = file(users);
    const results: string[] = [];
    const source = new WebConfigSource(path, loadWebConfig(path), quiet, (r) => results.push(r));
    const first = source.current();
    expect(first.auth.enabled).toBe(true);
    writeFileSync(path, ""); // an editor or tool that truncates, then writes
    expect(source.current()).toBe(first);
    expect(source.current().auth.enabled).toBe(true);
    expect(results).toEqual([]);
    writeFileSync(path, `${users}http_server_config:\n  headers:\n    X-Frame-Options: deny\n`);
    const next = source.current();
    expect(next.auth.enabled).toBe(true);
    expect(next.settings?.headers).toEqual({ "X-Frame-Options": "deny" });
    expect(results).toEqual(["success"]);
  });
});
