/**
 * NCCL's IB async events (ib_async_event), queue pairs that could not connect (ib_qp_error) and a
 * missing libibverbs (ib_unavailable): every form NCCL 2.4-2.30 writes, from its format strings
 * (transport/net_ib.cc, net_ib/common.cc ncclIbAsyncThreadMain; misc/ibvwrap.cc), with the event
 * words of libibverbs' ibv_event_type_str. The real captures are in the table of warn-kinds.ts
 * (nccl-pasted 58-63); the lines here marked "built" have no real capture known.
 */
import { describe, expect, it } from "vitest";
import { parseLine } from "../../../../../collectors/nccl/logs/parse/line.js";
import { ibAsyncFacts, ibQpDevice } from "../../../../../collectors/nccl/logs/parse/warn.js";
import { readCapture } from "../../../../helpers/fixtures.js";

const W = "gpu7:4105:4200 [2] transport/net_ib.cc:101 NCCL WARN ";
const line = (file: string, n: number): string => readCapture(`nccl-pasted/${file}`).split("\n")[n - 2] ?? "";

describe("IB async events: every form of ncclIbAsyncThreadMain", () => {
  it.each([
    // 2.3-2.19: `NET/IB : Got async event : %s`, no device (real: lit-llama #380).
    ["NET/IB : Got async event : port error", { ibEvent: "port error" }],
    // 2.20-2.22: `NET/IB : %s:%d Got async event : %s` (real: nccl #1524).
    [
      "NET/IB : mlx5_0:1 Got async event : local access violation work queue error",
      { hca: "mlx5_0", hcaPort: 1, ibEvent: "local access violation work queue error" },
    ],
    // 2.23+: `NET/IB : %s:%d async fatal event: %s` (built).
    ["NET/IB : mlx5_2:1 async fatal event: local catastrophic error", { hca: "mlx5_2", hcaPort: 1, ibEvent: "local catastrophic error" }],
    // 2.23-2.28: `... async fatal event on CQ (%p): %s` (built).
    ["NET/IB : mlx5_3:2 async fatal event on CQ (0x55d0c0a1b2c0): CQ error", { hca: "mlx5_3", hcaPort: 2, ibEvent: "CQ error" }],
    // 2.29+: `... async fatal event on CQ (%p) handle=%u cqe=%d: %s` (built).
    ["NET/IB : mlx5_3:1 async fatal event on CQ (0x55d0c0a1b2c0) handle=3 cqe=4096: CQ error", { hca: "mlx5_3", hcaPort: 1, ibEvent: "CQ error" }],
    // 2.23-2.28: `... async fatal event on QP (%p): %s` (real: nccl #1919).
    [
      "NET/IB : mlx5_1:1 async fatal event on QP (0x7309dc3bb338): invalid request local work queue error",
      { hca: "mlx5_1", hcaPort: 1, ibEvent: "invalid request local work queue error" },
    ],
    // 2.29+: the QP's numbers before the colon (built).
    [
      "NET/IB : mlx5_4:1 async fatal event on QP (0x7f0c2c0a1b38) qpn=4660 handle=7 send_cq=2 recv_cq=3 state=6 sq_psn=0 rq_psn=12: local work queue catastrophic error",
      { hca: "mlx5_4", hcaPort: 1, ibEvent: "local work queue catastrophic error" },
    ],
    // 2.23+: SRQ (built).
    [
      "NET/IB : mlx5_0:1 async fatal event on SRQ, unused for now (0x1234): SRQ catastrophic error",
      { hca: "mlx5_0", hcaPort: 1, ibEvent: "SRQ catastrophic error" },
    ],
    // 2.23-2.28: `... Got async error event: %s` (built).
    ["NET/IB : mlx5_5:1 Got async error event: port error", { hca: "mlx5_5", hcaPort: 1, ibEvent: "port error" }],
    // 2.29+: `... Got non-fatal async event: %s(%d)` (built).
    ["NET/IB : mlx5_5:1 Got non-fatal async event: port error(10)", { hca: "mlx5_5", hcaPort: 1, ibEvent: "port error", ibEventCode: 10 }],
    // 2.23+: NCCL's own words for IBV_EVENT_GID_CHANGE, and an event it does not know (built).
    ["NET/IB : mlx5_6:1 GID table changed", { hca: "mlx5_6", hcaPort: 1, ibEvent: "GID table changed" }],
    ["NET/IB : mlx5_6:1 unknown event type (21)", { hca: "mlx5_6", hcaPort: 1, ibEvent: "unknown event type", ibEventCode: 21 }],
    // 2.4-2.5: the thread's read failed (real: nccl #230).
    ["Call to ibv_get_async_event failed", { call: "ibv_get_async_event" }],
  ])("%s", (msg, fields) => {
    const ev = parseLine(`${W}${msg}`);
    expect(ev).toMatchObject({ kind: "warn", warnKind: "ib_async_event", message: msg, ...fields });
    // What findings read back from the message a WarningRecord keeps: the same facts.
    expect(ibAsyncFacts(msg)).toEqual({ hca: undefined, hcaPort: undefined, ibEvent: undefined, ibEventCode: undefined, call: undefined, ...fields });
  });

  it("the real captures: device and port where NCCL printed them, none before 2.20", () => {
    expect(parseLine(line("61-ib-async-2.20.3-mlx5_0-port1-local-access-violation-then-status5.log", 2))).toMatchObject({
      warnKind: "ib_async_event",
      host: "ubuntu20-server-2",
      pid: 94639,
      hca: "mlx5_0",
      hcaPort: 1,
      ibEvent: "local access violation work queue error",
    });
    expect(parseLine(line("63-ib-async-2.27-mlx5_ib0-fatal-qp-access-violation-ncclibtest-status4-hca.log", 3))).toMatchObject({
      warnKind: "ib_async_event",
      host: "h100-28",
      hca: "mlx5_ib0",
      hcaPort: 1,
      ibEvent: "local access violation work queue error",
    });
    const old = parseLine(line("60-ib-async-2.14-port-error-eight-procs-node48-then-completion-error12.log", 5));
    expect(old).toMatchObject({ warnKind: "ib_async_event", host: "...-48", pid: 34050, ibEvent: "port error" });
    expect(old).not.toHaveProperty("hca");
    expect(parseLine(line("59-ib-async-2.4-local-catastrophic-error-mpirun-tags-iso-timestamps.log", 2))).toMatchObject({
      warnKind: "ib_async_event",
      launcherRank: 12,
      ibEvent: "local catastrophic error",
    });
  });

  it("completions and other NET/IB lines stay what they were", () => {
    expect(parseLine(`${W}NET/IB : Got completion from peer 10.0.0.2<4000> with error 12, opcode 0, len 0, vendor err 129`)).toMatchObject({
      warnKind: "ib_completion_error",
    });
    expect(parseLine(`${W}NET/IB : Got completion from peer 10.0.0.2<4000> with error 12, opcode 0, len 0, vendor err 129`)).not.toHaveProperty("ibEvent");
    expect(parseLine(`${W}NET/IB : collective mismatch error, local size 64 remote size 32`)).toMatchObject({ warnKind: "collective_mismatch" });
  });
});

describe("ibv_modify_qp failures (ib_qp_error)", () => {
  it("2.24+: errno, strerror and the device and port of the QP", () => {
    const msg =
      "Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:10.0.0.1, remote GID ::ffff:10.0.0.2";
    expect(parseLine(`h:1:2 [0] misc/ibvwrap.cc:376 NCCL WARN ${msg}`)).toMatchObject({
      warnKind: "ib_qp_error",
      call: "ibv_modify_qp",
      errno: 110,
      hca: "mlx5_0",
      hcaPort: 1,
      error: msg.slice(msg.indexOf("110 ")),
    });
    expect(ibQpDevice(msg)).toEqual({ hca: "mlx5_0", hcaPort: 1 });
  });

  it("2.24+ where NCCL could not query the QP: `N/A:-1` names no device", () => {
    const ev = parseLine(
      `h:1:2 [0] misc/ibvwrap.cc:376 NCCL WARN Call to ibv_modify_qp failed with 22 Invalid argument, on dev N/A:-1, curr state RESET, next state INIT, local GID index -1, local GID N/A, remote GID N/A`,
    );
    expect(ev).toMatchObject({ warnKind: "ib_qp_error", errno: 22 });
    expect(ev).not.toHaveProperty("hca");
    expect(ev).not.toHaveProperty("hcaPort");
  });

  it("to 2.23: `failed with error <strerror>`, no device", () => {
    const ev = parseLine(`${W}Call to ibv_modify_qp failed with error Network is unreachable`);
    expect(ev).toMatchObject({ warnKind: "ib_qp_error", error: "Network is unreachable" });
    expect(ev).not.toHaveProperty("errno");
    expect(ev).not.toHaveProperty("hca");
  });

  it("the real 2.27 capture: a plugin's `ibvwrap.c:262` after NCCL's timestamp, pid redacted: a WARN of no known process, device and port read", () => {
    expect(parseLine(line("58-ibv-modify-qp-2.27-errno110-connection-timed-out-on-dev-redacted.log", 2))).toMatchObject({
      kind: "warn",
      warnKind: "ib_qp_error",
      errno: 110,
      hca: "mlx_x",
      hcaPort: 1,
    });
    expect(parseLine(line("58-ibv-modify-qp-2.27-errno110-connection-timed-out-on-dev-redacted.log", 2))).not.toHaveProperty("pid");
  });

  it("other failed verbs calls stay system_error", () => {
    expect(parseLine(`${W}Call to ibv_create_cq failed`)).toMatchObject({ warnKind: "system_error", call: "ibv_create_cq" });
  });
});

describe("a missing libibverbs (ib_unavailable)", () => {
  it("NCCL <= 2.18's WARN is ib_unavailable, not a system error", () => {
    expect(parseLine("h:5:5 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]")).toMatchObject({
      warnKind: "ib_unavailable",
      error: "libibverbs missing",
    });
  });

  it("2.19+'s INFO line stays a net event (no IB device)", () => {
    expect(parseLine("h:5:5 [0] NCCL INFO Failed to open libibverbs.so[.1]")).toMatchObject({ kind: "net", what: "no_device", reason: "libibverbs missing" });
  });
});
