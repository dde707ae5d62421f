/**
 * NCCL RAS JSON reports written the way NCCL writes them (`ncclras -f json`, NCCL 2.28.7+): rasJson()
 * follows the printf calls of src/ras/client_support.cc (jsonWriteHeader, jsonStartCommunicator,
 * jsonWriteRankData, jsonStartMissingRanks, jsonWriteMissingRank, jsonEndCommunicator,
 * jsonWriteFooter) line for line. No capture of this form exists yet.
 */
/** ncclFuncToString for op 0..NCCL_NUM_FUNCTIONS-1. */
const FUNCS = ["Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"];

export interface RankSpec {
  rank: number;
  host: string;
  pid: number;
  cuda: number;
  nvml?: number;
  counts?: Partial<Record<string, number>>;
  abort?: boolean;
  asyncError?: number;
}
export interface MissingSpec {
  rank: number;
  host: string;
  pid: number;
  cuda: number;
  unresponsive: boolean;
  dead: boolean;
}
export interface CommSpec {
  hash: bigint;
  size: number;
  ranks: RankSpec[];
  missing?: MissingSpec[];
}

export function rasJson(comms: CommSpec[], timeouts = 0): string {
  let out = "{\n";
  out += `  "nccl_version": "2.28.7",\n  "cuda_runtime_version": 12080,\n  "cuda_driver_version": 12080,\n  "timestamp": "2026-11-21 02:47:13",\n`;
  out += `  "communicators_count": ${comms.length},\n  "communicators": [\n`;
  comms.forEach((c, ci) => {
    if (ci > 0) out += ",\n";
    out += "    {\n";
    out += `      "hash": "0x${c.hash.toString(16)}",\n`;
    out += `      "secondary_hash": "0x1f2e3d4c:0x5b6a7988",\n`;
    out += `      "size": ${c.size},\n      "ranks_count": ${c.ranks.length},\n      "missing_ranks_count": ${c.missing?.length ?? 0},\n`;
    out += '      "ranks": [\n';
    c.ranks.forEach((r, ri) => {
      if (ri > 0) out += ",\n";
      out += "        {\n";
      out += `          "rank": ${r.rank},\n          "host": "${r.host}",\n          "pid": ${r.pid},\n          "cuda_dev": ${r.cuda},\n          "nvml_dev": ${r.nvml ?? r.cuda},\n`;
      out += '          "status": {\n';
      out += `            "init_state": 0,\n            "async_error": ${r.asyncError ?? 0},\n            "finalize_called": false,\n            "destroy_flag": false,\n            "abort_flag": ${r.abort === true}\n`;
      out += "          },\n";
      out += '          "collective_counts": {\n';
      FUNCS.forEach((f, fi) => {
        out += `            "${f}": ${r.counts?.[f] ?? 0}`;
        if (fi < FUNCS.length - 1) out += ",";
        out += "\n";
      });
      out += "          }\n";
      out += "        }";
    });
    out += "\n      ],\n";
    out += '      "missing_ranks": [\n';
    (c.missing ?? []).forEach((m, mi) => {
      if (mi > 0) out += ",\n";
      out += "        {\n";
      out += `          "rank": ${m.rank},\n          "host": "${m.host}",\n          "pid": ${m.pid},\n          "cuda_dev": ${m.cuda},\n          "nvml_dev": ${m.cuda},\n`;
      out += '          "status": {\n';
      out += `            "unresponsive": ${m.unresponsive},\n            "considered_dead": ${m.dead}\n`;
      out += "          }\n";
      out += "        }";
    });
    out += "\n      ]\n";
    out += "    }";
  });
  out += "\n  ],\n";
  out += `  "ras": {\n    "collection_time_sec": 0.012,\n    "timeouts_count": ${timeouts}\n  }\n`;
  out += "}\n";
  return out;
}
