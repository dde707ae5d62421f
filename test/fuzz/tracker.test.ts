/**
 * Fuzz: the NCCL tracker's counters (collectors/nccl/logs/state/tracker.ts) as exported by the real
 * NcclMetrics into a prom-client registry. Lines come from a small world of hosts, pids, comm
 * pointers, commIds and ranks, so Init, COLL, teardown, split and warning lines connect, mixed with
 * mutated real lines. After every line the exported ringwatch_nccl_rank_collectives_total series
 * must be finite, non-negative and no lower than before.
 */
import fc from "fast-check";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { NcclMetrics } from "../../collectors/nccl/metrics.js";
import { parseLine } from "../../collectors/nccl/logs/parse/line.js";
import { Tracker } from "../../collectors/nccl/logs/state/tracker.js";
import { ncclLines } from "./invariants.js";
import { fuzzInput, RUNS } from "./mutate.js";

const LINES = ncclLines();
const COLLECTIVES = "ringwatch_nccl_rank_collectives_total";

const hdr = fc.record({ host: fc.constantFrom("h1", "h2"), pid: fc.constantFrom(11, 12), dev: fc.nat(3) });
const ptr = fc.constantFrom("0xa1", "0xa2", "0xa3");
const commId = fc.constantFrom("0xc1", "0xc2");
const rank = fc.nat(3);
const head = (h: { host: string; pid: number; dev: number }): string => `${h.host}:${h.pid}:${h.pid + 100} [${h.dev}] NCCL INFO`;

/** One line of the small world, or a mutated real line. */
const lineArb: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .tuple(hdr, ptr, rank, commId)
      .map(([h, p, r, c]) => `${head(h)} comm ${p} rank ${r} nranks 4 cudaDev ${h.dev} busId 1000 commId ${c} - Init COMPLETE`),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(hdr, ptr, rank, fc.constantFrom("0xa1", "0xa2"), fc.nat(2), fc.nat(1))
      .map(
        ([h, p, r, parent, n, color]) =>
          `${head(h)} ncclCommSplit comm ${p} rank ${r} nranks 2 cudaDev ${h.dev} busId 1000 parent ${parent} splitCount ${n} color ${color} key 0 - Init COMPLETE`,
      ),
  },
  {
    weight: 8,
    arbitrary: fc
      .tuple(hdr, ptr, fc.nat(0xffff), fc.constantFrom("AllReduce", "AllGather", "Broadcast", "Send"))
      .map(
        ([h, p, n, op]) =>
          `${head(h)} ${op}: opCount ${n.toString(16)} sendbuff 0x1 recvbuff 0x2 count 4 datatype 7 op 0 root 0 comm ${p} [nranks=4] stream 0x3`,
      ),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(hdr, ptr, rank).map(([h, p, r]) => `${head(h)} comm ${p} rank ${r} nranks 4 cudaDev ${h.dev} busId 1000 - Destroy COMPLETE`),
  },
  { weight: 1, arbitrary: hdr.map((h) => `${h.host}:${h.pid}:1 [${h.dev}] misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by remote peer x<1>`) },
  { weight: 2, arbitrary: fuzzInput(LINES, 3) },
);

const ctxArb = fc.record({ source: fc.constantFrom("a.log", "b.log"), readMs: fc.option(fc.nat(1e9), { nil: undefined }), historical: fc.boolean() });

type Series = Map<string, number>;

async function exported(registry: Registry): Promise<Series> {
  const m = registry.getSingleMetric(COLLECTIVES);
  const out: Series = new Map();
  for (const v of (await m?.get())?.values ?? []) out.set(`${v.labels.comm_id}|${v.labels.rank}`, v.value);
  return out;
}

/** Feeds the lines one by one; after each, checks state and exported series. Returns the first decrease seen. */
async function run(lines: readonly [string, { source: string; readMs?: number; historical: boolean }][]): Promise<string | undefined> {
  const t = new Tracker({ maxComms: 8, maxProcesses: 8 });
  const registry = new Registry();
  const metrics = new NcclMetrics(registry, () => undefined);
  let before: Series = new Map();
  let lineNo = 0;
  for (const [line, c] of lines) {
    const ev = parseLine(line);
    if (ev) t.ingest(ev, { source: c.source, lineNo: ++lineNo, readMs: c.readMs, historical: c.historical, mtimeMs: 5e8 });
    for (const comm of t.comms.values()) {
      for (const r of comm.ranks.values()) {
        expect(Number.isSafeInteger(r.collectives) && r.collectives >= 0, `collectives of ${comm.key}/${r.rank}`).toBe(true);
      }
    }
    metrics.publish(t, [], undefined);
    const now = await exported(registry);
    for (const [k, v] of now) {
      expect(Number.isFinite(v) && v >= 0, `${COLLECTIVES}{${k}} = ${v}`).toBe(true);
      const old = before.get(k);
      if (old !== undefined && v < old) return `${COLLECTIVES}{${k}} went ${old} -> ${v} after line ${JSON.stringify(line)}`;
    }
    before = now;
  }
  return undefined;
}

const sequences = fc.array(fc.tuple(lineArb, ctxArb), { minLength: 1, maxLength: 40 });

describe("fuzz: NCCL tracker counters", () => {
  it("any sequence of parsed lines: collectives are finite, non-negative safe integers", async () => {
    await fc.assert(
      fc.asyncProperty(sequences, async (lines) => {
        await run(lines);
      }),
      { numRuns: RUNS / 3 },
    );
  });

  it("COLL lines alone (no second Init) never make the counter decrease", async () => {
    const init = "h1:11:111 [0] NCCL INFO comm 0xa1 rank 0 nranks 4 cudaDev 0 busId 1000 commId 0xc1 - Init COMPLETE";
    const notInit = fc.tuple(lineArb, ctxArb).filter(([l]) => !l.includes("Init COMPLETE"));
    await fc.assert(
      fc.asyncProperty(fc.array(notInit, { maxLength: 40 }), async (rest) => {
        expect(await run([[init, { source: "a.log", historical: false }], ...rest])).toBeUndefined();
      }),
      { numRuns: RUNS / 3 },
    );
  });

  // Regression: a second `Init COMPLETE` for a (commId, rank) that already counted collectives
  // replaces its RankState; the exported counter once went down with it (Init, one COLL, the same
  // Init again -> 1 -> 0). It now goes on from what the replaced record counted.
  it("any sequence of parsed lines never makes ringwatch_nccl_rank_collectives_total decrease", async () => {
    const init = "h1:11:111 [0] NCCL INFO comm 0xa1 rank 0 nranks 4 cudaDev 0 busId 1000 commId 0xc1 - Init COMPLETE";
    const coll = "h1:11:111 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x2 count 4 datatype 7 op 0 root 0 comm 0xa1 [nranks=4] stream 0x3";
    const c = { source: "a.log", historical: false };
    await fc.assert(
      fc.asyncProperty(sequences, async (lines) => {
        expect(await run(lines)).toBeUndefined();
      }),
      {
        numRuns: RUNS / 3,
        examples: [
          [
            [
              [init, c],
              [coll, c],
              [init, c],
            ],
          ],
        ],
      },
    );
  });
});
