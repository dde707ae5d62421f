/**
 * Init/NET/topology lines of the simulator have the shape of real ones: for each line kind, one
 * real line from test/fixtures/nccl and the simulated line of the same kind and version are
 * masked (maskLine) and must be equal.
 */
import { describe, expect, it } from "vitest";
import { maskLine } from "../sim/mask.js";
import { Scenario } from "../sim/scenario.js";
import type { SimLine } from "../sim/format.js";
import { fixtureLine, simLine } from "./helpers.js";

function run(sim: Scenario, ms: number): SimLine[] {
  return sim.advance(ms).lines;
}

/** Strips a launcher tag such as `[0] ` (fixtures 26, 41). */
function untag(line: string): string {
  return line.replace(/^\[\d+\] /, "");
}

describe("2.23.4 IB job (fixture 02 shapes)", () => {
  const sim = new Scenario({
    ncclVersion: "2.23.4+cuda12.4",
    nodes: ["gpu34", "gpu36", "gpu40", "gpu41"],
    ranksPerNode: 2,
    channels: 3,
    subsystems: ["INIT", "COLL", "NET"],
  });
  const lines = run(sim, 6000);
  const cases: [string, RegExp, RegExp][] = [
    ["version", /NCCL INFO NCCL version /, /NCCL INFO NCCL version /],
    ["bootstrap", /NCCL INFO Bootstrap : Using/, /NCCL INFO Bootstrap : Using/],
    ["driver", /cudaDriverVersion/, /cudaDriverVersion/],
    ["init start", /ncclCommInitRank .* Init START/, /ncclCommInitRank .* Init START/],
    ["init complete", /ncclCommInitRank .* Init COMPLETE/, /ncclCommInitRank .* Init COMPLETE/],
    ["init timings", /Init timings - ncclCommInitRank/, /Init timings - ncclCommInitRank/],
    ["comm info", / nRanks .* MNNVL /, / nRanks .* MNNVL /],
    ["ring listing", /Channel 00\/03 : /, /Channel 00\/03 : /],
    ["trees", /Trees \[0\]/, /Trees \[0\]/],
    ["chunksize", /P2P Chunksize/, /P2P Chunksize/],
    ["channels summary", /coll channels, /, /coll channels, /],
    ["rings connected", /Connected all rings/, /Connected all rings/],
    ["trees connected", /Connected all trees/, /Connected all trees/],
  ];
  for (const [name, real, simRe] of cases) {
    it(`${name} line`, () => {
      expect(maskLine(simLine(lines, simRe))).toBe(maskLine(fixtureLine("02-full-2.23.4-4node-ib-gdrdma-init-complete-perf-destroy.log", real)));
    });
  }

  it("every process logs the version line from 2.23", () => {
    expect(lines.filter((l) => l.kind === "version").length).toBe(8);
  });

  it("channel lines: P2P/CUMEM inside a node (fixture 31), NET/IB/N/GDRDMA across (fixture 20)", () => {
    expect(maskLine(simLine(lines, / via P2P\/CUMEM$/))).toBe(maskLine(fixtureLine("31-init-roce-p2p-cumem-net-ibext-channels.log", / via P2P\/CUMEM$/)));
    for (const dir of ["receive", "send"]) {
      const re = new RegExp(`\\[${dir}\\] via NET/IB/\\d+/GDRDMA$`);
      expect(maskLine(simLine(lines, re))).toBe(maskLine(fixtureLine("20-init-megatron-gdrdma-numeric-hostname.log", re)));
    }
  });

  it("GDR enabled per HCA (fixture 04)", () => {
    expect(maskLine(simLine(lines, /GPU Direct RDMA Enabled for HCA 0/))).toBe(
      maskLine(fixtureLine("04-full-2.16.5-2node-rank0-gdr-enabled-topo-trace.log", /GPU Direct RDMA Enabled for HCA 0/)),
    );
  });

  it("runtime connect: channel lines come after Init COMPLETE, at the first collective", () => {
    const r0 = lines.filter((l) => l.rank === 0);
    const complete = r0.findIndex((l) => /ncclCommInitRank .* Init COMPLETE/.test(l.text));
    const firstConnect = r0.findIndex((l) => l.kind === "connect");
    const firstColl = r0.findIndex((l) => l.kind === "coll");
    expect(complete).toBeGreaterThanOrEqual(0);
    expect(firstConnect).toBeGreaterThan(firstColl);
    expect(firstColl).toBeGreaterThan(complete);
  });
});

describe("2.29.2 socket fallback (fixture 05 shapes)", () => {
  const sim = new Scenario({ ncclVersion: "2.29.2", nodes: ["vm-a", "vm-b"], ranksPerNode: 1, transport: { kind: "socket", oobIf: "eth0" } });
  const lines = run(sim, 6000);
  const f05 = "05-full-2.29.2-p2p-shm-disabled-socket-fallback-internal-error.log";
  const same = [
    /NCCL INFO Bootstrap: Using/,
    /NET\/IB : No device found\./,
    /NET\/IB : Using \[RO\]; OOB/,
    /Failed to initialize NET plugin IB/,
    /NET\/Socket : Using \[0\]/,
    /Initialized NET plugin Socket/,
    /Assigned NET plugin Socket to comm/,
    /Using network Socket/,
    /\[Rank 0\] ncclCommInitRank .* Init START/,
    /ncclCommInitRank .* Init COMPLETE/,
    /Init timings - /,
    / nRanks .* MNNVL /,
    /Channel 00\/02 : /,
    /Trees \[0\]/,
    /coll channels, /,
  ];
  for (const re of same) {
    it(`${re.source} line`, () => {
      expect(maskLine(simLine(lines, re, 0))).toBe(maskLine(fixtureLine(f05, re)));
    });
  }

  it("socket channel lines (fixture 41)", () => {
    expect(maskLine(simLine(lines, /\[send\] via NET\/Socket\/0$/))).toBe(
      maskLine(untag(fixtureLine("41-socket-2node-net-socket-plus-shm-tagged.log", /\[send\] via NET\/Socket\/0$/))),
    );
  });
});

describe("2.27.6 bootstrap and version (fixture 32)", () => {
  const lines = run(new Scenario({ ncclVersion: "2.27.6+cuda13.0", nodes: ["a", "b"], ranksPerNode: 1, transport: { oobIf: "enp9s0np0" } }), 3000);
  for (const re of [/Bootstrap: Using/, /NCCL version /, /cudaDriverVersion/]) {
    it(`${re.source} line`, () => {
      expect(maskLine(simLine(lines, re))).toBe(maskLine(fixtureLine("32-init-2.27.6-cuda13-2node.log", re)));
    });
  }
});

describe("2.21.5 RoCE without GDR (fixtures 49, 28, 25, 04)", () => {
  const sim = new Scenario({
    ncclVersion: "2.21.5",
    nodes: ["hostname1", "hostname2"],
    ranksPerNode: 1,
    transport: { kind: "roce", gdr: false, hcas: ["mlx5_0", "mlx5_1"], oobIf: "primaryip" },
  });
  const lines = run(sim, 6000);
  const f49 = "49-gdr-disabled-for-hca-roce.log";
  for (const re of [/NET\/IB : Using \[0\]/, /Using non-device net plugin version 0/, /Using network IB/, /GPU Direct RDMA Disabled for HCA 1/]) {
    it(`${re.source} line`, () => {
      expect(maskLine(simLine(lines, re))).toBe(maskLine(fixtureLine(f49, re)));
    });
  }

  it("Init START starts like 2.21.5's (fixture 28, cut by the excerpt)", () => {
    const real = maskLine(fixtureLine("28-init-2.21.5-intel-irdma-roce-2node.log", /ncclCommInitRank comm/));
    expect(maskLine(simLine(lines, /Init START/)).startsWith(real)).toBe(true);
  });

  it("padded ring listing before 2.23 (fixture 04) and IB lines without /GDRDMA (fixture 25)", () => {
    expect(maskLine(simLine(lines, /Channel 00\/\d+ :/))).toBe(
      maskLine(fixtureLine("04-full-2.16.5-2node-rank0-gdr-enabled-topo-trace.log", /Channel 00\/02 :/)),
    );
    expect(maskLine(simLine(lines, /\[send\] via NET\/IB\/\d+$/))).toBe(
      maskLine(fixtureLine("25-init-16rank-channels-net-ib-no-gdrdma.log", /\[send\] via NET\/IB\/\d+$/)),
    );
  });

  it("only global rank 0 logs the version before 2.23; channels connect before Init COMPLETE", () => {
    expect(lines.filter((l) => l.kind === "version").map((l) => l.rank)).toEqual([0]);
    const r1 = lines.filter((l) => l.rank === 1);
    expect(r1.findIndex((l) => l.kind === "connect")).toBeLessThan(r1.findIndex((l) => /Init COMPLETE/.test(l.text)));
  });
});
