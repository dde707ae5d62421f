/**
 * NCCL Inspector records written the way NCCL's plugin writes them, for tests and the bench.
 * inspectorLine() follows the json.cc calls of the writer line for line:
 *
 * - NCCL 2.28.3, 2.28.7, 2.28.9, 2.29.2, 2.29.3: ext-profiler/inspector/inspector.cc,
 *   inspectorCommInfoDump -> inspectorCommInfoHeader, inspectorCommInfoMetaHeader,
 *   inspectorCompletedColl (+ inspectorCompletedCollVerbose), then jsonNewline.
 * - NCCL 2.29.7: the same code moved to plugins/profiler/inspector/inspector.cc.
 * - NCCL 2.30.3, 2.30.4, 2.30.7: plugins/profiler/inspector/inspector_json.cc,
 *   inspectorCommInfoDumpColl / inspectorCommInfoDumpP2p: the header gains "comm_name" after "id",
 *   and point-to-point operations are written as "p2p_perf" records.
 *
 * json.cc (identical in all of them) prints keys as "key":, no spaces, integers with %d / %lu,
 * doubles with "%lf" (six decimals; NaN as the string "nan"), strings sanitised (", \, /, tab and
 * newline escaped). bandwidth() is inspectorComputeCollBw (2.28-2.29) / inspectorComputeOpBw (2.30).
 */

export type InspectorFormat = "2.28" | "2.30";

/** Which writer an NCCL version has: "2.30" from 2.30.3 on, "2.28" for 2.28.3-2.29.7. */
export function inspectorFormat(ncclVersion: string): InspectorFormat {
  const [maj, min] = ncclVersion.split(".").map(Number);
  return (maj ?? 0) > 2 || (min ?? 0) >= 30 ? "2.30" : "2.28";
}

export interface KernelChannel {
  startSn: number;
  stopSn: number;
  recordSn: number;
  startUs: number;
  stopUs: number;
  recordUs: number;
}

export interface InspectorRecordSpec {
  commId: string;
  /** 2.30 only; NCCL writes "unknown" when the job gave none. */
  commName?: string;
  rank: number;
  nranks: number;
  nnodes: number;
  gitRev?: string;
  dumpUs: number;
  hostname: string;
  pid: number;
  kind?: "coll" | "p2p";
  /** ncclFuncToString: AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, Send, Recv, ... */
  op: string;
  sn: number;
  /** p2p only. */
  peer?: number;
  msgBytes: number;
  execUs: number;
  timing?: "kernel_gpu" | "kernel_cpu" | "collective_cpu" | "unknown";
  /** Defaults: computed from msgBytes, execUs and nranks as NCCL does. */
  algoGbs?: number;
  busGbs?: number;
  /** NCCL_INSPECTOR_DUMP_VERBOSE=1: event_trace_sn / event_trace_ts. */
  verbose?: { startSn: number; stopSn: number; startUs: number; stopUs: number; channels: KernelChannel[] };
}

/** sanitizeJson of json.cc: quotes, backslashes, slashes, tabs and newlines escaped. */
function jsonStr(s: string): string {
  let out = '"';
  for (const ch of s) {
    if (ch === '"' || ch === "\\" || ch === "/") out += `\\${ch}`;
    else if (ch === "\t") out += "\\t";
    else if (ch === "\n") out += "\\n";
    else out += ch;
  }
  return `${out}"`;
}

/** jsonDouble: "%lf", or "nan" quoted. */
function jsonDouble(v: number): string {
  return Number.isNaN(v) ? '"nan"' : v.toFixed(6);
}

const COLL_FACTOR: Record<string, (n: number) => { traffic: (b: number) => number; factor: number }> = {
  Reduce: () => ({ traffic: (b) => b, factor: 1 }),
  Broadcast: () => ({ traffic: (b) => b, factor: 1 }),
  AllReduce: (n) => ({ traffic: (b) => b, factor: (2 * (n - 1)) / n }),
  ReduceScatter: (n) => ({ traffic: (b) => b * n, factor: (n - 1) / n }),
  AllGather: (n) => ({ traffic: (b) => b * n, factor: (n - 1) / n }),
  AllGatherV: (n) => ({ traffic: (b) => b * n, factor: (n - 1) / n }),
  SendRecv: () => ({ traffic: (b) => b, factor: 1 }),
  Send: () => ({ traffic: (b) => b, factor: 1 }),
  Recv: () => ({ traffic: (b) => b, factor: 1 }),
};

/** algoBwGbs and busBwGbs as the plugin computes them (GB = 1e9 bytes; 0 for a zero time). */
/** A record of communicator 0xabc1 (2 ranks on one node: rank 0, pid 41000), 1 MiB AllReduce #0 in 100 µs, written at dumpUs; `over` changes any field. */
export function recordSpec(dumpUs: number, over: Partial<InspectorRecordSpec> = {}): InspectorRecordSpec {
  return {
    commId: "0xabc1",
    rank: 0,
    nranks: 2,
    nnodes: 1,
    dumpUs,
    hostname: "gpu-node-01",
    pid: 41000,
    op: "AllReduce",
    sn: 0,
    msgBytes: 2 ** 20,
    execUs: 100,
    ...over,
  };
}

export function bandwidth(op: string, msgBytes: number, execUs: number, nranks: number, p2p = false): { algoGbs: number; busGbs: number } {
  const timeInSec = execUs / 1e6;
  const f = p2p ? { traffic: (b: number) => b, factor: 1 } : (COLL_FACTOR[op]?.(nranks) ?? { traffic: () => 0, factor: 0 });
  const algoGbs = timeInSec !== 0 ? f.traffic(msgBytes) / 1e9 / timeInSec : 0;
  return { algoGbs, busGbs: algoGbs * f.factor };
}

/** Bus-bandwidth factor of a collective ((2(n-1)/n for AllReduce, ...): busbw = algbw x factor. */
export function busFactor(op: string, nranks: number): number {
  return COLL_FACTOR[op]?.(nranks).factor ?? 0;
}

/** Bytes that cross the bus per algbw byte: traffic size of a collective of msgBytes. */
export function trafficBytes(op: string, msgBytes: number, nranks: number): number {
  return COLL_FACTOR[op]?.(nranks).traffic(msgBytes) ?? 0;
}

function verbosePart(p: "coll" | "p2p", v: NonNullable<InspectorRecordSpec["verbose"]>): string {
  const sn = v.channels
    .map((c, ch) => `{"channel_id":${ch},"kernel_start_sn":${c.startSn},"kernel_stop_sn":${c.stopSn},"kernel_record_sn":${c.recordSn}}`)
    .join(",");
  const ts = v.channels
    .map((c, ch) => `{"channel_id":${ch},"kernel_start_ts":${c.startUs},"kernel_stop_ts":${c.stopUs},"kernel_record_ts":${c.recordUs}}`)
    .join(",");
  return (
    `,"event_trace_sn":{"${p}_start_sn":${v.startSn},"${p}_stop_sn":${v.stopSn},"kernel_events":[${sn}]}` +
    `,"event_trace_ts":{"${p}_start_ts":${v.startUs},"${p}_stop_ts":${v.stopUs},"kernel_events":[${ts}]}`
  );
}

/** One record as the plugin writes it, without its newline. */
export function inspectorLine(r: InspectorRecordSpec, format: InspectorFormat): string {
  const p2p = r.kind === "p2p";
  if (p2p && format !== "2.30") throw new Error("p2p records exist from NCCL 2.30 on");
  const bw = bandwidth(r.op, r.msgBytes, r.execUs, r.nranks, p2p);
  const algo = r.algoGbs ?? bw.algoGbs;
  const bus = r.busGbs ?? bw.busGbs;
  const name = format === "2.30" ? `,"comm_name":${jsonStr(r.commName ?? "unknown")}` : "";
  const header = `{"id":${jsonStr(r.commId)}${name},"rank":${r.rank},"n_ranks":${r.nranks},"nnodes":${r.nnodes}}`;
  const meta =
    `{"inspector_output_format_version":"v4.0","git_rev":${jsonStr(r.gitRev ?? "")},"rec_mechanism":"nccl_profiler_interface",` +
    `"dump_timestamp_us":${r.dumpUs},"hostname":${jsonStr(r.hostname)},"pid":${r.pid}}`;
  const k = p2p ? "p2p" : "coll";
  const peer = p2p ? `,"p2p_peer":${r.peer ?? 0}` : "";
  const perf =
    `{"${k}":${jsonStr(r.op)},"${k}_sn":${r.sn}${peer},"${k}_msg_size_bytes":${r.msgBytes},"${k}_exec_time_us":${r.execUs},` +
    `"${k}_timing_source":${jsonStr(r.timing ?? "kernel_gpu")},"${k}_algobw_gbs":${jsonDouble(algo)},"${k}_busbw_gbs":${jsonDouble(bus)}` +
    `${r.verbose ? verbosePart(k, r.verbose) : ""}}`;
  return `{"header":${header},"metadata":${meta},"${k}_perf":${perf}}`;
}

/** The file the plugin writes a process's records to: `<dump dir>/<hostname>-pid<pid>.log`. */
export function inspectorFileName(hostname: string, pid: number): string {
  return `${hostname}-pid${pid}.log`;
}
