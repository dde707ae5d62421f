/** WARN classification on the forms of misc/socket.cc, transport/net_ib.cc, enqueue.cc and bootstrap.cc. */
import { describe, expect, it } from "vitest";
import { parseLine } from "../../../../../collectors/nccl/logs/parse/line.js";

const W = "h1:7:8 [3] misc/socket.cc:1 NCCL WARN ";

describe("WARN header forms", () => {
  it("`file:line NCCL WARN` and the 2.29+ `file:line (func) NCCL WARN`", () => {
    expect(parseLine(`${W}hello`)).toMatchObject({ kind: "warn", file: "misc/socket.cc", line: 1, message: "hello", host: "h1", pid: 7, tid: 8, cudaDev: 3 });
    expect(parseLine("h1:7:8 [3] transport/net_ib.cc:1234 (ncclIbTest) NCCL WARN hello")).toMatchObject({
      file: "transport/net_ib.cc",
      line: 1234,
      func: "ncclIbTest",
      message: "hello",
    });
  });
});

describe("WARN kinds", () => {
  it.each([
    [
      "socketProgressOpt: Call to recv from 172.17.0.2<40537> failed : Connection reset by peer",
      { warnKind: "connection_reset", call: "recv", peer: "172.17.0.2", peerPort: 40537, error: "Connection reset by peer" },
    ],
    ["socketProgress: Connection closed by remote peer node1<57557>", { warnKind: "connection_closed", peer: "node1", peerPort: 57557 }],
    [
      "socketStartConnect: Connect to 10.0.0.2<45763> failed : Connection refused",
      { warnKind: "connect_failed", peer: "10.0.0.2", peerPort: 45763, error: "Connection refused" },
    ],
    [
      "NET/IB : Got completion from peer 10.0.35.1<49189> with error 4, opcode 5327, len 5327, vendor err 81 (Send)",
      { warnKind: "ib_completion_error", peer: "10.0.35.1", peerPort: 49189, ibStatus: 4, ibOpcode: 5327, ibLen: 5327, vendorErr: 81, ibDir: "Send" },
    ],
    [
      "NET/IB: Got completion from peer 10.1.2.3<45000> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129  localGid ::ffff:1.2.3.4 remoteGids ::ffff:5.6.7.8 hca mlx5_3",
      { warnKind: "ib_completion_error", ibStatus: 12, ibOpcode: 0, vendorErr: 129, localGid: "::ffff:1.2.3.4", remoteGid: "::ffff:5.6.7.8", hca: "mlx5_3" },
    ],
    ["NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129", { warnKind: "ib_completion_error", ibStatus: 12, vendorErr: 129 }],
    [
      "Mismatched collective detected, please check your collective calls at and around rank 39. You can use NCCL_DEBUG=INFO",
      { warnKind: "collective_mismatch", mismatchRank: 39 },
    ],
    [
      "NET/IB : req 0/1 tag 7 peer 10.1.1.2<4000> collective mismatch error, local size 64 remote size 32",
      { warnKind: "collective_mismatch", peer: "10.1.1.2", peerPort: 4000 },
    ],
    ["Bootstrap Root : rank 1 of 8 ranks has already checked in", { warnKind: "bootstrap_error" }],
    ["Call to ibv_modify_qp failed with error Connection timed out", { warnKind: "ib_qp_error", call: "ibv_modify_qp", error: "Connection timed out" }],
    ["Call to recv from 10.0.0.9<5000> failed : Connection timed out", { warnKind: "timeout", call: "recv", error: "Connection timed out" }],
    ["Call to ibv_create_qp failed", { warnKind: "system_error", call: "ibv_create_qp" }],
    ["[Proxy Service 2] Failed to execute operation Connect from rank 2, retcode 3", { warnKind: "internal_error" }],
    ["Cuda failure 'out of memory'", { warnKind: "cuda_error", error: "out of memory" }],
    ["Cuda failure 700 'an illegal memory access was encountered'", { warnKind: "cuda_error", error: "an illegal memory access was encountered" }],
    ["Cuda failure 'invalid argument'", { warnKind: "cuda_error", error: "invalid argument" }],
  ])("%s", (msg, fields) => {
    expect(parseLine(`${W}${msg}`)).toMatchObject({ kind: "warn", message: msg, ...fields });
  });

  it("a peer error printed without NCCL header (PyTorch `Last error:` continuation) is headerless", () => {
    expect(parseLine("socketProgressOpt: Call to recv from 10.9.8.7<33759> failed : Connection reset by peer")).toMatchObject({
      kind: "warn",
      headerless: true,
      warnKind: "connection_reset",
      peer: "10.9.8.7",
      peerPort: 33759,
    });
    expect(parseLine("a peer review is scheduled")).toBeUndefined();
  });
});

describe("return-code chain", () => {
  it("`file:line -> code [context]`", () => {
    expect(parseLine("h1:7:8 [3] NCCL INFO proxy.cc:858 -> 6 [Proxy Thread]")).toMatchObject({
      kind: "retcode",
      file: "proxy.cc",
      line: 858,
      code: 6,
      context: "Proxy Thread",
    });
    expect(parseLine("h1:7:8 [3] NCCL INFO init.cc:1798 Cuda Host Alloc Size 4 pointer 0x82fa00000")).toBeUndefined();
  });
});

describe("size mismatches, every form NCCL 2.3-2.30 writes (size-mismatch.ts)", () => {
  it.each([
    // net_ib.cu/.cc 2.3-2.9: no peer, `remote` without `size`
    [
      "NET/IB : collective mismatch error local size 4096 remote 1024 addr 7f00 rkey 12 seq 3/4",
      { warnKind: "collective_mismatch", sizeMismatch: "data", localSize: 4096, remoteSize: 1024 },
    ],
    // 2.10-2.11: the peer before `collective mismatch`
    [
      "NET/IB : peer 10.0.0.7<40001> collective mismatch error local size 8 remote 16 addr 1 rkey 2 seq 0/0",
      { warnKind: "collective_mismatch", sizeMismatch: "data", peer: "10.0.0.7", peerPort: 40001, localSize: 8, remoteSize: 16 },
    ],
    // 2.12-2.19 (issue 969)
    [
      "NET/IB : req 0/1 tag 0 peer 10.10.23.6<58683> collective mismatch error, local size 496640 remote size 65536",
      { warnKind: "collective_mismatch", sizeMismatch: "data", peer: "10.10.23.6", peerPort: 58683, localSize: 496640, remoteSize: 65536 },
    ],
    // net_socket 2.4-2.9: the peer sent 696320 where 32768 were posted here
    [
      "NET/Socket : message truncated : receiving 696320 bytes instead of 32768",
      { warnKind: "collective_mismatch", sizeMismatch: "data", localSize: 32768, remoteSize: 696320 },
    ],
    [
      "NET/Socket : peer 192.168.161.30<59210> message truncated : receiving 1048576 bytes instead of 65536. If you believe your socket network is in a healthy state, there may be a mismatch in collective sizes or environment settings (e.g. NCCL_PROTO, NCCL_ALGO) between ranks",
      { warnKind: "collective_mismatch", sizeMismatch: "data", peer: "192.168.161.30", peerPort: 59210, localSize: 65536, remoteSize: 1048576 },
    ],
    // bootstrap.cc: the setup exchange, not a collective
    ["Message truncated : received 256 bytes instead of 4", { warnKind: "bootstrap_error", sizeMismatch: "bootstrap", localSize: 4, remoteSize: 256 }],
    ["Message truncated : received 16,8 bytes instead of 8,8", { warnKind: "bootstrap_error", sizeMismatch: "bootstrap", localSize: 8, remoteSize: 16 }],
  ])("%s", (msg, fields) => {
    expect(parseLine(`${W}${msg}`)).toMatchObject({ kind: "warn", message: msg, ...fields });
  });

  it("a size-mismatch WARN cut after `message truncated :` still names the peer; prose about truncation is not one", () => {
    const ev = parseLine("transport/net_socket.cc:424 NCCL WARN NET/Socket : peer 192.168.161.30<59210> message truncated :");
    expect(ev).toMatchObject({ kind: "warn", warnKind: "collective_mismatch", sizeMismatch: "data", peer: "192.168.161.30", peerPort: 59210 });
    expect(ev).not.toHaveProperty("localSize");
    expect(parseLine(`${W}the log message truncated here`)).toMatchObject({ warnKind: "other" });
  });

  it("`Net : Socket creation failed` is a failed connection with the system's reason", () => {
    expect(parseLine(`${W}Net : Socket creation failed : Address family not supported by protocol`)).toMatchObject({
      warnKind: "connect_failed",
      call: "socket",
      error: "Address family not supported by protocol",
    });
  });
});

describe("a net plugin's failed request (net-plugin.ts)", () => {
  it.each([
    ["NET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 (UNDELIVERABLE). Completed length: 0", { rc: 113, error: "UNDELIVERABLE" }],
    ["NET/OFI Request 0x1 completed with error. RC: 5. Error: Input/output error. Completed length: 0, Request: x", { rc: 5, error: "Input/output error" }],
    [
      "NET/OFI Request 0x1 (send) completed with error: err: 113, flags: 0, prov_errno: 2, strerror: UNDELIVERABLE, len: 0",
      { rc: 113, error: "UNDELIVERABLE" },
    ],
    ["NET/OFI Remote write completed with error. RC: 12. Flags: 0. Error: 3 (RNR). Completed length: 0", { rc: 12, error: "RNR" }],
  ])("%s", (msg, fields) => {
    expect(parseLine(`${W}${msg}`)).toMatchObject({ kind: "warn", warnKind: "net_completion_error", ...fields });
  });

  it("quoted after PyTorch's `Last error:` with the rank prefix: headerless, the rank kept; prose is not one", () => {
    expect(parseLine("[rank3]: NET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 (UNDELIVERABLE). Completed length: 0")).toMatchObject({
      kind: "warn",
      headerless: true,
      warnKind: "net_completion_error",
      rc: 113,
      error: "UNDELIVERABLE",
      launcherRank: 3,
    });
    expect(parseLine("we think NET/OFI Request 0x1 completed with error. RC: 1.")).toBeUndefined();
    expect(parseLine("[rank3]: NET/OFI Setting NCCL_PROTO")).toBeUndefined();
  });
});

describe("a net plugin that cannot start", () => {
  it("aws-ofi-nccl's init failures are net_plugin_error; its other WARNs are not", () => {
    expect(parseLine(`${W}NET/OFI aws-ofi-nccl initialization failed`)).toMatchObject({ warnKind: "net_plugin_error" });
    expect(parseLine(`${W}NET/OFI Initializing plugin failed`)).toMatchObject({ warnKind: "net_plugin_error" });
    expect(parseLine(`${W}NET/OFI Creating new endpoint for domain 0x7ef4 failed: Invalid argument`)).toMatchObject({ warnKind: "other" });
  });
});
