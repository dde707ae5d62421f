/**
 * Lines as pasted, put back together (parse/unwrap.ts): an error glued to a progress bar, rows of a
 * line wrapped by a terminal or a job runner, and `Last error:` with its error on the next row.
 * The rows are the real ones of the pasted corpus (files 07, 12, 15, 22, 30), given here inline.
 */
import { describe, expect, it } from "vitest";
import { LineUnwrapper } from "../../../../../collectors/nccl/logs/parse/unwrap.js";

function unwrap(rows: readonly string[]): [string, number][] {
  const out: [string, number][] = [];
  const u = new LineUnwrapper((text, n) => out.push([text, n]));
  rows.forEach((r, i) => u.push(r, i + 1));
  u.end();
  return out;
}

describe("glued lines", () => {
  it("12: a watchdog line glued to a tqdm bar starts a line of its own, at the same line number", () => {
    const bar = "[1763]   1%|▏         | 24/1752 [01:08<1:22:56,  2.88s/it]";
    const err = "[rank5]:[E602 11:17:52.185053341 ProcessGroupNCCL.cpp:632] [Rank 5] Watchdog caught collective operati";
    expect(unwrap([bar + err])).toEqual([
      [bar, 1],
      [err, 1],
    ]);
  });

  it("22: a c10 log header without a rank tag ([E ProcessGroupGloo.cpp:138]) too", () => {
    const bar = "Map (num_proc=14):  70%|██████▌      | 652383/930514 [6:39:53<4:31:33, 17.07 examples/s]";
    const err = "[E ProcessGroupGloo.cpp:138] Rank 3 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0.";
    expect(unwrap([bar + err]).map(([t]) => t)).toEqual([bar, err]);
  });

  it("prefixes before a line start are not glue: [1,0]<stdout>:, a wall clock, [rank3]: before [E...]", () => {
    for (const l of [
      "[1,0]<stdout>:[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout.",
      " 2025-02-18 12:54 [rank13]:[E218 04:54:22.864467604 ProcessGroupNCCL.cpp:616] [Rank 1] done.",
      "[80746] [rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] x.",
    ])
      expect(unwrap([l])).toEqual([[l, 1]]);
  });

  it("a [ that starts no line (a list, [Rank 5] inside a message, a bracketed time) splits nothing", () => {
    const l = "[rank0]: RuntimeError: Ranks [1, 2] at [01:08<1:22:56] saw [Rank 5] [E]";
    expect(unwrap([l])).toEqual([[l, 1]]);
  });
});

describe("wrapped lines", () => {
  it("15: a terminal wrap at 116 columns, mid-word, the last row padded: one line, the words whole", () => {
    const rows = [
      "[rank6]:[E429 13:55:49.384372190 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank 6] ProcessGroupNCCL'",
      "s watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives. This typically indi",
      "erwise, please attempt to debug the hang.                                                                           ",
      "[rank6]:[E429 13:55:49.384620373 ProcessGroupNCCL.cpp:1533] [PG ID 0 PG GUID 0(default_pg) Rank 6] ProcessGroupNCCL ",
      "preparing to dump debug info. Include stack trace: 1                                                                ",
    ];
    const out = unwrap(rows);
    expect(out.map(([, n]) => n)).toEqual([1, 4]);
    // Three rows of 116 columns followed by a bare row: the terminal's width, joined as they are.
    expect(out[0]?.[0]).toContain("Rank 6] ProcessGroupNCCL's watchdog got stuck for 480 seconds");
    expect(out[0]?.[0]).toContain("indierwise, please attempt to debug the hang.");
    expect(out[1]?.[0]).toContain("ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1");
  });

  it("04: a terminal width learnt from the log's rows puts a number cut in two back together (OpTy|pe=BROADCAST)", () => {
    const rows = [
      "[rank2]:[E424 01:11:21.160832730 ProcessGroupNCCL.cpp:629] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, OpTy",
      "pe=BROADCAST, NumelIn=112, NumelOut=112, Timeout(ms)=1800000) ran for 1800010 milliseconds before timing out.",
      "[rank3]:[E424 01:11:21.160815008 ProcessGroupNCCL.cpp:629] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, OpTy",
      "pe=BROADCAST, NumelIn=112, NumelOut=112, Timeout(ms)=1800000) ran for 1800011 milliseconds before timing out.",
    ];
    expect(rows[0]?.length).toBe(137);
    const out = unwrap(rows);
    expect(out.map(([t]) => t.includes("SeqNum=4, OpType=BROADCAST, NumelIn=112"))).toEqual([true, true]);
  });

  it("one long row before a bare row is no terminal width: a blank goes between", () => {
    const rows = ["[E ProcessGroupNCCL.cpp:1] " + "x".repeat(100) + " OpTy", "pe=1 done."];
    expect(unwrap(rows)[0]?.[0]).toContain("OpTy pe=1 done.");
  });

  it("07: a runner's wrap at a blank (the blank kept or lost), rows without the runner's prefix", () => {
    const rows = [
      "dinov2-giant-nodes.cn-d004 [stderr] [rank14]:[E909 09:55:29.307629539 ProcessGroupNCCL.cpp:607] [Rank 14] Watchdog caught collective operation timeout: ",
      "WorkNCCL(SeqNum=2070, OpType=REDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600034 milliseconds before timing out.",
      "dinov2-giant-nodes.cn-d004 [stderr] [rank12]:[E909 09:55:29.313379098 ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank 12] Exception (either an error or timeout) detected",
      "by watchdog at work: 2070, last enqueued NCCL work: 2070, last completed NCCL work: 2069.",
    ];
    const out = unwrap(rows);
    expect(out.map(([, n]) => n)).toEqual([1, 3]);
    expect(out[0]?.[0]).toContain("operation timeout: WorkNCCL(SeqNum=2070, OpType=REDUCE");
    expect(out[1]?.[0]).toContain("detected by watchdog at work: 2070, last enqueued");
  });

  it("a complete message is not held, and rows that start something of their own are never joined", () => {
    const rows = [
      "[rank0]:[E219 12:14:43.351647859 ProcessGroupNCCL.cpp:1595] [PG ID 2 PG GUID 3 Rank 0] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered",
      "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
      "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7fd4b596c446 in libc10.so)",
      "[rank0]:[E219 12:14:43.4 ProcessGroupNCCL.cpp:1595] [Rank 0] A sentence that ends.",
      "a row after a finished sentence",
      "",
    ];
    expect(unwrap(rows).map(([, n]) => n)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("a NCCL line or a prefixed row ends the wrapped line", () => {
    const rows = [
      "[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations",
      "node1:1234:1300 [0] NCCL INFO comm 0x5555 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE",
      "[1,0]<stdout>: something else",
    ];
    expect(unwrap(rows).map(([t]) => t)).toEqual(rows);
  });

  it("a wrapped line stops at 24 rows", () => {
    const rows = ["[E ProcessGroupNCCL.cpp:1] start", ...Array.from({ length: 30 }, (_, i) => `row ${i}`)];
    const out = unwrap(rows);
    expect(out[0]?.[0].split(" row ").length).toBe(24);
    expect(out.length).toBe(1 + 30 - 23);
  });
});

describe("a NCCL WARN broken after a colon (28)", () => {
  it("is joined to the next bare row; one that ends otherwise, or a NCCL line after it, is not", () => {
    const rows = [
      "transport/net_socket.cc:424 NCCL WARN NET/Socket : peer 192.168.161.30<59210> message truncated :",
      "receiving 1048576 bytes instead of 65536",
    ];
    expect(unwrap(rows)).toEqual([
      ["transport/net_socket.cc:424 NCCL WARN NET/Socket : peer 192.168.161.30<59210> message truncated : receiving 1048576 bytes instead of 65536", 1],
    ]);
    const whole = ["h:1:2 [0] misc/socket.cc:1 NCCL WARN Net : Connection closed by remote peer", "Epoch 1 done"];
    expect(unwrap(whole).map(([t]) => t)).toEqual(whole);
    const next = ["h:1:2 [0] net.cc:1 NCCL WARN Call to connect returned:", "h:1:2 [0] NCCL INFO init.cc:1 -> 2"];
    expect(unwrap(next).map(([t]) => t)).toEqual(next);
  });
});

describe("Last error:", () => {
  it("30: `[rank3]: Last error:` joins the next row with the same prefix", () => {
    const rows = [
      "[rank3]: Last error:",
      "[rank3]: NET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 (UNDELIVERABLE). Completed length: 0",
      "[rank2]: Traceback (most recent call last):",
    ];
    expect(unwrap(rows)).toEqual([
      ["[rank3]: Last error: NET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 (UNDELIVERABLE). Completed length: 0", 1],
      ["[rank2]: Traceback (most recent call last):", 3],
    ]);
  });

  it("not a row of another rank's", () => {
    const rows = ["[rank3]: Last error:", "[rank2]: Traceback (most recent call last):"];
    expect(unwrap(rows)).toEqual([
      [rows[0], 1],
      [rows[1], 2],
    ]);
  });
});
