/** NCCL failure findings from WARNs and error-return chains (findings/errors.ts, retcode.ts), on lines built from NCCL's formats. */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../../collectors/nccl/analyze/analyze.js";
import type { Finding, Report } from "../../../../../collectors/nccl/verdict/report.js";
import { listFixtures, readCapture } from "../../../../helpers/fixtures.js";

const run = (...lines: string[]): Report => analyzeLogs([{ name: "l", text: lines.join("\n") }]);
const of = (r: Report, kind: string): Finding[] => r.findings.filter((f) => f.kind === kind);

describe("error-return chains", () => {
  it("the WARN that opened one thread's chain tells the process's failure, when another thread's chain is the longest (pasted 90, NVIDIA/nccl #1382)", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("90-")) ?? "";
    const r = analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]);
    expect(r.findings.map((f) => [f.kind, f.severity, f.processes])).toEqual([["nccl_error", "critical", ["user-G493-ZB1-AAP1-000:275204"]]]);
    expect(r.findings[0]?.summary).toContain('after WARN "socketTryAccept: Accept failed: Bad file descriptor"');
  });

  it("a chain alone is one nccl_error per process, naming host:pid [dev], the code's meaning and the frames", () => {
    const r = run(
      "n1:180:915 [7] NCCL INFO misc/socket.cc:47 -> 3",
      "n1:180:915 [7] NCCL INFO misc/socket.cc:550 -> 3",
      "n1:180:915 [7] NCCL INFO misc/socket.cc:573 -> 3",
      "n1:180:915 [7] NCCL INFO misc/socket.cc:47 -> 3",
      "n1:180:915 [7] NCCL INFO misc/socket.cc:550 -> 3",
    );
    const f = of(r, "nccl_error");
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ processes: ["n1:180"], count: 2, evidence: ["l:1", "l:3", "l:4"] });
    expect(f[0]?.summary).toMatch(
      /^NCCL failed on n1:180 \[7\]: ncclInternalError \(3: .*\), passed up misc\/socket\.cc:47 → misc\/socket\.cc:573 \(3 frames\); no WARN line/,
    );
  });

  it("a chain right after a WARN of the same process adds to that WARN's finding", () => {
    const r = run(
      "[1,0]<stdout>:h:687:748 [0] graph/xml.cc:332 NCCL WARN Could not find real path of /sys/class/pci_bus/0000:03/../../0000:03:00.0",
      "[1,0]<stdout>:h:687:748 [0] NCCL INFO graph/xml.cc:469 -> 2",
      "[1,0]<stdout>:h:687:748 [0] NCCL INFO init.cc:916 -> 2",
      "h:9:9 [1] misc/enqueue.cu:150 NCCL WARN Cuda failure 'invalid device function'",
      "h:9:9 [1] NCCL INFO misc/enqueue.cu:205 -> 1",
    );
    const f = of(r, "nccl_error");
    expect(f.map((x) => [x.processes, x.ranks])).toEqual([
      [["h:9"], []],
      [["h:687"], [0]],
    ]);
    expect(f[0]?.summary).toContain("NCCL returned ncclUnhandledCudaError (1: a CUDA call failed), passed up misc/enqueue.cu:205.");
    expect(f[1]?.summary).toBe(
      'NCCL failed on h:687 [0]: ncclSystemError (2: a system call or the system\'s setup failed (sockets, files, /sys, IB verbs)), passed up graph/xml.cc:469 → init.cc:916 (2 frames) after WARN "Could not find real path of /sys/class/pci_bus/0000:03/../../0000:03:00.0".',
    );
  });

  it("a handled probe is no failure: one frame deep in a transport, or the process went on (Init COMPLETE)", () => {
    expect(run("h:1:1 [0] NCCL INFO Could not find real path of /sys/class/net/eth0/device", "h:1:1 [0] NCCL INFO include/net.h:24 -> 2").findings).toEqual([]);
    expect(
      run(
        "h:1:1 [0] NCCL INFO transport.cc:356 -> 2",
        "h:1:1 [0] NCCL INFO transport/coll_net.cc:1358 -> 2",
        "h:1:1 [0] NCCL INFO comm 0x1 rank 2 nranks 8 cudaDev 0 nvmlDev 0 busId 88000 commId 0x70 - Init COMPLETE",
      ).findings,
    ).toEqual([]);
    // One frame, but at NCCL's API: the call failed.
    expect(of(run("[1,0]<stdout>:gpu6:1407:1595 [0] NCCL INFO init.cu:915 -> 2"), "nccl_error")[0]).toMatchObject({ processes: ["gpu6:1407"], ranks: [0] });
  });

  it("one frame after a WARN is the failure PyTorch reports with that result's words (pasted 227), and no failure without them", () => {
    const warn = [
      "z-pc:909608:910337 [0] NCCL INFO Channel 00 : 0[2d000] -> 1[2e000] via P2P/IPC",
      "z-pc:909608:910337 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 217 peer access is not supported between these two devices",
      "z-pc:909608:910337 [0] NCCL INFO transport.cc:68 -> 1",
    ];
    expect(of(run(...warn), "nccl_error")).toEqual([]);
    const reported =
      "RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch_1603729062494/work/torch/lib/c10d/ProcessGroupNCCL.cpp:784, unhandled cuda error, NCCL version 2.7.8";
    const f = of(run(reported, ...warn), "nccl_error").find((x) => x.processes.includes("z-pc:909608"));
    expect(f).toMatchObject({ ranks: [0] });
    expect(f?.summary).toContain('ncclUnhandledCudaError (1: a CUDA call failed), passed up transport.cc:68 after WARN "failed to open CUDA IPC handle : 217');
    // PyTorch 2.x's DistBackendError wording is the same report.
    const dist = `[rank0]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5`;
    expect(of(run(dist, ...warn), "nccl_error").find((x) => x.processes.includes("z-pc:909608"))).toMatchObject({ ranks: [0] });
    // A watchdog's CUDA exception is no NCCL result, whatever its words.
    const cuda =
      "[rank0]:[E1127 10:00:00.000000000 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank 0] Process group watchdog thread terminated with exception: CUDA error: unhandled cuda error";
    expect(of(run(cuda, ...warn), "nccl_error").filter((x) => x.processes.includes("z-pc:909608"))).toEqual([]);
    // Another result's words (unhandled system error, 2): not this chain's failure.
    expect(
      of(run(reported.replace("unhandled cuda error", "unhandled system error"), ...warn), "nccl_error").filter((x) => x.processes.includes("z-pc:909608")),
    ).toEqual([]);
  });
});

describe("size mismatches", () => {
  it("NET/IB: a collective_mismatch and the nccl_error of the process, both with the peer; the chain told once", () => {
    const r = run(
      "10.10.23.10: h-10:13:86 [0] transport/net_ib.cc:1038 NCCL WARN NET/IB : req 0/1 tag 0 peer 10.10.23.6<58683> collective mismatch error, local size 496640 remote size 65536",
      "10.10.23.10: h-10:13:86 [0] NCCL INFO include/net.h:32 -> 5",
      "10.10.23.10: h-10:13:86 [0] NCCL INFO proxy.cc:684 -> 5 [Proxy Thread]",
    );
    expect(r.findings.map((f) => [f.kind, f.processes, f.peer])).toEqual([
      ["collective_mismatch", ["h-10:13"], "10.10.23.6"],
      ["nccl_error", ["h-10:13"], "10.10.23.6"],
    ]);
    expect(r.findings[0]?.summary).toMatch(
      /^The ranks issued different collectives or sizes: h-10:13 \[0\] sent 496640 bytes where peer 10\.10\.23\.6<58683> had posted 65536 bytes \(NET\/IB\)/,
    );
    expect(r.findings[1]?.summary).toContain(
      "ncclInvalidUsage (5: invalid usage: the ranks' calls do not match), passed up include/net.h:32 → proxy.cc:684 (2 frames) [Proxy Thread]",
    );
  });

  it("NET/Socket: the peer's size against the posted one; the process uses sockets", () => {
    const r = run("hvd1:2918:3333 [0] transport/net_socket.cc:200 NCCL WARN NET/Socket : message truncated : receiving 696320 bytes instead of 32768");
    expect(r.findings.map((f) => f.kind)).toEqual(["collective_mismatch", "nccl_error", "socket_transport"]);
    expect(r.findings[0]?.summary).toContain("its peer sent 696320 bytes where hvd1:2918 [0] had posted 32768 bytes (NET/Socket)");
    expect(r.processes[0]).toMatchObject({ net: "Socket" });
  });

  it("bootstrap: an nccl_error about the setup exchange, not a collective mismatch", () => {
    const r = run(
      "1: c-2:4827:6900 [4] bootstrap.cc:77 NCCL WARN Message truncated : received 256 bytes instead of 4",
      "1: c-2:4827:6900 [4] NCCL INFO bootstrap.cc:554 -> 3",
    );
    expect(r.findings.map((f) => f.kind)).toEqual(["nccl_error"]);
    expect(r.findings[0]?.summary).toMatch(
      /^NCCL's bootstrap failed on c-2:4827 \[4\]: a setup message of 256 bytes arrived where 4 bytes were expected.*ncclInternalError \(3/,
    );
  });
});

describe("network errors", () => {
  it("next to a CUDA failure of another process of the same host, the network error is that failure's fallout: said in its finding, not a second one", () => {
    const r = run(
      "ng1:25:48 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer ng1-ib.example<51159>",
      "ng1:28:52 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'",
    );
    expect(of(r, "network_error")).toEqual([]);
    const f = of(r, "nccl_error")[0];
    expect(f).toMatchObject({ processes: ["ng1:28"], evidence: ["l:2", "l:1"] });
    expect(f?.summary).toMatch(/^A CUDA call inside NCCL failed on ng1:28 \[3\]: "Cuda failure 'out of memory'"/);
    expect(f?.summary).toContain("The network errors that followed on ng1:25 (peer ng1-ib.example) come from it.");
    // Another host: no such link.
    const other = run(
      "a:25:48 [0] x.cc:1 NCCL WARN socketProgress: Connection closed by remote peer c<1>",
      "b:28:52 [3] x.cc:1 NCCL WARN Cuda failure 'out of memory'",
    );
    expect(of(other, "network_error")[0]?.summary).toMatch(/^Network error at peer c<1> on a:25 \[0\]/);
  });

  it("a socket closed by a peer on the process's own host, after its own CUDA failure (pasted 266, nccl #1485), is that failure's fallout", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("266-")) ?? "";
    const r = analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]);
    expect(r.findings.map((f) => [f.kind, f.severity, f.processes, f.ranks])).toEqual([["nccl_error", "critical", ["node2:24881"], [2]]]);
    expect(r.findings[0]?.summary).toContain("Cuda failure 'out of memory'");
    expect(r.findings[0]?.summary).toContain("The network errors that followed on node2:24881 (peer node2) come from it.");
    // The CUDA failure after the close is no cause of it.
    const lines = readCapture(`nccl-pasted/${name}`).split("\n");
    const reordered = [...lines.slice(8), ...lines.slice(0, 8)].join("\n");
    expect(
      analyzeLogs([{ name, text: reordered }])
        .findings.map((f) => f.kind)
        .sort(),
    ).toEqual(["nccl_error", "network_error"]);
    // The same close from a peer on another host is the network's, beside the CUDA failure.
    const other = readCapture(`nccl-pasted/${name}`).replace("remote peer node2<47247>", "remote peer node7<47247>");
    expect(
      analyzeLogs([{ name, text: other }])
        .findings.map((f) => f.kind)
        .sort(),
    ).toEqual(["nccl_error", "network_error"]);
  });

  it("a WARN of NCCL's RAS service (pasted 261, vllm #19204: its client socket's bind) is a note, no failure of the job", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("261-")) ?? "";
    const r = analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]);
    expect(r.findings.filter((f) => f.kind === "nccl_error").map((f) => [f.severity, f.processes, f.ranks])).toEqual([["info", ["paula09:2528103"], [0]]]);
    expect(r.findings.find((f) => f.kind === "nccl_error")?.summary).toBe(
      "NCCL's RAS service failed on paula09:2528103 [0]: \"Call to bind failed: Address already in use\". The job's communicators do not depend on it; RAS queries (ncclras, ringwatch's RAS watch) may not reach this process: another process of the host holds RAS's client address (NCCL_RAS_ADDR, localhost:28028 by default), and only one process per host can.",
    );
    // The same words from another source file are a failure.
    const bootstrap = run("h:1:1 [0] bootstrap.cc:160 NCCL WARN Call to bind failed: Address already in use");
    expect(bootstrap.findings.map((f) => [f.kind, f.severity])).toEqual([["nccl_error", "critical"]]);
  });

  it("PyTorch's failed ncclUniqueId fetch of a later communicator (key '1'): its numbers are the group's ranks, not named; the launcher's global rank is", () => {
    const r = run(
      "[rank9]: torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '1', but store->get('1') got error: Connection reset by peer",
    );
    expect(r.findings.map((f) => [f.kind, f.ranks])).toEqual([["network_error", [9]]]);
    const bare = run(
      "torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '1', but store->get('1') got error: Connection reset by peer",
    );
    expect(bare.findings.map((f) => [f.kind, f.ranks])).toEqual([["network_error", []]]);
  });

  it("PyTorch's failed ncclUniqueId fetch from the store (pasted 295, pdsh prefix): the rank that asked and rank 0, whose entry it asked for", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("295-")) ?? "";
    const r = analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]);
    expect(r.findings.map((f) => [f.kind, f.severity, f.ranks])).toEqual([["network_error", "critical", [0, 14]]]);
    expect(r.findings[0]?.summary).toMatch(
      /^Network error with rank 0 on rank 14: connection_reset \(1 line\)\. Check the peer's processes \(rank 0's own log has the first error/,
    );
  });

  it("torch.cuda.nccl's `NCCL Error 2: unhandled system error` under [rank10]: is that rank's NCCL error (pasted 292)", () => {
    const r = run("[rank10]: RuntimeError: NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO for details)");
    expect(r.findings.map((f) => [f.kind, f.ranks])).toEqual([["nccl_error", [10]]]);
    expect(run("[rank10]: NCCL Error handling was slow").findings).toEqual([]);
  });

  it("srun's task label is a process's rank (pasted 287: no algorithm/protocol available), unless several processes carry it (torchrun under srun)", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("287-")) ?? "";
    const r = analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]);
    expect(r.findings.map((f) => [f.kind, f.ranks])).toEqual([
      ["nccl_error", [201]],
      ["nccl_error", [202]],
      ["nccl_error", [255]],
      ["nccl_error", [251]],
      ["nccl_error", [253]],
    ]);
    expect(r.findings[0]?.summary).toBe('NCCL internal error on :41367 [1]: "Error : no algorithm/protocol available".');
    const shared = run(
      "0: n1:11:11 [0] enqueue.cc:422 NCCL WARN Error : no algorithm/protocol available",
      "0: n1:12:12 [1] enqueue.cc:422 NCCL WARN Error : no algorithm/protocol available",
    );
    expect(shared.findings.map((f) => [f.kind, f.ranks])).toEqual([
      ["nccl_error", []],
      ["nccl_error", []],
    ]);
    // One task shown on its host: perhaps a node's torchrun, its number the node's.
    expect(run("1: node2:2005:2005 [5] enqueue.cc:422 NCCL WARN Error : no algorithm/protocol available").findings.map((f) => f.ranks)).toEqual([[]]);
  });

  it("a proxy's failed Connect names its process's rank where nothing else does (pasted 302, DeepEP: ibv_create_cq out of memory)", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("302-")) ?? "";
    const r = analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]);
    expect(r.findings.map((f) => [f.kind, f.processes, f.ranks])).toEqual([
      ["nccl_error", ["msm-h200-2:4016"], []],
      ["nccl_error", ["msm-h200-2:4009"], []],
      ["nccl_error", ["msm-h200-2:4011"], [10]],
    ]);
  });

  it("`Proxy Call to rank 14 failed (Connect)` after the peer closed the connection is that network error, not a second failure (pasted 504); alone, an nccl_error", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("504-")) ?? "";
    const r = analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]);
    expect(r.findings.filter((f) => f.severity !== "info").map((f) => [f.kind, f.processes, f.ranks])).toEqual([["network_error", ["host:22337"], [14]]]);
    const alone = run(
      "gpu7:4105:4372 [0] proxy.cc:862 NCCL WARN Proxy Call to rank 3 failed (Connect)",
      "gpu7:4105:4372 [0] NCCL INFO transport/net.cc:269 -> 6",
    );
    expect(alone.findings.map((f) => [f.kind, f.processes])).toEqual([["nccl_error", ["gpu7:4105"]]]);
  });

  it("a net plugin's failed request quoted by PyTorch names the rank and the provider's words", () => {
    const f = of(
      run("[rank3]: NET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 (UNDELIVERABLE). Completed length: 0"),
      "network_error",
    )[0];
    expect(f).toMatchObject({ ranks: [3], processes: [] });
    expect(f?.summary).toContain("The net plugin said: UNDELIVERABLE (RC 113, no route to host).");
  });

  it("`Net : Socket creation failed` is a network error of that process, with its chain", () => {
    const r = run(
      "[1,4]<stdout>:gpu7:4105:4372 [0] include/socket.h:318 NCCL WARN Net : Socket creation failed : Address family not supported by protocol",
      "[1,4]<stdout>:gpu7:4105:4372 [0] NCCL INFO transport/net_ib.cu:407 -> 2",
    );
    expect(r.findings.map((f) => [f.kind, f.processes, f.ranks])).toEqual([["network_error", ["gpu7:4105"], [4]]]);
    expect(r.findings[0]?.summary).toMatch(/^Network error on gpu7:4105 \[0\]: connect_failed .*Address family not supported by protocol.*ncclSystemError/);
  });
});

describe("GPUDirect RDMA off and sockets", () => {
  it("a plugin disabling GDR with the device tag only, and a distance line quoted alone: gdr_disabled with what the line said", () => {
    const r = run(
      " [0] NCCL INFO NET/OFI Could not disable CUDA API usage for HMEM, disabling GDR",
      "NCCL INFO GPU Direct RDMA Disabled for GPU ca000 / HCA 0 (distance 7 > 4)",
    );
    const f = of(r, "gdr_disabled")[0];
    expect(f).toMatchObject({ processes: [], evidence: ["l:1", "l:2"] });
    expect(f?.summary).toContain("NET/OFI Could not disable CUDA API usage for HMEM, disabling GDR; GPU ca000 / HCA 0 (distance 7 > 4)");
  });

  it("NET/Socket on lo with GDR disabled for 'lo': the socket transport alone, the loopback named (sockets never do GDR)", () => {
    const r = run(
      "axa:3:5 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.",
      "axa:3:5 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>",
      "axa:3:5 [0] NCCL INFO NET/Socket : GPU Direct RDMA Disabled for HCA 0 'lo'",
    );
    expect(r.findings.map((f) => f.kind)).toEqual(["socket_transport"]);
    expect(r.findings[0]?.summary).toContain("NET/Socket on lo:127.0.0.1. lo is the loopback interface");
  });

  it("a distance-limited GDR off on a process that uses sockets still says to fix the sockets first", () => {
    const r = run(
      "axa:3:5 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>",
      "axa:3:5 [0] NCCL INFO GPU Direct RDMA Disabled for GPU ca000 / HCA 0 (distance 7 > 4)",
      "axa:3:5 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0",
    );
    expect(r.findings.map((f) => f.kind)).toEqual(["socket_transport", "gdr_disabled"]);
    expect(r.findings[1]?.summary).toContain("On the NET/Socket transport GDR cannot work at all");
  });

  it("sockets of one process whose communicators have all their ranks in the logs (nranks 1, pasted 512) are one host's; one rank of two is not", () => {
    const lines = (nranks: number, end: string): string[] => [
      "hostA:2129:2129 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>",
      "hostA:2129:2129 [0] NCCL INFO Using network Socket",
      `hostA:2129:2129 [0] NCCL INFO ncclCommInitRank comm 0x641a32ed9550 rank 0 nranks ${nranks} cudaDev 0 nvmlDev 0 busId 1000 commId 0x7d30723e5510cf36 - ${end}`,
    ];
    for (const end of ["Init START", "Init COMPLETE"]) {
      expect(
        of(run(...lines(1, end)), "socket_transport").filter((f) => f.severity !== "info"),
        end,
      ).toEqual([]);
      expect(
        of(run(...lines(2, end)), "socket_transport").map((f) => f.severity),
        end,
      ).toEqual(["warning"]);
    }
  });

  it("a healthy IB process that prints GDR Enabled and GDRDMA links: nothing", () => {
    expect(
      run(
        "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>",
        "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA",
      ).findings,
    ).toEqual([]);
  });
});

describe("a net plugin's failed libfabric call (aws-ofi-nccl's `RC: %d, ERROR: %s` words)", () => {
  it("the real capture (pasted 285): rank 23's `Couldn't open AV` is its NCCL error, told as a failed call", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("285-")) ?? "";
    const r = analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]);
    expect(of(r, "nccl_error").map((f) => [f.severity, f.ranks, f.processes])).toEqual([["critical", [23], ["ip-172-32-45-165:72593"]]]);
    expect(of(r, "nccl_error")[0]?.summary).toMatch(
      /^A libfabric call of the net plugin failed on ip-172-32-45-165:72593 \[7\]: "NET\/OFI Couldn't open AV\. RC: -22, ERROR: Invalid argument"\./,
    );
  });

  it("a failed call during the plugin's init, then its `initialization failed`: one finding, that says the init failed", () => {
    const r = run(
      "h:5:5 [0] nccl_net_ofi_init:1000 NCCL WARN NET/OFI Couldn't allocate endpoint. RC: -12, ERROR: Cannot allocate memory",
      "h:5:5 [0] nccl_net_ofi_init:1010 NCCL WARN NET/OFI aws-ofi-nccl initialization failed",
    );
    const f = of(r, "nccl_error");
    expect(f.map((x) => x.evidence)).toEqual([["l:1", "l:2"]]);
    expect(f[0]?.summary).toMatch(/^The net plugin failed to initialize on h:5 \[0\]: "NET\/OFI aws-ofi-nccl initialization failed"/);
    // Its data path's words are the rows' that tell them: a reset connection stays a network error.
    const reset = run("h:5:5 [0] nccl_ofi_rdma.cpp:2772 NCCL WARN NET/OFI Error posting RDMA ctrl request. RC: -104, Error: Connection reset by peer");
    expect(reset.findings.map((x) => x.kind)).toEqual(["network_error"]);
    // Another plugin's line with the same words but not aws-ofi-nccl's prefix is not told by this form.
    expect(of(run("h:5:5 [0] x.cc:1 NCCL WARN NET/Foo Couldn't open AV. RC: -22, ERROR: Invalid argument"), "nccl_error")).toEqual([]);
  });
});

describe("a connect NCCL gives up on after its retries (2.19+, misc/socket.cc's format strings)", () => {
  it("the WARN after the last retry, to 2.26 and from 2.27 (with the peer), is a connect_failed network_error", () => {
    const old = run("h:9:10 [1] misc/socket.cc:544 NCCL WARN socketPollConnect: connect returned Connection refused, exceeded error retry count (35)");
    expect(of(old, "network_error").map((f) => f.processes)).toEqual([["h:9"]]);
    expect(of(old, "network_error")[0]?.summary).toContain("connect_failed (1 line). The system said: Connection refused.");
    const now = run(
      "h:9:10 [1] os/linux.cc:200 NCCL WARN ncclOsSocketPollConnect: connect to 10.82.101.249<37857> returned Connection refused, exceeded error retry count after 35 attempts",
    );
    expect(of(now, "network_error")[0]?.summary).toMatch(/^Network error at peer 10\.82\.101\.249<37857> on h:9 \[1\]: connect_failed/);
    // Only sockets failed: the TCP path, not an HCA.
    expect(of(now, "network_error")[0]?.summary).toContain("Check the peer's processes (its own log has the first error), the TCP path between the hosts");
  });

  it("NCCL connects once more after its last retry: a later line of the process (the connect succeeded, or NCCL's WARN) takes its place", () => {
    const retry = "node-b:500:501 [0] NCCL INFO socketPollConnect: connect returned Connection refused, retrying (34/34) after sleep for 3400 msec";
    const after = run(retry, "node-b:500:501 [0] NCCL INFO comm 0x55 rank 1 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE");
    expect(after.findings.filter((f) => f.severity !== "info")).toEqual([]);
    const warned = run(
      retry,
      "node-b:500:501 [0] misc/socket.cc:544 NCCL WARN socketPollConnect: connect returned Connection refused, exceeded error retry count (35)",
    );
    expect(of(warned, "network_error").map((f) => [f.evidence, f.summary.includes("connect_failed (1 line)")])).toEqual([[["l:2"], true]]);
    // Another process's line does not take its place.
    expect(of(run(retry, "node-a:400:401 [0] NCCL INFO Using network Socket"), "network_error").map((f) => f.processes)).toEqual([["node-b:500"]]);
  });

  it("a paste that ends at the last retry (pasted 333): the failed connect it announces; at an earlier retry, a warning that it kept retrying", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("333-")) ?? "";
    const text = readCapture(`nccl-pasted/${name}`);
    const r = analyzeLogs([{ name, text }]);
    expect(r.findings.map((f) => [f.kind, f.processes, f.evidence])).toEqual([["network_error", ["zgiot:1183664"], [`${name}:9`]]]);
    expect(r.findings[0]?.summary).toContain("The system said: No route to host.");
    const before = text.split("\n").filter((l) => !l.includes("(34/34)"));
    const earlier = analyzeLogs([{ name, text: before.join("\n") }]).findings;
    expect(earlier.map((f) => [f.kind, f.severity, f.processes])).toEqual([["network_error", "warning", ["zgiot:1183664"]]]);
    expect(earlier[0]?.summary).toContain("kept retrying a connection (No route to host;");
    const peer = run(
      "h:9:10 [1] NCCL INFO socketPollConnect: connect to 10.0.0.2<36085> returned Connection refused, retrying (35/35) after sleep for 3500 msec",
    );
    expect(of(peer, "network_error")[0]?.summary).toMatch(/^Network error at peer 10\.0\.0\.2<36085> on h:9 \[1\]/);
  });
});

describe("two ranks on one GPU (`Duplicate GPU detected`, NCCL's init.cc)", () => {
  it("the real capture (pasted 340, Horovod under mpirun): each process's nccl_error names its rank and the other rank on its GPU", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("340-")) ?? "";
    const r = analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]);
    const errors = of(r, "nccl_error");
    expect(errors.map((f) => f.ranks).sort()).toEqual([[0, 1], [0, 2], [0, 4], [0, 5], [3]]);
    // Without a launcher's tag, the line's first rank is the process's own.
    const untagged = run("smc-gpu-03:29880:30398 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000");
    expect(of(untagged, "nccl_error").map((f) => f.ranks)).toEqual([[0, 2]]);
    expect(errors.find((f) => f.ranks.includes(5))?.summary).toMatch(
      /^Two ranks of one communicator are on one GPU \(smc-gpu-03:29883 \[0\]: "Duplicate GPU detected : rank 5 and rank 0 both on CUDA device 1000"\), so NCCL refuses to form it/,
    );
  });
});

describe("NCCL without NVML (`No NVML device handle. Skipping nvlink detection.`, graph/xml.cc)", () => {
  it("the real capture (pasted 356, NCCL 2.18, one process of four GPUs): one nccl_error at warning, not a handled probe", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("356-")) ?? "";
    const r = analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]);
    expect(r.findings.map((f) => [f.kind, f.severity, f.processes])).toEqual([["nccl_error", "warning", ["nid002080:86174"]]]);
    expect(r.findings[0]?.summary).toMatch(/^NCCL could not use NVML on nid002080:86174 \[2\]: "No NVML device handle\. Skipping nvlink detection\."/);
  });
});

describe("a host name printed as `:` (pasted 368, Azure's HPC image: `::16674:17023 [0] NCCL INFO ...`)", () => {
  it("is a header: the graph import's failure is rank 0's nccl_error", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("368-")) ?? "";
    const r = analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]);
    expect(of(r, "nccl_error").map((f) => [f.processes, f.ranks])).toEqual([[["::16674"], [0]]]);
    // Only at the line's start or after a blank: `x::1:2` is no header.
    expect(
      run("x::16674:17023 [0] graph/search.cc:703 NCCL WARN XML Import Channel : dev 1 not found.", "x::16674:17023 [0] NCCL INFO graph/search.cc:733 -> 2")
        .findings,
    ).toEqual([]);
  });
});

describe("a peer's address with its domain is the process's own host (pasted 377: `node.cm.cluster` is `node`)", () => {
  it("the close after the process's own CUDA out of memory is that failure's fallout, not a second critical finding", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("377-")) ?? "";
    const r = analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]);
    expect(r.findings.filter((f) => f.severity !== "info").map((f) => [f.kind, f.ranks])).toEqual([["nccl_error", [93]]]);
    // An address of digits and dots is no host name's first label.
    const ip = run(
      "10:7:7 [0] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'",
      "10:7:8 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer 10.0.0.1<40031>",
    );
    expect(of(ip, "network_error")).toHaveLength(1);
  });
});

describe("PyTorch's `Last error: Duplicate GPU detected : rank 3 and rank 0 ...` in lines that name no rank (pasted 395)", () => {
  it("names the ranks NCCL's words give", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("395-")) ?? "";
    const r = analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]);
    expect(of(r, "nccl_error").map((f) => f.ranks)).toEqual([[0, 3, 7]]);
  });
});

describe("second review's cases (built from NCCL's and aws-ofi-nccl's format strings)", () => {
  it("NVML's own failed call that ends init stays critical; only `No NVML device handle` is a warning", () => {
    const fatal = run(
      "node1:4242:4242 [0] misc/nvmlwrap.cc:183 NCCL WARN nvmlDeviceGetHandleByPciBusId() failed: Not Found",
      "node1:4242:4242 [0] NCCL INFO init.cc:326 -> 2",
      "node1:4242:4242 [0] NCCL INFO init.cc:1545 -> 2",
    );
    expect(of(fatal, "nccl_error").map((f) => f.severity)).toEqual(["critical"]);
    expect(of(fatal, "nccl_error")[0]?.summary).not.toContain("It goes on");
  });

  it("aws-ofi-nccl's setup calls outside the data path are net_plugin_error (`Failed to set FI_OPT_CUDA_API_PERMITTED`)", () => {
    const r = run("h:5:5 [0] nccl_ofi_net.c:900 NCCL WARN NET/OFI Failed to set FI_OPT_CUDA_API_PERMITTED. RC: -92, ERROR: Protocol not available");
    expect(of(r, "nccl_error")[0]?.summary).toMatch(/^A libfabric call of the net plugin failed on h:5 \[0\]/);
  });

  it("another thread's retry of the same process does not stand for how the last retry ended", () => {
    const r = run(
      "nodeB:5000:5001 [0] NCCL INFO socketPollConnect: connect returned No route to host, retrying (34/34) after sleep for 3400 msec",
      "nodeB:5000:5009 [1] NCCL INFO socketPollConnect: connect returned No route to host, retrying (3/34) after sleep for 300 msec",
    );
    expect(of(r, "network_error").map((f) => f.evidence)).toEqual([["l:1"]]);
  });

  it("the ncclUniqueId fetch's `Broken pipe` is the store's connection lost (pasted 411); a Python BrokenPipeError is nothing", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("411-")) ?? "";
    const r = analyzeLogs([{ name, text: readCapture(`nccl-pasted/${name}`) }]);
    expect(r.findings.map((f) => [f.kind, f.ranks])).toEqual([["network_error", [0, 2]]]);
    expect(run("BrokenPipeError: [Errno 32] Broken pipe").findings).toEqual([]);
  });
});
