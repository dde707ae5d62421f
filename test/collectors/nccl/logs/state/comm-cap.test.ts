/**
 * The communicator cap is shared among the owners of the log files: one user's process announcing
 * hundreds of communicators cannot push another user's job out (lines in the real Init COMPLETE
 * shape of fixture 02).
 */
import { describe, expect, it } from "vitest";
import { parseLine } from "../../../../../collectors/nccl/logs/parse/line.js";
import { Tracker } from "../../../../../collectors/nccl/logs/state/tracker.js";

const FLOODER = 4242;
const JOB = 1000;

function init(host: string, pid: number, comm: number, commId: string, rank = 0): string {
  return `${host}:${pid}:${pid + 32} [0] NCCL INFO ncclCommInitRank comm 0x${comm.toString(16)} rank ${rank} nranks 2 cudaDev 0 nvmlDev 0 busId 88000 commId ${commId} - Init COMPLETE`;
}

function coll(host: string, pid: number, comm: number, n: number): string {
  return `${host}:${pid}:${pid} [0] NCCL INFO AllReduce: opCount ${n.toString(16)} sendbuff 0x7f0000001000 recvbuff 0x7f0000001000 count 4194304 datatype 7 op 0 root 0 comm 0x${comm.toString(16)} [nranks=2] stream 0x55aa0000`;
}

let lineNo = 0;
function feed(t: Tracker, line: string, owner: number, readMs: number): void {
  const ev = parseLine(line);
  if (ev === undefined) throw new Error(`not parsed: ${line}`);
  t.ingest(ev, { source: `/logs/${owner}.log`, lineNo: ++lineNo, readMs, owner });
}

const id = (i: number): string => `0x${(0x7e000000 + i).toString(16).padStart(16, "0")}`;

describe("communicator cap per owner", () => {
  it("another owner's communicators take the place of the flooder's idlest", () => {
    const t = new Tracker({ maxComms: 8, maxProcesses: 64 });
    // The flooder: one communicator that runs collectives, then 11 announced and idle.
    feed(t, init("evil", 7, 0x100, id(0)), FLOODER, 1000);
    feed(t, coll("evil", 7, 0x100, 1), FLOODER, 1001);
    for (let i = 1; i < 12; i++) feed(t, init("evil", 7, 0x100 + i * 16, id(i)), FLOODER, 1000 + i);
    expect(t.comms.size).toBe(8);
    expect(t.droppedComms).toBe(4);

    // The job's three communicators: each tracked, each at the cost of an idle one of the flooder.
    for (let i = 0; i < 3; i++) feed(t, init("node1", 500, 0x900 + i * 16, `0x00000000000a${i}bcd`), JOB, 2000 + i);
    expect(t.comms.size).toBe(8);
    expect([0, 1, 2].every((i) => t.comms.has(`0x00000000000a${i}bcd`))).toBe(true);
    expect(t.droppedComms).toBe(7);
    expect([...t.droppedCommsByOwner]).toEqual([[FLOODER, 7]]);
    // The flooder's communicator with collectives stayed; the oldest idle ones went.
    expect(t.comms.has(id(0))).toBe(true);
    expect([1, 2, 3].some((i) => t.comms.has(id(i)))).toBe(false);
    expect(t.comms.has(id(4))).toBe(true);

    // More from the flooder: dropped, the job's stay.
    feed(t, init("evil", 7, 0xf00, id(99)), FLOODER, 3000);
    expect(t.comms.has(id(99))).toBe(false);
    expect([0, 1, 2].every((i) => t.comms.has(`0x00000000000a${i}bcd`))).toBe(true);
  });

  it("owners at even shares drop their own new communicators (no churn between equals)", () => {
    const t = new Tracker({ maxComms: 4, maxProcesses: 64 });
    for (let i = 0; i < 2; i++) feed(t, init("a", 1, 0x10 + i * 16, id(i)), FLOODER, 1000);
    for (let i = 0; i < 2; i++) feed(t, init("b", 2, 0x20 + i * 16, id(10 + i)), JOB, 1000);
    feed(t, init("b", 2, 0x60, id(12)), JOB, 1001);
    expect(t.comms.has(id(12))).toBe(false);
    expect([...t.droppedCommsByOwner]).toEqual([[JOB, 1]]);
    expect(t.comms.size).toBe(4);
  });

  it("the process cap is shared the same way: a flood of made-up pids does not keep a job's process out", () => {
    const t = new Tracker({ maxComms: 64, maxProcesses: 8 });
    for (let pid = 1; pid <= 20; pid++) feed(t, `evil:${pid}:${pid} [0] NCCL INFO NCCL version 2.21.5+cuda12.4`, FLOODER, 1000 + pid);
    expect(t.processes.size).toBe(8);
    feed(t, init("node1", 500, 0x900, "0x00000000000abbcd"), JOB, 3000);
    expect(t.processes.has("node1:500")).toBe(true);
    expect(t.comms.has("0x00000000000abbcd")).toBe(true);
    // The flooder's quietest process (pid 1, the first seen) gave way.
    expect(t.processes.has("evil:1")).toBe(false);
    expect(t.processes.size).toBe(8);
    expect(t.droppedProcesses).toBe(12 + 1);
  });

  it("offline (no owner) the cap works as before", () => {
    const t = new Tracker({ maxComms: 2, maxProcesses: 64 });
    for (let i = 0; i < 3; i++) {
      const ev = parseLine(init("h", 1, 0x10 + i * 16, id(i)));
      if (ev) t.ingest(ev, { source: "x.log", lineNo: i + 1 });
    }
    expect(t.comms.size).toBe(2);
    expect(t.droppedComms).toBe(1);
  });
});
