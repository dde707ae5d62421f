import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../../collectors/nccl/analyze/analyze.js";
import { listFixtures, readCapture } from "../../../../helpers/fixtures.js";
import { parseLine, parseText } from "../../../../../collectors/nccl/logs/parse/line.js";

/** A real COLL line (NVIDIA/nccl #203) used as the payload behind every prefix form. */
const COLL =
  "gpu1:13135:13922 [0] NCCL INFO AllReduce: opCount 1a sendbuff 0x10048f82700 recvbuff 0x10048f82800 " +
  "count 64 datatype 7 op 0 root 0 comm 0x7f0c741162f0 [nranks=2] stream 0x7f0c74002f00";

const HEADER = { host: "gpu1", pid: 13135, tid: 13922, cudaDev: 0 };

describe("launcher prefixes", () => {
  it("bare line: header fields, no launcher", () => {
    const ev = parseLine(COLL);
    expect(ev).toMatchObject({ kind: "coll", ...HEADER, op: "AllReduce", opCount: "1a" });
    expect(ev?.launcher).toBeUndefined();
    expect(ev?.launcherRank).toBeUndefined();
  });

  it("OpenMPI --tag-output [job,rank]<stdout>: gives MPI rank and job", () => {
    const ev = parseLine(`[1,0]<stdout>:${COLL}`);
    expect(ev).toMatchObject({ ...HEADER, launcherRank: 0, launcher: { kind: "mpi", job: 1, rank: 0, stream: "stdout" } });
    expect(parseLine(`[3,12]<stderr>:${COLL}`)).toMatchObject({ launcherRank: 12, launcher: { job: 3, stream: "stderr" } });
  });

  it("OpenMPI --timestamp-output's ctime before the tag (the real capture, nccl-pasted 250), a day padded with a blank", () => {
    const real = "Fri Aug 11 12:31:45 2023[1,3]<stdout>:tomte401:1850304:1881110 [3] transport.cc:154 NCCL WARN Cuda failure 'invalid argument'";
    expect(parseLine(real)).toMatchObject({ kind: "warn", host: "tomte401", pid: 1850304, launcherRank: 3, launcher: { kind: "mpi", job: 1, rank: 3 } });
    expect(parseLine(`Tue Sep  2 01:02:03 2025[1,5]<stderr>:${COLL}`)).toMatchObject({ ...HEADER, launcherRank: 5 });
    // Not a ctime: a word of prose, a month with digits, no year.
    expect(parseLine(`Fri Aug 11 12:31:45 [1,3]<stdout>:${COLL}`)?.launcherRank).toBeUndefined();
    expect(parseLine(`Fri A1g 11 12:31:45 2023[1,3]<stdout>:${COLL}`)?.launcherRank).toBeUndefined();
  });

  it("PyTorch [rank7]: and torchrun [default3]: (a local rank, not a global one)", () => {
    expect(parseLine(`[rank7]:${COLL}`)).toMatchObject({ launcherRank: 7, launcher: { kind: "rank", rank: 7 } });
    const tr = parseLine(`[default3]:${COLL}`);
    expect(tr).toMatchObject({ launcher: { kind: "torchrun", localRank: 3 } });
    expect(tr?.launcherRank).toBeUndefined();
  });

  it("a Ray actor that names its rank (NeMo RL's `MegatronPolicyWorker[rank=107]`, nccl-pasted 286) gives it", () => {
    const ev = parseLine(`(MegatronPolicyWorker[rank=107] pid=3340050, ip=10.1.107.221) ${COLL}`);
    expect(ev).toMatchObject({ launcherRank: 107, launcher: { kind: "ray", actor: "MegatronPolicyWorker[rank=107]", pid: 3340050 } });
    expect(parseLine(`(WorkerDict[rank=x] pid=7) ${COLL}`)?.launcherRank).toBeUndefined();
  });

  it("vLLM's multiproc worker names its rank before its pid (`(VllmWorker rank=1 pid=2699412)`, nccl-pasted 313)", () => {
    const ev = parseLine(`(VllmWorker rank=1 pid=2699412) ${COLL}`);
    expect(ev).toMatchObject({ launcherRank: 1, launcher: { kind: "ray", actor: "VllmWorker rank=1", pid: 2699412 } });
    expect(parseLine(`(VllmWorker rank=1x pid=2699412) ${COLL}`)?.launcherRank).toBeUndefined();
    expect(parseLine(`(VllmWorker TP0 pid=2699412) ${COLL}`)?.launcherRank).toBeUndefined();
    expect(parseLine(`(rank=3 pid=2699412) ${COLL}`)?.launcherRank).toBe(3);
  });

  it("analyze gives the rank of a worker's prefix on other lines to the one NCCL process of that pid (nccl-pasted 313)", () => {
    const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith("313-")) ?? "";
    const text = readCapture(`nccl-pasted/${name}`);
    const errorRanks = (t: string): [string[], number[]][] => analyzeLogs([{ name, text: t }]).findings.map((f) => [f.processes, f.ranks]);
    expect(errorRanks(text)).toEqual([
      [["server:2699411"], []],
      [["server:2699412"], [1]],
    ]);
    // On the NCCL lines themselves, the prefix gives the process its rank too.
    const own = [
      "(VllmWorker rank=1 pid=2699412) server:2699412:2699412 [1] init.cc:416 NCCL WARN Cuda failure 'operation not supported'",
      "(VllmWorker rank=1 pid=2699412) server:2699412:2699412 [1] NCCL INFO init.cc:1730 -> 1",
    ].join("\n");
    expect(errorRanks(own)).toEqual([[["server:2699412"], [1]]]);
    // Two ranks for one pid (logs of two runs put together): none.
    expect(errorRanks(`${text}\n(VllmWorker rank=0 pid=2699412) INFO hello`)).toEqual([
      [["server:2699411"], []],
      [["server:2699412"], []],
    ]);
  });

  it("Ray actor prefix keeps pid and ip", () => {
    const ev = parseLine(`(RayTrainWorker pid=615, ip=10.72.7.6) ${COLL}`);
    expect(ev).toMatchObject({ ...HEADER, launcher: { kind: "ray", actor: "RayTrainWorker", pid: 615, ip: "10.72.7.6" } });
  });

  it("pdsh `host: ` and srun --label `12: `", () => {
    expect(parseLine(`gpu1505: ${COLL}`)).toMatchObject({ ...HEADER, launcher: { kind: "pdsh", host: "gpu1505" } });
    expect(parseLine(`12: ${COLL}`)).toMatchObject({ launcherRank: 12, launcher: { kind: "srun", rank: 12 } });
  });

  it("`[155] ` rank tag, markdown quote, log-viewer box, ANSI colour (with and without ESC)", () => {
    expect(parseLine(`[155] ${COLL}`)).toMatchObject({ launcherRank: 155, launcher: { kind: "tag" } });
    expect(parseLine(`> ${COLL} `)).toMatchObject({ ...HEADER, stream: "0x7f0c74002f00" });
    const boxed = parseLine(`\u2502 ${COLL}                    \u2502`);
    expect(boxed).toMatchObject({ ...HEADER, stream: "0x7f0c74002f00", nranks: 2 });
    expect(parseLine(`[0m ${COLL}`)).toMatchObject(HEADER);
    expect(parseLine(`\u001b[0;32m${COLL}\u001b[0m`)).toMatchObject({ ...HEADER, comm: "0x7f0c741162f0" });
  });

  it("stacked prefixes: the most rank-specific wins, other fields are kept", () => {
    const ev = parseLine(`(WorkerDict pid=9) [rank1]:${COLL}`);
    expect(ev).toMatchObject({ launcherRank: 1, launcher: { kind: "rank", rank: 1, pid: 9, actor: "WorkerDict" } });
  });

  it("unknown text before the header is ignored, never mistaken for the header", () => {
    expect(parseLine(`2024-05-01T10:00:00Z stdout F ${COLL}`)).toMatchObject({ ...HEADER, op: "AllReduce" });
  });
});

describe("timestamps", () => {
  it("NCCL 2.26+ `[YYYY-MM-DD HH:MM:SS] ` before the header (WARN default)", () => {
    const ev = parseLine("[2026-03-18 11:13:09] VM-16-64-ubuntu:28471:28499 [0] misc/socket.cc:537 NCCL WARN oops");
    expect(ev).toMatchObject({ kind: "warn", ts: "2026-03-18 11:13:09", host: "VM-16-64-ubuntu", pid: 28471, tid: 28499 });
  });

  it("timestamp with sub-seconds (NCCL_DEBUG_TIMESTAMP_FORMAT) on an INFO line, after a launcher prefix", () => {
    const ev = parseLine(`[1,2]<stdout>:[2025-06-01 01:02:03.123456] ${COLL}`);
    expect(ev).toMatchObject({ ts: "2025-06-01 01:02:03.123456", launcherRank: 2, ...HEADER });
  });

  it("no timestamp → ts absent", () => {
    expect(parseLine(COLL)?.ts).toBeUndefined();
  });
});

describe("line endings and torn lines", () => {
  it("CRLF and trailing newline are ignored", () => {
    expect(parseLine(`${COLL}\r`)).toMatchObject({ stream: "0x7f0c74002f00" });
    expect(parseLine(`${COLL}\r\n`)).toMatchObject({ stream: "0x7f0c74002f00" });
    expect(parseText(`${COLL}\r\n${COLL}\r\n`)).toHaveLength(2);
  });

  it("a second header inside the message: the event belongs to the second writer, unattributed prefix", () => {
    const torn = `[1,0]<stdout>:hostA:1:2 [2] NCCL INFO ${COLL}`;
    const ev = parseLine(torn);
    expect(ev).toMatchObject({ kind: "coll", torn: true, ...HEADER, opCount: "1a" });
    expect(ev?.launcherRank).toBeUndefined(); // the [1,0] prefix belongs to hostA's writer
  });

  it("a message cut by another writer's line never yields fields of the wrong process", () => {
    const line = "hostA:1:2 [2] NCCL INFO AllReduce: opCount 5 sendbuff 0x7f37" + COLL;
    const ev = parseLine(line);
    expect(ev).toMatchObject({ torn: true, pid: 13135, opCount: "1a", sendbuff: "0x10048f82700" });
  });

  it("a COLL tail glued to garbage keeps what was validated and drops the rest", () => {
    const ev = parseLine("h:1:2 [0] NCCL INFO AllReduce: opCount 7 sendbuff 0x1 recvbuff 0x2 count 3 datatype 7 op 0 root 0 comm 0x3 [nranks=2] stream 0x4zz");
    expect(ev).toMatchObject({ kind: "coll", comm: "0x3", nranks: 2 });
    expect(ev?.kind === "coll" && ev.stream).toBeUndefined();
  });

  it("a COLL line cut before its comm pointer gives nothing", () => {
    expect(parseLine("h:1:2 [0] NCCL INFO AllReduce: opCount 1d sendb")).toBeUndefined();
  });

  it("a COLL line that lost its header is parsed but marked headerless (no host/pid)", () => {
    const ev = parseLine("Broadcast: opCount 1 sendbuff 0x7f58 recvbuff 0x7f58 count 2 datatype 6 op 0 root 0 comm 0x7f584405a260 [nranks=8] stream 0x5634");
    expect(ev).toMatchObject({ kind: "coll", headerless: true, op: "Broadcast", comm: "0x7f584405a260" });
    expect(ev?.pid).toBeUndefined();
  });
});

describe("torn lines: what is kept of the first writer", () => {
  it("a COLL line validated up to the tear is kept when the second writer's text is uninteresting", () => {
    const line =
      "hostA:1:2 [0] NCCL INFO AllReduce: opCount 5 sendbuff 0x1 recvbuff 0x2 count 3 datatype 7 op 0 root 0 comm 0x3 [nranks=2] stream 0x4" +
      "hostB:3:4 [1] NCCL INFO P2P Chunksize set to 131072";
    const ev = parseLine(line);
    expect(ev).toMatchObject({ kind: "coll", host: "hostA", pid: 1, comm: "0x3", nranks: 2 });
    expect(ev?.kind === "coll" && ev.stream).toBeUndefined();
  });

  it("any other partial message of the first writer is dropped", () => {
    const line = "hostA:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC" + "hostB:3:4 [1] NCCL INFO P2P Chunksize set to 131072";
    expect(parseLine(line)).toBeUndefined();
  });
});

describe("what log collectors and runners put before a line (pasted corpus 03, 07, 43)", () => {
  const WD =
    "[rank13]:[E218 04:54:22.864467604 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=216, OpType=ALLTOALL_BASE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600045 milliseconds before timing out.";

  it("a collector's wall clock `2025-02-18 12:54 ` and RFC 3339 times do not hide the [rankN]: after them", () => {
    for (const ts of [" 2025-02-18 12:54 ", "2025-05-16T16:39:55.216-07:00 ", "2024-01-02T03:04:05.123456789Z ", "2024-04-16 00:03:25,080 "]) {
      expect(parseLine(ts + WD)).toMatchObject({ kind: "pt_watchdog_timeout", launcherRank: 13, pgRank: 1, seq: 216 });
    }
  });

  it("a date alone or digits that are no time are not a prefix", () => {
    expect(parseLine(`2025-02-18 ${WD}`)).not.toHaveProperty("launcherRank");
    expect(parseLine(`2025-02-18T1x ${WD}`)).not.toHaveProperty("launcherRank");
  });

  it("`  | 2025-05-16T16:39:55.216-07:00 | ` (a log viewer's columns) before a NCCL header", () => {
    const ev = parseLine("  | 2025-05-16T16:39:55.216-07:00 | ip-10-36-29-253:84:2553 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0");
    expect(ev === undefined || ev.host === "ip-10-36-29-253").toBe(true);
    expect(parseLine(`  | 2025-05-16T16:39:55.216-07:00 | ${WD}`)).toMatchObject({ launcherRank: 13 });
  });

  it("a runner's `name [stderr] ` gives the name and the stream", () => {
    expect(parseLine(`dinov2-giant-nodes.cn-d004 [stderr] ${WD}`)).toMatchObject({
      launcherRank: 13,
      launcher: { kind: "rank", rank: 13, host: "dinov2-giant-nodes.cn-d004", stream: "stderr" },
    });
  });
});
