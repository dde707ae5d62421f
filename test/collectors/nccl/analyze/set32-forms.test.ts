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
import { allFindings, brief, pastedText, seriousFindings } from "../../../helpers/pasted.js";

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
  });

  it("Gloo's pair names the peer in brackets, its port after them", () => {
    const closed = parseLine("  what():  [/tmp/x/third_party/gloo/gloo/transport/tcp/pair.cc:572] Connection closed by peer [10.0.0.7]:53666");
    expect(closed).toMatchObject({ kind: "warn", warnKind: "connection_closed", peer: "10.0.0.7", peerPort: 53666 });
    const reset = parseLine("  what():  [/tmp/x/gloo/transport/tcp/pair.cc:563] Read error [10.0.0.5]:19855: Connection reset by peer");
    expect(reset).toMatchObject({ kind: "warn", warnKind: "connection_reset", peer: "10.0.0.5", peerPort: 19855, call: "recv" });
    const write = parseLine("[/x/gloo/transport/tcp/pair.cc:345] Write error [fe80::1%eth0]:4242: Connection reset by peer");
    expect(write).toMatchObject({ warnKind: "connection_reset", peer: "fe80::1%eth0", peerPort: 4242, call: "send" });
  });
});

describe("mlx5_ib's failed work completions of a kernel RDMA consumer (752)", () => {
  it("the capture: seven debug lines on rocep33s0f0 are one hca_error warning of seven completions", () => {
    const fs = analyzeLogs([{ name: "x.log", text: pastedText("752-") }], new KernelLines()).findings.filter((f) => f.severity !== "info");
    expect(brief(fs)).toEqual([["hca_error", "warning", []]]);
    expect(fs[0]).toMatchObject({ device: "rocep33s0f0", event: "completion_error" });
    expect(fs[0]?.summary).toContain("7 times");
    expect(fs[0]?.summary).toContain("syndrome 0x5");
  });

  it("5.17+'s WC error and its dump are one completion; two WC errors are two", () => {
    const one = [
      "[  408.372201] infiniband mlx5_0: mlx5_handle_error_cqe:332:(pid 0): WC error: 4, Message: local protection error",
      "[  408.380181] infiniband mlx5_0: dump_cqe:272:(pid 0): dump error cqe",
      "[  408.380187] 00000000: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
    ];
    const two = [...one, one[0] as string, one[1] as string];
    const count = (lines: string[]): string | undefined =>
      analyzeLogs([{ name: "k.log", text: lines.join("\n") }], new KernelLines()).findings.find((f) => f.kind === "hca_error")?.summary;
    expect(count(one)).not.toContain("times");
    expect(count(two)).toContain("2 times");
  });
});

describe("a py-spy thread idle in torch.distributed's API, no native frames (823)", () => {
  it("the capture: SGLang's scheduler idle in send is a hang_suspected warning naming the call and its caller", () => {
    const fs = seriousFindings(pastedText("823-"));
    expect(brief(fs)).toEqual([["hang_suspected", "warning", []]]);
    expect(fs[0]?.summary).toContain("idle inside torch.distributed's send (called from send_object)");
  });

  it("the same frames seen active, or idle in a frame of the caller's own, say nothing", () => {
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
    expect(seriousFindings(dump("active", "    send (torch/distributed/distributed_c10d.py:2487)"))).toEqual([]);
    expect(seriousFindings(dump("idle", "    next_batch (loader.py:40)"))).toEqual([]);
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
    const one = allFindings(dump(41, "    all_reduce (torch/distributed/distributed_c10d.py:2501)").join("\n"));
    expect(brief(one)).toEqual([["hang_suspected", "info", []]]);
    expect(one[0]?.summary).toContain("A tensor collective on NCCL returns once enqueued");
    const two = [
      ...dump(41, "    barrier (torch/distributed/distributed_c10d.py:3700)"),
      ...dump(42, "    barrier (torch/distributed/distributed_c10d.py:3700)"),
    ];
    expect(allFindings(two.join("\n")).filter((f) => f.summary.includes("torch.distributed's"))).toEqual([]);
  });
});
