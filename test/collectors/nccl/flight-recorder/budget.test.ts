/**
 * A dump's budget (budget.ts), counted over the whole dump with every memo reference: rank lists
 * shared by many groups, one entry named many times, a pickle that builds more than it may. The
 * pickles here are written byte by byte; budget.integration.test.ts reads ones Python wrote.
 */
import { describe, expect, it } from "vitest";
import { Budget, FR_BUDGET, OverBudget, type BudgetKind } from "../../../../collectors/nccl/flight-recorder/budget.js";
import { dumpOf } from "../../../../collectors/nccl/flight-recorder/convert.js";
import { RankLists } from "../../../../collectors/nccl/flight-recorder/ranks.js";
import { readFrDump } from "../../../../collectors/nccl/flight-recorder/read.js";
import { unpickle } from "../../../../collectors/nccl/flight-recorder/unpickle.js";

const caps = (over: Partial<Record<BudgetKind, number>>): Record<BudgetKind, number> => ({
  heap: FR_BUDGET.heap.cap,
  ranks: FR_BUDGET.ranks.cap,
  sizes: FR_BUDGET.sizes.cap,
  values: FR_BUDGET.values.cap,
  chars: FR_BUDGET.chars.cap,
  ...over,
});

const rankList = (n: number): string => `[${Array.from({ length: n }, (_, i) => i).join(", ")}]`;

/** PROTO 2, a list, then `n` times `item` in batches of 1,000 (MARK ... APPENDS, as pickle writes lists), STOP. */
function listPickle(item: number[], n: number): Buffer {
  const parts: Buffer[] = [Buffer.from([0x80, 0x02, 0x5d])];
  for (let i = 0; i < n; i += 1000) {
    parts.push(Buffer.from([0x28]));
    for (let j = 0; j < Math.min(1000, n - i); j++) parts.push(Buffer.from(item));
    parts.push(Buffer.from([0x65]));
  }
  parts.push(Buffer.from([0x2e]));
  return Buffer.concat(parts);
}

/** A raw dump as unpickle() gives it: dicts are Maps. */
const dict = (o: Record<string, unknown>): Map<unknown, unknown> => new Map(Object.entries(o));

describe("Budget", () => {
  it("counts each kind apart and refuses once a count passes its cap, naming it", () => {
    const b = new Budget(caps({ ranks: 10 }));
    b.spend("ranks", 10);
    b.spend("chars", 1_000_000);
    expect(b.spent()).toMatchObject({ ranks: 10, chars: 1_000_000, sizes: 0 });
    expect(() => b.spend("ranks", 1)).toThrow(OverBudget);
    expect(() => new Budget().spend("ranks", FR_BUDGET.ranks.cap + 1)).toThrow(
      "too large: ranks in process groups' rank lists over budget (more than 2,097,152 ranks)",
    );
    expect(() => new Budget().spend("heap", FR_BUDGET.heap.cap + 1)).toThrow("too large: objects built over budget (more than 536,870,912 bytes)");
  });
});

describe("rank lists: parsed once however often they are named, counted at every name", () => {
  it("one 131,072-rank string named by 16 groups: one parse, one array, 16 × 131,072 ranks counted; a 17th group is over budget", () => {
    const s = rankList(131_072);
    const b = new Budget();
    const lists = new RankLists(b);
    const first = lists.ranksOf(s);
    expect(first).toHaveLength(131_072);
    expect(first?.[131_071]).toBe(131_071);
    // An equal string (not the same object) is the same list too.
    const copy = ` ${s}`.slice(1);
    for (let g = 1; g < 16; g++) expect(lists.ranksOf(g % 2 === 0 ? s : copy)).toBe(first);
    expect(b.spent().ranks).toBe(16 * 131_072);
    // The characters of the list count once: it was parsed once.
    expect(b.spent().chars).toBe(s.length);
    expect(() => lists.ranksOf(s)).toThrow("too large: ranks in process groups' rank lists over budget");
  });

  it("a 1.x list of integers named twice: one parse, the same array", () => {
    const raw = [3, 1, 2, 2];
    const lists = new RankLists(new Budget());
    const a = lists.ranksOf(raw);
    expect(a).toEqual([1, 2, 3]);
    expect(lists.ranksOf(raw)).toBe(a);
    expect(lists.ranksOf("not a list")).toBeUndefined();
    expect(lists.ranksOf(42)).toBeUndefined();
  });
});

describe("dumpOf: an entry named many times costs its whole size at every name", () => {
  const sizes = Array.from({ length: 64 }, () => Array.from({ length: 16 }, () => 2));
  const entry = dict({
    profiling_name: "nccl:all_reduce",
    process_group: ["0", "default_pg"],
    pg_id: 0,
    collective_seq_id: 1,
    input_sizes: sizes,
    output_sizes: sizes,
    input_dtypes: ["Float"],
    state: "completed",
  });
  const root = (refs: number): Map<unknown, unknown> =>
    dict({ version: "2.10", pg_config: new Map([["0", dict({ ranks: "[0, 1]" })]]), entries: Array.from({ length: refs }, () => entry) });

  it("1,000 names: read, each entry's sizes the one array converted once, 2 × 64 × 17 per name counted", () => {
    const b = new Budget();
    const got = dumpOf(root(1000), "x", b);
    if (typeof got === "string") throw new Error(got);
    expect(got.dump.entries).toHaveLength(1000);
    expect(got.dump.entries[0]?.inputSizes).toHaveLength(64);
    expect(got.dump.entries[999]?.inputSizes).toBe(got.dump.entries[0]?.inputSizes);
    expect(got.dump.entries[999]?.outputSizes).toBe(got.dump.entries[0]?.inputSizes);
    expect(b.spent().sizes).toBe(1000 * 2 * 64 * 17);
  });

  it("50,000 names (the hostile 104 KB dump's shape): over budget, and quickly", () => {
    const t0 = performance.now();
    expect(() => dumpOf(root(50_000), "x")).toThrow("too large: tensor sizes over budget (more than 4,194,304 tensors and dimensions)");
    // 4,194,304 / (2 × 64 × 17) = 1,928 entries read before it stops: milliseconds (it took 7.4 s and 1.47 GB before).
    expect(performance.now() - t0).toBeLessThan(2_000);
  });
});

describe("unpickle: what a pickle builds is counted per opcode, references included", () => {
  it("a flood of empty dicts (1 byte each) is refused once its estimate passes the heap budget, before it is built", () => {
    const flood = listPickle([0x7d], 200_000);
    const r = unpickle(flood, new Budget(caps({ heap: 10 * 1024 * 1024 })));
    // 200 bytes a dict: the 10 MiB cap holds 52,428 of them.
    expect(r).toEqual({ ok: false, error: "too large: objects built over budget (more than 10,485,760 bytes)", overBudget: true });
    const fits = unpickle(listPickle([0x7d], 50_000), new Budget(caps({ heap: 10 * 1024 * 1024 })));
    expect(fits.ok).toBe(true);
  });

  it("memo references cost a slot each, not what they name: 100,000 BINGETs of one 100 KB string", () => {
    const s = Buffer.alloc(100_000, 0x61);
    const head = Buffer.concat([Buffer.from([0x80, 0x02, 0x58]), Buffer.from(Uint32Array.of(s.length).buffer), s, Buffer.from([0x71, 0x00, 0x30])]); // BINUNICODE, BINPUT 0, POP
    const refs = listPickle([0x68, 0x00], 100_000).subarray(2); // PROTO stripped: EMPTY_LIST, MARK, BINGET 0 ..., APPENDS, STOP
    const b = new Budget();
    const r = unpickle(Buffer.concat([head, refs]), b);
    expect(r.ok).toBe(true);
    if (r.ok) expect((r.value as unknown[])[99_999]).toHaveLength(100_000);
    // The string: 16 + 2 × 100,000 and its slot (24); 48 for its memo slot; 24 per reference; 176 per list (the list and its 100 MARKs).
    expect(b.spent().heap).toBe(16 + 200_000 + 24 + 48 + 100_000 * 24 + 101 * 176);
  });

  it("a dump refused for anything but its budget is not marked over it", () => {
    const r = readFrDump(listPickle([0x7d], 10), "nccl_trace_rank_4");
    expect(r).toEqual({ ok: false, source: "nccl_trace_rank_4", rank: 4, error: "not a Flight Recorder dump: the pickle holds no dict" });
  });
});
