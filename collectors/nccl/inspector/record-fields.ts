/**
 * The fields of one Inspector record as a parser finds them (reused for every line, reset each
 * time), and the checks that turn them into an InspectorRecord: the fields every NCCL version
 * since 2.28.3 writes must be there and in range; the others are kept when sane.
 */
import type { InspectorKind, InspectorRecord, TimingSource } from "./types.js";

const MAX_ID = 64;
const MAX_OP = 32;
const MAX_NAME = 256;
const MAX_RANKS = 1 << 24;

export class Fields {
  kind: InspectorKind | undefined = undefined;
  commId: string | undefined = undefined;
  commName: string | undefined = undefined;
  rank = NaN;
  nranks = NaN;
  nnodes = NaN;
  hostname: string | undefined = undefined;
  pid = NaN;
  formatVersion: string | undefined = undefined;
  dumpUs = NaN;
  op: string | undefined = undefined;
  seq = NaN;
  peer = NaN;
  msgBytes = NaN;
  execUs = NaN;
  timing: string | undefined = undefined;
  algoGbs = NaN;
  busGbs = NaN;
  startUs = NaN;
  stopUs = NaN;
  kStartUs = NaN;
  kStopUs = NaN;

  reset(): void {
    this.kind = this.commId = this.commName = this.hostname = this.formatVersion = this.op = this.timing = undefined;
    this.rank = this.nranks = this.nnodes = this.pid = this.dumpUs = NaN;
    this.seq = this.peer = this.msgBytes = this.execUs = this.algoGbs = this.busGbs = NaN;
    this.startUs = this.stopUs = this.kStartUs = this.kStopUs = NaN;
  }
}

const isCount = (v: number, max: number): boolean => Number.isSafeInteger(v) && v >= 0 && v <= max;
const plain = (s: string | undefined, max: number): boolean => s !== undefined && s.length > 0 && s.length <= max;

function timingSource(s: string | undefined): TimingSource | undefined {
  switch (s) {
    case undefined:
      return undefined;
    case "kernel_gpu":
    case "kernel_cpu":
    case "collective_cpu":
      return s;
    default:
      return "unknown";
  }
}

/** The record, or undefined when a required field is missing or out of range. */
export function build(f: Fields): InspectorRecord | undefined {
  if (f.kind === undefined || !plain(f.commId, MAX_ID) || !plain(f.op, MAX_OP)) return undefined;
  if (!isCount(f.nranks, MAX_RANKS) || f.nranks < 1 || !isCount(f.rank, f.nranks - 1)) return undefined;
  if (!isCount(f.seq, Number.MAX_SAFE_INTEGER) || !isCount(f.msgBytes, Number.MAX_SAFE_INTEGER)) return undefined;
  if (!(f.execUs >= 0 && f.execUs < 1e15)) return undefined;
  const timing = timingSource(f.timing);
  // One literal with every key (undefined where absent): one object shape for every record.
  return {
    kind: f.kind,
    commId: f.commId as string,
    commName: plain(f.commName, MAX_NAME) ? f.commName : undefined,
    rank: f.rank,
    nranks: f.nranks,
    nnodes: isCount(f.nnodes, MAX_RANKS) ? f.nnodes : undefined,
    hostname: plain(f.hostname, MAX_NAME) ? f.hostname : undefined,
    pid: isCount(f.pid, 0x7fffffff) ? f.pid : undefined,
    formatVersion: plain(f.formatVersion, MAX_OP) ? f.formatVersion : undefined,
    op: f.op as string,
    seq: f.seq,
    peer: f.kind === "p2p" && Number.isSafeInteger(f.peer) && f.peer >= -1 ? f.peer : undefined,
    msgBytes: f.msgBytes,
    execSeconds: f.execUs / 1e6,
    timingSource: timing,
    algoBwBytesPerSecond: f.algoGbs >= 0 && f.algoGbs < 1e12 ? f.algoGbs * 1e9 : undefined,
    busBwBytesPerSecond: f.busGbs >= 0 && f.busGbs < 1e12 ? f.busGbs * 1e9 : undefined,
    dumpTimestampSeconds: f.dumpUs > 0 ? f.dumpUs / 1e6 : undefined,
    startTimestampSeconds: f.startUs > 0 ? f.startUs / 1e6 : undefined,
    stopTimestampSeconds: f.stopUs > 0 ? f.stopUs / 1e6 : undefined,
    kernelStartTimestampSeconds: f.kStartUs > 0 ? f.kStartUs / 1e6 : undefined,
    kernelStopTimestampSeconds: f.kStopUs > 0 ? f.kStopUs / 1e6 : undefined,
  };
}
