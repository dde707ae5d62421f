/**
 * The file sink with its COLL fast path (coll-bytes.ts on the read buffer) and with every line
 * through the readable parser (logs/parse/line.ts) must leave the tracker in the same state: every
 * capture with COLL lines and a simulated 16-rank job's logs, read through the real LineSplitter in
 * chunks of random sizes, with one read buffer shared by all files (as the follower shares its
 * read slots).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileSink } from "../../../../../collectors/nccl/logs/ingest/file-sink.js";
import { LineSplitter, type LineSink } from "../../../../../collectors/follow/line-splitter.js";
import { Tracker } from "../../../../../collectors/nccl/logs/state/tracker.js";
import { fixturesDir, listFixtures } from "../../../../helpers/fixtures.js";
import { writeBulk } from "../../../../sim/index.js";

interface Input {
  name: string;
  bytes: Buffer;
}

/** Reads the inputs into one tracker; chunk sizes cycle through `chunks`. fast: false hands every line to line() as text. */
function ingest(inputs: Input[], fast: boolean, chunks: number[]): { tracker: Tracker; errors: unknown[] } {
  const tracker = new Tracker();
  const errors: unknown[] = [];
  const shared = Buffer.alloc(Math.max(...chunks));
  let c = 0;
  const sinks = inputs.map((f) => {
    const sink = new FileSink(tracker, (err) => errors.push(err));
    const to: LineSink = fast ? sink : { line: (text) => sink.line(text) };
    return { f, sink, to, splitter: new LineSplitter(65536), at: 0 };
  });
  // Round-robin over the files, a chunk each, into the same buffer.
  for (let busy = true; busy;) {
    busy = false;
    for (const s of sinks) {
      if (s.at >= s.f.bytes.length) continue;
      busy = true;
      const n = Math.min(chunks[c++ % chunks.length] as number, s.f.bytes.length - s.at);
      s.f.bytes.copy(shared, 0, s.at, s.at + n);
      s.at += n;
      s.sink.open(s.f.name, 1_000, true, 1_000);
      s.splitter.pushTo(shared, 0, n, s.to);
    }
  }
  return { tracker, errors };
}

/** What the COLL lines leave in the tracker, per communicator and rank. */
function snapshot(t: Tracker): unknown {
  return [...t.comms.values()]
    .sort((a, b) => (a.key < b.key ? -1 : 1))
    .map((c) => ({
      key: c.key,
      maxCollectives: c.maxCollectives,
      mismatch: c.mismatch,
      seqOps: JSON.stringify(c.seqOps),
      ranks: [...c.ranks.values()].map((r) => ({
        rank: r.rank,
        collectives: r.collectives,
        lastOp: r.lastOp,
        lastOpCount: r.lastOpCount,
        where: `${r.lastCollSource}:${r.lastCollLine}`,
      })),
    }));
}

describe("FileSink: the COLL fast path and the readable parser count the same", () => {
  let dir = "";
  let bulk: Input[] = [];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "rw-sink-coll-"));
    const r = await writeBulk(dir, { files: 16, bytesPerFile: 256 * 1024 });
    bulk = r.files.map((f) => ({ name: f, bytes: readFileSync(f) }));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("on every capture with COLL lines", () => {
    const captures = listFixtures("nccl", ".log")
      .map((name) => ({ name, bytes: readFileSync(join(fixturesDir, "nccl", name)) }))
      .filter((f) => f.bytes.includes("opCount"));
    expect(captures.length).toBeGreaterThanOrEqual(5);
    for (const f of captures) {
      const parser = ingest([f], false, [65536]);
      const fast = ingest([f], true, [65536]);
      expect(snapshot(fast.tracker), f.name).toEqual(snapshot(parser.tracker));
      expect(fast.errors).toEqual([]);
    }
  });

  it("on a simulated 16-rank job, files interleaved through one read buffer, in chunks of any size", () => {
    /** Collectives counted per rank: the same however the files are cut into reads. */
    const counts = (t: Tracker): string[] =>
      [...t.comms.values()].flatMap((c) => [...c.ranks.values()].map((r) => `${c.key}/${r.rank}=${r.collectives}`)).sort();
    const whole = counts(ingest(bulk, false, [512 * 1024]).tracker);
    const total = whole.reduce((a, x) => a + Number(x.split("=")[1]), 0);
    expect(total).toBeGreaterThan(16 * 1000);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 300_000 }), { minLength: 1, maxLength: 5 }), (chunks) => {
        const fast = ingest(bulk, true, chunks).tracker;
        // The same reads in the same order give the same state (the order of reads decides which
        // rank reaches a sequence index first, so only the counts compare across chunkings).
        expect(snapshot(fast)).toEqual(snapshot(ingest(bulk, false, chunks).tracker));
        expect(counts(fast)).toEqual(whole);
      }),
      { numRuns: 6 },
    );
  });
});
