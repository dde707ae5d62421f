/**
 * basic_auth_users, http_server_config.headers and rate_limit of --web.config.file, against the real
 * built agent over real HTTP(S). Needs `npm run build` first.
 */
import { copyFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import bcrypt from "bcryptjs";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { sample, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { curl, httpsGet } from "./clients.js";
import { createCa, serverCert, type Issued, type Pki } from "./pki.js";

const NO_COLLECTORS = ["--collector.disable-defaults"];

let running: RunningAgent | undefined;
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

function webConfig(yaml: string): string {
  const p = join(mkdtempSync(join(tmpdir(), "rw-auth-")), "web.yml");
  writeFileSync(p, yaml);
  return p;
}

async function start(yaml: string): Promise<RunningAgent> {
  running = await startAgent([...NO_COLLECTORS, `--web.config.file=${webConfig(yaml)}`]);
  return running;
}

/** start(), with bcryptjs instrumented in the agent (count-bcrypt.mjs). */
async function startCounted(yaml: string): Promise<RunningAgent> {
  running = await startAgent([...NO_COLLECTORS, `--web.config.file=${webConfig(yaml)}`], COUNT_BCRYPT);
  return running;
}

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
}

async function get(a: RunningAgent, path: string, authorization?: string): Promise<Response> {
  return fetch(`${a.url}${path}`, { headers: authorization ? { authorization } : {} });
}

/** Preloaded into the agent: one stderr line per bcrypt.compare it makes, with the hash's cost. */
const COUNT_BCRYPT = { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import=${pathToFileURL(join(import.meta.dirname, "count-bcrypt.mjs")).href}`.trim() };

/** The costs of the hashes of every bcrypt.compare the agent has made so far, in order. */
function bcryptRuns(a: RunningAgent): string[] {
  return [...a.stderr().matchAll(/^bcrypt\.compare cost=(\d+)$/gm)].map((m) => m[1] ?? "");
}

// Cost 4 keeps most tests fast; the cache and timing tests use a costly hash on purpose.
const CHEAP = bcrypt.hashSync("s3cret", 4);

describe("basic auth (basic_auth_users)", () => {
  it("guards every path: 200 with the right password; 401 and WWW-Authenticate: Basic for a wrong one, an unknown user or no header", async () => {
    const a = await start(`basic_auth_users:\n  prometheus: "${CHEAP}"\n  other: "${bcrypt.hashSync("other-pw", 4)}"\n`);
    expect(JSON.parse(a.logs().find((l) => l.includes('"ringwatch listening"')) ?? "{}")).toMatchObject({ tls: false, basic_auth: true });

    const ok = await get(a, "/metrics", basic("prometheus", "s3cret"));
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("ringwatch_build_info{");
    expect((await get(a, "/metrics", basic("other", "other-pw"))).status).toBe(200);

    for (const path of ["/metrics", "/healthz", "/", "/no-such-page"]) {
      for (const authorization of [
        basic("prometheus", "wrong"),
        basic("nobody", "s3cret"),
        basic("other", "s3cret"),
        undefined,
        "Bearer abc",
        "Basic !!notbase64",
        basic("prometheus", ""),
      ]) {
        const r = await get(a, path, authorization);
        expect(r.status, `${path} with ${authorization ?? "no header"}`).toBe(401);
        expect(r.headers.get("www-authenticate")).toBe("Basic");
        expect(await r.text()).toBe("Unauthorized\n");
      }
    }
    expect((await get(a, "/healthz", basic("prometheus", "s3cret"))).status).toBe(200);
    expect((await get(a, "/no-such-page", basic("prometheus", "s3cret"))).status).toBe(404);
    // The scheme is case-insensitive, as in Go's net/http.
    expect((await get(a, "/healthz", basic("prometheus", "s3cret").replace("Basic", "basic"))).status).toBe(200);

    const c = await curl(`${a.url}/metrics`, ["-u", "prometheus:s3cret"]);
    expect(c.status).toBe(200);
    expect((await curl(`${a.url}/metrics`, ["-u", "prometheus:nope"])).status).toBe(401);
  });

  // These were timing ratios; they now count the bcrypt runs the agent makes (its bcryptjs is
  // instrumented by count-bcrypt.mjs), which is what the timings stood for.
  it("caches every result: the same right or wrong password sent again runs no bcrypt", async () => {
    const a = await startCounted(`basic_auth_users:\n  prometheus: "${bcrypt.hashSync("s3cret", 11)}"\n`);
    expect(bcryptRuns(a)).toEqual([]);
    expect((await get(a, "/healthz", basic("prometheus", "s3cret"))).status).toBe(200);
    expect(bcryptRuns(a)).toEqual(["11"]);
    expect((await get(a, "/healthz", basic("prometheus", "wrong"))).status).toBe(401);
    expect(bcryptRuns(a)).toEqual(["11", "11"]);
    expect((await get(a, "/healthz", basic("prometheus", "wrong"))).status).toBe(401); // answered from the cache, still 401
    expect(bcryptRuns(a)).toEqual(["11", "11"]);
    expect((await get(a, "/healthz", basic("prometheus", "wrong too"))).status).toBe(401); // a new password is checked
    expect(bcryptRuns(a)).toEqual(["11", "11", "11"]);
    for (let i = 0; i < 20; i++) expect((await get(a, "/healthz", basic("prometheus", "s3cret"))).status).toBe(200);
    // Without the cache these 20 would be 20 more bcrypt runs.
    expect(bcryptRuns(a)).toEqual(["11", "11", "11"]);
  });

  it("an unknown user costs one bcrypt at the configured users' cost, as a known user's wrong password does, and is cached alike", async () => {
    const a = await startCounted(
      `basic_auth_users:\n  prometheus: "${bcrypt.hashSync("s3cret", 11)}"\n  grafana: "${bcrypt.hashSync("other-pw", 11)}"\n  quick: "${CHEAP}"\n  slow: "${bcrypt.hashSync("slow-pw", 12)}"\n`,
    );
    for (let i = 0; i < 3; i++) {
      expect((await get(a, "/healthz", basic("prometheus", `wrong${i}`))).status).toBe(401);
      expect((await get(a, "/healthz", basic(`nobody${i}`, `wrong${i}`))).status).toBe(401);
    }
    // Without a decoy check, an unknown user would be answered without any bcrypt run; checked
    // against the cheap hash, faster than a known user: either way timing would tell users apart.
    // The decoy has the cost most users have (11), not the highest (12) or the lowest (04).
    expect(bcryptRuns(a)).toEqual(["11", "11", "11", "11", "11", "11"]);
    expect((await get(a, "/healthz", basic("nobody0", "wrong0"))).status).toBe(401);
    expect((await get(a, "/healthz", basic("prometheus", "wrong0"))).status).toBe(401);
    expect(bcryptRuns(a)).toHaveLength(6); // both answered from the cache
    expect((await get(a, "/healthz", basic("quick", "wrong"))).status).toBe(401);
    expect(bcryptRuns(a).at(-1)).toBe("04"); // a known user is checked against its own hash
  });
});

describe("http_server_config.headers and rate_limit", () => {
  it("sends the configured headers on every response, 401s included", async () => {
    const a = await start(
      `basic_auth_users:\n  prometheus: "${CHEAP}"\nhttp_server_config:\n  http2: false\n  headers:\n    X-Content-Type-Options: nosniff\n    X-Frame-Options: deny\n    Content-Security-Policy: "default-src 'none'"\n`,
    );
    for (const r of [await get(a, "/metrics", basic("prometheus", "s3cret")), await get(a, "/metrics")]) {
      expect(r.headers.get("x-content-type-options")).toBe("nosniff");
      expect(r.headers.get("x-frame-options")).toBe("deny");
      expect(r.headers.get("content-security-policy")).toBe("default-src 'none'");
    }
  });

  it("answers 429 beyond the rate limit's burst", async () => {
    const a = await start(`rate_limit:\n  interval: 1m\n  burst: 3\n`);
    const codes: number[] = [];
    for (let i = 0; i < 5; i++) codes.push((await get(a, "/healthz")).status);
    expect(codes).toEqual([200, 200, 200, 429, 429]);
  });
});

describe("basic auth over TLS", () => {
  let pki: Pki;
  let server: Issued;
  beforeAll(() => {
    pki = createCa("auth-ca");
    server = serverCert(pki);
  });

  it("asks for the password inside the TLS connection", async () => {
    const a = await start(`tls_server_config:\n  cert_file: ${server.cert}\n  key_file: ${server.key}\nbasic_auth_users:\n  prometheus: "${CHEAP}"\n`);
    const denied = await httpsGet(a.port, "/metrics", { ca: pki.caCert });
    expect(denied.status).toBe(401);
    expect(denied.headers["www-authenticate"]).toBe("Basic");
    const ok = await httpsGet(a.port, "/metrics", { ca: pki.caCert, auth: { user: "prometheus", password: "s3cret" } });
    expect(ok.status).toBe(200);
    expect(sample(ok.body, 'ringwatch_web_config_reloads_total{result="failure"}')).toBe(0);
    const c = await curl(`https://127.0.0.1:${a.port}/metrics`, ["--cacert", pki.caCert, "-u", "prometheus:s3cret"]);
    expect(c.status).toBe(200);
  });

  it("keeps the cache when the certificate rotates or the file changes otherwise; a user whose hash changed is checked anew", async () => {
    // The agent reads copies, so that the test can rewrite them.
    const live = mkdtempSync(join(tmpdir(), "rw-auth-live-"));
    copyFileSync(server.cert, join(live, "tls.crt"));
    copyFileSync(server.key, join(live, "tls.key"));
    const config = join(live, "web.yml");
    const yaml = (hash: string, extra = ""): string =>
      `tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\nbasic_auth_users:\n  prometheus: "${hash}"\n${extra}`;
    const hash = bcrypt.hashSync("s3cret", 11);
    writeFileSync(config, yaml(hash));
    const a = await startAgent([...NO_COLLECTORS, `--web.config.file=${config}`], COUNT_BCRYPT);
    running = a;
    const scrape = (password: string): ReturnType<typeof httpsGet> => httpsGet(a.port, "/metrics", { ca: pki.caCert, auth: { user: "prometheus", password } });
    const first = await scrape("s3cret");
    expect(first.status).toBe(200);
    expect((await scrape("n3w")).status).toBe(401); // a wrong password for now, cached as such
    expect(bcryptRuns(a)).toEqual(["11", "11"]);

    const rotated = serverCert(pki, "server-auth-rotated");
    copyFileSync(rotated.cert, join(live, "tls.crt"));
    copyFileSync(rotated.key, join(live, "tls.key"));
    const afterRotation = await scrape("s3cret");
    expect(afterRotation.serverSerial).not.toBe(first.serverSerial); // the new certificate is in use
    expect(afterRotation.status).toBe(200);
    writeFileSync(config, yaml(hash, "http_server_config:\n  headers:\n    X-Frame-Options: deny\n"));
    const afterEdit = await scrape("s3cret");
    expect(afterEdit.headers["x-frame-options"]).toBe("deny"); // the edit is in force
    expect(afterEdit.status).toBe(200);
    expect((await scrape("n3w")).status).toBe(401);
    expect(bcryptRuns(a)).toEqual(["11", "11"]); // two reloads, and every answer from the cache

    // A new password: the failure cached for it under the old hash does not refuse it.
    writeFileSync(config, yaml(bcrypt.hashSync("n3w", 10), "http_server_config:\n  headers:\n    X-Frame-Options: deny\n"));
    const changed = await scrape("n3w");
    expect(changed.status).toBe(200);
    expect((await scrape("s3cret")).status).toBe(401);
    expect(bcryptRuns(a)).toEqual(["11", "11", "10", "10"]);
    expect(sample(changed.body, 'ringwatch_web_config_reloads_total{result="success"}')).toBe(3);
  });
});
