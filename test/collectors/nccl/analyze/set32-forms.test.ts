/**
 * Forms the thirty-second and thirty-fourth blind sets brought (test/fixtures/nccl-pasted 810, 823),
 * and set 29's kernel RDMA completion errors (752): horovodrun's Gloo launcher tags, Gloo's pair
 * naming the peer that closed or reset its connection, a py-spy thread idle in torch.distributed's
 * API, and mlx5_ib's failed work completions.
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../collectors/nccl/analyze/analyze.js";
import { parsePrefix } from "../../../../collectors/nccl/logs/parse/prefix.js";
import { parseLine } from "../../../../collectors/nccl/logs/parse/line.js";
import { KernelLines } from "../../../../agent/analyze-kernel.js";
import { allFindings, brief, dumpWaits, pastedText, seriousFindings } from "../../../helpers/pasted.js";

describe("Horovod's Gloo controller losing its peers (810)", () => {
  it("the capture: rank 0's closed connection and rank 4's reset, each a network_error at its peer", () => {
    const fs = seriousFindings(pastedText("810-"));
    expect(brief(fs)).toEqual([
      ["network_error", "critical", [0]],
      ["network_error", "critical", [4]],
    ]);
    expect(fs.map((f) => f.peer)).toEqual(["10.128.15.205", "10.128.0.5"]);
    expect(fs[0]?.summary).toContain("at peer 10.128.15.205<53666> on rank 0");
    expect(fs[0]?.summary).toContain("connection_closed");
    expect(fs[1]?.summary).toContain("connection_reset");
  });

  it("horovodrun's `[3]<stderr>:` (after C's ctime) gives rank 3 as mpirun's tag does; a bare `[3] ` stays a tag", () => {
    const line = "Thu Aug 29 16:41:02 2019[3]<stderr>:terminate called after throwing an instance of 'gloo::IoException'";
    const p = parsePrefix(line, 0, line.length, true);
    expect(p.launcher).toMatchObject({ kind: "mpi", rank: 3, stream: "stderr" });
    expect(line.slice(p.end)).toBe("terminate called after throwing an instance of 'gloo::IoException'");
    expect(parsePrefix("[12]<stdout>: x", 0, 15, true).launcher).toMatchObject({ kind: "mpi", rank: 12, stream: "stdout" });
    expect(parsePrefix("[3] x", 0, 5, true).launcher).toMatchObject({ kind: "tag", rank: 3 });
    // Without horovodrun's colon it is no such tag.
    expect(parsePrefix("[3]<stdout> NCCL INFO x", 0, 22, true).launcher).toMatchObject({ kind: "tag", rank: 3 });
  });

  it("Gloo's pair names the peer in brackets, its port after them", () => {
    const closed = parseLine("  what():  [/tmp/x/third_party/gloo/gloo/transport/tcp/pair.cc:572] Connection closed by peer [10.0.0.7]:53666");
    expect(closed).toMatchObject({ kind: "warn", warnKind: "connection_closed", peer: "10.0.0.7", peerPort: 53666 });
    const reset = parseLine("  what():  [/tmp/x/gloo/transport/tcp/pair.cc:563] Read error [10.0.0.5]:19855: Connection reset by peer");
    expect(reset).toMatchObject({ kind: "warn", warnKind: "connection_reset", peer: "10.0.0.5", peerPort: 19855, call: "recv" });
    const write = parseLine("[/x/gloo/transport/tcp/pair.cc:345] Write error [fe80::1%eth0]:4242: Connection reset by peer");
    expect(write).toMatchObject({ warnKind: "connection_reset", peer: "fe80::1%eth0", peerPort: 4242, call: "send" });
  });

  it("another program's words are none of Gloo's: no closed connection without Gloo's pair, no peer in Python's [Errno 104]", () => {
    expect(parseLine("INFO websocket: Connection closed by peer [10.0.0.3]:443 (normal closure)")).toBeUndefined();
    const errno = parseLine("Read error [Errno 104] Connection reset by peer");
    expect(errno).toMatchObject({ warnKind: "connection_reset" });
    expect(errno).not.toHaveProperty("peer");
  });
});

describe("mlx5_ib's failed work completions of a kernel RDMA consumer (752)", () => {
  const hca = (lines: readonly string[]) =>
    analyzeLogs([{ name: "k.log", text: lines.join("\n") }], new KernelLines()).findings.filter((f) => f.kind === "hca_error");

  it("the capture: dynamic debug's lines, each told by its syndrome row, are flushed requests: a note, no warning", () => {
    const fs = analyzeLogs([{ name: "x.log", text: pastedText("752-") }], new KernelLines()).findings;
    expect(brief(fs)).toEqual([["hca_error", "info", []]]);
    expect(fs[0]).toMatchObject({ device: "rocep33s0f0", event: "completion_flushed" });
    expect(fs[0]?.summary).toContain("6 times");
  });

  it("one completion's lines count once, per device, in the order the kernel prints them", () => {
    const at = (dev: string, fn: string, words: string): string => `[  408.372201] infiniband ${dev}: ${fn}:332:(pid 0): ${words}`;
    const status = (dev: string) => at(dev, "mlx5_handle_error_cqe", "WC error: 4, Message: local protection error");
    const dump = (dev: string) => at(dev, "dump_cqe", "dump error cqe");
    const debug = (dev: string) => at(dev, "mlx5_poll_one", "Requester error cqe on cqn 0x406:");
    const row = (dev: string, syndrome: string) => at(dev, "mlx5_poll_one", `syndrome ${syndrome}, vendor syndrome 0x32`);
    // 5.17-6.6 with dynamic debug: four lines, one completion.
    expect(hca([status("mlx5_0"), dump("mlx5_0"), debug("mlx5_0"), row("mlx5_0", "0x4")])[0]?.summary).not.toContain("times");
    // Two devices' completions interleaved: one each.
    const two = hca([status("mlx5_0"), status("mlx5_1"), dump("mlx5_0"), dump("mlx5_1")]);
    expect(two.map((f) => [f.device, f.severity])).toEqual([
      ["mlx5_0", "warning"],
      ["mlx5_1", "warning"],
    ]);
    expect(two.map((f) => f.summary).join(" ")).not.toContain("times");
    // A flushed request (debug + row 0x5), then an older kernel's non-flush completion (dump, debug, row): a note and a warning.
    const mixed = hca([debug("mlx5_0"), row("mlx5_0", "0x5"), dump("mlx5_0"), debug("mlx5_0"), row("mlx5_0", "0x4")]);
    expect(mixed.map((f) => [f.event, f.severity])).toEqual([
      ["completion_error", "warning"],
      ["completion_flushed", "info"],
    ]);
    // Two completions of one form: two.
    expect(hca([status("mlx5_0"), dump("mlx5_0"), status("mlx5_0"), dump("mlx5_0")])[0]?.summary).toContain("2 times");
  });

  it("the Ethernet side's line says its syndrome: 0x5 is a flushed request", () => {
    const line = (syndrome: string) =>
      `mlx5_core 0000:3b:00.1 eth1: Error cqe on cqn 0x817, ci 0x8, qn 0x1dbb, opcode 0xd, syndrome ${syndrome}, vendor syndrome 0x68`;
    expect(hca([line("0x1")]).map((f) => [f.event, f.severity])).toEqual([["completion_error", "warning"]]);
    expect(hca([line("0x5")]).map((f) => [f.event, f.severity])).toEqual([["completion_flushed", "info"]]);
  });
});

describe("a py-spy thread idle in torch.distributed's API, no native frames (823)", () => {
  it("the capture: SGLang's scheduler idle in send is a hang_suspected warning naming the call and its caller", () => {
    const fs = seriousFindings(pastedText("823-"));
    expect(brief(fs)).toEqual([["hang_suspected", "warning", []]]);
    expect(fs[0]?.summary).toContain("idle inside torch.distributed's send (called from send_object)");
  });

  it("the same frames seen active, or idle in a frame of the caller's own, say nothing of their own", () => {
    const dump = (status: string, top: string): string =>
      [
        "Process 3438121: python3 train.py",
        "Python v3.12.11 (/usr/bin/python3.12)",
        "",
        `Thread 3438121 (${status}): "MainThread"`,
        top,
        "    send_object (distributed/parallel_state.py:886)",
        "    run (train.py:12)",
      ].join("\n");
    expect(brief(seriousFindings(dump("idle", "    send (torch/distributed/distributed_c10d.py:2487)")))).toEqual([["hang_suspected", "warning", []]]);
    expect(dumpWaits(dump("active", "    send (torch/distributed/distributed_c10d.py:2487)"))).toEqual([]);
    expect(dumpWaits(dump("idle", "    next_batch (loader.py:40)"))).toEqual([]);
    // Alone, the dump is the one evidence (analyze/dump-alone.ts): where its main thread stands.
    expect(seriousFindings(dump("idle", "    next_batch (loader.py:40)")).map((f) => f.summary.split(" <- ")[0])).toEqual([
      "No finding here tells of a hang or a failure but these stack dumps (one thread): py-spy at x.log:4 of pid 3438121: MainThread (idle) in loader.py:40 next_batch",
    ]);
  });

  it("idle in a tensor collective, which NCCL only enqueues, is a note; with a second process's dump, the stacks compared say it", () => {
    const dump = (pid: number, top: string): string[] => [
      `Process ${pid}: python3 train.py`,
      "Python v3.12.11 (/usr/bin/python3.12)",
      "",
      `Thread ${pid} (idle): "MainThread"`,
      top,
      "    train_step (train.py:88)",
      "",
    ];
    const one = dumpWaits(dump(41, "    all_reduce (torch/distributed/distributed_c10d.py:2501)").join("\n"));
    expect(brief(one)).toEqual([["hang_suspected", "info", []]]);
    expect(one[0]?.summary).toContain("A tensor collective on NCCL returns once enqueued");
    const two = [
      ...dump(41, "    barrier (torch/distributed/distributed_c10d.py:3700)"),
      ...dump(42, "    barrier (torch/distributed/distributed_c10d.py:3700)"),
    ];
    expect(allFindings(two.join("\n")).filter((f) => f.summary.includes("torch.distributed's"))).toEqual([]);
    // Two dumps of one process a minute apart, both in the barrier: still one process, still a warning.
    const again = [
      ...dump(41, "    barrier (torch/distributed/distributed_c10d.py:3700)"),
      ...dump(41, "    barrier (torch/distributed/distributed_c10d.py:3700)"),
    ];
    expect(brief(seriousFindings(again.join("\n")))).toEqual([["hang_suspected", "warning", []]]);
    expect(brief(seriousFindings(dump(41, "    _store_based_barrier (torch/distributed/distributed_c10d.py:4400)").join("\n")))).toEqual([
      ["hang_suspected", "warning", []],
    ]);
    // The API's other functions wait for no peer.
    expect(dumpWaits(dump(41, "    destroy_process_group (torch/distributed/distributed_c10d.py:1800)").join("\n"))).toEqual([]);
  });

  it("a gdb thread's CUDA wait in another log stays beside the py-spy thread's torch.distributed wait", () => {
    const fs = analyzeLogs([
      { name: "a.log", text: pastedText("823-") },
      { name: "b.log", text: pastedText("636-") },
    ]).findings.filter((f) => f.kind === "hang_suspected");
    expect(fs.map((f) => f.severity)).toEqual(["warning", "info"]);
    expect(fs[1]?.summary).toContain("CUDA's cudaMemcpyAsync");
  });
});
