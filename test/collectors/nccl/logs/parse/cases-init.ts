/**
 * Facts read from captures 01-49 (init, transport, GDR, topology). One check per capture;
 * the cut last line of excerpt captures is left out by captureEvents().
 */
import { expect } from "vitest";
import type { NcclEvent } from "../../../../../collectors/nccl/logs/parse/types.js";
import { kindCounts, ofKind } from "./capture.js";

export type Check = (evs: NcclEvent[]) => void;

const versions = (evs: NcclEvent[]): string[] => [...new Set(ofKind(evs, "version").map((e) => e.version))];
const nets = (evs: NcclEvent[], what: string): NcclEvent[] => ofKind(evs, "net").filter((e) => e.what === what);

export const INIT_CASES: Record<string, Check> = {
  "01": (evs) => {
    expect(versions(evs)).toEqual(["2.23.4"]);
    expect(ofKind(evs, "version")[0]).toMatchObject({ cuda: "12.4", host: "gpu34", pid: 23654 });
    const starts = ofKind(evs, "init");
    expect(starts).toHaveLength(8);
    expect(starts.every((e) => e.phase === "start" && e.commId === "0x45701cda3f259923" && e.nranks === 8)).toBe(true);
    expect(starts.map((e) => e.rank).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // The job hangs after init: no Init COMPLETE, no COLL.
    expect(evs.some((e) => e.kind === "coll" || (e.kind === "init" && e.phase === "complete"))).toBe(false);
    const ib = nets(evs, "using")[0];
    expect(ib).toMatchObject({ net: "IB", relaxedOrdering: true, oob: "ib0:10.159.0.40<0>" });
    expect(ib?.kind === "net" && ib.devices?.map((d) => `${d.name}:${d.port}/${d.linkLayer}${d.sharp ? "+S" : ""}`)).toEqual([
      "mlx5_2:1/IB+S",
      "mlx5_0:1/IB+S",
      "mlx5_6:1/IB+S",
      "mlx5_8:1/IB+S",
      "mlx5_9:1/IB+S",
      "mlx5_4:1/IB+S",
    ]);
    expect(nets(evs, "selected").every((e) => e.kind === "net" && e.plugin === "IBext_v8")).toBe(true);
    const collnet = ofKind(evs, "channel");
    expect(collnet.map((c) => [c.transport, c.net, c.netDev, c.gdr, c.dir])).toEqual([
      ["COLLNET", "SHARP", 1, true, "receive"],
      ["COLLNET", "SHARP", 1, true, "receive"],
      ["COLLNET", "SHARP", 5, true, "receive"],
      ["COLLNET", "SHARP", 0, true, "receive"],
    ]);
    const warns = ofKind(evs, "warn");
    expect(warns.map((w) => [w.warnKind, w.file, w.line, w.host])).toEqual([
      ["other", "sharp_plugin.c", 382, "gpu36"],
      ["other", "sharp_plugin.c", 382, "gpu40"],
      ["other", "sharp_plugin.c", 382, "gpu41"],
      ["other", "sharp_plugin.c", 382, "gpu34"],
    ]);
    expect(ofKind(evs, "tree")[0]?.trees[0]).toEqual({ channel: 0, rank: 0, up: -1, down: [1, 4] });
    expect(ofKind(evs, "ring")[0]).toMatchObject({ channel: 0, nChannels: 3, order: [0, 1, 2, 3, 4, 5, 6, 7] });
    expect(ofKind(evs, "comm_info")[0]).toMatchObject({ rank: 0, nranks: 8, nNodes: 4, localRanks: 2, localRank: 0 });
  },
  "02": (evs) => {
    expect(kindCounts(evs)).toMatchObject({ init: 16, teardown: 8, channel: 86, connected: 16, warn: 8 });
    const done = ofKind(evs, "init").filter((e) => e.phase === "complete");
    expect(done).toHaveLength(8);
    expect(new Set(done.map((e) => e.commId))).toEqual(new Set(["0x70fba02a8d314739"]));
    expect(done.find((e) => e.rank === 4)).toMatchObject({ func: "ncclCommInitRank", busId: "4c000", host: "gpu40", pid: 9455 });
    const destroy = ofKind(evs, "teardown");
    expect(destroy.every((t) => t.what === "destroy" && t.phase === "complete" && t.nranks === 8)).toBe(true);
    expect(destroy[0]).toMatchObject({ comm: "0x636b080", rank: 3, busId: "cb000", commCudaDev: 1, pid: 20776 });
    const net = ofKind(evs, "channel").filter((c) => c.transport === "NET");
    expect(net.length).toBeGreaterThan(40);
    expect(net.every((c) => c.net === "IBext_v8" && c.gdr)).toBe(true);
    expect(
      ofKind(evs, "channel")
        .filter((c) => c.transport === "P2P")
        .every((c) => c.mode === "CUMEM/read" && !c.gdr),
    ).toBe(true);
    const pxn = net.find((c) => c.proxyRank !== undefined);
    expect(pxn).toMatchObject({ from: 3, to: 4, dir: "send", netDev: 5, proxyRank: 2, host: "gpu36", pid: 20776 });
    const warns = ofKind(evs, "warn").map((w) => w.message);
    expect(warns.filter((m) => m.startsWith("NET/IB : SHARP coll init error"))).toHaveLength(4);
    expect(warns.filter((m) => m.startsWith("Cannot initialize CollNet"))).toHaveLength(4);
    expect(ofKind(evs, "retcode").map((r) => r.code)).toEqual(new Array<number>(12).fill(2));
  },
  "04": (evs) => {
    expect(ofKind(evs, "version")[0]).toMatchObject({ version: "2.16.5", cuda: "11.8" });
    expect(ofKind(evs, "version")[0]?.host).toBeUndefined(); // bare `NCCL version` line, no header
    const ib = nets(evs, "using")[0];
    expect(ib?.kind === "net" && ib.devices?.map((d) => `${d.name}/${d.linkLayer}`)).toEqual(["mlx5_0/RoCE", "mlx5_2/IB"]);
    const gdr = ofKind(evs, "gdr");
    expect(gdr.filter((g) => g.scope === "hca").map((g) => g.hcaName)).toEqual(["mlx5_0", "mlx5_2"]);
    expect(gdr.every((g) => g.enabled)).toBe(true);
    expect(gdr.find((g) => g.scope === "gpu")).toMatchObject({ gpu: "81000", hca: 1, distance: 6, limit: 7, read: false });
    expect(gdr.filter((g) => g.read === true)).toHaveLength(2);
    const ch = ofKind(evs, "channel");
    expect(ch.every((c) => c.via.startsWith("NET/IB/1/GDRDMA") && c.gdr && c.fromDev === "81000")).toBe(true);
    expect(ch.filter((c) => c.shared === true && c.connIndex === 1)).toHaveLength(2);
    expect(ofKind(evs, "init")).toEqual([expect.objectContaining({ phase: "complete", rank: 0, nranks: 2, busId: "81000", commId: "0xb2f794396f6d0bd1" })]);
    expect(ofKind(evs, "init")[0]?.func).toBeUndefined();
    expect(ofKind(evs, "ring").filter((r) => r.self !== undefined)).toHaveLength(2);
    expect(ofKind(evs, "ring")[2]).toMatchObject({ channel: 0, prev: 1, self: 0, next: 1 });
  },
  "05": (evs) => {
    expect(ofKind(evs, "version")[0]).toMatchObject({ version: "2.29.2", major: 2, minor: 29, patch: 2, cuda: "12.8" });
    expect(nets(evs, "no_device")).toHaveLength(1);
    expect(nets(evs, "using").find((e) => e.kind === "net" && e.net === "Socket")).toMatchObject({
      devices: [{ index: 0, name: "eth0", addr: "172.17.16.64" }],
    });
    expect(ofKind(evs, "init").map((e) => e.phase)).toEqual(["start", "complete"]);
    expect(ofKind(evs, "init")[0]).toMatchObject({ func: "ncclCommInitRank", busId: "80", commId: "0x2ef13c5ed0553a05" });
    expect(ofKind(evs, "channel")[0]).toMatchObject({ transport: "NET", net: "Socket", gdr: false, shared: true });
    expect(ofKind(evs, "warn")[0]).toMatchObject({
      ts: "2026-03-18 11:13:09",
      file: "misc/socket.cc",
      line: 537,
      tid: 28499,
      warnKind: "other",
    });
    expect(ofKind(evs, "retcode").map((r) => r.code)).toEqual(new Array<number>(8).fill(3));
    expect(ofKind(evs, "retcode").find((r) => r.context !== undefined)).toMatchObject({ file: "group.cc", line: 78 });
    expect(ofKind(evs, "pt_error")[0]).toMatchObject({ what: "nccl_error", headerless: true, reason: expect.stringMatching(/^internal error/) as unknown });
  },
  "07": (evs) => {
    expect(versions(evs)).toEqual(["2.3.5"]);
    expect(nets(evs, "device").map((e) => e.kind === "net" && e.devices?.[0]?.name)).toEqual(["mlx5_3", "mlx5_2", "mlx5_1", "mlx5_0"]);
    expect(nets(evs, "selected")[0]).toMatchObject({ net: "IB", plugin: "IB" });
    expect(nets(evs, "bootstrap")[0]).toMatchObject({ devices: [{ name: "enp1s0f0", addr: "100.97.16.164" }] });
  },
  "08": (evs) => {
    expect(versions(evs)).toEqual(["2.3.7"]);
    expect(nets(evs, "selected").every((e) => e.kind === "net" && e.net === "Socket")).toBe(true);
    expect(nets(evs, "using")).toHaveLength(0);
    const info = ofKind(evs, "comm_info");
    expect(info.map((c) => [c.rank, c.nranks, c.pid])).toEqual([
      [0, 8, 46654],
      [1, 8, 46655],
      [2, 8, 46656],
      [1, 8, 46655],
    ]);
    expect(info[3]?.comm).toBe("0x7f132405ad20");
  },
  "10": (evs) => {
    expect(versions(evs)).toEqual(["2.7.8"]);
    expect(nets(evs, "using")[0]).toMatchObject({ devices: [{ name: "mlx5_1", port: 1, linkLayer: "RoCE" }] });
    expect(ofKind(evs, "channel").map((c) => [c.dir, c.via, c.gdr, c.fromDev])).toEqual([
      ["receive", "NET/IB/0", false, "3000"],
      ["send", "NET/IB/0", false, "3000"],
    ]);
    expect(ofKind(evs, "warn")[0]).toMatchObject({ warnKind: "system_error", call: "ibv_create_cq", file: "misc/ibvwrap.cc", line: 268 });
    expect(ofKind(evs, "tree")[0]?.trees[1]).toEqual({ channel: 1, rank: 0, up: 1, down: [] });
  },
  "11": (evs) => {
    expect(ofKind(evs, "version")[0]).toMatchObject({ version: "2.7.8", cuda: "11.1" });
    expect(nets(evs, "using")[0]).toMatchObject({ devices: [{ name: "mlx5_0", linkLayer: "IB" }] });
    expect(nets(evs, "bootstrap").map((e) => e.pid)).toEqual([6561, 6563, 6564, 6565]);
  },
  "13": (evs) => {
    expect(ofKind(evs, "version")[0]).toMatchObject({ version: "2.10.3", cuda: "10.2" });
    const ib = nets(evs, "using");
    expect(ib).toHaveLength(2);
    expect(ib[0]?.kind === "net" && ib[0].devices?.map((d) => d.name)).toEqual(["mlx5_1", "mlx5_3", "mlx5_0", "mlx5_2"]);
    expect(ofKind(evs, "ring").every((r) => r.nChannels === 6)).toBe(true);
    expect(ofKind(evs, "tree")[0]?.trees).toHaveLength(6);
  },
  "14": (evs) => {
    const ch = ofKind(evs, "channel");
    expect(ch.filter((c) => c.transport === "NET").every((c) => c.gdr && c.via === "NET/IB/0/GDRDMA")).toBe(true);
    expect(ch.filter((c) => c.transport === "P2P").every((c) => c.mode === "IPC/read" && !c.gdr)).toBe(true);
    expect(ch[0]).toMatchObject({ from: 3, fromDev: "4a000", to: 6, toDev: "44000", dir: "send", host: "cosmos-hpc-100a45" });
    expect(ofKind(evs, "connected")).toHaveLength(2);
  },
  "16": (evs) => {
    const ch = ofKind(evs, "channel");
    expect(ch.map((c) => [c.transport, c.via, c.gdr])).toEqual([
      ["NET", "NET/IB/2", false],
      ["NET", "NET/IB/2", false],
      ["P2P", "P2P/IPC/read", false],
      ["P2P", "P2P/IPC/read", false],
    ]);
    expect(ch.every((c) => c.host === "task-7702-xt59c" && c.launcher === undefined)).toBe(true);
  },
  "17": (evs) => {
    const ch = ofKind(evs, "channel");
    expect(ch.filter((c) => c.transport === "NET").every((c) => c.gdr)).toBe(true);
    expect(ch.filter((c) => c.mode === "direct pointer/read")).toHaveLength(10);
    expect(ofKind(evs, "connected").map((c) => c.what)).toEqual(["rings", "rings", "trees"]);
  },
  "19": (evs) => {
    const c = ofKind(evs, "connected");
    expect(c.map((e) => [e.what, e.host, e.launcher?.kind, e.launcher?.host])).toEqual([
      ["rings", "gpu1505", "pdsh", "gpu1505"],
      ["trees", "gpu1505", "pdsh", "gpu1505"],
      ["rings", "gpu1504", "pdsh", "gpu1504"],
      ["trees", "gpu1504", "pdsh", "gpu1504"],
    ]);
  },
  "20": (evs) => {
    const ch = ofKind(evs, "channel");
    expect(ch).toHaveLength(16);
    expect(ch.every((c) => c.host === "64")).toBe(true);
    expect(ch.filter((c) => c.transport === "P2P").every((c) => c.mode === "IPC")).toBe(true);
    expect(new Set(ch.filter((c) => c.transport === "NET").map((c) => `${c.netDev}:${c.gdr}`))).toEqual(new Set(["8:true", "1:true"]));
  },
  "22": (evs) => {
    const init = ofKind(evs, "init");
    expect(init.map((e) => e.rank)).toEqual([0, 1, 4, 7]);
    expect(init.every((e) => e.phase === "start" && e.func === undefined && e.commId === "0x9ad9b5e4ab2566da")).toBe(true);
    expect(init.every((e) => e.launcher?.kind === "pdsh" && e.launcher.host === "rdma-gpu-train-worker-0")).toBe(true);
    expect(nets(evs, "selected")[0]).toMatchObject({ net: "IB", plugin: "IBext" });
  },
  "23": (evs) => {
    expect(ofKind(evs, "init").map((e) => [e.rank, e.nranks, e.func])).toEqual([
      [6, 16, "ncclCommInitRank"],
      [4, 16, "ncclCommInitRank"],
      [5, 16, "ncclCommInitRank"],
    ]);
    expect(nets(evs, "using").every((e) => e.kind === "net" && e.devices?.length === 4 && e.devices.every((d) => d.sharp))).toBe(true);
  },
  "25": (evs) => {
    const net = ofKind(evs, "channel").filter((c) => c.transport === "NET");
    expect(net.map((c) => [c.from, c.fromDev, c.to, c.toDev, c.dir])).toEqual([
      [5, "5", 12, "4", "send"],
      [13, "5", 4, "4", "receive"],
      [5, "5", 12, "4", "send"],
      [13, "5", 4, "4", "receive"],
    ]);
    expect(net.every((c) => c.via === "NET/IB/3" && !c.gdr)).toBe(true);
  },
  "26": (evs) => {
    expect(evs.every((e) => e.launcherRank === 0 && e.launcher?.kind === "tag")).toBe(true);
    expect(ofKind(evs, "comm_info")[0]).toMatchObject({ nranks: 24, nNodes: 3, localRanks: 8, localRank: 0 });
    expect(ofKind(evs, "ring")[0]?.order?.slice(0, 9)).toEqual([0, 7, 6, 5, 4, 3, 2, 1, 8]);
    expect(ofKind(evs, "ring")[0]?.nChannels).toBe(16);
  },
  "28": (evs) => {
    expect(ofKind(evs, "version")[0]).toMatchObject({ version: "2.21.5", cuda: "12.4" });
    expect(ofKind(evs, "version")[0]?.host).toBeUndefined();
    expect(
      nets(evs, "using")
        .flatMap((e) => (e.kind === "net" ? (e.devices ?? []) : []))
        .map((d) => `${d.name}/${d.linkLayer}`),
    ).toEqual(["irdma0/RoCE", "irdma3/RoCE", "irdma0/RoCE", "irdma3/RoCE"]);
  },
  "29": (evs) => {
    const ib = nets(evs, "using");
    expect(ib).toHaveLength(3);
    expect(ib.every((e) => e.kind === "net" && e.devices?.length === 8 && e.devices.every((d) => d.linkLayer === "RoCE"))).toBe(true);
    expect(versions(evs)).toEqual([]);
  },
  "31": (evs) => {
    const ch = ofKind(evs, "channel");
    expect(ch.filter((c) => c.transport === "P2P").every((c) => c.mode === "CUMEM")).toBe(true);
    expect(ch.find((c) => c.transport === "NET")).toMatchObject({ net: "IBext_v8", netDev: 4, gdr: false, from: 33, to: 41 });
  },
  "32": (evs) => {
    expect(ofKind(evs, "version").map((e) => [e.version, e.cuda, e.host])).toEqual([
      ["2.27.6", "13.0", "cl4-gpu03-vm"],
      ["2.27.6", "13.0", "cl4-gpu04-vm"],
    ]);
    expect(nets(evs, "bootstrap").map((e) => e.kind === "net" && e.devices?.[0]?.addr)).toEqual(["10.99.0.2", "10.99.0.12"]);
  },
  "34": (evs) => {
    expect(nets(evs, "no_device")).toHaveLength(8);
    const sock = nets(evs, "using");
    expect(sock).toHaveLength(7);
    expect(sock.every((e) => e.kind === "net" && e.net === "Socket" && e.devices?.[0]?.name === "ens3")).toBe(true);
  },
  "35": (evs) => {
    expect(versions(evs)).toEqual(["2.4.8"]);
    expect(ofKind(evs, "warn")[0]).toMatchObject({ warnKind: "ib_unavailable", message: "Failed to open libibverbs.so[.1]", error: "libibverbs missing" });
    expect(nets(evs, "using")[0]).toMatchObject({ net: "Socket", devices: [{ name: "eth0", addr: "10.2.3.32" }] });
    expect(ofKind(evs, "comm_info")[0]).toMatchObject({ nranks: 4, cudaDev: 3 });
  },
  "37": (evs) => {
    const ch = ofKind(evs, "channel");
    expect(ch.map((c) => [c.transport, c.from, c.to, c.dir])).toEqual([
      ["SHM", 2, 3, undefined],
      ["SHM", 1, 2, undefined],
      ["NET", 15, 0, "receive"],
    ]);
    expect(ch[2]).toMatchObject({ net: "Socket", netDev: 0 });
    expect(ch[2]?.fromDev).toBeUndefined(); // 2.4-2.6 print bare ranks on NET rings
    expect(ofKind(evs, "ring")[0]?.order).toHaveLength(16);
    expect(ofKind(evs, "retcode").every((r) => r.file === "include/net.h" && r.line === 19 && r.code === 2)).toBe(true);
  },
  "38": (evs) => {
    expect(ofKind(evs, "version")[0]).toMatchObject({ version: "2.7.8", cuda: "11.1" });
    expect(nets(evs, "using")[0]).toMatchObject({
      net: "Socket",
      devices: [
        { name: "ens5", addr: "172.31.0.137" },
        { name: "veth75fa783", addr: "fe80::14ad:64ff:fe64:b31e%veth75fa783" },
      ],
    });
    expect(ofKind(evs, "warn")[0]?.warnKind).toBe("ib_unavailable");
    expect(ofKind(evs, "channel")[0]).toMatchObject({ via: "NET/Socket/0", dir: "receive", fromDev: "1e0" });
  },
  "40": (evs) => {
    const ch = ofKind(evs, "channel");
    expect(ch.map((c) => c.netDev)).toEqual([3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7]);
    expect(ch.every((c) => c.net === "Socket" && c.dir === "send" && !c.gdr)).toBe(true);
    expect(ofKind(evs, "retcode").map((r) => `${r.file}:${r.line}`)).toEqual(["include/net.h:25", "transport/net.cc:515"]);
  },
  "41": (evs) => {
    expect(evs.map((e) => e.launcherRank)).toEqual([0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 3, 0]);
    expect(
      ofKind(evs, "channel")
        .filter((c) => c.transport === "SHM")
        .map((c) => c.host),
    ).toEqual(["node0", "node0"]);
  },
  "43": (evs) => {
    expect(nets(evs, "no_device")[0]).toMatchObject({ net: "IB", reason: "libibverbs missing", tid: 4667 });
    expect(nets(evs, "using")[0]).toMatchObject({ net: "Socket", devices: [{ name: "eth0", addr: "172.17.0.3" }] });
    expect(ofKind(evs, "retcode").map((r) => r.line)).toEqual([568, 568, 619]);
  },
  "44": (evs) => {
    expect(ofKind(evs, "teardown")[0]).toMatchObject({
      what: "abort",
      phase: "complete",
      comm: "0x55d35c3a9ec0",
      rank: 0,
      nranks: 16,
      busId: "4000",
    });
    expect(nets(evs, "no_device")).toHaveLength(1);
    expect(nets(evs, "using")[0]?.kind === "net" && (nets(evs, "using")[0] as { devices?: unknown[] }).devices).toHaveLength(8);
  },
  "46": (evs) => {
    const ch = ofKind(evs, "channel");
    expect(ch).toHaveLength(10);
    expect(ch.every((c) => c.transport === "SHM" && c.mode === "direct/direct")).toBe(true);
  },
  "47": (evs) => {
    const gdr = ofKind(evs, "gdr");
    expect(gdr.filter((g) => g.enabled).map((g) => g.gpu)).toEqual(["86000", "af000", "86000", "af000", "86000", "af000"]);
    expect(gdr.filter((g) => !g.enabled).every((g) => g.distance === 5 && g.limit === 4)).toBe(true);
    expect(gdr.filter((g) => g.enabled).every((g) => g.distance === 4 && g.limit === 4 && g.read === false)).toBe(true);
  },
  "49": (evs) => {
    expect(ofKind(evs, "gdr").map((g) => [g.enabled, g.scope, g.hca, g.hcaName])).toEqual([
      [false, "hca", 0, "mlx5_0"],
      [false, "hca", 1, "mlx5_1"],
    ]);
    expect(ofKind(evs, "init")[0]).toMatchObject({ phase: "start", rank: 0, nranks: 16, commId: "0x65e0bd6ee7449db4" });
    expect(nets(evs, "using")[0]).toMatchObject({ oob: "primaryip:10.10.10.10<0>" });
  },
};
