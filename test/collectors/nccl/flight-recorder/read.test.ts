/** Flight Recorder dumps read from bytes: the real H100 dumps, and input that is not one. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_FR_DUMP_BYTES, looksLikeFrDump, readFrDump } from "../../../../collectors/nccl/flight-recorder/read.js";
import { parseRanks, rankFromName } from "../../../../collectors/nccl/flight-recorder/ranks.js";
import type { FrDump, FrRead } from "../../../../collectors/nccl/flight-recorder/types.js";
import { fixturesDir } from "../../../helpers/fixtures.js";

const H100 = join(fixturesDir, "fr/h100-2026-11-24");
const bytesOf = (rank: number): Buffer => readFileSync(join(H100, `nccl_trace_rank_${rank}`));

function dumpOf(r: FrRead): FrDump {
  if (!r.ok) throw new Error(`not read: ${r.error}`);
  return r.dump;
}

const TORCH = "/opt/torch/.venv/lib/python3.12/site-packages/torch/distributed";

describe("readFrDump on the real H100 dumps (PyTorch 2.11, dump version 2.10)", () => {
  it("rank 0: enqueued 83, completed 81, waiting in #82 all_reduce and #83 _all_gather_base", () => {
    const d = dumpOf(readFrDump(bytesOf(0), "nccl_trace_rank_0"));
    expect(d).toMatchObject({ source: "nccl_trace_rank_0", version: "2.10", commLibVersion: "2.28.9", rank: 0, rankFrom: "file_name", entriesDropped: 0 });
    expect(d.groups).toEqual([{ name: "0", desc: "default_pg", ranks: [0, 1], pgId: 0, statusFrom: "pg_status", lastEnqueued: 83, lastCompleted: 81 }]);
    expect(d.entries).toHaveLength(83);
    expect(d.entries.map((e) => e.seq)).toEqual(Array.from({ length: 83 }, (_, i) => i + 1));
    const e82 = d.entries[81];
    expect(e82).toMatchObject({
      recordId: 81,
      pgId: 0,
      pgName: "0",
      pgDesc: "default_pg",
      seq: 82,
      p2pSeq: 0,
      opId: 82,
      profilingName: "nccl:all_reduce",
      op: "all_reduce",
      isP2p: false,
      inputSizes: [[1048576]],
      outputSizes: [[1048576]],
      inputDtypes: ["Float"],
      outputDtypes: ["Float"],
      state: "scheduled",
      retired: false,
      timeoutMs: 100000,
    });
    expect(e82?.timeStartedNs).toBeUndefined(); // None in the dump
    expect(e82?.timeCompletedNs).toBeUndefined();
    // 1795485089561667785 ns, as a double (pickleparser reads 64-bit integers as doubles)
    expect(Math.abs((e82?.timeCreatedNs ?? 0) - 1_795_485_089_561_667_785)).toBeLessThan(512);
    expect(e82?.frames).toEqual([
      { name: "all_reduce", file: `${TORCH}/distributed_c10d.py`, line: 3068 },
      { name: "wrapper", file: `${TORCH}/c10d_logger.py`, line: 83 },
      { name: "<module>", file: "/opt/job/job.py", line: 20 },
    ]);
    expect(d.entries[82]).toMatchObject({ seq: 83, op: "_all_gather_base", state: "scheduled", outputSizes: [[2097152]] });
    expect(d.entries[82]?.frames[0]).toEqual({ name: "all_gather_into_tensor", file: `${TORCH}/distributed_c10d.py`, line: 4186 });
    expect(d.entries[80]).toMatchObject({ seq: 81, state: "completed", retired: true });
    expect(d.entries.filter((e) => e.op === "all_reduce")).toHaveLength(61);
    expect(d.entries.filter((e) => e.op === "broadcast")).toHaveLength(9);
  });

  it("rank 1: enqueued and completed 81, the last one an all_reduce from job.py:20", () => {
    const d = dumpOf(readFrDump(bytesOf(1), "/some/dir/nccl_trace_rank_1"));
    expect(d.rank).toBe(1);
    expect(d.groups).toEqual([{ name: "0", desc: "default_pg", ranks: [0, 1], pgId: 0, statusFrom: "pg_status", lastEnqueued: 81, lastCompleted: 81 }]);
    expect(d.entries).toHaveLength(81);
    expect(d.entries.every((e) => e.state === "completed")).toBe(true);
    expect(d.entries[80]).toMatchObject({ seq: 81, op: "all_reduce", state: "completed" });
    expect(d.entries[80]?.frames[2]).toEqual({ name: "<module>", file: "/opt/job/job.py", line: 20 });
  });

  it("leaves console.warn as it was (pickleparser warns about 64-bit integers while it parses)", () => {
    const warn = console.warn;
    let calls = 0;
    console.warn = (): void => void calls++;
    try {
      dumpOf(readFrDump(bytesOf(0), "nccl_trace_rank_0"));
      expect(calls).toBe(0);
    } finally {
      console.warn = warn;
    }
    expect(console.warn).toBe(warn);
  });

  it("entriesPerGroup keeps each group's last collectives, and the group's numbers", () => {
    const d = dumpOf(readFrDump(bytesOf(0), "nccl_trace_rank_0", { entriesPerGroup: 5 }));
    expect(d.entries.map((e) => e.seq)).toEqual([79, 80, 81, 82, 83]);
    expect(d.entriesDropped).toBe(78);
    expect(d.groups[0]).toMatchObject({ lastEnqueued: 83, lastCompleted: 81 });
  });

  it("a dump with no rank in its name has none", () => {
    expect(dumpOf(readFrDump(bytesOf(0), "trace.pkl")).rank).toBeUndefined();
    expect(dumpOf(readFrDump(bytesOf(0), "dump_rank_12.pkl")).rank).toBe(12);
  });
});

describe("readFrDump on input that is no readable dump: one reason, never a throw", () => {
  it("truncated anywhere: says so", () => {
    const b = bytesOf(0);
    for (const n of [2, 3, 100, 5000, b.length - 1]) {
      const r = readFrDump(b.subarray(0, n), "nccl_trace_rank_0");
      expect(r).toEqual({ ok: false, source: "nccl_trace_rank_0", rank: 0, error: "truncated: the pickle ends before its STOP" });
    }
  });

  it("corrupt (an opcode no pickle has, a STOP in the middle): says why", () => {
    const b = Buffer.from(bytesOf(0));
    expect(b[293]).toBe(0x75); // SETITEMS closing pg_status["0"] (pickletools.dis)
    b[293] = 0xff; // no such opcode
    expect(readFrDump(b, "nccl_trace_rank_0")).toMatchObject({ ok: false, rank: 0, error: "corrupt: Unsupported opcode '255'." });
    b[293] = 0x2e; // STOP: the value on top of the stack then is last_completed_collective, 81
    expect(readFrDump(b, "nccl_trace_rank_0")).toMatchObject({ ok: false, error: "not a Flight Recorder dump: the pickle holds no dict" });
  });

  it("too large: refused before parsing", () => {
    const big = Buffer.alloc(MAX_FR_DUMP_BYTES + 1);
    big[0] = 0x80;
    big[1] = 2;
    expect(readFrDump(big, "nccl_trace_rank_7")).toEqual({ ok: false, source: "nccl_trace_rank_7", rank: 7, error: "too large: over 64 MiB" });
  });

  it("a pickle that names a Python callable (os.system) is refused, nothing is called", () => {
    // \x80\x02 c os\nsystem\n ( X<len>echo T R .  — pickle.dumps of a __reduce__ to os.system
    const cmd = Buffer.from("echo pwned");
    const len = Buffer.alloc(4);
    len.writeUInt32LE(cmd.length);
    const evil = Buffer.concat([Buffer.from([0x80, 0x02]), Buffer.from("cos\nsystem\nq\x00X"), len, cmd, Buffer.from("\x85R.")]);
    expect(readFrDump(evil, "x")).toEqual({ ok: false, source: "x", error: "refused: it holds a Python object (os.system)" });
    const stackGlobal = Buffer.concat([
      Buffer.from([0x80, 0x04, 0x8c, 2]),
      Buffer.from("os"),
      Buffer.from([0x8c, 6]),
      Buffer.from("system"),
      Buffer.from([0x93]),
      Buffer.from("."),
    ]);
    expect(readFrDump(stackGlobal, "x")).toMatchObject({ ok: false, error: "refused: it holds a Python object (os.system)" });
  });

  it("a pickle of something else (a list, a dict without the keys) is not a dump", () => {
    expect(readFrDump(Buffer.from([0x80, 0x02, 0x5d, 0x2e]), "a")).toMatchObject({ ok: false, error: "not a Flight Recorder dump: the pickle holds no dict" });
    expect(readFrDump(Buffer.from([0x80, 0x02, 0x7d, 0x2e]), "a")).toMatchObject({
      ok: false,
      error: "not a Flight Recorder dump: no version, pg_status or entries",
    });
  });

  it("a huge long integer (LONG4) is refused instead of parsed quadratically", () => {
    const n = 1_000_000;
    const head = Buffer.alloc(6);
    head[0] = 0x8b;
    head.writeUInt32LE(n, 1);
    const b = Buffer.concat([Buffer.from([0x80, 0x02]), head.subarray(0, 5), Buffer.alloc(n, 0x7f), Buffer.from(".")]);
    const t = Date.now();
    expect(readFrDump(b, "a")).toMatchObject({ ok: false, error: "refused: it holds a bytes or integer field of 1000000 bytes" });
    expect(Date.now() - t).toBeLessThan(1000);
  });

  it("a list written in one run of 200,000 items (as PyTorch writes lists): too large, not a crash", () => {
    const n = 200_000;
    const items = Buffer.alloc(n * 2);
    for (let i = 0; i < n; i++) [items[2 * i], items[2 * i + 1]] = [0x4b, 1]; // BININT1 1
    const b = Buffer.concat([Buffer.from([0x80, 0x02, 0x5d, 0x28]), items, Buffer.from([0x65, 0x2e])]); // ] ( ... e .
    expect(readFrDump(b, "a")).toMatchObject({ ok: false, error: "too large: a list of more than about 120,000 items written at once" });
  });

  it("random bytes after a pickle header, and random changes to a real dump, never throw", () => {
    const real = bytesOf(0);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), (tail) => {
        const r = readFrDump(Buffer.concat([Buffer.from([0x80, 0x02]), tail]), "nccl_trace_rank_3");
        return r.ok ? r.dump.rank === 3 : r.error.length > 0 && r.rank === 3;
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(real.length - 1), fc.nat(255)), { minLength: 1, maxLength: 8 }), (edits) => {
        const b = Buffer.from(real);
        for (const [at, v] of edits) b[at] = v;
        const r = readFrDump(b, "nccl_trace_rank_0");
        return r.ok || r.error.length > 0;
      }),
      { numRuns: 500 },
    );
  });

  it("looksLikeFrDump: a pickled dict of protocol 2 to 5, nothing else", () => {
    expect(looksLikeFrDump(bytesOf(0))).toBe(true);
    expect(looksLikeFrDump(Buffer.from([0x80, 0x04, 0x95, 0, 0, 0, 0, 0, 0, 0, 0, 0x7d]))).toBe(true); // protocol 4: FRAME first
    expect(looksLikeFrDump(Buffer.from([0x80, 0x02, 0x5d]))).toBe(false); // a list
    expect(looksLikeFrDump(Buffer.from([0x80, 0x01, 0x7d]))).toBe(false);
    expect(looksLikeFrDump(Buffer.from([0x80, 0x06, 0x7d]))).toBe(false);
    expect(looksLikeFrDump(Buffer.from("[rank0]: ..."))).toBe(false);
    expect(looksLikeFrDump(Buffer.from([0x80, 0x02]))).toBe(false);
  });
});

describe("ranks", () => {
  it("pg_config's rank list, as a string (2.x) or a list (1.x)", () => {
    expect(parseRanks("[0, 1]")).toEqual([0, 1]);
    expect(parseRanks("[8, 9, 10, 11]")).toEqual([8, 9, 10, 11]);
    expect(parseRanks("[]")).toEqual([]);
    expect(parseRanks([3, 1, 2])).toEqual([1, 2, 3]);
    expect(parseRanks("[0, 1,]")).toBeUndefined();
    expect(parseRanks("[0, -1]")).toBeUndefined();
    expect(parseRanks("0, 1")).toBeUndefined();
    expect(parseRanks("[0, x]")).toBeUndefined();
    expect(parseRanks([0, "1"])).toBeUndefined();
    expect(parseRanks(7)).toBeUndefined();
    expect(parseRanks(`[${Array.from({ length: 131_073 }, (_, i) => i).join(", ")}]`)).toBeUndefined();
  });

  it("the rank at the end of a dump's file name", () => {
    expect(rankFromName("nccl_trace_rank_0")).toBe(0);
    expect(rankFromName("/tmp/fr/comm_lib_trace_rank_4095")).toBe(4095);
    expect(rankFromName("trace_17.pkl")).toBe(17);
    expect(rankFromName("trace.pkl")).toBeUndefined();
    expect(rankFromName("trace_1234567890")).toBeUndefined();
  });
});
