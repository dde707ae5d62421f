/**
 * Fuzz: the NCCL / PyTorch line parser (collectors/nccl/parse/*.ts) on every real log line of
 * test/fixtures/nccl, mutated, truncated at every position, and on hostile text. parseLine wraps
 * its work in a try/catch; the sub-parsers are also called directly so an exception hidden by that
 * net (a silently dropped line) fails here too.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseColl } from "../../collectors/nccl/logs/parse/coll.js";
import { parseHeaderless } from "../../collectors/nccl/logs/parse/desync.js";
import { parseHeaderAt } from "../../collectors/nccl/logs/parse/header.js";
import { parseCommLine, parseVersion } from "../../collectors/nccl/logs/parse/init.js";
import { MAX_LINE, parseLine, parseText } from "../../collectors/nccl/logs/parse/line.js";
import { parseBootstrap, parseGdr, parseLibibverbs, parseNetMsg, parseUsingNetwork } from "../../collectors/nccl/logs/parse/net.js";
import { parsePrefix } from "../../collectors/nccl/logs/parse/prefix.js";
import { parsePyTorch } from "../../collectors/nccl/logs/pytorch/parse.js";
import { parseChannelMsg, parseConnected, parseTrees } from "../../collectors/nccl/logs/parse/topo.js";
import { classifyWarn, parseRetcode } from "../../collectors/nccl/logs/parse/warn.js";
import { readInt, pos, readRankList } from "../../collectors/nccl/logs/parse/scan.js";
import type { NcclEvent, WarnDetail } from "../../collectors/nccl/logs/parse/types.js";
import { ncclLines, violations } from "./invariants.js";
import { fuzzInput, hugeLine, mutatedText, RUNS } from "./mutate.js";

const LINES = [...new Set(ncclLines())];
const KINDS = new Set([
  "version",
  "init",
  "comm_info",
  "coll",
  "net",
  "gdr",
  "channel",
  "ring",
  "tree",
  "connected",
  "warn",
  "retcode",
  "teardown",
  "pt_watchdog_timeout",
  "pt_work_status",
  "pt_heartbeat",
  "pt_dump",
  "pt_desync",
  "pt_flight_recorder",
  "pt_error",
]);
/** Numbers that count or index something and can never be negative (ranks may be -1 in trees). */
const NON_NEGATIVE = [
  "pid",
  "tid",
  "cudaDev",
  "commCudaDev",
  "nvmlDev",
  "nranks",
  "nNodes",
  "localRanks",
  "localRank",
  "count",
  "datatype",
  "redOp",
  "line",
  "code",
  "splitCount",
  "patch",
  "major",
  "minor",
  "launcherRank",
  "job",
];

function checkEvent(ev: NcclEvent | undefined): void {
  if (ev === undefined) return;
  expect(KINDS.has(ev.kind)).toBe(true);
  expect(violations(ev, { maxString: MAX_LINE, nonNegative: NON_NEGATIVE })).toEqual([]);
  if (ev.kind === "coll") {
    expect(ev.opCount).toMatch(/^[0-9a-fA-F]+$/);
    expect(ev.comm).toMatch(/^0x[0-9a-fA-F]+$/);
  }
  if (ev.kind === "ring" && ev.order) expect(ev.order.length).toBeLessThanOrEqual(MAX_LINE);
}

/** Every exported sub-parser, called at message start m with bound end: none may throw. */
function subParsers(s: string, m: number, end: number): unknown[] {
  const d: WarnDetail = { warnKind: "other" };
  classifyWarn(s, m, end, d);
  const n = s.indexOf(" NCCL ", m);
  return [
    d,
    parseColl(s, m, end),
    parseCommLine(s, m, end),
    parseVersion(s, m, end),
    parseNetMsg(s, m, end),
    parseBootstrap(s, m, end),
    parseUsingNetwork(s, m, end),
    parseLibibverbs(s, m),
    parseGdr(s, m, end),
    parseChannelMsg(s, m, end),
    parseTrees(s, m, end),
    parseConnected(s, m, end),
    parseRetcode(s, m, end),
    parsePrefix(s, 0, m),
    parsePrefix(s, m, end, true),
    parsePyTorch(s, end),
    parseHeaderless(s, end),
    n > 0 && n < end ? parseHeaderAt(s, n, 0, end) : undefined,
  ];
}

describe("fuzz: NCCL line parser", () => {
  it("parseLine on mutated real lines and hostile text: a known event kind, finite numbers, bounded strings", () => {
    fc.assert(
      fc.property(fuzzInput(LINES, 5), (line) => {
        checkEvent(parseLine(line));
      }),
      { numRuns: 2 * RUNS },
    );
  });

  it("no sub-parser throws, whatever the message start and bound (the try/catch in parseLine would hide it)", () => {
    fc.assert(
      fc.property(fuzzInput(LINES, 5), fc.nat(), fc.nat(), (s, a, b) => {
        const end = s.length === 0 ? 0 : b % (s.length + 1);
        const m = end === 0 ? 0 : a % (end + 1);
        const info = s.indexOf(" NCCL INFO ");
        for (const [mm, e] of [
          [m, end],
          [m, s.length],
          [info < 0 ? 0 : info + 11, s.length],
        ] as const) {
          expect(violations(subParsers(s, Math.min(mm, e), e))).toEqual([]);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("a COLL event's op, opCount and comm are text of the line, as printed", () => {
    fc.assert(
      fc.property(fuzzInput(LINES, 4), (line) => {
        const ev = parseLine(line);
        if (ev?.kind !== "coll") return;
        expect(line).toContain(`${ev.op}: opCount ${ev.opCount}`);
        // Keys in NCCL's fixed order are recognised by first letter and length (parse/coll.ts), so
        // only the pointer itself is checked here.
        expect(line).toContain(` ${ev.comm}`);
      }),
      { numRuns: RUNS },
    );
  });

  it("regression: negative counts and ranks are not read as such (fast-check counter-examples)", () => {
    const info = parseLine("gpu36:15434:15500 [1] NCCL INFO comm 0x5464220 rank 3 nRanks -1 0 CPU core 8");
    expect(info).toMatchObject({ kind: "comm_info", comm: "0x5464220", rank: 3 });
    expect(info !== undefined && "nranks" in info ? info.nranks : "absent").toBe("absent");
    const coll = "h:1:2 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x2 count -4 datatype 7 op 0 root 0 comm 0x5 [nranks=2] stream 0x3";
    expect(parseLine(coll)).toBeUndefined();
    expect(parseLine("h:1:2 [0] NCCL INFO NCCL version -2.18.1+cuda12.1")).toBeUndefined();
    expect(parseLine("h:1:2 [0] NCCL INFO misc/socket.cc:564 -> -1")).toBeUndefined();
    expect(
      parseLine("h:1:2 [0] NCCL INFO Send: o\u0000Count 12 sendbuff 0x1 recvbuff (nil) count 2 datatype 7 op 0 root 1 comm 0x5 [nranks=2] stream 0x3"),
    ).toBeUndefined();
  });

  it("regression: `[rank-1]:`, `[1,-2]<stdout>:`, `-1: ` and `pid=-5` give no negative launcher rank or pid (fast-check counter-example)", () => {
    const warn = "crow-ib-new-nccl-256-info-19:5330:7970 [3] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error Invalid argument";
    for (const prefix of ["[rank-1]:[155] ", "[1,-2]<stdout>:", "-1: ", "(RayTrainWorker pid=-5, ip=10.0.0.1) ", "[default-3]:"]) {
      const ev = parseLine(prefix + warn);
      expect(ev?.kind).toBe("warn");
      expect(violations(ev, { nonNegative: NON_NEGATIVE })).toEqual([]);
    }
  });

  it("regression: a garbled op name keeps its own text (`AllReduge` was interned as `AllReduce`; found by the fast-path differential)", () => {
    const rest = ": opCount 1b sendbuff 0x1 recvbuff 0x2 count 4 datatype 7 op 0 root 0 comm 0x7f0c7410f0e0 [nranks=2] stream 0x3";
    expect(parseLine(`gpu1:13135:13923 [1] NCCL INFO AllReduge${rest}`)).toMatchObject({ kind: "coll", op: "AllReduge" });
    expect(parseLine(`gpu1:13135:13923 [1] NCCL INFO Seed${rest}`)).toMatchObject({ kind: "coll", op: "Seed" });
    expect(parseLine(`gpu1:13135:13923 [1] NCCL INFO AllReduce${rest}`)).toMatchObject({ kind: "coll", op: "AllReduce" });
  });

  it("every real line truncated at every position parses without trouble", () => {
    let parsed = 0;
    for (const line of LINES) {
      for (let k = 0; k <= line.length; k++) {
        const ev = parseLine(line.slice(0, k));
        if (ev !== undefined) {
          parsed++;
          if (violations(ev, { maxString: MAX_LINE, nonNegative: NON_NEGATIVE }).length > 0) checkEvent(ev);
        }
      }
    }
    expect(parsed).toBeGreaterThan(LINES.length);
  });

  it("a trailing CR, LF or CRLF changes nothing", () => {
    fc.assert(
      fc.property(fuzzInput(LINES, 3), fc.constantFrom("\r", "\n", "\r\n"), (raw, eol) => {
        const line = raw.replace(/[\r\n]+$/, "").slice(0, MAX_LINE - 2);
        expect(parseLine(line + eol)).toEqual(parseLine(line));
      }),
      { numRuns: RUNS },
    );
  });

  it("a launcher prefix in front of a real NCCL line changes only the launcher fields", () => {
    const prefixes: [string, number | undefined][] = [
      ["[1,5]<stdout>:", 5],
      ["[rank7]:", 7],
      ["[default3]:", undefined],
      ["12: ", 12],
      ["node-a12: ", undefined],
      ["[155] ", 155],
      ["(RayTrainWorker pid=615, ip=10.72.7.6) ", undefined],
      ["\u001b[0;32m", undefined],
      ["> ", undefined],
    ];
    const headed = LINES.filter((l) => {
      const ev = parseLine(l);
      return ev?.host !== undefined && !ev.torn && l.startsWith(ev.host) && ev.launcher === undefined;
    });
    expect(headed.length).toBeGreaterThan(500);
    fc.assert(
      fc.property(fc.constantFrom(...headed), fc.constantFrom(...prefixes), (line, [prefix, rank]) => {
        const bare = parseLine(line) as NcclEvent;
        const ev = parseLine(prefix + line) as NcclEvent;
        const { launcher, launcherRank, pid, ...rest } = ev;
        const { pid: barePid, ...bareRest } = bare;
        expect(rest).toEqual(bareRest);
        expect(pid).toBe(barePid);
        expect(launcherRank).toBe(rank);
        if (prefix.startsWith("[") || prefix.startsWith("(") || /^\S+: /.test(prefix)) expect(launcher).toBeDefined();
      }),
      { numRuns: RUNS },
    );
  });

  it("parseText on mutated captures: at most one event per line, all well-formed", () => {
    fc.assert(
      fc.property(mutatedText(LINES, 30), (text) => {
        const evs = parseText(text);
        expect(evs.length).toBeLessThanOrEqual(text.split("\n").length);
        evs.forEach(checkEvent);
      }),
      { numRuns: RUNS / 3 },
    );
  });

  it("a 10 MB line is cut to MAX_LINE: its event holds no string longer than that", () => {
    const coll = LINES.find((l) => parseLine(l)?.kind === "coll") as string;
    const warn = LINES.find((l) => parseLine(l)?.kind === "warn") as string;
    for (const line of [
      coll + hugeLine(" count 1"),
      warn + hugeLine("x "),
      hugeLine(" NCCL INFO "),
      hugeLine("h:1:2 [0] NCCL WARN "),
      hugeLine("\u0000\u00ff"),
    ]) {
      checkEvent(parseLine(line));
    }
    expect(parseLine(warn + hugeLine("x "))?.kind).toBe("warn");
  });
});

describe("fuzz: NCCL lines as NCCL prints them read back exactly", () => {
  const host = fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/);
  const hex = (max: number): fc.Arbitrary<string> => fc.bigInt({ min: 1n, max: 2n ** BigInt(max) - 1n }).map((v) => `0x${v.toString(16)}`);
  const header = fc.record({ host, pid: fc.integer({ min: 1, max: 4_194_304 }), tid: fc.integer({ min: 1, max: 4_194_304 }), dev: fc.nat(15) });

  it("COLL lines (ncclEnqueueCheck's format)", () => {
    fc.assert(
      fc.property(
        header,
        fc.constantFrom("AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce", "Send", "Recv", "AlltoAll"),
        fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
        fc.record({ count: fc.nat(), datatype: fc.nat(11), redOp: fc.nat(4), root: fc.nat(1023), nranks: fc.integer({ min: 1, max: 65536 }) }),
        hex(48),
        (h, op, opCount, f, comm) => {
          const line = `${h.host}:${h.pid}:${h.tid} [${h.dev}] NCCL INFO ${op}: opCount ${opCount.toString(16)} sendbuff 0x7f00 recvbuff (nil) count ${f.count} datatype ${f.datatype} op ${f.redOp} root ${f.root} comm ${comm} [nranks=${f.nranks}] stream 0x55aa`;
          expect(parseLine(line)).toEqual({
            kind: "coll",
            host: h.host,
            pid: h.pid,
            tid: h.tid,
            cudaDev: h.dev,
            op,
            opCount: opCount.toString(16),
            sendbuff: "0x7f00",
            recvbuff: null,
            ...f,
            comm,
            stream: "0x55aa",
          });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("Init COMPLETE lines (2.16+ format)", () => {
    fc.assert(
      fc.property(
        header,
        hex(48),
        fc.nat(65535),
        fc.integer({ min: 1, max: 65536 }),
        fc.stringMatching(/^[0-9a-f]{4,6}$/),
        hex(64),
        (h, comm, rank, nranks, busId, commId) => {
          const line = `${h.host}:${h.pid}:${h.tid} [${h.dev}] NCCL INFO ncclCommInitRank comm ${comm} rank ${rank} nranks ${nranks} cudaDev ${h.dev} nvmlDev ${h.dev} busId ${busId} commId ${commId} - Init COMPLETE`;
          expect(parseLine(line)).toEqual({
            kind: "init",
            phase: "complete",
            func: "ncclCommInitRank",
            host: h.host,
            pid: h.pid,
            tid: h.tid,
            cudaDev: h.dev,
            comm,
            rank,
            nranks,
            commCudaDev: h.dev,
            nvmlDev: h.dev,
            busId,
            commId,
          });
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("version lines", () => {
    fc.assert(
      fc.property(fc.nat(99), fc.nat(99), fc.nat(99), fc.nat(99), fc.nat(9), (major, minor, patch, cm, cn) => {
        expect(parseLine(`NCCL version ${major}.${minor}.${patch}+cuda${cm}.${cn}`)).toEqual({
          kind: "version",
          version: `${major}.${minor}.${patch}`,
          major,
          minor,
          patch,
          cuda: `${cm}.${cn}`,
        });
      }),
      { numRuns: RUNS },
    );
  });
});

describe("fuzz: NCCL scanners", () => {
  it("readInt: undefined or the exact safe integer printed; never NaN", () => {
    fc.assert(
      fc.property(fuzzInput(["12", "-3", "007", "123456789012345", "1234567890123456", "18446744073709551617"]), fc.nat(), (s, a) => {
        const i = s.length === 0 ? 0 : a % s.length;
        const v = readInt(s, i, s.length);
        if (v !== undefined) {
          expect(Number.isSafeInteger(v)).toBe(true);
          // === on purpose: "-0" reads as -0, which is zero (not a negative number) for every use.
          expect(v === Number(s.slice(i, pos))).toBe(true);
        } else expect(pos).toBe(i);
      }),
      { numRuns: RUNS },
    );
  });

  it("readRankList: undefined or safe integers only", () => {
    fc.assert(
      fc.property(fuzzInput(["0, 1, 2", "3 4 5", "47", "0, 18446744073709551617"]), (s) => {
        const r = readRankList(s, 0, s.length);
        if (r !== undefined) for (const v of r) expect(Number.isSafeInteger(v)).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });

  it("parsePrefix never reads past its end: the decoded prefix ends within [start, end]", () => {
    fc.assert(
      fc.property(fuzzInput(LINES, 4), fc.nat(), fc.boolean(), (s, a, strict) => {
        const end = s.length === 0 ? 0 : a % (s.length + 1);
        const p = parsePrefix(s, 0, end, strict);
        expect(p.end).toBeGreaterThanOrEqual(0);
        expect(p.end).toBeLessThanOrEqual(end);
        expect(violations(p)).toEqual([]);
      }),
      {
        numRuns: RUNS,
        // fast-check counter-examples: the ':' after `[rank1]` and the 'm' of `[0m` lay past end.
        examples: [
          ["[rank1]:ZE ProcessGroupNCCL.cpp:523] [Rank 1] Watchdog caught collective operation timeout", 7, false],
          ["[0m", 2, false],
          ["[1,5]<stdout>:h", 5, false],
          ["\u001b[0;32mh", 3, false],
        ],
      },
    );
  });
});
