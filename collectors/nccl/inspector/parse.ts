/**
 * One line of an NCCL Inspector JSON file -> InspectorRecord, or undefined for anything else.
 *
 * The writer (NCCL 2.28.3-2.29.3 ext-profiler/inspector/inspector.cc inspectorCommInfoDump;
 * 2.29.7 plugins/profiler/inspector/inspector.cc; 2.30.x plugins/profiler/inspector/inspector_json.cc
 * inspectorCommInfoDumpColl/P2p, all with json.cc) prints each record as one compact JSON object
 * followed by "\n" (jsonNewline): JSON Lines, keys in a fixed order, doubles as "%lf" and NaN as
 * the string "nan". Nothing here relies on the order, the spacing or the absence of other keys, so
 * a later version that adds fields still parses; the fields every version since 2.28.3 writes are
 * required (record-fields.ts).
 *
 * V8's JSON.parse is the reader: linear, no regex, and on NCCL's records faster than the
 * hand-written scanners tried before it (2-vCPU EPYC VM, 450-byte record: JSON.parse 1.5 µs, this
 * whole function 1.9 µs; a charCodeAt scanner for NCCL's exact layout 1.9 µs and a general one
 * 3.8 µs before building the record). Lines that cannot be JSON objects are refused before it
 * runs, without an exception.
 */
import { build, Fields } from "./record-fields.js";
import type { InspectorRecord } from "./types.js";

type Obj = Record<string, unknown>;

const f = new Fields();

/** The perf object's keys of a collective and of a point-to-point operation (made once: property keys built per line would cost a lookup each). */
const KEYS = {
  coll: {
    op: "coll",
    sn: "coll_sn",
    size: "coll_msg_size_bytes",
    exec: "coll_exec_time_us",
    timing: "coll_timing_source",
    algo: "coll_algobw_gbs",
    bus: "coll_busbw_gbs",
    start: "coll_start_ts",
    stop: "coll_stop_ts",
  },
  p2p: {
    op: "p2p",
    sn: "p2p_sn",
    size: "p2p_msg_size_bytes",
    exec: "p2p_exec_time_us",
    timing: "p2p_timing_source",
    algo: "p2p_algobw_gbs",
    bus: "p2p_busbw_gbs",
    start: "p2p_start_ts",
    stop: "p2p_stop_ts",
  },
} as const;
type Keys = (typeof KEYS)[keyof typeof KEYS];

const obj = (v: unknown): Obj | undefined => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : undefined);
const num = (o: Obj | undefined, k: string): number => {
  const v = o?.[k];
  return typeof v === "number" ? v : NaN;
};
const str = (o: Obj | undefined, k: string): string | undefined => {
  const v = o?.[k];
  return typeof v === "string" ? v : undefined;
};

/** Parses one line; undefined for garbage, a truncated line or a record missing a field every version writes. */
export function parseInspectorLine(line: string): InspectorRecord | undefined {
  // NCCL starts every line with '{' and ends it with '}'; JSON.parse would also allow spaces around.
  let a = 0;
  while (line.charCodeAt(a) === 0x20 || line.charCodeAt(a) === 0x09) a++;
  let z = line.length - 1;
  while (line.charCodeAt(z) === 0x20 || line.charCodeAt(z) === 0x09 || line.charCodeAt(z) === 0x0d) z--;
  if (line.charCodeAt(a) !== 0x7b || line.charCodeAt(z) !== 0x7d) return undefined;
  let top: Obj | undefined;
  try {
    top = obj(JSON.parse(line));
  } catch {
    return undefined;
  }
  if (top === undefined) return undefined;
  f.reset();
  let perf = obj(top.coll_perf);
  let k: Keys = KEYS.coll;
  if (perf !== undefined) {
    f.kind = "coll";
  } else if ((perf = obj(top.p2p_perf)) !== undefined) {
    f.kind = "p2p";
    k = KEYS.p2p;
    f.peer = num(perf, "p2p_peer");
  } else {
    return undefined;
  }
  const h = obj(top.header);
  const m = obj(top.metadata);
  f.commId = str(h, "id");
  f.commName = str(h, "comm_name");
  f.rank = num(h, "rank");
  f.nranks = num(h, "n_ranks");
  f.nnodes = num(h, "nnodes");
  f.hostname = str(m, "hostname");
  f.pid = num(m, "pid");
  f.formatVersion = str(m, "inspector_output_format_version");
  f.dumpUs = num(m, "dump_timestamp_us");
  f.op = str(perf, k.op);
  f.seq = num(perf, k.sn);
  f.msgBytes = num(perf, k.size);
  f.execUs = num(perf, k.exec);
  f.timing = str(perf, k.timing);
  f.algoGbs = num(perf, k.algo);
  f.busGbs = num(perf, k.bus);
  const ts = obj(perf.event_trace_ts);
  if (ts !== undefined) traceTimes(ts, k);
  return build(f);
}

/** Verbose form: the operation's start/stop and the kernels' earliest start and latest stop. */
function traceTimes(ts: Obj, k: Keys): void {
  f.startUs = num(ts, k.start);
  f.stopUs = num(ts, k.stop);
  const events = ts.kernel_events;
  if (!Array.isArray(events)) return;
  for (const e of events) {
    const start = num(obj(e), "kernel_start_ts");
    const stop = num(obj(e), "kernel_stop_ts");
    if (start > 0 && !(start >= f.kStartUs)) f.kStartUs = start;
    if (stop > 0 && !(stop <= f.kStopUs)) f.kStopUs = stop;
  }
}
