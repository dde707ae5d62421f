/**
 * NCCL RAS monitor events, in the exact forms rasClientsNotifyEvent writes (test/fakes/ras/render.mjs
 * renderEvent follows src/ras/client_support.cc of NCCL 2.29-2.30): text and JSON, a known peer and
 * one NCCL no longer knows, and the JSON NCCL writes with an unescaped quote in details.
 */
import { describe, expect, it } from "vitest";
import { RasEventReader, eventFromJson, eventFromText, type RasEvent } from "../../../../collectors/nccl/ras/parse-event.js";
import { renderEvent } from "../../../fakes/ras/render.mjs";

const TIME = "2026-11-24 02:47:13";

function readAll(text: string): { events: RasEvent[]; skipped: number } {
  const events: RasEvent[] = [];
  const r = new RasEventReader((e) => events.push(e));
  for (const line of text.split("\n")) r.line(line);
  return { events, skipped: r.skipped };
}

describe("RAS monitor events", () => {
  it("text, a known peer with two GPUs whose NVML indices differ: pid, host, both device lists", () => {
    const line = renderEvent({ type: "PEER_NEW", peer: { host: "10.0.0.2", pid: 4003, cudaDevs: [0, 1], nvmlDevs: [2, 3] } }, { time: TIME });
    expect(line).toBe(`[${TIME}] PEER_NEW: Process 4003 on node 10.0.0.2 managing GPUs 0,1 (NVML 2,3) \n`);
    expect(eventFromText(line.trimEnd())).toEqual({
      type: "PEER_NEW",
      timestamp: TIME,
      pid: 4003,
      host: "10.0.0.2",
      cudaDevs: [0, 1],
      nvmlDevs: [2, 3],
      details: "",
    });
  });

  it("text, a dead peer NCCL no longer knows: its RAS address only", () => {
    const line = renderEvent({ type: "PEER_DEAD", addr: { host: "10.0.0.9", port: 28028 }, details: "timeout" }, { time: TIME });
    expect(eventFromText(line.trimEnd())).toEqual({ type: "PEER_DEAD", timestamp: TIME, addr: "10.0.0.9<28028>", details: "timeout" });
  });

  it("json, a known dead peer, read by the line reader among text events", () => {
    const dead = renderEvent({ type: "PEER_DEAD", peer: { host: "10.0.0.8", pid: 4242, cudaDevs: [1] } }, { format: "json", time: TIME });
    const neu = renderEvent({ type: "PEER_NEW", peer: { host: "10.0.0.2", pid: 4003, cudaDevs: [0] } }, { time: TIME });
    const { events, skipped } = readAll(dead + neu + dead.replaceAll("\n", "\r\n"));
    expect(skipped).toBe(0);
    expect(events.map((e) => [e.type, e.host, e.pid, e.nvmlDevs])).toEqual([
      ["PEER_DEAD", "10.0.0.8", 4242, [1]],
      ["PEER_NEW", "10.0.0.2", 4003, [0]],
      ["PEER_DEAD", "10.0.0.8", 4242, [1]],
    ]);
  });

  it("json with a quote NCCL did not escape in details: read field by field", () => {
    const text = renderEvent(
      { type: "PEER_DEAD", peer: { host: "10.0.0.8", pid: 4242, cudaDevs: [3] }, details: 'link "ib0" down' },
      { format: "json", time: TIME },
    );
    expect(() => JSON.parse(text) as unknown).toThrow();
    expect(eventFromJson(text)).toEqual({
      type: "PEER_DEAD",
      timestamp: TIME,
      host: "10.0.0.8",
      pid: 4242,
      cudaDevs: [3],
      nvmlDevs: [3],
      details: 'link "ib0" down',
    });
  });

  it("garbage is counted, never an event; an object that never closes is dropped after 64 lines", () => {
    const { events, skipped } = readAll(
      [
        "hello",
        "[x] lower: no",
        "[2026-11-24 02:47:13] PEER_DEAD",
        "{",
        ...Array.from({ length: 70 }, () => '"a": 1,'),
        "}",
        "[t] PEER_NEW: 10.0.0.1<1> ",
      ].join("\n"),
    );
    expect(events).toEqual([{ type: "PEER_NEW", timestamp: "t", addr: "10.0.0.1<1>", details: "" }]);
    // 3 lines, the object cut at its 64th line, then its 6 remaining lines and its "}" one by one.
    expect(skipped).toBe(3 + 1 + 6 + 1);
  });
});
