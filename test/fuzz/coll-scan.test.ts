/**
 * Differential fuzz: the WebAssembly COLL scanner (collectors/nccl/logs/ingest/coll-scanner.ts, built from
 * collectors/nccl/logs/ingest/wasm/coll-scan.ts) against the JavaScript matcher it stands in for
 * (CollByteMatcher.matchLine, itself fuzzed against the full parser in coll-bytes.test.ts). For
 * every line start of a read buffer both must give the same verdict: declined, or accepted with
 * the same newline, op, opCount, comm pointer and pointer key. The buffers hold runs of one
 * writer's lines, so the scanner's kept stretches (header, datatype..comm, pointer..newline) are
 * hit by near-copies of the lines before them.
 */
import { spawnSync } from "node:child_process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CollByteMatcher } from "../../collectors/nccl/logs/ingest/coll-bytes.js";
import { loadScanner, ScannedLines, type CollScanner } from "../../collectors/nccl/logs/ingest/coll-scanner.js";
import { COLL_LINES, OTHER_LINES, type WriterLine } from "./coll-diff.js";
import { applyOp, opArb, RUNS } from "./mutate.js";

interface Verdict {
  nl: number;
  op: string;
  opCount: number;
  comm: string;
  ptrKey: number;
  ptrChars: number;
}

function newScanner(): CollScanner {
  const sc = loadScanner();
  if (typeof sc === "string") throw new Error(`the scanner does not load here: ${sc}`);
  return sc;
}

/** Where each line of buf starts (the last may have no newline). */
function lineStarts(buf: Buffer): number[] {
  const out: number[] = [];
  for (let s = 0; s < buf.length; ) {
    out.push(s);
    const nl = buf.indexOf(10, s);
    if (nl < 0) break;
    s = nl + 1;
  }
  return out;
}

function verdict(m: CollByteMatcher, buf: Buffer, nl: number): Verdict | null {
  return nl < 0 ? null : { nl, op: m.fields.op, opCount: m.fields.opCount, comm: m.comm(buf), ptrKey: m.ptrKey, ptrChars: m.ptrChars };
}

/** The JavaScript matcher's verdict at every line start. */
function byMatcher(prefix: string, buf: Buffer, max: number, end = buf.length): (Verdict | null)[] {
  const m = new CollByteMatcher();
  m.setWriter(prefix);
  return lineStarts(buf.subarray(0, end)).map((s) => verdict(m, buf, m.matchLine(buf, s, end, max)));
}

/** The scanner's, taken as the file sink takes it (a run of lines per scan, one by one). */
function byScanner(sc: CollScanner, prefix: string, buf: Buffer, max: number, end = buf.length): (Verdict | null)[] {
  const m = new CollByteMatcher();
  m.setWriter(prefix);
  const lines = new ScannedLines(sc);
  return lineStarts(buf.subarray(0, end)).map((s) => verdict(m, buf, lines.lineAt(m, buf, s, end, max)));
}

const sc = newScanner();

/** A run of a writer's lines: copies of one line, each unchanged or mutated 1..2 times after the prefix. */
const writerRun: fc.Arbitrary<{ prefix: string; lines: string[] }> = fc
  .tuple(
    fc.constantFrom(...COLL_LINES),
    fc.array(fc.option(fc.array(opArb, { minLength: 1, maxLength: 2 }), { freq: 2 }), { minLength: 1, maxLength: 12 }),
    fc.constantFrom("\n", "\r\n", "  \n", " \r\n"),
  )
  .map(([w, edits, eol]) => {
    const donors = COLL_LINES.map((c) => c.line.slice(c.prefix.length));
    const rest = w.line.slice(w.prefix.length);
    const lines = edits.map((ops) => w.prefix + (ops === null ? rest : ops.reduce((t, op) => applyOp(t, op, donors), rest)) + eol);
    return { prefix: w.prefix, lines };
  });

describe("differential fuzz: the WebAssembly COLL scanner vs CollByteMatcher", () => {
  it("the committed module is what collectors/nccl/logs/ingest/wasm/coll-scan.ts builds to (else: npm run build:wasm)", () => {
    const r = spawnSync(process.execPath, ["scripts/build-wasm.mjs", "--check"], { encoding: "utf8", timeout: 60_000 });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  }, 60_000);

  it("reads every real capture's lines as the matcher does, per writer, LF and CRLF", () => {
    const byPrefix = new Map<string, WriterLine[]>();
    for (const w of [...COLL_LINES, ...OTHER_LINES]) byPrefix.set(w.prefix, [...(byPrefix.get(w.prefix) ?? []), w]);
    let accepted = 0;
    for (const [prefix, lines] of byPrefix) {
      for (const eol of ["\n", "\r\n"]) {
        // Each line twice in a row: the second is read from the kept stretches.
        const buf = Buffer.from(lines.flatMap((w) => [w.line, w.line]).join(eol) + eol, "utf8");
        const want = byMatcher(prefix, buf, 65536);
        expect(byScanner(sc, prefix, buf, 65536)).toEqual(want);
        accepted += want.filter((v) => v !== null).length;
      }
    }
    expect(accepted).toBeGreaterThan(40);
  });

  it("on runs of near-copies of a line (mutated, cut short, small line limits): the same verdict at every line", () => {
    fc.assert(
      fc.property(writerRun, fc.nat(), fc.constantFrom(65536, 300, 200, 150), (run, cut, max) => {
        const buf = Buffer.from(run.lines.join(""), "utf8");
        const end = buf.length - (cut % 40);
        expect(byScanner(sc, run.prefix, buf, max, end)).toEqual(byMatcher(run.prefix, buf, max, end));
      }),
      { numRuns: RUNS * 3 },
    );
  });

  it("forgets the header it checked when the writer changes: another writer's lines are declined", () => {
    const [a, b] = [...new Set(COLL_LINES.map((w) => w.prefix))];
    const w = COLL_LINES.find((x) => x.prefix === a);
    expect(a !== undefined && b !== undefined && w !== undefined).toBe(true);
    const buf = Buffer.from(`${w?.line}\n${w?.line}\n`);
    expect(byScanner(sc, a as string, buf, 65536).filter((v) => v !== null)).toHaveLength(2);
    expect(byScanner(sc, b as string, buf, 65536)).toEqual([null, null]);
  });

  const LINE = "gpu-node-001:56433:56433 [0] NCCL INFO AllReduce: opCount 3b sendbuff 0x7f93d0000000 recvbuff 0x7f93d0000000 count 1843200 datatype 7 op 0 root 0 comm 0x55250ec5b720 [nranks=8] stream 0x55dfbdbd9ec0\n";
  const PREFIX = "gpu-node-001:56433:";

  it("reads a read buffer larger than its window: lines across the window's end included", () => {
    const n = Math.ceil((2 << 20) / LINE.length);
    const buf = Buffer.from(LINE.repeat(n));
    const got = byScanner(sc, PREFIX, buf, 65536);
    expect(got.filter((v) => v !== null)).toHaveLength(n);
    expect(got[n - 1]?.nl).toBe(buf.length - 1);
    // A line limit above half the window grows it (and the module's memory).
    expect(byScanner(newScanner(), PREFIX, buf, 1 << 20).filter((v) => v !== null)).toHaveLength(n);
  });

  it("never reads an old window: a reused read buffer with new bytes, by its owner after reset or by another file", () => {
    const buf = Buffer.from(LINE.repeat(4));
    const other = Buffer.from(LINE.replaceAll("AllReduce", "AllGather").repeat(4));
    const m = new CollByteMatcher();
    m.setWriter(PREFIX);
    const mine = new ScannedLines(sc);
    const theirs = new ScannedLines(sc);
    expect(mine.lineAt(m, buf, 0, buf.length, 65536)).toBe(LINE.length - 1);
    expect(m.fields.op).toBe("AllReduce");
    other.copy(buf); // the follower reads the next chunk into the same buffer
    mine.reset(); // LineSplitter.pushTo -> FileSink.chunkStart
    expect(mine.lineAt(m, buf, LINE.length, buf.length, 65536)).toBe(2 * LINE.length - 1);
    expect(m.fields.op).toBe("AllGather");
    Buffer.from(LINE.repeat(4)).copy(buf); // another file's read into the shared buffer
    expect(theirs.lineAt(m, buf, 2 * LINE.length, buf.length, 65536)).toBe(3 * LINE.length - 1);
    expect(m.fields.op).toBe("AllReduce");
  });
});
