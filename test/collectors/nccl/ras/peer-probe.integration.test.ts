/**
 * probePeer (collectors/nccl/ras/peer-probe.ts) against real HTTP servers on 127.0.0.1: what another
 * node's agent answers at /nccl/ras-role, and what counts as alive or gone.
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { formatHost, parseAnswer, PEER_DEADLINE_MS, PEER_ROLE_PATH, probePeer } from "../../../../collectors/nccl/ras/peer-probe.js";

const closers: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

interface Seen {
  method?: string;
  url?: string;
  accept?: string;
}

/** An HTTP server on 127.0.0.1 answering with `handler`; returns its port and what it was asked. */
async function httpServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createHttpServer((req, res) => {
    seen.push({ method: req.method, url: req.url, accept: req.headers.accept });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { port: (server.address() as AddressInfo).port, seen };
}

/** A TCP server on 127.0.0.1 that does `onConn` with each connection; returns its port. */
async function netServer(onConn: (s: Socket) => void): Promise<number> {
  const sockets = new Set<Socket>();
  const server: NetServer = createNetServer((s) => {
    sockets.add(s);
    s.on("error", () => undefined);
    // Read what comes, so that the client's close is seen.
    s.resume();
    onConn(s);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
  return (server.address() as AddressInfo).port;
}

/** A port on 127.0.0.1 where nothing listens (it did a moment ago). */
async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("probePeer", () => {
  it("a 200 with the role JSON: alive, with the answer read", async () => {
    const { port, seen } = await httpServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ job: "0x49bbd7790311d5eb", role: "querier", last_report_age_seconds: 12.5 }));
    });
    const r = await probePeer("127.0.0.1", port, 2000);
    expect(r).toEqual({ kind: "alive", answer: { job: "0x49bbd7790311d5eb", role: "querier", lastReportAgeSeconds: 12.5 } });
    expect(seen).toEqual([{ method: "GET", url: PEER_ROLE_PATH, accept: "application/json" }]);
    expect(PEER_ROLE_PATH).toBe("/nccl/ras-role");
  });

  it("a listener with no report yet", async () => {
    const { port } = await httpServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"job":null,"role":"listener","last_report_age_seconds":null}');
    });
    expect(await probePeer("127.0.0.1", port, 2000)).toEqual({ kind: "alive", answer: { job: null, role: "listener", lastReportAgeSeconds: null } });
  });

  it("a 401 (basic auth on the agents' port): alive, without an answer", async () => {
    const { port, seen } = await httpServer((_req, res) => {
      res.writeHead(401, { "www-authenticate": 'Basic realm="ringwatch"', "content-type": "application/json" });
      res.end('{"job":"0x1","role":"querier","last_report_age_seconds":1}');
    });
    const r = await probePeer("127.0.0.1", port, 2000);
    expect(r).toEqual({ kind: "alive" });
    expect(seen).toHaveLength(1);
  });

  it("a 200 that is not the role JSON: alive, without an answer", async () => {
    const { port } = await httpServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html>ringwatch</html>");
    });
    expect(await probePeer("127.0.0.1", port, 2000)).toEqual({ kind: "alive", answer: undefined });
  });

  it("a 200 over 4 KiB: alive, its body not read as an answer", async () => {
    const { port } = await httpServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ job: "0x1", role: "querier", last_report_age_seconds: 1, pad: "x".repeat(5000) }));
    });
    expect(await probePeer("127.0.0.1", port, 2000)).toEqual({ kind: "alive" });
  });

  it("a server that accepts and never answers: gone within the deadline", async () => {
    const { port, seen } = await httpServer(() => undefined);
    const deadline = 300;
    const t0 = Date.now();
    const r = await probePeer("127.0.0.1", port, deadline);
    const took = Date.now() - t0;
    expect(r).toEqual({ kind: "gone", reason: "no answer within the deadline" });
    expect(seen).toHaveLength(1);
    expect(took).toBeGreaterThanOrEqual(deadline - 20);
    expect(took).toBeLessThan(deadline + 1500);
  });

  it("a closed port: gone, refused, well before the deadline", async () => {
    const port = await closedPort();
    const t0 = Date.now();
    const r = await probePeer("127.0.0.1", port, 5000);
    expect(r).toEqual({ kind: "gone", reason: "ECONNREFUSED" });
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it("a connection the far end resets after accepting (TLS, no plain HTTP): alive", async () => {
    const port = await netServer((s) => s.destroy());
    expect(await probePeer("127.0.0.1", port, 2000)).toEqual({ kind: "alive" });
  });

  it("a far end that answers with something other than HTTP: alive", async () => {
    // What a TLS server sends to a plain-text client: an alert record.
    const port = await netServer((s) => s.end(Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x32])));
    expect(await probePeer("127.0.0.1", port, 2000)).toEqual({ kind: "alive" });
  });

  it("the default deadline is 2 s", () => {
    expect(PEER_DEADLINE_MS).toBe(2000);
  });
});

describe("formatHost", () => {
  it("brackets an IPv6 literal once, leaves names and IPv4 alone", () => {
    expect(formatHost("fd00::7")).toBe("[fd00::7]");
    expect(formatHost("[fd00::7]")).toBe("[fd00::7]");
    expect(formatHost("10.0.0.7")).toBe("10.0.0.7");
    expect(formatHost("node-7")).toBe("node-7");
  });
});

describe("parseAnswer", () => {
  it("reads the role JSON", () => {
    expect(parseAnswer('{"job":"0xab","role":"undetermined","last_report_age_seconds":0}')).toEqual({
      job: "0xab",
      role: "undetermined",
      lastReportAgeSeconds: 0,
    });
  });

  it("rejects what is not JSON, not an object, or names an unknown role", () => {
    for (const text of ["", "not json", "{", "null", "42", '"querier"', "[]", '["querier"]', "{}", '{"role":"boss"}', '{"role":"Querier"}', '{"role":null}']) {
      expect(parseAnswer(text), text).toBeUndefined();
    }
  });

  it("a job that is not a string, or an age that is not a number, reads as null", () => {
    expect(parseAnswer('{"job":42,"role":"querier","last_report_age_seconds":"12"}')).toEqual({ job: null, role: "querier", lastReportAgeSeconds: null });
    expect(parseAnswer('{"role":"listener"}')).toEqual({ job: null, role: "listener", lastReportAgeSeconds: null });
  });
});
