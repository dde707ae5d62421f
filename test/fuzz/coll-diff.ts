/**
 * Shared by the differential fuzz tests of the COLL fast path (coll-bytes.ts, on bytes) against
 * the full parser: real COLL lines split into the writer's
 * `host:pid:` and the rest, and a generator that mutates the rest (so most inputs still reach the
 * fast path) or the whole line.
 */
import fc from "fast-check";
import { expect } from "vitest";
import { parseLine } from "../../collectors/nccl/logs/parse/line.js";
import { ncclLines } from "./invariants.js";
import { applyOp, opArb } from "./mutate.js";

export interface WriterLine {
  /** `host:pid:` of the line's own NCCL header. */
  prefix: string;
  line: string;
}

/**
 * Lines of the captures from their own NCCL header's `host:pid:` on (a launcher prefix in front,
 * `[1,0]<stdout>:`, is cut off: in a per-process NCCL_DEBUG_FILE the line starts with the header).
 */
function writerLines(): WriterLine[] {
  const out: WriterLine[] = [];
  const seen = new Set<string>();
  for (const raw of ncclLines()) {
    const ev = parseLine(raw);
    if (ev?.host === undefined || ev.pid === undefined || ev.torn) continue;
    const prefix = `${ev.host}:${ev.pid}:`;
    const at = raw.indexOf(prefix);
    const line = at < 0 ? "" : raw.slice(at);
    if (at < 0 || seen.has(line) || parseLine(line)?.kind !== ev.kind) continue;
    seen.add(line);
    out.push({ prefix, line });
  }
  return out;
}

const ALL = writerLines();
export const COLL_LINES = ALL.filter((w) => parseLine(w.line)?.kind === "coll");
/** Other NCCL lines of writers (init, warn, channel...): the fast path must decline them all. */
export const OTHER_LINES = ALL.filter((w) => parseLine(w.line)?.kind !== "coll");

/** A writer line with 1..4 mutations after its prefix (or anywhere, one time in four). */
export const mutatedWriterLine: fc.Arbitrary<WriterLine> = fc
  .tuple(fc.constantFrom(...COLL_LINES, ...OTHER_LINES.slice(0, 200)), fc.array(opArb, { minLength: 1, maxLength: 4 }), fc.nat(3))
  .map(([w, ops, where]) => {
    const donors = COLL_LINES.map((c) => c.line.slice(c.prefix.length));
    if (where === 0) return { prefix: w.prefix, line: ops.reduce((s, op) => applyOp(s, op, donors), w.line) };
    const rest = ops.reduce((s, op) => applyOp(s, op, donors), w.line.slice(w.prefix.length));
    return { prefix: w.prefix, line: w.prefix + rest };
  });

/** What the full path would make of a line the fast path accepted: the same writer's COLL event. */
export function expectSameAsFullParse(line: string, prefix: string, fast: { op: string; opCount: string; comm: string }): void {
  const full = parseLine(line);
  expect(full, `full parser on ${JSON.stringify(line)}`).toMatchObject({ kind: "coll", op: fast.op, opCount: fast.opCount, comm: fast.comm });
  expect(full?.torn, `torn: ${JSON.stringify(line)}`).toBeUndefined();
  expect(full?.headerless, `headerless: ${JSON.stringify(line)}`).toBeUndefined();
  expect(`${full?.host}:${full?.pid}:`).toBe(prefix);
}
