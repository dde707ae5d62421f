/**
 * --web.config.file TLS, end to end: the real built agent, certificates made by the real openssl,
 * and real clients (node:https, curl, openssl s_client). Needs `npm run build` first.
 */
import { X509Certificate } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { eventually, sample, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { curl, httpsGet, runTool } from "./clients.js";
import { clientCert, createCa, issue, serverCert, type Issued, type Pki } from "./pki.js";

/** Only the HTTP side matters here: no collector runs. */
const NO_COLLECTORS = ["--collector.disable-defaults"];

let pki: Pki;
let other: Pki;
let server: Issued;
let client: Issued;
let strangerClient: Issued;
let dir: string;
let running: RunningAgent | undefined;

beforeAll(() => {
  pki = createCa("ca");
  other = createCa("other-ca");
  server = serverCert(pki);
  client = clientCert(pki);
  strangerClient = clientCert(other, "stranger", "prometheus");
});

afterEach(async () => {
  await running?.stop();
  running = undefined;
});

function webConfig(yaml: string): string {
  dir = mkdtempSync(join(tmpdir(), "rw-webcfg-"));
  const p = join(dir, "web.yml");
  writeFileSync(p, yaml);
  return p;
}

function tlsYaml(extra = ""): string {
  return `tls_server_config:\n  cert_file: ${server.cert}\n  key_file: ${server.key}\n${extra}`;
}

async function start(yaml: string): Promise<RunningAgent> {
  running = await startAgent([...NO_COLLECTORS, `--web.config.file=${webConfig(yaml)}`]);
  return running;
}

const norm = (serial: string): string => serial.replace(/^0+/, "").toUpperCase();
const serialOf = (pemPath: string): string => norm(new X509Certificate(readFileSync(pemPath)).serialNumber);

describe("TLS (tls_server_config)", () => {
  it("serves every path over TLS to node:https and curl when they trust the CA", async () => {
    const a = await start(tlsYaml());
    const listening = a.logs().find((l) => l.includes('"ringwatch listening"')) ?? "";
    expect(JSON.parse(listening)).toMatchObject({ tls: true, basic_auth: false });

    const r = await httpsGet(a.port, "/metrics", { ca: pki.caCert });
    expect(r.status).toBe(200);
    expect(sample(r.body, 'ringwatch_config_reloads_total{result="success"}')).toBe(0);
    expect(r.body).toContain("ringwatch_build_info{");
    expect(r.protocol).toBe("TLSv1.3");
    expect(norm(r.serverSerial)).toBe(serialOf(server.cert));
    expect((await httpsGet(a.port, "/healthz", { ca: pki.caCert })).body).toBe("ok\n");

    const c = await curl(`https://127.0.0.1:${a.port}/metrics`, ["--cacert", pki.caCert]);
    expect(c.code).toBe(0);
    expect(c.status).toBe(200);
    expect(c.stdout).toContain("ringwatch_build_info{");
    const byName = await curl(`https://localhost:${a.port}/healthz`, ["--cacert", pki.caCert]);
    expect(byName.status).toBe(200);
  });

  it("refuses plain HTTP on the TLS port, and clients that trust another CA refuse the server", async () => {
    const a = await start(tlsYaml());
    await expect(fetch(`http://127.0.0.1:${a.port}/metrics`)).rejects.toThrow();
    const plainCurl = await curl(`http://127.0.0.1:${a.port}/metrics`);
    expect(plainCurl.status).toBeUndefined();
    expect(plainCurl.code).not.toBe(0);

    await expect(httpsGet(a.port, "/metrics", { ca: other.caCert })).rejects.toThrow(/certificate/i);
    await expect(httpsGet(a.port, "/metrics")).rejects.toThrow(/certificate/i); // system roots only
    const wrongCa = await curl(`https://127.0.0.1:${a.port}/metrics`, ["--cacert", other.caCert]);
    expect(wrongCa.code).toBe(60); // curl: peer certificate cannot be authenticated with given CA certificates
    // The agent is still fine after the failed handshakes.
    expect((await httpsGet(a.port, "/healthz", { ca: pki.caCert })).status).toBe(200);
  });

  it("min_version TLS13 refuses a TLS 1.2-only client that the default (TLS12) accepts", async () => {
    let a = await start(tlsYaml());
    const old = await curl(`https://127.0.0.1:${a.port}/healthz`, ["--cacert", pki.caCert, "--tls-max", "1.2"]);
    expect(old.status).toBe(200);
    const s12 = await runTool("openssl", ["s_client", "-connect", `127.0.0.1:${a.port}`, "-tls1_2", "-CAfile", pki.caCert]);
    expect(s12.code).toBe(0);
    expect(s12.stdout).toMatch(/Protocol\s*:\s*TLSv1\.2/);
    await a.stop();

    a = await start(tlsYaml("  min_version: TLS13\n"));
    const refused = await curl(`https://127.0.0.1:${a.port}/healthz`, ["--cacert", pki.caCert, "--tls-max", "1.2"]);
    expect(refused.status).toBeUndefined();
    expect(refused.code).toBe(35); // curl: SSL connect error
    const s12refused = await runTool("openssl", ["s_client", "-connect", `127.0.0.1:${a.port}`, "-tls1_2", "-CAfile", pki.caCert]);
    expect(s12refused.code).not.toBe(0);
    const modern = await curl(`https://127.0.0.1:${a.port}/healthz`, ["--cacert", pki.caCert]);
    expect(modern.status).toBe(200);
  });

  it("max_version TLS12 and cipher_suites are applied", async () => {
    const a = await start(tlsYaml("  max_version: TLS12\n  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384]\n"));
    const r = await httpsGet(a.port, "/healthz", { ca: pki.caCert });
    expect(r.status).toBe(200);
    expect(r.protocol).toBe("TLSv1.2");
    const s = await runTool("openssl", ["s_client", "-connect", `127.0.0.1:${a.port}`, "-CAfile", pki.caCert]);
    expect(s.stdout).toMatch(/Cipher\s*(is|:)\s*ECDHE-ECDSA-AES256-GCM-SHA384/);
    const other128 = await runTool("openssl", [
      "s_client",
      "-connect",
      `127.0.0.1:${a.port}`,
      "-CAfile",
      pki.caCert,
      "-cipher",
      "ECDHE-ECDSA-AES128-GCM-SHA256",
    ]);
    expect(other128.code).not.toBe(0);
  });

  it("RequireAndVerifyClientCert: no client certificate fails, one of another CA fails, the CA's works", async () => {
    const a = await start(tlsYaml(`  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ${pki.caCert}\n`));
    await expect(httpsGet(a.port, "/metrics", { ca: pki.caCert })).rejects.toThrow();
    await expect(httpsGet(a.port, "/metrics", { ca: pki.caCert, cert: strangerClient.cert, key: strangerClient.key })).rejects.toThrow();
    const ok = await httpsGet(a.port, "/metrics", { ca: pki.caCert, cert: client.cert, key: client.key });
    expect(ok.status).toBe(200);
    expect(ok.body).toContain("ringwatch_build_info{");

    const noCert = await curl(`https://127.0.0.1:${a.port}/metrics`, ["--cacert", pki.caCert]);
    expect(noCert.status).toBeUndefined();
    const withCert = await curl(`https://127.0.0.1:${a.port}/metrics`, ["--cacert", pki.caCert, "--cert", client.cert, "--key", client.key]);
    expect(withCert.status).toBe(200);
  });

  it("VerifyClientCertIfGiven lets a client without a certificate in but not one with an unverifiable certificate", async () => {
    const a = await start(tlsYaml(`  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: ${pki.caCert}\n`));
    expect((await httpsGet(a.port, "/healthz", { ca: pki.caCert })).status).toBe(200);
    expect((await httpsGet(a.port, "/healthz", { ca: pki.caCert, cert: client.cert, key: client.key })).status).toBe(200);
    await expect(httpsGet(a.port, "/healthz", { ca: pki.caCert, cert: strangerClient.cert, key: strangerClient.key })).rejects.toThrow();
  });

  it("RequireAnyClientCert wants a certificate but does not verify it; client_allowed_sans checks its SANs", async () => {
    let a = await start(tlsYaml("  client_auth_type: RequireAnyClientCert\n"));
    await expect(httpsGet(a.port, "/healthz", { ca: pki.caCert })).rejects.toThrow();
    expect((await httpsGet(a.port, "/healthz", { ca: pki.caCert, cert: strangerClient.cert, key: strangerClient.key })).status).toBe(200);
    await a.stop();

    const intruder = issue(pki, "intruder", { cn: "intruder", san: "DNS:intruder", usage: "clientAuth" });
    a = await start(
      tlsYaml(
        `  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ${pki.caCert}\n  client_allowed_sans: [prometheus, "spiffe://cluster/ns/monitoring"]\n`,
      ),
    );
    expect((await httpsGet(a.port, "/healthz", { ca: pki.caCert, cert: client.cert, key: client.key })).status).toBe(200);
    await expect(httpsGet(a.port, "/healthz", { ca: pki.caCert, cert: intruder.cert, key: intruder.key })).rejects.toThrow();
  });

  it("a client_auth_type changed in the file applies from the next connection on", async () => {
    const a = await start(tlsYaml());
    expect((await httpsGet(a.port, "/healthz", { ca: pki.caCert })).status).toBe(200);
    writeFileSync(join(dir, "web.yml"), tlsYaml(`  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ${pki.caCert}\n`));
    await expect(httpsGet(a.port, "/healthz", { ca: pki.caCert })).rejects.toThrow();
    expect((await httpsGet(a.port, "/healthz", { ca: pki.caCert, cert: client.cert, key: client.key })).status).toBe(200);
    writeFileSync(join(dir, "web.yml"), tlsYaml());
    expect((await httpsGet(a.port, "/healthz", { ca: pki.caCert })).status).toBe(200);
  });

  it("serves a certificate rotated on disk from the next connection on, and keeps the last good one when the new files are broken", async () => {
    // The agent reads copies, so that the test can rewrite them.
    const liveDir = mkdtempSync(join(tmpdir(), "rw-live-"));
    const certPath = join(liveDir, "tls.crt");
    const keyPath = join(liveDir, "tls.key");
    copyFileSync(server.cert, certPath);
    copyFileSync(server.key, keyPath);
    const a = await start(`tls_server_config:\n  cert_file: ${certPath}\n  key_file: ${keyPath}\n`);
    const first = await httpsGet(a.port, "/healthz", { ca: pki.caCert });
    expect(norm(first.serverSerial)).toBe(serialOf(server.cert));

    const rotated = serverCert(pki, "server-rotated", "localhost");
    expect(serialOf(rotated.cert)).not.toBe(serialOf(server.cert));
    copyFileSync(rotated.cert, certPath);
    copyFileSync(rotated.key, keyPath);
    const second = await httpsGet(a.port, "/healthz", { ca: pki.caCert });
    expect(norm(second.serverSerial)).toBe(serialOf(rotated.cert));
    expect(a.logs().some((l) => l.includes('"web config reloaded"'))).toBe(true);

    writeFileSync(certPath, "-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n");
    const third = await httpsGet(a.port, "/metrics", { ca: pki.caCert });
    expect(norm(third.serverSerial)).toBe(serialOf(rotated.cert));
    expect(sample(third.body, 'ringwatch_web_config_reloads_total{result="failure"}')).toBe(1);
    expect(sample(third.body, 'ringwatch_web_config_reloads_total{result="success"}')).toBe(1);
    const errors = a.logs().filter((l) => l.includes('"web config reload failed; keeping the previous web config"'));
    expect(errors).toHaveLength(1); // once per change, not once per connection
    expect(errors[0]).toContain(certPath);
    await httpsGet(a.port, "/healthz", { ca: pki.caCert });
    expect(a.logs().filter((l) => l.includes("web config reload failed"))).toHaveLength(1);

    // Fixed again: picked up without a restart.
    copyFileSync(server.cert, certPath);
    copyFileSync(server.key, keyPath);
    const fourth = await eventually(async () => {
      const r = await httpsGet(a.port, "/healthz", { ca: pki.caCert });
      return norm(r.serverSerial) === serialOf(server.cert) ? r : undefined;
    }, 5000);
    expect(fourth.status).toBe(200);
  });
});
