/**
 * parseInspectorLine on records as NCCL's writer prints them (test/helpers/inspector-writer.ts,
 * which follows ext-profiler/inspector/inspector.cc of NCCL v2.28.3-1..v2.29.3-1,
 * plugins/profiler/inspector/inspector.cc of v2.29.7-1 and inspector_json.cc of v2.30.3-1..v2.30.7-1),
 * on the README's own example, and on garbage: every cut of a record, other files' lines, and
 * random text (fast-check) are refused without throwing.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseInspectorLine } from "../../../../collectors/nccl/inspector/parse.js";
import { bandwidth, inspectorFormat, inspectorLine, type InspectorRecordSpec } from "../../../helpers/inspector-writer.js";

const BASE: InspectorRecordSpec = {
  commId: "0x7f8c496ae9f661",
  rank: 2,
  nranks: 8,
  nnodes: 1,
  dumpUs: 1748030377748202,
  hostname: "example-hostname",
  pid: 1639453,
  op: "AllReduce",
  sn: 1407,
  msgBytes: 17179869184,
  execUs: 61974,
};

describe("the writer helper", () => {
  it("prints NCCL README's example record (v2.28.3-1 ext-profiler/inspector/README.md) key for key, in the code's order", () => {
    // The README's example leaves out coll_timing_source, which inspectorCompletedColl writes
    // between coll_exec_time_us and coll_algobw_gbs; its numbers are what inspectorComputeCollBw gives.
    expect(inspectorLine(BASE, "2.28")).toBe(
      '{"header":{"id":"0x7f8c496ae9f661","rank":2,"n_ranks":8,"nnodes":1},' +
        '"metadata":{"inspector_output_format_version":"v4.0","git_rev":"","rec_mechanism":"nccl_profiler_interface","dump_timestamp_us":1748030377748202,"hostname":"example-hostname","pid":1639453},' +
        '"coll_perf":{"coll":"AllReduce","coll_sn":1407,"coll_msg_size_bytes":17179869184,"coll_exec_time_us":61974,"coll_timing_source":"kernel_gpu","coll_algobw_gbs":277.210914,"coll_busbw_gbs":485.119099}}',
    );
  });

  it("knows which NCCL versions write comm_name", () => {
    expect(["2.28.3", "2.28.9", "2.29.3", "2.29.7", "2.30.3", "2.30.7"].map(inspectorFormat)).toEqual(["2.28", "2.28", "2.28", "2.28", "2.30", "2.30"]);
    expect(inspectorLine({ ...BASE, commName: "DP Group 0" }, "2.30")).toContain('{"id":"0x7f8c496ae9f661","comm_name":"DP Group 0","rank":2,');
  });
});

describe("parseInspectorLine", () => {
  it("reads a 2.28-2.29 collective record into base units", () => {
    const r = parseInspectorLine(inspectorLine(BASE, "2.28"));
    expect(r).toEqual({
      kind: "coll",
      commId: "0x7f8c496ae9f661",
      rank: 2,
      nranks: 8,
      nnodes: 1,
      hostname: "example-hostname",
      pid: 1639453,
      formatVersion: "v4.0",
      op: "AllReduce",
      seq: 1407,
      msgBytes: 17179869184,
      execSeconds: 0.061974,
      timingSource: "kernel_gpu",
      algoBwBytesPerSecond: 277.210914e9,
      busBwBytesPerSecond: 485.119099e9,
      dumpTimestampSeconds: 1748030377.748202,
    });
  });

  it("reads 2.30's comm_name (escapes decoded) and its p2p records", () => {
    const coll = parseInspectorLine(inspectorLine({ ...BASE, commName: 'TP/"a"\tb' }, "2.30"));
    expect(coll?.commName).toBe('TP/"a"\tb');
    const line = inspectorLine({ ...BASE, kind: "p2p", op: "Send", sn: 9, peer: 5, msgBytes: 536870912, execUs: 1154 }, "2.30");
    expect(line).toContain('"p2p_perf":{"p2p":"Send","p2p_sn":9,"p2p_peer":5,"p2p_msg_size_bytes":536870912,"p2p_exec_time_us":1154,');
    const p2p = parseInspectorLine(line);
    expect(p2p).toMatchObject({ kind: "p2p", op: "Send", seq: 9, peer: 5, msgBytes: 536870912, execSeconds: 0.001154, commName: "unknown" });
    expect(p2p?.busBwBytesPerSecond).toBeCloseTo(bandwidth("Send", 536870912, 1154, 8, true).busGbs * 1e9, -3);
  });

  it("reads the verbose form's timestamps: the collective's, and the kernels' earliest start and latest stop", () => {
    const verbose = {
      startSn: 1,
      stopSn: 2,
      startUs: 1752867229235059,
      stopUs: 1752867229235064,
      channels: [
        { startSn: 3, stopSn: 48, recordSn: 47, startUs: 1752867229235181, stopUs: 1752867229275811, recordUs: 1752867229275811 },
        { startSn: 4, stopSn: 49, recordSn: 46, startUs: 1752867229235170, stopUs: 1752867229275830, recordUs: 1752867229275830 },
      ],
    };
    const line = inspectorLine({ ...BASE, op: "ReduceScatter", verbose }, "2.28");
    expect(line).toContain(
      ',"event_trace_sn":{"coll_start_sn":1,"coll_stop_sn":2,"kernel_events":[{"channel_id":0,"kernel_start_sn":3,"kernel_stop_sn":48,"kernel_record_sn":47},',
    );
    const r = parseInspectorLine(line);
    expect(r?.startTimestampSeconds).toBe(1752867229.235059);
    expect(r?.stopTimestampSeconds).toBe(1752867229.235064);
    expect(r?.kernelStartTimestampSeconds).toBe(1752867229.23517);
    expect(r?.kernelStopTimestampSeconds).toBe(1752867229.27583);
    expect(r?.op).toBe("ReduceScatter");
  });

  it('keeps a record whose bandwidth NCCL printed as "nan", without a bandwidth', () => {
    const r = parseInspectorLine(inspectorLine({ ...BASE, algoGbs: NaN, busGbs: NaN }, "2.28"));
    expect(r).toBeDefined();
    expect(r?.busBwBytesPerSecond).toBeUndefined();
    expect(r?.execSeconds).toBe(0.061974);
  });

  it("does not depend on key order, spacing or unknown keys (a later version may add fields)", () => {
    const line =
      '{ "future": {"x": [1, {"y": "z"}], "n": null, "t": true}, "coll_perf": { "coll_busbw_gbs": 1.5, "coll": "AllGather", "coll_sn": 3,' +
      ' "coll_msg_size_bytes": 4096, "coll_exec_time_us": 7, "algo_proto": "Ring_LL" },\n "header": {"nnodes": 2, "rank": 1, "n_ranks": 2, "id": "0xabc"}, "metadata": {"pid": 12} }';
    expect(parseInspectorLine(line)).toEqual({
      kind: "coll",
      commId: "0xabc",
      rank: 1,
      nranks: 2,
      nnodes: 2,
      pid: 12,
      op: "AllGather",
      seq: 3,
      msgBytes: 4096,
      execSeconds: 7e-6,
      busBwBytesPerSecond: 1.5e9,
    });
  });

  it("refuses every cut of a record, also those that end on a brace", () => {
    const line = inspectorLine(
      {
        ...BASE,
        verbose: { startSn: 1, stopSn: 2, startUs: 5, stopUs: 6, channels: [{ startSn: 3, stopSn: 4, recordSn: 4, startUs: 7, stopUs: 8, recordUs: 8 }] },
      },
      "2.30",
    );
    expect(parseInspectorLine(line)).toBeDefined();
    for (let i = 0; i < line.length; i++) expect(parseInspectorLine(line.slice(0, i)), `cut at ${i}`).toBeUndefined();
  });

  it("refuses records without a field every version writes, or with one out of range", () => {
    const good = inspectorLine(BASE, "2.28");
    const broken = [
      good.replace('"rank":2', '"rank":8'), // rank >= n_ranks
      good.replace('"rank":2', '"rank":-1'),
      good.replace('"rank":2', '"rank":2.5'),
      good.replace('"n_ranks":8', '"n_ranks":0'),
      good.replace('"id":"0x7f8c496ae9f661",', ""),
      good.replace('"coll_sn":1407,', ""),
      good.replace('"coll_sn":1407', '"coll_sn":"1407"'),
      good.replace('"coll_exec_time_us":61974', '"coll_exec_time_us":-1'),
      good.replace('"coll":"AllReduce",', '"coll":"",'),
      good.replace('"coll_perf"', '"other_perf"'),
      good.replace('"id":"0x7f8c496ae9f661"', '"id":"0x7f\u0001"'), // a raw control character in a string
      good.replace('"hostname":"example-hostname"', '"hostname":"a\\qb"'), // an unknown escape
      `${good}}`,
      `${good},`,
      `${good} x`,
      good.replace("{", "["),
    ];
    for (const line of broken) expect(parseInspectorLine(line), line).toBeUndefined();
  });

  it("refuses other files' lines", () => {
    const lines = [
      "",
      "{}",
      "[]",
      "null",
      "gpu-node-01:41000:41012 [0] NCCL INFO AllReduce: opCount 5 sendbuff 0x7f comm 0x55 [nranks=8] stream 0x56",
      'nccl_bus_bandwidth_gbs{version="v5.1",slurm_job_id="unknown",node="n",gpu="GPU0",comm_name="DP Group 0",n_nodes="1",nranks="4",collective="AllReduce",message_size="4-5GB",algo_proto="Ring_ll"} 678.263',
      '{"header":{"id":"0x1","rank":0,"n_ranks":1,"nnodes":1}}',
      "{".repeat(10_000),
      `{"a":${"[".repeat(100)}${"]".repeat(100)}}`,
    ];
    for (const line of lines) expect(parseInspectorLine(line), line.slice(0, 80)).toBeUndefined();
  });

  it("never throws, and agrees with JSON.parse on what is JSON (fast-check)", () => {
    const good = inspectorLine(BASE, "2.30");
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.nat(good.length), (junk, at) => {
        const spliced = good.slice(0, at) + junk + good.slice(at);
        for (const s of [junk, spliced]) {
          const r = parseInspectorLine(s);
          if (r === undefined) continue;
          // Whatever it accepts is JSON with these values.
          const j = JSON.parse(s) as { header: { id: string; rank: number }; coll_perf?: { coll_sn: number }; p2p_perf?: { p2p_sn: number } };
          expect(r.commId).toBe(j.header.id);
          expect(r.rank).toBe(j.header.rank);
          expect(r.seq).toBe(j.coll_perf?.coll_sn ?? j.p2p_perf?.p2p_sn);
        }
      }),
      { numRuns: 3000, seed: 7 },
    );
  });
});
