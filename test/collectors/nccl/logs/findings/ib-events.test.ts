/**
 * What analyze makes of NCCL's IB async events (hca_error, naming the HCA and port), of a queue
 * pair that could not connect (network_error by its HCA port) and of a missing libibverbs (one
 * socket_transport warning that gives it as the cause): on the real captures of
 * test/fixtures/nccl-pasted 58-63 and nccl 35/38, and on lines built from NCCL's format strings
 * where no capture is known (said at each).
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../../collectors/nccl/analyze/analyze.js";
import type { Finding, Report } from "../../../../../collectors/nccl/verdict/report.js";
import { readCapture } from "../../../../helpers/fixtures.js";

const run = (...lines: string[]): Report => analyzeLogs([{ name: "l", text: lines.join("\n") }]);
const capture = (file: string): Report => analyzeLogs([{ name: "c", text: readCapture(file) }]);
const of = (r: Report, kind: string): Finding[] => r.findings.filter((f) => f.kind === kind);

describe("IB async events: one hca_error per host, HCA port and event", () => {
  it("2.20's `mlx5_0:1 Got async event : local access violation ...` (nccl #1524): the device and port, the process, a QP error", () => {
    const r = capture("nccl-pasted/61-ib-async-2.20.3-mlx5_0-port1-local-access-violation-then-status5.log");
    const h = of(r, "hca_error");
    expect(h).toHaveLength(1);
    expect(h[0]).toMatchObject({
      severity: "critical",
      device: "mlx5_0",
      host: "ubuntu20-server-2",
      event: "qp_access_error",
      processes: ["ubuntu20-server-2:94639"],
      count: 2,
      evidence: ["c:1", "c:3"],
    });
    expect(h[0]?.summary).toMatch(
      /^HCA mlx5_0 port 1 on ubuntu20-server-2 reported "local access violation work queue error", an IB async event that NCCL logged, 2 times/,
    );
    expect(h[0]?.summary).toContain("ubuntu20-server-2:94639 uses this HCA for NCCL's network");
    // The completion error it caused stays a network_error at its peer; nothing is an nccl_error.
    expect(of(r, "network_error").map((f) => f.peer)).toEqual(["192.168.1.2"]);
    expect(of(r, "nccl_error")).toEqual([]);
  });

  it("2.25's `async fatal event on QP (0x..): invalid request ...` (nccl #1919)", () => {
    const h = of(capture("nccl-pasted/62-ib-async-2.25.1-mlx5_1-port1-fatal-event-on-qp-invalid-request.log"), "hca_error");
    expect(h).toHaveLength(1);
    expect(h[0]).toMatchObject({ severity: "critical", device: "mlx5_1", host: "node-0", event: "qp_request_error", processes: ["node-0:139577"], count: 1 });
    expect(h[0]?.summary).toMatch(/^HCA mlx5_1 port 1 on node-0 reported "invalid request local work queue error"/);
  });

  it("2.27 with NCCL's timestamp behind a collector's (nccl #1905): hca_error on mlx5_ib0 port 1 beside the completion error", () => {
    const r = capture("nccl-pasted/63-ib-async-2.27-mlx5_ib0-fatal-qp-access-violation-ncclibtest-status4-hca.log");
    expect(of(r, "hca_error").map((f) => [f.device, f.host, f.event, f.processes])).toEqual([["mlx5_ib0", "h100-28", "qp_access_error", ["h100-28:238"]]]);
    expect(of(r, "hca_error")[0]?.summary).toContain("HCA mlx5_ib0 port 1 on h100-28");
    expect(of(r, "network_error").map((f) => f.peer)).toEqual(["172.16.12.34"]);
  });

  it("before 2.20 no device is named (lit-llama #380): one finding for the 8 processes of the host, port_error, 8 times", () => {
    const r = capture("nccl-pasted/60-ib-async-2.14-port-error-eight-procs-node48-then-completion-error12.log");
    const h = of(r, "hca_error");
    expect(h).toHaveLength(1);
    expect(h[0]).toMatchObject({ severity: "critical", host: "...-48", event: "port_error", count: 8 });
    expect(h[0]).not.toHaveProperty("device");
    expect(h[0]?.processes).toHaveLength(8);
    expect(h[0]?.summary).toMatch(
      /^An HCA \(NCCL before 2\.20 does not say which\) on \.\.\.-48 reported "port error", an IB async event that NCCL logged, 8 times/,
    );
    // node51's completion error 12 points at node48, the host whose port went down.
    expect(of(r, "network_error").map((f) => [f.peer, f.processes])).toEqual([["node48", ["...-51:73076"]]]);
  });

  it("2.4's `local catastrophic error` then `Call to ibv_get_async_event failed` (nccl #230): one device_fatal finding with the mpirun ranks, no nccl_error", () => {
    const r = capture("nccl-pasted/59-ib-async-2.4-local-catastrophic-error-mpirun-tags-iso-timestamps.log");
    const h = of(r, "hca_error");
    expect(h).toHaveLength(1);
    // 3 events; the 3 failed reads that follow them are evidence, not events.
    expect(h[0]).toMatchObject({ severity: "critical", event: "device_fatal", ranks: [12, 13, 14], count: 3 });
    expect(h[0]?.evidence).toEqual(["c:1", "c:5", "c:9", "c:3", "c:7"]);
    expect(h[0]?.summary).toContain("Ranks 12-14");
    expect(of(r, "nccl_error")).toEqual([]);
  });

  it("a line cut mid-word (DeepSpeedExamples #310, the paste's last line `client reregistr`) is the one event its words start: fabric news at info", () => {
    const r = capture("nccl-pasted/254-nccl-2.1x-ib-async-event-client-reregistration-after-init-complete-8-ranks-one-host-deepspeed-chat.log");
    const h = of(r, "hca_error");
    // One finding for the five processes: the four whole lines and the cut one.
    expect(h.map((f) => [f.severity, f.event, f.count, f.ranks])).toEqual([["info", "client_reregister", 5, [0, 1, 2, 3, 5]]]);
    // Words too short to tell, or that start no known event, stay an unknown event at warning.
    const cut = (words: string): Finding[] => of(run(`gpu1:5021:5386 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : ${words}`), "hca_error");
    expect(cut("client").map((f) => [f.severity, f.event])).toEqual([["info", "client_reregister"]]);
    expect(cut("clie").map((f) => [f.severity, f.event])).toEqual([["warning", "unknown"]]);
    expect(cut("toString").map((f) => [f.severity, f.event])).toEqual([["warning", "unknown"]]);
  });

  it("built from 2.29's formats (no capture known): a non-fatal event is info, with its number; ranks come from Init", () => {
    const r = run(
      "n1:10:10 [0] NCCL INFO comm 0x1 rank 3 nranks 8 cudaDev 0 nvmlDev 0 busId 1000 commId 0x70 - Init COMPLETE",
      "n1:10:20 [0] transport/net_ib/common.cc:159 NCCL WARN NET/IB : mlx5_2:1 Got non-fatal async event: port active(9)",
      "n1:10:20 [0] transport/net_ib/common.cc:159 NCCL WARN NET/IB : mlx5_2:1 Got non-fatal async event: port error(10)",
      "n1:10:20 [0] transport/net_ib/common.cc:152 NCCL WARN NET/IB : mlx5_3:1 GID table changed",
    );
    expect(of(r, "hca_error").map((f) => [f.severity, f.device, f.event, f.code, f.ranks])).toEqual([
      ["critical", "mlx5_2", "port_error", 10, [3]],
      ["warning", "mlx5_3", "gid_change", undefined, [3]],
      ["info", "mlx5_2", "port_active", 9, [3]],
    ]);
    const active = of(r, "hca_error").find((f) => f.event === "port_active");
    expect(active?.summary).toContain('HCA mlx5_2 port 1 on n1 reported "port active" (event 9)');
    expect(active?.summary).not.toContain("may start here");
  });

  it("built from 2.23's formats (no capture known): `Got async error event`, device fatal, CQ; two ports of one host are two findings", () => {
    const r = run(
      "n2:7:8 [1] transport/net_ib.cc:179 NCCL WARN NET/IB : mlx5_0:1 Got async error event: port error",
      "n2:9:9 [2] transport/net_ib.cc:179 NCCL WARN NET/IB : mlx5_0:1 Got async error event: port error",
      "n2:7:8 [1] transport/net_ib.cc:179 NCCL WARN NET/IB : mlx5_1:1 Got async error event: port error",
      "n2:7:8 [1] transport/net_ib.cc:148 NCCL WARN NET/IB : mlx5_4:1 async fatal event: local catastrophic error",
      "n2:7:8 [1] transport/net_ib.cc:153 NCCL WARN NET/IB : mlx5_4:1 async fatal event on CQ (0x55d0c0a1b2c0): CQ error",
    );
    expect(of(r, "hca_error").map((f) => [f.device, f.event, f.processes, f.count])).toEqual([
      ["mlx5_0", "port_error", ["n2:7", "n2:9"], 2],
      ["mlx5_1", "port_error", ["n2:7"], 1],
      ["mlx5_4", "device_fatal", ["n2:7"], 1],
      ["mlx5_4", "cq_error", ["n2:7"], 1],
    ]);
    expect(of(r, "nccl_error")).toEqual([]);
  });
});

describe("a queue pair that could not connect (ibv_modify_qp): network_error by its HCA port", () => {
  it("2.27's `failed with 110 Connection timed out, on dev mlx_x:1` (nccl #2013, pid redacted): the device, the port and NCCL's words", () => {
    const r = capture("nccl-pasted/58-ibv-modify-qp-2.27-errno110-connection-timed-out-on-dev-redacted.log");
    const n = of(r, "network_error");
    expect(n).toHaveLength(1);
    expect(n[0]).toMatchObject({ severity: "critical", device: "mlx_x", processes: [], evidence: ["c:1"] });
    expect(n[0]).not.toHaveProperty("peer");
    expect(n[0]?.summary).toContain("ib_qp_error");
    expect(n[0]?.summary).toContain("110 Connection timed out, on dev mlx_x:1, curr state INIT, next state RTR");
    expect(of(r, "nccl_error")).toEqual([]);
  });

  it("built (2.24+ format): two QPs on one HCA port are one finding; another port is another", () => {
    const qp = (dev: string): string =>
      `n3:5:6 [0] misc/ibvwrap.cc:376 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev ${dev}, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:10.0.0.1, remote GID ::ffff:10.0.1.1`;
    const r = run(qp("mlx5_0:1"), "n3:5:6 [0] NCCL INFO transport/net_ib.cc:1100 -> 2", qp("mlx5_0:1"), qp("mlx5_7:1"));
    expect(of(r, "network_error").map((f) => [f.device, f.count, f.processes])).toEqual([
      ["mlx5_0", 2, ["n3:5"]],
      ["mlx5_7", 1, ["n3:5"]],
    ]);
    expect(of(r, "network_error")[1]?.summary).toContain("on dev mlx5_7:1");
  });
});

describe("socket fallback for a missing libibverbs: one socket_transport warning, with the cause", () => {
  it("nccl/35: nccl-tests lists its four ranks on one host (one process, -g 4): the fallback carries nothing there, a note naming the cause", () => {
    const r = capture("nccl/35-socket-2.4.8-libibverbs-missing.log");
    expect(r.findings.filter((f) => f.severity !== "info")).toEqual([]);
    const note = of(r, "socket_transport")[0];
    expect(note).toMatchObject({ severity: "info", processes: ["jupyter-vmarkovtsev:15833"], evidence: ["c:12"] });
    expect(note?.summary).toContain("NCCL could not load libibverbs on jupyter-vmarkovtsev");
  });

  it.each([["nccl/38-socket-2.7.8-libibverbs-missing-ansi-remnant.log", "ip-172-31-0-137:14605", "c:5"]])("%s", (file, proc, warnAt) => {
    const r = capture(file);
    const bad = r.findings.filter((f) => f.severity !== "info");
    expect(bad.map((f) => [f.kind, f.severity])).toEqual([["socket_transport", "warning"]]);
    expect(bad[0]?.processes).toEqual([proc]);
    expect(bad[0]?.evidence[0]).toBe(warnAt);
    expect(bad[0]?.summary).toContain(`The cause: NCCL could not load libibverbs in this process ("Failed to open libibverbs.so[.1]", ${warnAt})`);
    // The known cause replaces the list of possible ones.
    expect(bad[0]?.summary).not.toContain("NCCL_IB_DISABLE set, or libibverbs missing");
    expect(r.processes.find((p) => p.process === proc)?.net).toBe("Socket");
  });

  it("a missing libibverbs where a net plugin carries the data (built) is no socket transport", () => {
    const r = run(
      "h:5:5 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
      "h:5:9 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/AWS Libfabric/0/GDRDMA",
    );
    expect(of(r, "socket_transport")).toEqual([]);
    expect(r.findings.filter((f) => f.severity !== "info")).toEqual([]);
  });
});
