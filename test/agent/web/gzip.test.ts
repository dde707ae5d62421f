/**
 * /metrics in gzip for clients that ask for it (Prometheus sends Accept-Encoding: gzip): the same
 * text, about a tenth of the bytes; plain text for the others. A real server on a real socket.
 */
import { request } from "node:http";
import { gunzipSync } from "node:zlib";
import pino from "pino";
import { Gauge, Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { acceptsGzip, createMetricsServer, type MetricsServer } from "../../../agent/web/server.js";

const servers: MetricsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close(100)));
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function get(port: number, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: "/metrics", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end();
  });
}

async function serve(): Promise<{ port: number; registry: Registry }> {
  const registry = new Registry();
  const g = new Gauge({ name: "ringwatch_test_value", help: "A value per communicator.", labelNames: ["comm_id"], registers: [registry] });
  for (let i = 0; i < 500; i++) g.set({ comm_id: `0x${(0x49bbd7790311d5eb + i * 7919).toString(16)}` }, i);
  const server = createMetricsServer(registry, pino({ level: "silent" }), {
    telemetryPath: "/metrics",
    version: "test",
    clientOf: () => "127.0.0.1",
  });
  servers.push(server);
  return { port: await server.listen({ host: "127.0.0.1", port: 0 }), registry };
}

describe("/metrics in gzip", () => {
  it("gives Prometheus's Accept-Encoding gzip the same text in a fraction of the bytes, and others plain text", async () => {
    const { port, registry } = await serve();
    const text = await registry.metrics();
    const zipped = await get(port, { "accept-encoding": "gzip" });
    expect(zipped.status).toBe(200);
    expect(zipped.headers["content-encoding"]).toBe("gzip");
    expect(zipped.headers.vary).toBe("accept-encoding");
    expect(Number(zipped.headers["content-length"])).toBe(zipped.body.length);
    expect(gunzipSync(zipped.body).toString()).toBe(text);
    expect(zipped.body.length).toBeLessThan(text.length / 4);
    const plain = await get(port, {});
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.body.toString()).toBe(text);
    const refused = await get(port, { "accept-encoding": "gzip;q=0, identity" });
    expect(refused.headers["content-encoding"]).toBeUndefined();
  });

  it("reads Accept-Encoding as RFC 9110 writes it", () => {
    expect(acceptsGzip("gzip")).toBe(true);
    expect(acceptsGzip("deflate, GZIP;q=0.5")).toBe(true);
    expect(acceptsGzip("*")).toBe(true);
    expect(acceptsGzip("gzip;q=0")).toBe(false);
    expect(acceptsGzip("br, deflate")).toBe(false);
    expect(acceptsGzip(undefined)).toBe(false);
  });
});
