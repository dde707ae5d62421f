/**
 * COLL, teardown, WARN, PyTorch watchdog and split-comm lines have real shapes (masked equality
 * with a fixture line, or with the NCCL format string where no capture exists).
 */
import { describe, expect, it } from "vitest";
import * as F from "../sim/faults.js";
import { maskLine } from "../sim/mask.js";
import { Scenario } from "../sim/scenario.js";
import type { SimLine } from "../sim/format.js";
import { combinedLine } from "../sim/writer.js";
import { fixtureLine, fixtureLines, simLine, warnMessage } from "./helpers.js";

const tpDp = [
  { name: "tp", groupSize: 2, layout: "contiguous" as const },
  { name: "dp", groupSize: 4, layout: "strided" as const },
];

describe("mask", () => {
  it("keeps shape differences visible", () => {
    const a = "h:1:2 [0] NCCL INFO AllReduce: opCount 1a sendbuff 0x7f00 recvbuff 0x7f00 count 64 datatype 7";
    expect(maskLine(a)).toBe("H:N:N [N] NCCL INFO AllReduce: opCount N sendbuff 0xP recvbuff 0xP count N datatype N");
    expect(maskLine(a)).not.toBe(maskLine(a.replace("count 64 ", "count 64 size 256 ")));
    expect(maskLine(a)).not.toBe(maskLine(a.replace("AllReduce", "AllGather")));
  });
});

describe("COLL lines (fixtures 56, 51, 50)", () => {
  const sim = new Scenario({ nodes: ["hopper01", "hopper02"], ranksPerNode: 4, comms: tpDp, broadcastEvery: 1 });
  const lines = sim.advance(8000).lines;
  const f56 = "56-coll-tp2-allgather-reducescatter-allreduce.log";
  it.each([
    ["AllGather", f56, /AllGather: opCount/],
    ["ReduceScatter", f56, /ReduceScatter: opCount/],
    ["AllReduce", f56, /AllReduce: opCount .* count 1 /],
    ["AllReduce", "51-coll-allreduce-2rank-tensorflow.log", /AllReduce: opCount 1b /],
  ])("%s (%s)", (op, file, re) => {
    const real = maskLine(fixtureLine(file, re));
    const mine = lines.filter((l) => l.text.includes(` NCCL INFO ${op}: opCount `));
    expect(mine.length).toBeGreaterThan(0);
    for (const l of mine) expect(maskLine(l.text)).toBe(real);
  });

  it("Broadcast (fixture 50, a line with one header)", () => {
    const real = fixtureLines("50-coll-broadcast-8rank-interleaved-writes.log").find((l) =>
      /^\S+ \[\d\] NCCL INFO Broadcast: opCount 0 .* count 25503912 /.test(l),
    );
    expect(real).toBeDefined();
    expect(maskLine(simLine(lines, /Broadcast: opCount/))).toBe(maskLine(real ?? ""));
  });
});

describe("teardown, WARN and watchdog lines", () => {
  const sim = new Scenario(
    { ncclVersion: "2.23.4", nodes: ["n1", "n2"], ranksPerNode: 2, transport: { kind: "roce" } },
    {
      faults: [
        F.warn("ibCompletion", { rank: 0, atStep: 1 }),
        F.warn("connReset", { rank: 1, atStep: 1 }),
        F.warn("mismatch", { rank: 2, atStep: 1 }),
        F.allStallInside({ atStep: 3, collIndex: 1 }),
      ],
      watchdog: { timeoutMs: 600_000 },
    },
  );
  const lines = sim.advance(700_000).lines;

  it("Abort COMPLETE after the watchdog (fixture 44)", () => {
    expect(maskLine(simLine(lines, /Abort COMPLETE/))).toBe(maskLine(fixtureLine("44-socket-h100-8-socket-nics-plus-abort-complete.log", /Abort COMPLETE/)));
  });

  it("IB completion error: header (fixture 68), message with GIDs on RoCE (fixture 71), retcode trail (fixture 71)", () => {
    const warn = simLine(lines, /Got completion from peer/);
    expect(maskLine(warn.slice(0, warn.indexOf(" NCCL WARN ")))).toBe(
      maskLine(
        (() => {
          const l = fixtureLine("68-error-net_ib-completion-error4-vendor81-proxy-thread.log", /NCCL WARN/);
          return l.slice(0, l.indexOf(" NCCL WARN "));
        })(),
      ),
    );
    const f71 = "71-error-ib-completion-status12-then-status5-vendor249.log";
    expect(maskLine(warnMessage(warn))).toBe(maskLine(warnMessage(fixtureLine(f71, /status=12/))));
    const i = lines.findIndex((l) => l.text === warn);
    expect(lines[i - 1]?.text).toBe("");
    const trail = fixtureLines(f71).slice(1, 4).map(maskLine);
    expect(lines.slice(i + 1, i + 4).map((l) => maskLine(l.text))).toEqual(trail);
  });

  it("connection reset (fixture 73; the reporter cut the IP to '172....')", () => {
    const real = fixtureLine("73-error-2.21.5-distbackenderror-connection-reset.log", /Connection reset by peer/).replace("172....", "172.16.0.1");
    expect(maskLine(warnMessage(simLine(lines, /Connection reset by peer/)))).toBe(maskLine(real));
  });

  it("mismatched collective (NCCL init.cc format, GUIDE section 5)", () => {
    expect(maskLine(warnMessage(simLine(lines, /Mismatched collective/)))).toBe(
      maskLine(
        "Mismatched collective detected, please check your collective calls at and around rank 39. " +
          "You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs",
      ),
    );
  });

  it("PyTorch watchdog timeout and exception lines (fixture 82)", () => {
    const f82 = "82-watchdog-pt2.6-pg-guid-format.log";
    expect(maskLine(simLine(lines, /Watchdog caught/))).toBe(maskLine(fixtureLine(f82, /Watchdog caught/)));
    expect(maskLine(simLine(lines, /detected by watchdog/))).toBe(maskLine(fixtureLine(f82, /detected by watchdog/)));
  });

  it("launcher prefixes in the combined stdout", () => {
    const l: SimLine | undefined = lines.find((x) => x.kind === "coll" && x.rank === 3);
    expect(l).toBeDefined();
    if (l === undefined) return;
    expect(combinedLine(sim, l, "openmpi")).toBe(`[1,3]<stdout>:${l.text}`);
    expect(combinedLine(sim, l, "pytorch")).toBe(`[rank3]:${l.text}`);
    const wd = lines.find((x) => x.kind === "watchdog" && x.rank === 3);
    expect(wd === undefined ? "" : combinedLine(sim, wd, "pytorch")).toMatch(/^\[rank3\]:\[E\d+ /);
  });
});

describe("2.26+ WARN timestamp prefix (fixture 05) and Destroy (fixture 02)", () => {
  const sim = new Scenario(
    { ncclVersion: "2.29.2", nodes: ["a", "b"], ranksPerNode: 1, subsystems: ["INIT", "COLL", "DESTROY"] },
    { faults: [F.warn("connReset", { rank: 0, atStep: 0 }), F.jobExits({ atStep: 2, clean: true })] },
  );
  const lines = sim.advance(60_000).lines;
  it("timestamped WARN after an empty line", () => {
    const f05 = "05-full-2.29.2-p2p-shm-disabled-socket-fallback-internal-error.log";
    const real = fixtureLine(f05, /NCCL WARN/);
    const mine = simLine(lines, /NCCL WARN/);
    expect(maskLine(mine.slice(0, mine.indexOf(" NCCL WARN ")))).toBe(maskLine(real.slice(0, real.indexOf(" NCCL WARN "))));
    const all = fixtureLines(f05);
    expect(all[all.indexOf(real) - 1]).toBe("");
    expect(lines[lines.findIndex((l) => l.text === mine) - 1]?.text).toBe("");
  });
  it("Destroy COMPLETE", () => {
    expect(maskLine(simLine(lines, /Destroy COMPLETE/))).toBe(
      maskLine(fixtureLine("02-full-2.23.4-4node-ib-gdrdma-init-complete-perf-destroy.log", /Destroy COMPLETE/)),
    );
  });
});

describe("split communicators (NCCL init.cc format strings; no capture has one)", () => {
  const start = "H:N:N [N] NCCL INFO ncclCommSplit comm 0xP rank N nranks N cudaDev N nvmlDev N busId N parent 0xP WORD N color N key N- Init START";
  const complete = start.replace("- Init START", " - Init COMPLETE");
  for (const [v, word] of [
    ["2.23.4", "splitCount"],
    ["2.27.6", "splitCount"],
    ["2.28.3", "childCount"],
    ["2.29.2", "childCount"],
  ] as const) {
    it(`${v} prints ${word}`, () => {
      const lines = new Scenario({ ncclVersion: v, nodes: ["a"], ranksPerNode: 4, comms: tpDp.slice(0, 1) }).advance(5000).lines;
      expect(maskLine(simLine(lines, /ncclCommSplit .*Init START/))).toBe(start.replace("WORD", word));
      expect(maskLine(simLine(lines, /ncclCommSplit .*Init COMPLETE/))).toBe(complete.replace("WORD", word));
    });
  }
});
