/**
 * test/fakes/nccl-ras --job: the fake RAS service speaking NCCL's client protocol over a real socket,
 * per NCCL version, with the job advanced through the helper (setJob, file rewrite, emit, setDelay).
 */
import { writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { renderEvent, renderJson, renderText, renderTextParts, uniformJob, withMissing, type RasJob } from "../fakes/ras/render.mjs";
import { rasJobServices } from "../helpers/ras-service.js";
import { openRawRas, type RawRas } from "../helpers/ras-raw-client.js";

const startJob = rasJobServices();

const open = (port: number): Promise<RawRas> => openRawRas(port, "127.0.0.1", 5000);

/** A 2-rank job on one node with these AllReduce counts. */
const job = (version: string, allReduce: [number, number] = [9, 9]): RasJob =>
  uniformJob({ version, nodes: 1, ranksPerNode: 2, countsOf: (r) => ({ AllReduce: allReduce[r] ?? 0 }) });

describe("nccl-ras --job", () => {
  it("2.26.2: greeting, TIMEOUT, no SET FORMAT (unknown command), STATUS in text, then the server closes", async () => {
    const ras = await startJob(job("2.26.2", [9, 8]));
    const c = await open(ras.port);
    expect(await c.ask("CLIENT PROTOCOL 2\n", "SERVER PROTOCOL 2\n")).toBe("SERVER PROTOCOL 2\n");
    expect(await c.ask("timeout 5\r\n", "OK\n")).toBe("OK\n");
    expect(await c.ask("TIMEOUT 5s\n", "ERROR: Invalid timeout value 5s\n")).toBe("ERROR: Invalid timeout value 5s\n");
    expect(await c.ask("SET FORMAT json\n", "ERROR: Unknown command SET FORMAT json\n")).toBe("ERROR: Unknown command SET FORMAT json\n");
    expect(await c.ask("MONITOR\n", "ERROR: Unknown command MONITOR\n")).toBe("ERROR: Unknown command MONITOR\n");
    const before = c.text().length;
    c.sock.write("Status\n");
    const all = await c.closed;
    expect(all.slice(before)).toBe(renderText(job("2.26.2", [9, 8])));
    expect(all.slice(before)).toContain("  Rank 1 has launched up to operation 8 -- GPU 1 managed by process 4001 on node 10.0.0.1\n");
    expect(ras.commands()).toEqual(["CLIENT PROTOCOL 2", "timeout 5", "TIMEOUT 5s", "SET FORMAT json", "MONITOR", "Status"]);
  });

  it("2.28.9: SET FORMAT json -> OK and the JSON report (with 2.28's missing comma), closed after it", async () => {
    const j = withMissing(job("2.28.9"), 0, [1]);
    const ras = await startJob(j);
    const c = await open(ras.port);
    expect(await c.ask("SET FORMAT yaml\n", "ERROR: Invalid format yaml\n")).toBe("ERROR: Invalid format yaml\n");
    expect(await c.ask("set format JSON\n", "OK\n")).toBe("OK\n");
    const before = c.text().length;
    c.sock.write("VERBOSE STATUS\n");
    const report = (await c.closed).slice(before);
    expect(report).toBe(renderJson(j));
    expect(report).toContain('"nvml_dev": 1\n          "status"');
    expect(() => {
      JSON.parse(report);
    }).toThrow(SyntaxError);
  });

  it("2.29.7: MONITOR clients get the pushed PEER_DEAD in their own format and groups; others do not", async () => {
    const ras = await startJob(job("2.29.7"));
    const text = await open(ras.port);
    const json = await open(ras.port);
    const traceOnly = await open(ras.port);
    const plain = await open(ras.port);
    expect(await text.ask("MONITOR\n", "OK\n")).toBe("OK\n");
    expect(await json.ask("SET FORMAT json\n", "OK\n")).toBe("OK\n");
    expect(await json.ask("monitor lifecycle,trace\n", "OK\n")).toBe("OK\n");
    expect(await traceOnly.ask("MONITOR lifecycle, trace\n", "ERROR: Invalid event group ' trace'\n")).toBe("ERROR: Invalid event group ' trace'\n");
    expect(await traceOnly.ask("MONITOR TRACE\n", "OK\n")).toBe("OK\n");
    const event = { type: "PEER_DEAD", peer: { host: "10.0.0.1", pid: 4001, cudaDevs: [1] }, time: "2026-11-24 05:00:00" };
    const [t0, j0, r0, p0] = [text.text().length, json.text().length, traceOnly.text().length, plain.text().length];
    await ras.emit(event);
    const wantText = "[2026-11-24 05:00:00] PEER_DEAD: Process 4001 on node 10.0.0.1 managing GPU 1 \n";
    expect(renderEvent(event)).toBe(wantText);
    await expect.poll(() => text.text().slice(t0)).toBe(wantText);
    await expect.poll(() => json.text().slice(j0)).toBe(renderEvent(event, { format: "json" }));
    // The monitoring connection stays open and still takes commands.
    expect(await text.ask("TIMEOUT 1\n", "OK\n")).toBe("OK\n");
    expect(traceOnly.text().slice(r0)).toBe("");
    expect(plain.text().slice(p0)).toBe("");
  });

  it("STATUS shows the job as set through stdin, then as rewritten in the file", async () => {
    const ras = await startJob(job("2.29.7", [9, 9]));
    const status = async (): Promise<string> => {
      const c = await open(ras.port);
      c.sock.write("STATUS\n");
      return c.closed;
    };
    expect(await status()).toBe(renderText(job("2.29.7", [9, 9])));
    await ras.setJob(job("2.29.7", [12, 11]));
    const second = await status();
    expect(second).toBe(renderText(job("2.29.7", [12, 11])));
    expect(second).toContain("  Rank 0 has launched up to operation 12 -- GPU 0 managed by process 4000 on node 10.0.0.1\n");
    writeFileSync(ras.jobFile, JSON.stringify(job("2.24.3", [20, 21])));
    const third = await status();
    expect(third).toContain("NCCL version 2.24.3");
    expect(third).toContain("  Communicator ranks have different collective operation counts\n");
  });

  it("setDelay: the text head leaves at once, the rest after the gathering delay", async () => {
    const j = job("2.28.9");
    const ras = await startJob(j);
    await ras.setDelay(400);
    const c = await open(ras.port);
    c.sock.write("STATUS\n");
    const all = await c.closed;
    expect(all).toBe(renderText(j));
    const { head } = renderTextParts(j);
    expect(c.chunks[0]?.text).toBe(head);
    const tailAt = c.chunks.find((ch, i) => i > 0 || ch.text.length > head.length)?.at ?? -1;
    const headAt = c.chunks[0]?.at ?? -1;
    expect(tailAt - headAt).toBeGreaterThanOrEqual(350);
  });
});
