/**
 * FileSink dates each chunk's lines: written after the file was last read to its end (sinceMs),
 * before the chunk was opened (readMs). Chunks of one read pass share the pass's sinceMs.
 */
import { describe, expect, it } from "vitest";
import { FileSink } from "../../../../../collectors/nccl/logs/ingest/file-sink.js";
import { Tracker } from "../../../../../collectors/nccl/logs/state/tracker.js";

function sinceOf(sink: FileSink): number | undefined {
  return (sink as unknown as { ctx: { sinceMs?: number } }).ctx.sinceMs;
}

describe("FileSink arrival bracket", () => {
  it("first pass: unknown; next pass: when the one before began; chunks of one pass: the same", () => {
    const sink = new FileSink(new Tracker(), (e) => {
      throw e;
    });
    sink.open("a.log", 1000, false, 1000);
    expect(sinceOf(sink)).toBe(-Infinity);
    sink.open("a.log", 1500, false, 1500);
    expect(sinceOf(sink)).toBe(1000);
    sink.open("a.log", 1502, false, 1502); // a second chunk of the same read
    expect(sinceOf(sink)).toBe(1000);
    sink.open("a.log", 2000, false, 2000);
    expect(sinceOf(sink)).toBe(1500);
  });

  it("a look that found nothing new moves the bracket up", () => {
    const sink = new FileSink(new Tracker(), (e) => {
      throw e;
    });
    sink.open("a.log", 1000, false, 1000);
    sink.looked(1500);
    sink.looked(2000);
    sink.open("a.log", 2500, false, 2500);
    expect(sinceOf(sink)).toBe(2000);
  });
});
