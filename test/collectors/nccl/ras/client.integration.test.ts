/**
 * The RAS client against a real process speaking NCCL's RAS protocol (test/fakes/nccl-ras) that
 * replays the real ncclras capture 97, and against what can go wrong on the socket.
 */
import { describe, expect, it } from "vitest";
import { parseRasAddress, queryRas, type RasQueryOptions } from "../../../../collectors/nccl/ras/client.js";
import { readCapture } from "../../../helpers/fixtures.js";
import { closedPort, rasServices, type RasService } from "../../../helpers/ras-service.js";

const REPORT_97 = readCapture("nccl/97-hang-ras-mismatch-allgather-640-vs-641.log");
const service = rasServices();

const opts = (port: number, o: Partial<RasQueryOptions> = {}): RasQueryOptions => ({
  host: "127.0.0.1",
  port,
  legTimeoutSeconds: 5,
  deadlineMs: 5000,
  maxBytes: 1 << 20,
  ...o,
});

async function commandsOf(s: RasService, n: number): Promise<string[]> {
  for (let i = 0; i < 100 && s.commands().length < n; i++) await new Promise((r) => setTimeout(r, 20));
  return s.commands();
}

describe("queryRas", () => {
  it("speaks protocol 2 and returns the report byte for byte (capture 97)", async () => {
    const s = await service(REPORT_97);
    const r = await queryRas(opts(s.port, { legTimeoutSeconds: 7 }));
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.text).toBe(REPORT_97);
    expect(await commandsOf(s, 3)).toEqual(["CLIENT PROTOCOL 2", "TIMEOUT 7", "STATUS"]);
    expect(s.connections()).toBe(1);
  });

  it("reads replies that arrive one byte at a time and end in CRLF", async () => {
    const s = await service(REPORT_97.slice(0, 600), "trickle");
    const r = await queryRas(opts(s.port));
    expect(r).toMatchObject({ ok: true, text: REPORT_97.slice(0, 600) });
  });

  it("nothing listening is 'unreachable', quickly", async () => {
    const r = await queryRas(opts(await closedPort()));
    expect(r).toMatchObject({ ok: false, result: "unreachable" });
    if (!r.ok) expect(r.reason).toContain("ECONNREFUSED");
    expect(r.ms).toBeLessThan(2000);
  });

  it("a service that never sends the report is a 'timeout' at the deadline", async () => {
    const s = await service(REPORT_97, "silent");
    const r = await queryRas(opts(s.port, { deadlineMs: 400 }));
    expect(r).toMatchObject({ ok: false, result: "timeout" });
    if (!r.ok) expect(r.reason).toContain("at status");
    expect(r.ms).toBeGreaterThanOrEqual(390);
  });

  it("another service on the port is an error that says so", async () => {
    const s = await service(REPORT_97, "not-ras");
    const r = await queryRas(opts(s.port));
    expect(r).toMatchObject({ ok: false, result: "error" });
    if (!r.ok) expect(r.reason).toContain('not an NCCL RAS service: it answered "HTTP/1.1 400 Bad Request"');
  });

  it("a refused TIMEOUT and a connection closed during the handshake are errors", async () => {
    const refused = await queryRas(opts((await service(REPORT_97, "refuse-timeout")).port, { legTimeoutSeconds: 3 }));
    expect(refused).toMatchObject({ ok: false, result: "error" });
    if (!refused.ok) expect(refused.reason).toBe('the RAS service refused TIMEOUT 3: "ERROR: Invalid timeout value 3"');
    const closed = await queryRas(opts((await service(REPORT_97, "close-early")).port));
    expect(closed).toMatchObject({ ok: false, result: "error", reason: "the RAS service closed the connection at protocol" });
  });

  it("an answer over the size cap is an error, not a cut report", async () => {
    const s = await service(REPORT_97);
    const r = await queryRas(opts(s.port, { maxBytes: 200 }));
    expect(r).toMatchObject({ ok: false, result: "error", reason: "the RAS report is larger than 200 bytes" });
  });

  it("an abort ends the query in flight", async () => {
    const s = await service(REPORT_97, "silent");
    const ac = new AbortController();
    const p = queryRas(opts(s.port, { signal: ac.signal, deadlineMs: 10_000 }));
    await commandsOf(s, 3);
    ac.abort();
    const r = await p;
    expect(r).toMatchObject({ ok: false, result: "error", reason: "aborted" });
    expect(r.ms).toBeLessThan(5000);
  });
});

describe("parseRasAddress", () => {
  it("takes NCCL_RAS_ADDR's forms", () => {
    expect(parseRasAddress("localhost:28028")).toEqual({ host: "localhost", port: 28028 });
    expect(parseRasAddress("10.0.0.7:1234")).toEqual({ host: "10.0.0.7", port: 1234 });
    expect(parseRasAddress("[::1]:28029")).toEqual({ host: "::1", port: 28029 });
    expect(parseRasAddress("[fe80::1]")).toEqual({ host: "fe80::1", port: 28028 });
    expect(parseRasAddress("node7")).toEqual({ host: "node7", port: 28028 });
  });

  it("refuses what is not an address", () => {
    for (const bad of ["", ":28028", "host:", "host:0", "host:65536", "host:12a", "::1:28028", "[::1", "[::1]x", "a b:1"])
      expect(parseRasAddress(bad), bad).toBeUndefined();
  });
});
