/**
 * Unit tests of PyTorch ProcessGroupNCCL line forms. Message texts follow ProcessGroupNCCL.cpp and
 * TraceUtils.h; log headers are the c10 (`[rank7]:[E816 ...]`), old (`[E file:line]`) and glog forms.
 */
import { describe, expect, it } from "vitest";
import { parseLine } from "../../../../../collectors/nccl/logs/parse/line.js";

const WD =
  "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=80078, OpType=BROADCAST, NumelIn=5056, " +
  "NumelOut=5056, Timeout(ms)=600000) ran for 600026 milliseconds before timing out.";

describe("log headers and process-group prefixes", () => {
  it("c10 header `[rank7]:[E816 01:45:40.183009389 ProcessGroupNCCL.cpp:607]`", () => {
    expect(parseLine(`[rank7]:[E816 01:45:40.183009389 ProcessGroupNCCL.cpp:607] [Rank 7] ${WD}`)).toMatchObject({
      kind: "pt_watchdog_timeout",
      via: "watchdog",
      launcherRank: 7,
      pgRank: 7,
      severity: "E",
      src: "ProcessGroupNCCL.cpp:607",
      ts: "816 01:45:40.183009389",
      seq: 80078,
      opType: "BROADCAST",
      numelIn: 5056,
      numelOut: 5056,
      timeoutMs: 600000,
      ranForMs: 600026,
    });
  });

  it("glog header `E0816 01:45:40.183009 1234 ProcessGroupNCCL.cpp:607]`", () => {
    expect(parseLine(`E0816 01:45:40.183009 1234 ProcessGroupNCCL.cpp:607] [Rank 3] ${WD}`)).toMatchObject({
      severity: "E",
      ts: "0816 01:45:40.183009",
      src: "ProcessGroupNCCL.cpp:607",
      pgRank: 3,
      seq: 80078,
    });
  });

  it.each([
    ["[PG 0 Rank 144]", { pgId: 0, pgRank: 144 }],
    ["[PG 0 (default_pg) Rank 7]", { pgId: 0, pgName: "default_pg", pgRank: 7 }],
    ["[PG ID 0 PG GUID 0(default_pg) Rank 118]", { pgId: 0, pgGuid: "0", pgName: "default_pg", pgRank: 118 }],
    ["[PG ID 1 PG GUID 1 Rank 1]", { pgId: 1, pgGuid: "1", pgRank: 1 }],
  ])("%s", (prefix, fields) => {
    const line =
      `[rank1]:[E626 06:24:44.906457629 ProcessGroupNCCL.cpp:1785] ${prefix} Exception (either an error or timeout) ` +
      "detected by watchdog at work: 808, last enqueued NCCL work: 811, last completed NCCL work: 807.";
    expect(parseLine(line)).toMatchObject({ kind: "pt_work_status", failedSeq: 808, lastEnqueued: 811, lastCompleted: 807, ...fields });
  });

  it("Ray worker prefix gives the pid of a PyTorch line; `last completed work: -1` is kept", () => {
    const line =
      "(WorkerDict pid=3490362) [rank1]:[E1118 20:32:23.957372583 ProcessGroupNCCL.cpp:2168] [PG ID 1 PG GUID 1 Rank 1]  " +
      "failure detected by watchdog at work sequence id: 1 PG status: last enqueued work: 547, last completed work: -1";
    expect(parseLine(line)).toMatchObject({
      kind: "pt_work_status",
      pid: 3490362,
      launcherRank: 1,
      failedSeq: 1,
      lastEnqueued: 547,
      lastCompleted: -1,
    });
  });
});

describe("messages", () => {
  const P = "[rank0]:[E515 18:36:47.341808597 ProcessGroupNCCL.cpp:632] [PG ID 0 PG GUID 0(default_pg) Rank 0] ";

  it("blocking-wait timeout", () => {
    expect(parseLine(`${P}Work WorkNCCL(SeqNum=2521, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) timed out in blocking wait.`)).toMatchObject({
      kind: "pt_watchdog_timeout",
      via: "blocking_wait",
      seq: 2521,
    });
  });

  it("heartbeat monitor and stuck watchdog", () => {
    expect(parseLine(`${P}Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=4`)).toMatchObject({
      kind: "pt_heartbeat",
      what: "monitor_timeout",
      workMetaListSize: 4,
    });
    expect(parseLine(`${P}ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress`)).toMatchObject({
      kind: "pt_heartbeat",
      what: "watchdog_stuck",
      stuckSeconds: 480,
    });
  });

  it("dump signal from a remote rank / the local rank, and the Flight Recorder lines", () => {
    expect(
      parseLine(
        `${P}Received a dump signal due to a collective timeout from  rank 2 and we will try our best to dump the debug info. Last enqueued NCCL work: 136, last completed NCCL work: 135.`,
      ),
    ).toMatchObject({ kind: "pt_dump", what: "dump_signal", fromRank: 2, lastEnqueued: 136, lastCompleted: 135 });
    expect(parseLine(`${P}Received a dump signal due to a collective timeout from this local rank and we will try our best`)).toMatchObject({
      what: "dump_signal",
      fromLocal: true,
    });
    expect(parseLine(`${P}ProcessGroupNCCL preparing to dump debug info. Include stack trace: 0, only active collectives: 1`)).toMatchObject({
      what: "preparing_dump",
      includeStackTrace: false,
    });
    expect(parseLine(`${P}First PG on this rank to signal dumping.`)).toMatchObject({ what: "first_pg_dump" });
    expect(
      parseLine(
        "[rank0]:[E603 17:48:01.005560740 ProcessGroupNCCL.cpp:670] Stack trace of the failed collective not found, potentially because FlightRecorder is disabled.",
      ),
    ).toMatchObject({ kind: "pt_dump", what: "trace_not_found" });
  });

  it("error lines: DistBackendError, ncclRemoteError, taking the process down", () => {
    expect(
      parseLine(
        "torch.distributed.DistBackendError: NCCL error in: /pytorch/NCCLUtils.hpp:268, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3",
      ),
    ).toMatchObject({
      kind: "pt_error",
      what: "dist_backend_error",
      ncclVersion: "2.19.3",
      reason: "unhandled system error (run with NCCL_DEBUG=INFO for details)",
    });
    expect(parseLine("ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.")).toMatchObject({
      kind: "pt_error",
      what: "nccl_error",
      ncclError: "ncclSystemError",
    });
    expect(parseLine(`${P}To avoid data inconsistency, we are taking the entire process down.`)).toMatchObject({ what: "taking_down" });
  });

  it("ordinary PyTorch / NCCL-mentioning lines give nothing", () => {
    expect(
      parseLine(
        "[rank0]:[W515 18:36:47.3 ProcessGroupNCCL.cpp:4561] Warning: using GPU 0 to perform barrier as devices used by this process are currently unknown.",
      ),
    ).toBeUndefined();
    expect(parseLine("Initializing NCCL across 2 nodes...")).toBeUndefined();
  });
});

describe("desync report (TORCH_NCCL_DESYNC_DEBUG) and fr_trace lines", () => {
  it("each report line form", () => {
    expect(parseLine("\t - [3] Timeout at collective: ALLGATHER, #41208")).toMatchObject({
      kind: "pt_desync",
      what: "timeout_at",
      ranks: [3],
      collective: "ALLGATHER",
      seq: 41208,
    });
    expect(
      parseLine("\t - To our best knowledge, ranks [47, 48] are the lagging ranks that caused this timeout. They never joined any collectives"),
    ).toMatchObject({ what: "never_joined", ranks: [47, 48] });
    expect(parseLine("\t   - [47] joined but didn't finish collective #41207 (count from 1)")).toMatchObject({
      what: "joined_not_finished",
      ranks: [47],
      seq: 41207,
    });
    expect(parseLine("\t     [0, 1, 2] finished collective #41207, but didn't join collective #41208 (count from 1)")).toMatchObject({
      what: "finished_not_joined",
      ranks: [0, 1, 2],
      seq: 41207,
      nextSeq: 41208,
    });
    expect(parseLine("\t   #41207 started ranks:")).toMatchObject({ what: "snapshot_seq", seq: 41207, state: "started" });
    expect(parseLine("\t     [47] started ALLREDUCE")).toMatchObject({ what: "snapshot_ranks", ranks: [47], state: "started", collective: "ALLREDUCE" });
  });

  it("a rank list is not taken for a `[N] ` launcher tag", () => {
    const ev = parseLine("             [7] finished ALLREDUCE");
    expect(ev?.launcherRank).toBeUndefined();
    expect(ev).toMatchObject({ ranks: [7] });
    expect(parseLine("[default2]:\t     [7] finished ALLREDUCE")).toMatchObject({ ranks: [7], launcher: { kind: "torchrun", localRank: 2 } });
  });

  it("Flight Recorder analyzer lines", () => {
    expect(parseLine("Not all ranks joining collective: sequence number: 31117")).toMatchObject({
      kind: "pt_flight_recorder",
      what: "not_all_joined",
      seq: 31117,
    });
    expect(parseLine("missing ranks: {3, 4, 5, 6, 7}")).toMatchObject({ what: "missing_ranks", ranks: [3, 4, 5, 6, 7] });
  });
});

describe("forms the pasted corpus added (12, 22, 11, 30, 38, 54)", () => {
  it("12: a watchdog line cut before WorkNCCL( is still a watchdog timeout, of no known work", () => {
    const ev = parseLine("[rank5]:[E602 11:17:52.185053341 ProcessGroupNCCL.cpp:632] [Rank 5] Watchdog caught collective operati");
    expect(ev).toMatchObject({ kind: "pt_watchdog_timeout", via: "watchdog", launcherRank: 5 });
    expect(ev).not.toHaveProperty("seq");
    // Prose that quotes the words without a c10 log header is not one.
    expect(parseLine("the NCCL Watchdog caught collective operation timeout again")).toBeUndefined();
  });

  it("38, 54: the watchdog thread died on a CUDA error (both wordings), the exception kept", () => {
    expect(
      parseLine(
        "[rank0]:[E219 12:14:43.351647859 ProcessGroupNCCL.cpp:1595] [PG ID 2 PG GUID 3 Rank 0] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered",
      ),
    ).toMatchObject({
      kind: "pt_error",
      what: "watchdog_exception",
      launcherRank: 0,
      pgId: 2,
      pgGuid: "3",
      reason: "CUDA error: an illegal memory access was encountered",
    });
    expect(
      parseLine("[E ProcessGroupNCCL.cpp:916] [Rank 0] NCCL watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered"),
    ).toMatchObject({
      kind: "pt_error",
      what: "watchdog_exception",
      pgRank: 0,
      reason: "CUDA error: an illegal memory access was encountered",
    });
  });

  it("30: `Last error:` with its error (as analyze joins it) is classified; alone it has no reason", () => {
    expect(
      parseLine("[rank3]: Last error: NET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 (UNDELIVERABLE). Completed length: 0"),
    ).toMatchObject({
      kind: "pt_error",
      what: "last_error",
      launcherRank: 3,
      reason: "NET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 (UNDELIVERABLE). Completed length: 0",
    });
    const alone = parseLine("[rank3]: Last error:");
    expect(alone).toMatchObject({ kind: "pt_error", what: "last_error" });
    expect(alone).not.toHaveProperty("reason");
  });

  it("22: gloo's monitoredBarrier errors name the rank that failed and the one that reports", () => {
    expect(
      parseLine(
        "[E ProcessGroupGloo.cpp:138] Rank 3 successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.",
      ),
    ).toMatchObject({
      kind: "pt_barrier",
      form: "errors",
      ranks: [0],
      reporter: 3,
    });
  });

  it("11: DETAIL's Running collective gives the rank and its fingerprint", () => {
    expect(
      parseLine(
        "[I ProcessGroupWrapper.cpp:562] [Rank 2] Running collective: CollectiveFingerPrint(SequenceNumber=1276, OpType=ALLREDUCE, TensorShape=[], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda))",
      ),
    ).toMatchObject({
      kind: "pt_running",
      rank: 2,
      fp: { seq: 1276, op: "ALLREDUCE", shape: "", dtype: "Float" },
    });
    // Cut before its sequence number: nothing to compare.
    expect(parseLine("[I ProcessGroupWrapper.cpp:562] [Rank 2] Running collective: CollectiveFingerPrint(Seq")).toBeUndefined();
  });
});

describe("status and exception forms the corpus added (01, 04, 10)", () => {
  it("01: PyTorch 2.4's `Timeout at NCCL work: N` is the rank's status with the work that failed", () => {
    expect(
      parseLine(
        "[rank2]:[E1206 18:44:16.994961143 ProcessGroupNCCL.cpp:1709] [PG 1 Rank 2] Timeout at NCCL work: 7753, last enqueued NCCL work: 7755, last completed NCCL work: 7752.",
      ),
    ).toMatchObject({
      kind: "pt_work_status",
      launcherRank: 2,
      pgId: 1,
      failedSeq: 7753,
      lastEnqueued: 7755,
      lastCompleted: 7752,
    });
  });

  it("04: a c10 header whose start the paste cut (`ProcessGroupNCCL.cpp:629] [Rank 1] ...`) still gives the rank", () => {
    expect(
      parseLine(" ProcessGroupNCCL.cpp:629] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, OpType=BROADCAST, NumelIn=112, Numel"),
    ).toMatchObject({
      kind: "pt_watchdog_timeout",
      src: "ProcessGroupNCCL.cpp:629",
      pgRank: 1,
      seq: 4,
      opType: "BROADCAST",
      numelIn: 112,
    });
  });

  it("10: `what():  [PG 1 Rank 1] ...` after `terminate called` gives the group and the rank", () => {
    expect(
      parseLine(
        "  what():  [PG 1 Rank 1] Process group watchdog thread terminated with exception: [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=199, OpType=_REDUCE_SCATTER_BASE, NumelIn=7098994688, NumelOut=443687168, Timeout(ms)=600000) ra",
      ),
    ).toMatchObject({
      kind: "pt_watchdog_timeout",
      pgId: 1,
      pgRank: 1,
      seq: 199,
      opType: "_REDUCE_SCATTER_BASE",
      timeoutMs: 600000,
    });
  });
});

describe("issue 29: cut status numbers and the newer backends' prefixes", () => {
  it("a status line cut inside a number keeps none of the cut number", () => {
    const ev = parseLine("[rank6]:[E1206 18:44:16.995042142 ProcessGroupNCCL.cpp:1709] [PG 1 Rank 6] Timeout at NCCL work: 7753, last enqueued NCCL work: 77");
    expect(ev).toMatchObject({ kind: "pt_work_status", failedSeq: 7753 });
    expect(ev).not.toHaveProperty("lastEnqueued");
    const done = parseLine(
      "[rank6]:[E1206 18:44:16.995042142 ProcessGroupNCCL.cpp:1709] [PG 1 Rank 6] Timeout at NCCL work: 7753, last enqueued NCCL work: 7755, last completed NCCL work: 77",
    );
    expect(done).toMatchObject({ lastEnqueued: 7755 });
    expect(done).not.toHaveProperty("lastCompleted");
  });

  it("2.6+'s `last completed work: N` may end the line; -1 is kept as written", () => {
    expect(
      parseLine(
        "[rank1]:[E1103 07:34:57.460801783 ProcessGroupNCCL.cpp:1834] [PG ID 0 PG GUID 0(default_pg) Rank 1] failure detected by watchdog at work sequence id: 1 PG status: last enqueued work: 1, last completed work: -1",
      ),
    ).toMatchObject({ kind: "pt_work_status", failedSeq: 1, lastEnqueued: 1, lastCompleted: -1 });
  });

  it("a group description with a backend prefix (`gloo:`, `ncclx:`) is the name, read as it is", () => {
    expect(
      parseLine(
        `[rank3]:[E1127 10:00:00.000000000 ProcessGroupNCCL.cpp:1785] [PG ID 4 PG GUID 21(ncclx:dp_shard) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 9, last enqueued NCCL work: 9, last completed NCCL work: 8.`,
      ),
    ).toMatchObject({ kind: "pt_work_status", pgId: 4, pgGuid: "21", pgName: "ncclx:dp_shard", pgRank: 1, launcherRank: 3, failedSeq: 9 });
    expect(parseLine(`[rank0]:[E1127 10:00:00.000000000 ProcessGroupNCCL.cpp:1785] [PG ID 1 PG GUID 1(gloo:cpu) Rank 0] ${WD}`)).toMatchObject({
      kind: "pt_watchdog_timeout",
      pgGuid: "1",
      pgName: "gloo:cpu",
      seq: 80078,
    });
  });

  it("TorchComms' NCCL backend (c10d/nccl2 TC_LOG): `[TC][rank=3][name=X] Operation timed out after N ms`", () => {
    expect(parseLine("[rank11]:[E1127 10:00:00.000000000 WorkNCCL.cpp:190] [TC][rank=3][name=ncclx:tp] Operation timed out after 600012 ms")).toMatchObject({
      kind: "pt_watchdog_timeout",
      via: "watchdog",
      launcherRank: 11,
      pgRank: 3,
      pgName: "ncclx:tp",
      pgGuid: "ncclx:tp",
      ranForMs: 600012,
    });
    // Another TC_LOG line of the same backend is not a timeout.
    expect(
      parseLine("[rank11]:[I1127 10:00:00.000000000 ProcessGroupNCCL.cpp:120] [TC][rank=3][name=0] ProcessGroupNCCL initialized for rank: 3"),
    ).toBeUndefined();
  });
});
