/**
 * Each rank's HCA ports on the real logs (rankHcaPorts): the NET/IB Using list's entries that its
 * channel lines go through (02: PXN through the other GPU's HCA; 04: the second of two listed, not
 * the RoCE one first), else the whole list; none where NET/IB lists none. The process's
 * ringwatch_nccl_process_net_device_info is the union of its ranks' ports.
 */
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { NcclMetrics } from "../../../../../collectors/nccl/metrics.js";
import { parseLine } from "../../../../../collectors/nccl/logs/parse/line.js";
import { Tracker } from "../../../../../collectors/nccl/logs/state/tracker.js";
import { rankHcaPorts } from "../../../../../collectors/nccl/logs/state/net-devices.js";
import { readCapture } from "../../../../helpers/fixtures.js";

function feedLines(t: Tracker, source: string, lines: string[]): void {
  lines.forEach((line, i) => {
    const ev = parseLine(line);
    if (ev) t.ingest(ev, { source, lineNo: i + 2 });
  });
}

/** Each rank's ports, as `{comm_id,rank,device,port} 1` lines. */
function netDevices(t: Tracker): string[] {
  const out: string[] = [];
  for (const c of t.comms.values()) {
    for (const r of c.ranks.values()) {
      const p = t.processes.get(r.processKey);
      if (p === undefined) continue;
      for (const h of rankHcaPorts(p, r)) out.push(`{comm_id="${c.key}",rank="${r.rank}",device="${h.device}",port="${h.port}"} 1`);
    }
  }
  return out.sort();
}

/** The published per-process series, without their name. */
async function processNetDevices(t: Tracker): Promise<string[]> {
  const registry = new Registry();
  new NcclMetrics(registry, () => undefined).publish(t, [], undefined);
  return (await registry.metrics())
    .split("\n")
    .filter((l) => l.startsWith("ringwatch_nccl_process_net_device_info{"))
    .map((l) => l.replace("ringwatch_nccl_process_net_device_info", ""))
    .sort();
}

function fed(name: string): Tracker {
  const t = new Tracker();
  feedLines(t, name, readCapture(`nccl/${name}`).split("\n"));
  return t;
}

describe("each rank's HCA ports, from its NET/IB lines", () => {
  it("02 (2.23.4, 4 nodes x 2 ranks, IBext_v8): the ports the channel lines go through, PXN included", async () => {
    const c = 'comm_id="0x70fba02a8d314739"';
    expect(netDevices(fed("02-full-2.23.4-4node-ib-gdrdma-init-complete-perf-destroy.log"))).toEqual([
      // gpu34 (ranks 0, 1): via NET/IBext_v8/1 = [1]mlx5_0; gpu40 (4, 5): /0 = [0]mlx5_2, rank 5
      // through rank 4's HCA (`/0(4)`, PXN); gpu36 (2, 3): /5 = mlx5_4; gpu41 (6, 7): /1 = mlx5_0.
      `{${c},rank="0",device="mlx5_0",port="1"} 1`,
      `{${c},rank="1",device="mlx5_0",port="1"} 1`,
      `{${c},rank="2",device="mlx5_4",port="1"} 1`,
      `{${c},rank="3",device="mlx5_4",port="1"} 1`,
      `{${c},rank="4",device="mlx5_2",port="1"} 1`,
      `{${c},rank="5",device="mlx5_2",port="1"} 1`,
      `{${c},rank="6",device="mlx5_0",port="1"} 1`,
      `{${c},rank="7",device="mlx5_0",port="1"} 1`,
    ]);
    // One series per process and port: the capture's 8 ranks are 8 processes, so the same ports.
    const perProcess = await processNetDevices(fed("02-full-2.23.4-4node-ib-gdrdma-init-complete-perf-destroy.log"));
    expect(perProcess.map((l) => /device="([^"]+)"/.exec(l)?.[1]).sort()).toEqual([
      "mlx5_0",
      "mlx5_0",
      "mlx5_0",
      "mlx5_0",
      "mlx5_2",
      "mlx5_2",
      "mlx5_4",
      "mlx5_4",
    ]);
    expect(new Set(perProcess.map((l) => /pid="([^"]+)"/.exec(l)?.[1])).size).toBe(8);
  });

  it("04 (2.16.5): [0]mlx5_0 RoCE and [1]mlx5_2 IB are listed, the channels use /1: only mlx5_2", () => {
    expect(netDevices(fed("04-full-2.16.5-2node-rank0-gdr-enabled-topo-trace.log"))).toEqual([
      '{comm_id="0xb2f794396f6d0bd1",rank="0",device="mlx5_2",port="1"} 1',
    ]);
  });

  it("05 (2.29.2): NET/IB lists no device and the data goes over sockets: no series", async () => {
    const t = fed("05-full-2.29.2-p2p-shm-disabled-socket-fallback-internal-error.log");
    expect(t.comms.size).toBeGreaterThan(0);
    expect(netDevices(t)).toEqual([]);
    expect(await processNetDevices(t)).toEqual([]);
  });

  it("13 (2.10.3, 4 HCAs): before any channel line, the rank has every listed port; the ranks' series go with their communicator", async () => {
    const using = readCapture("nccl/13-init-2.10.3-power9-ib-4hca.log")
      .split("\n")
      .filter((l) => l.startsWith("lassen206:23224:23224 [0] NCCL INFO NET/IB : Using"));
    expect(using).toHaveLength(1);
    const t = new Tracker();
    // The capture is cut before its Init lines: this one is written in 2.10's form.
    feedLines(t, "13", [...using, "lassen206:23224:23224 [0] NCCL INFO comm 0x1a2b3c0 rank 0 nranks 8 cudaDev 0 busId 404000 - Init COMPLETE"]);
    const all = netDevices(t);
    expect(all.map((l) => /device="([^"]+)"/.exec(l)?.[1])).toEqual(["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]);
    // Then a channel line through NET/IB/3 narrows it to [3]mlx5_2.
    feedLines(t, "13", ["lassen206:23224:23300 [0] NCCL INFO Channel 00 : 0[404000] -> 4[404000] [send] via NET/IB/3/GDRDMA"]);
    expect(netDevices(t).map((l) => /device="([^"]+)"/.exec(l)?.[1])).toEqual(["mlx5_2"]);
    expect(await processNetDevices(t)).toEqual(['{pid="23224",host_pid="",device="mlx5_2",port="1"} 1']);
    for (const key of [...t.comms.keys()]) t.retireComm(key);
    expect(netDevices(t)).toEqual([]);
    expect(await processNetDevices(t)).toEqual([]);
  });

  it("29 (2.22.3, 8 RoCE HCAs): NCCL connects at the first collective, so no port before its channel lines, then the one they go through", async () => {
    const using = readCapture("nccl/29-init-2.22.3-k8s-roce-8hca.log")
      .split("\n")
      .filter((l) => l.startsWith("job-3bb823c0-6d27-4312-8094-1c5910bf9b51-worker-0:5664:5734 [1] NCCL INFO NET/IB : Using"));
    expect(using).toHaveLength(1);
    const h = "job-3bb823c0-6d27-4312-8094-1c5910bf9b51-worker-0:5664";
    const t = new Tracker();
    // The capture holds no version or Init line of this process: these are written in 2.22's form.
    feedLines(t, "29", [
      `${h}:5664 [1] NCCL INFO NCCL version 2.22.3+cuda12.6`,
      ...using,
      `${h}:5664 [1] NCCL INFO ncclCommInitRank comm 0x7f2c1c000000 rank 1 nranks 16 cudaDev 1 nvmlDev 1 busId 2a000 commId 0x2922 - Init COMPLETE`,
    ]);
    expect(t.comms.size).toBe(1);
    expect(netDevices(t)).toEqual([]);
    expect(await processNetDevices(t)).toEqual([]);
    // The first collective connects: its channel lines name [5]mlx5_5.
    feedLines(t, "29", [`${h}:5740 [1] NCCL INFO Channel 00/0 : 1[1] -> 9[1] [send] via NET/IB/5`]);
    expect(netDevices(t)).toEqual(['{comm_id="0x2922",rank="1",device="mlx5_5",port="1"} 1']);
    expect(await processNetDevices(t)).toEqual(['{pid="5664",host_pid="",device="mlx5_5",port="1"} 1']);
  });

  it("one process driving two GPUs (25's swat1-04 pid 2017630 prints [4] and [5]): each rank gets its own GPU's ports", async () => {
    const t = new Tracker();
    const h = "swat1-04:2017630:2017699";
    feedLines(t, "25", [
      `${h} [4] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [4]mlx5_4:1/IB [5]mlx5_5:1/IB ; OOB ib0:10.0.0.4<0>`,
      `${h} [4] NCCL INFO comm 0x5000 rank 4 nranks 16 cudaDev 4 busId 9a000 commId 0x25 - Init COMPLETE`,
      `${h} [5] NCCL INFO comm 0x5001 rank 5 nranks 16 cudaDev 5 busId 9b000 commId 0x25 - Init COMPLETE`,
      // The capture's own channel lines (25, lines 3-4): rank 5 sends and rank 4 receives through NET/IB/3.
      ...readCapture("nccl/25-init-16rank-channels-net-ib-no-gdrdma.log").split("\n").slice(1, 3),
      `${h} [5] NCCL INFO Channel 01/0 : 5[5] -> 12[4] [send] via NET/IB/2`,
    ]);
    expect(netDevices(t)).toEqual([
      '{comm_id="0x25",rank="4",device="mlx5_3",port="1"} 1',
      '{comm_id="0x25",rank="5",device="mlx5_2",port="1"} 1',
      '{comm_id="0x25",rank="5",device="mlx5_3",port="1"} 1',
    ]);
    // The process: both GPUs' ports, once each.
    expect(await processNetDevices(t)).toEqual([
      '{pid="2017630",host_pid="",device="mlx5_2",port="1"} 1',
      '{pid="2017630",host_pid="",device="mlx5_3",port="1"} 1',
    ]);
  });
});
