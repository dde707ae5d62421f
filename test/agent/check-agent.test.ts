/**
 * The running agent's /metrics as `ringwatch check --check.agent-url` reads it: the series of the
 * names asked for, labels with their escapes, from prom-client's own text output (a real registry
 * rendered), over a real HTTP server; a refused connection, a 404 and a server that never answers
 * are each one reason.
 */
import { createServer, type Server } from "node:http";
import { Gauge, Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { askAgent, seriesOf } from "../../agent/check-agent.js";

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

async function exposition(): Promise<string> {
  const registry = new Registry();
  const diag = new Gauge({ name: "ringwatch_nccl_ras_diagnostic", help: "h", labelNames: ["check", "comm_id", "detail", "host"], registers: [registry] });
  const other = new Gauge({ name: "ringwatch_nccl_ras_diagnostics_timestamp_seconds", help: "h", registers: [registry] });
  diag.set({ check: "xid", comm_id: "0x49bbd7790311d5eb", detail: "79", host: "gpu-node-17" }, 1);
  diag.set({ check: "nccl_env", comm_id: "0x49bbd7790311d5eb", detail: 'NCCL_IB_HCA="mlx5_0"\\x\nnext', host: "" }, 1);
  other.set(1795831917);
  return registry.metrics();
}

function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}/metrics`)));
}

describe("seriesOf", () => {
  it("reads the named metric's series and their labels, escapes undone, and nothing else", async () => {
    const s = seriesOf(await exposition(), ["ringwatch_nccl_ras_diagnostic"]);
    expect([...s.keys()]).toEqual(["ringwatch_nccl_ras_diagnostic"]);
    expect(s.get("ringwatch_nccl_ras_diagnostic")).toEqual([
      { labels: { check: "xid", comm_id: "0x49bbd7790311d5eb", detail: "79", host: "gpu-node-17" }, value: 1 },
      { labels: { check: "nccl_env", comm_id: "0x49bbd7790311d5eb", detail: 'NCCL_IB_HCA="mlx5_0"\\x\nnext', host: "" }, value: 1 },
    ]);
  });

  it("skips lines it cannot read, and a metric whose name only begins like the one asked", () => {
    const text = [
      'ringwatch_nccl_ras_diagnostic{check="xid" 1',
      "ringwatch_nccl_ras_diagnostic_x 1",
      'ringwatch_nccl_ras_diagnostic{check="ecc"} 0 1700000000000',
    ].join("\n");
    expect(seriesOf(text, ["ringwatch_nccl_ras_diagnostic"]).get("ringwatch_nccl_ras_diagnostic")).toEqual([{ labels: { check: "ecc" }, value: 0 }]);
  });
});

describe("askAgent", () => {
  it("GETs the URL and returns the series", async () => {
    const body = await exposition();
    const url = await serve((_req, res) => res.end(body));
    const a = await askAgent(url, ["ringwatch_nccl_ras_diagnostic"], Date.now() + 10_000);
    expect("samples" in a && a.samples.get("ringwatch_nccl_ras_diagnostic")?.length).toBe(2);
  });

  it("says why there is no answer: HTTP status, refused, or no answer by the deadline", async () => {
    const notFound = await serve((_req, res) => {
      res.statusCode = 404;
      res.end();
    });
    expect(await askAgent(notFound, [], Date.now() + 10_000)).toEqual({ error: `the agent at ${notFound} answered HTTP 404` });
    const closed = await serve(() => undefined);
    servers[servers.length - 1]?.close();
    const refused = await askAgent(closed, [], Date.now() + 10_000);
    expect("error" in refused && refused.error).toMatch(/^cannot ask the agent at http:\/\/127\.0\.0\.1:\d+\/metrics: fetch failed: .*ECONNREFUSED/);
    const silent = await serve(() => undefined);
    expect(await askAgent(silent, [], Date.now() + 300)).toEqual({ error: `cannot ask the agent at ${silent}: no answer within --check.timeout` });
  });
});
