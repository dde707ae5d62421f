/**
 * Differential fuzz: the byte COLL fast path (collectors/nccl/logs/ingest/coll-bytes.ts) against the full
 * parser. One matcher per run sees a sequence of the writer's lines (its op and pointer caches
 * carry over), each embedded in a buffer between other bytes as the line splitter hands it over.
 * Whenever it accepts a line, parseLine on the decoded text must read the same writer's COLL event
 * with the same op, opCount and comm; declining is always allowed.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CollByteMatcher } from "../../collectors/nccl/logs/ingest/coll-bytes.js";
import { parseLine } from "../../collectors/nccl/logs/parse/line.js";
import { COLL_LINES, mutatedWriterLine, OTHER_LINES, type WriterLine } from "./coll-diff.js";
import { RUNS } from "./mutate.js";

interface Fields {
  op: string;
  /** As the matcher gives it: a number now (the hex text in earlier versions). */
  opCount: number | string;
  comm: string;
}

/** Runs the matcher on `line` placed between `before` and `after` in one buffer. */
function matchEmbedded(m: CollByteMatcher, line: string, before: Buffer, after: Buffer): Fields | undefined {
  const bytes = Buffer.from(line, "utf8");
  const buf = Buffer.concat([before, bytes, Buffer.from("\n"), after]);
  return m.match(buf, before.length, before.length + bytes.length) ? { ...(m.fields as Fields) } : undefined;
}

/** The full parser, on the text the splitter decodes (UTF-8), reads the same writer's COLL event. */
function expectSame(line: string, prefix: string, got: Fields): void {
  const text = Buffer.from(line, "utf8").toString("utf8");
  const full = parseLine(text);
  expect(full?.kind, `full parser on ${JSON.stringify(text)}`).toBe("coll");
  if (full?.kind !== "coll") return;
  expect({ op: full.op, comm: full.comm }).toEqual({ op: got.op, comm: got.comm });
  // Same opCount value (the matcher parses the hex; the parser keeps the text).
  const value = typeof got.opCount === "number" ? BigInt(got.opCount) : BigInt(`0x${got.opCount}`);
  expect(BigInt(`0x${full.opCount}`)).toBe(value);
  expect(full.torn).toBeUndefined();
  expect(full.headerless).toBeUndefined();
  expect(`${full.host}:${full.pid}:`).toBe(prefix);
}

const REST = " sendbuff 0x1 recvbuff 0x2 count 4 datatype 7 op 0 root 0 comm 0x55aa11 [nranks=2] stream 0x3";
const W = (line: string): WriterLine => ({ prefix: "h:1:", line });

/**
 * Sequences of lines an earlier matcher accepted and the full parser reads differently (found by
 * the property below): each must now be declined or read exactly as the full parser reads it.
 */
const FORMER_DIVERGENCES: [string, WriterLine[]][] = [
  ["op with a NUL", [W(`h:1:2 [0] NCCL INFO \u0000llReduce: opCount 1f${REST}`)]],
  ["op with a digit", [W(`h:1:2 [0] NCCL INFO All3educe: opCount 1f${REST}`)]],
  ["op longer than the full parser's 24 letters", [W(`h:1:2 [0] NCCL INFO ${"A".repeat(30)}: opCount 1f${REST}`)]],
  ["malformed field before comm (count 4x)", [W(`h:1:2 [0] NCCL INFO AllReduce: opCount 1f${REST.replace("count 4", "count 4x")}`)]],
  // Found by the fuzz in a CI run (seed -1093237049): the full parser reads a negative count, datatype or op as malformed.
  ["a negative count (count -1)", [W(`h:1:2 [0] NCCL INFO AllReduce: opCount 1f${REST.replace("count 4", "count -1")}`)]],
  ["a negative datatype or op", [W(`h:1:2 [0] NCCL INFO AllReduce: opCount 1f${REST.replace("datatype 7", "datatype -7").replace("op 0", "op -1")}`)]],
  ["malformed pointer before comm (sendbuff 0xZ)", [W(`h:1:2 [0] NCCL INFO AllReduce: opCount 1f${REST.replace("sendbuff 0x1", "sendbuff 0xZ")}`)]],
  ["tid not a number (full parser: headerless)", [W(`h:1:2x [0] NCCL INFO AllReduce: opCount 1f${REST}`)]],
  ["no [cudaDev] (full parser: headerless)", [W(`h:1:2 NCCL INFO AllReduce: opCount 1f${REST}`)]],
  [
    "comm 0x55AA11 after 0x55aa11: the pointer cache key ignores hex case and returns the cached 0x55aa11",
    [W(`h:1:2 [0] NCCL INFO AllReduce: opCount 1f${REST}`), W(`h:1:2 [0] NCCL INFO AllReduce: opCount 20${REST.replace("0x55aa11", "0x55AA11")}`)],
  ],
  [
    "a WARN line torn by another writer's COLL line: the first ` NCCL INFO ` is not this line's header",
    [
      {
        prefix: "gpu36:15433:",
        line: "gpu36:15433:15517 [0] sharp_plugin.c:382 NCCL WARN SHAR201142 [1] NCCL INFO Send: opCount 18 sendbuff 0x1 recvbuff (nil) count 4 datatype 7 op 0 root 1 comm 0x7f5128002e10 [nranks=2] stream 0x3",
      },
    ],
  ],
  [
    "comm printed twice (garbled line): the matcher takes the first, the full parser the last",
    [W(`h:1:2 [0] NCCL INFO AllReduce: opCount 1c${REST.replace(" [nranks=2]", " comm 0x77 [nranks=2]")}`)],
  ],
  ["tid with a colon: the full parser's header is host `1`, pid 204", [W(`h:1:204:201142 [1] NCCL INFO Send: opCount 14${REST}`)]],
];

function runSequence(lines: readonly WriterLine[], before = Buffer.alloc(0), after = Buffer.alloc(0)): void {
  const m = new CollByteMatcher();
  const first = lines[0];
  if (first === undefined) return;
  m.setWriter(first.prefix);
  for (const { line } of lines) {
    const got = matchEmbedded(m, line, before, after);
    if (got) expectSame(line, first.prefix, got);
  }
}

describe("differential fuzz: CollByteMatcher vs parseLine", () => {
  it("accepts real COLL lines with the full parser's fields, and declines every other real line", () => {
    let accepted = 0;
    for (const w of COLL_LINES) {
      const m = new CollByteMatcher();
      m.setWriter(w.prefix);
      const got = matchEmbedded(m, w.line, Buffer.from("x NCCL INFO A: opCount 1 comm 0x9\n"), Buffer.from(" NCCL INFO  comm 0x1"));
      if (got) {
        accepted++;
        expectSame(w.line, w.prefix, got);
      }
    }
    for (const w of OTHER_LINES) {
      const m = new CollByteMatcher();
      m.setWriter(w.prefix);
      expect(matchEmbedded(m, w.line, Buffer.alloc(0), Buffer.alloc(0)), w.line).toBeUndefined();
    }
    expect(accepted).toBeGreaterThan(20);
  });

  it("the bytes around a line in the read buffer never change the verdict", () => {
    fc.assert(
      fc.property(mutatedWriterLine, fc.uint8Array({ maxLength: 64 }), fc.uint8Array({ maxLength: 64 }), (w, b, a) => {
        const alone = new CollByteMatcher();
        const embedded = new CollByteMatcher();
        alone.setWriter(w.prefix);
        embedded.setWriter(w.prefix);
        const noNl = (u: Uint8Array): Buffer => Buffer.from(u.map((x) => (x === 10 ? 32 : x)));
        const tail = Buffer.concat([noNl(b), Buffer.from("\n")]);
        expect(matchEmbedded(embedded, w.line, tail, Buffer.from(a))).toEqual(matchEmbedded(alone, w.line, Buffer.alloc(0), Buffer.alloc(0)));
      }),
      { numRuns: RUNS },
    );
  });

  // Regression: the full parser tries a COLL message only when it starts with an upper-case letter
  // (parse/line.ts fromHeader); the matcher once accepted any letters (`NCCL INFO lReduce: opCount 1a`).
  it("regression, agrees with the full parser on an op name starting with a lower-case letter", () =>
    runSequence([W(`h:1:2 [0] NCCL INFO lReduce: opCount 1a${REST}`)]));

  for (const [why, lines] of FORMER_DIVERGENCES) {
    it(`regression, agrees with the full parser on: ${why}`, () => runSequence(lines));
  }

  it("on sequences of mutated lines: whatever the matcher accepts, parseLine reads as the same COLL event", () => {
    fc.assert(
      fc.property(fc.array(mutatedWriterLine, { minLength: 1, maxLength: 8 }), (lines) => runSequence(lines.filter((l) => l.prefix === lines[0]?.prefix))),
      { numRuns: RUNS, examples: FORMER_DIVERGENCES.map(([, lines]) => [lines]) },
    );
  });
  it("matchLine in a read buffer (LF or CRLF, other bytes after) agrees with match on the line alone", () => {
    fc.assert(
      fc.property(mutatedWriterLine, fc.boolean(), fc.uint8Array({ maxLength: 64 }), (w, crlf, a) => {
        // A CR or LF inside would make it two lines, or a CR the splitter strips, not one line.
        fc.pre(!/[\r\n]/.test(w.line));
        const alone = new CollByteMatcher();
        const streamed = new CollByteMatcher();
        alone.setWriter(w.prefix);
        streamed.setWriter(w.prefix);
        const bytes = Buffer.from(w.line, "utf8");
        const eol = Buffer.from(crlf ? "\r\n" : "\n");
        const buf = Buffer.concat([bytes, eol, Buffer.from(a)]);
        // The splitter hands match() the line without its CR.
        const want = alone.match(bytes, 0, bytes.length) ? { ...alone.fields } : undefined;
        const nl = streamed.matchLine(buf, 0, buf.length, 1 << 20);
        if (want === undefined) {
          expect(nl).toBe(-1);
          return;
        }
        expect(nl).toBe(bytes.length + eol.length - 1);
        expect({ op: streamed.fields.op, opCount: streamed.fields.opCount, comm: streamed.comm(buf) }).toEqual(want);
      }),
      { numRuns: RUNS },
    );
  });
});
