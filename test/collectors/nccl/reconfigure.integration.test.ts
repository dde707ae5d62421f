import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { parseCli, type AgentConfig } from "../../../agent/config/config.js";
import { createExec } from "../../../collectors/exec.js";
import { createNcclCollector, type NcclCollector } from "../../../collectors/nccl/collector.js";
import type { NcclSettings } from "../../../collectors/nccl/settings.js";
import { eventually } from "../../helpers/eventually.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";

const COMM_ID = "0x49bbd7790311d5eb";
const init = (pid: number, rank: number, ptr: string): string =>
  `node1:${pid}:${pid} [${rank}] NCCL INFO comm ${ptr} rank ${rank} nranks 2 cudaDev ${rank} nvmlDev ${rank} busId ${rank + 1}000 commId ${COMM_ID} - Init COMPLETE\n`;
const coll = (pid: number, rank: number, ptr: string, n: number): string =>
  Array.from(
    { length: n },
    (_, i) =>
      `node1:${pid}:${pid} [${rank}] NCCL INFO AllReduce: opCount ${i.toString(16)} sendbuff 0x7f01 recvbuff 0x7f02 count 1024 datatype 7 op 0 root 0 comm ${ptr} [nranks=2] stream 0x5501\n`,
  ).join("");

/** The nccl settings and shared settings the agent would hand to reconfigure() for these flags. */
function config(args: string[]): [NcclSettings, AgentConfig] {
  const a = parseCli(args, {});
  if (a.kind !== "run") throw new Error("not a run");
  return [a.config.collectors.nccl, a.config];
}

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

const temp = (): string => testTempDir(undefined, "rw-reconf-");

function counts(c: NcclCollector): Record<number, number> {
  const comm = c.tracker.comms.get(COMM_ID);
  return Object.fromEntries([...(comm?.ranks.values() ?? [])].map((r) => [r.rank, r.collectives]));
}

describe("nccl collector reconfigure (SIGHUP)", () => {
  it("follows new paths and a new threshold without losing or recounting what it has", async () => {
    const a = temp();
    const b = temp();
    const fa = join(a, "nccl-node1-100.log");
    writeFileSync(fa, init(100, 0, "0x55aa10") + coll(100, 0, "0x55aa10", 3));
    writeFileSync(join(b, "nccl-node1-200.log"), init(200, 1, "0x66bb20") + coll(200, 1, "0x66bb20", 2));
    const c = createNcclCollector(
      { registry: new Registry(), logger: pino({ level: "silent" }), exec: createExec(), now: Date.now },
      { paths: [a], procfsRoot: "/proc", hangThresholdMs: 120_000, maxComms: 16, retireAfterMs: 3_600_000, checkPids: false, usePolling: false },
    );
    c.start?.();
    cleanup.push(async () => {
      await c.stop?.();
    });
    await eventually(() => expect(counts(c)).toEqual({ 0: 3 }));

    c.reconfigure?.(
      ...config([
        `--collector.nccl.path=${a}`,
        `--collector.nccl.path=${b}`,
        "--collector.nccl.hang-threshold=5m",
        "--collector.nccl.check-pids=false",
        "--collector.nccl.polling=false",
      ]),
    );
    appendFileSync(fa, coll(100, 0, "0x55aa10", 2));
    await eventually(() => expect(counts(c)).toEqual({ 0: 5, 1: 2 }));
    expect(c.verdicts().find((v) => v.commKey === COMM_ID)?.thresholdMs).toBe(300_000);
    // Later lines still arrive once each through the new follower.
    appendFileSync(fa, coll(100, 0, "0x55aa10", 1));
    await eventually(() => expect(counts(c)).toEqual({ 0: 6, 1: 2 }));
  });
});
