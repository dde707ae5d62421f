/**
 * PyTorch's torch.distributed.debug frontend gathers every rank's stacks from the ranks' worker
 * servers and gives them in two forms; both are built here exactly as its source writes them
 * (torch/distributed/debug/_debug_handlers.py StacksHandler / PySpyHandler, _frontend.py
 * fetch_all and RAW_RESP_TEMPLATE; docs/nccl.md#python-stacks-beside-the-logs), around real
 * faulthandler and py-spy text from test/fixtures/stacks/, and read by `ringwatch analyze`.
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../collectors/nccl/analyze/analyze.js";
import { stackPrefix } from "../../../../collectors/nccl/analyze/stacks.js";
import { StackReader } from "../../../../collectors/nccl/stacks/reader.js";
import type { StackDump } from "../../../../collectors/nccl/stacks/types.js";
import { readCapture } from "../../../helpers/fixtures.js";

/** fetch_all: `f"{addr.decode()}/handler/{endpoint}?{args}"`, addr as each rank stored it: `http://{hostname}:{port}`. */
const address = (rank: number, endpoint: string, args = ""): string => `http://node-${Math.floor(rank / 8)}:${40100 + rank}/handler/${endpoint}?${args}`;

interface Resp {
  status: number;
  text: string;
}

/** StacksHandler.dump() / PySpyHandler.dump(): the periodic dump file `stacks_<YYYYmmdd_HHMMSS>.txt`. */
function periodicDump(endpoint: string, resps: readonly Resp[]): string {
  const parts: string[] = [];
  resps.forEach((resp, i) => {
    parts.push(`=== Rank ${i}: ${address(i, endpoint)} ===`);
    parts.push(resp.status === 200 ? resp.text : `Error: ${resp.status}`);
  });
  return parts.join("\n");
}

/** RAW_RESP_TEMPLATE's content block as Jinja renders it (no autoescape, no trim_blocks): the `/stacks` page. */
function stacksPage(resps: readonly Resp[]): string {
  let out = "\n    <h1>Stacks</h1>\n\n\n    ";
  resps.forEach((resp, i) => {
    out += `\n        <h2>Rank ${i}: ${address(i, "dump_traceback")}</h2>\n        `;
    out +=
      resp.status !== 200
        ? `\n            <p>Failed to fetch: status=${resp.status}</p>\n            <pre>${resp.text}</pre>\n        `
        : `\n            <pre>${resp.text}</pre>\n        `;
    out += "\n    ";
  });
  return out + "\n";
}

/** The worker's `dump_traceback` handler: faulthandler.dump_traceback(all_threads=True) into a file, read back line by line, each line given its `\n` (blank lines between threads kept). */
function dumpTraceback(capture: string): string {
  const text = readCapture(`stacks/${capture}`);
  return text.slice(text.indexOf("Thread 0x")).replace(/\n*$/, "\n");
}

const FH = "04-faulthandler-sglang-3745-segfault-all-reduce-current-thread.txt";
const PYSPY = "13-pyspy-omlx-3521-pipeline-rank-1-generate-thread.txt";

function dumpsOf(text: string, name: string): StackDump[] {
  const r = new StackReader(name, stackPrefix);
  text.split("\n").forEach((l, i) => r.line(l, i + 1));
  return r.end();
}

describe("PyTorch's worker server stacks", () => {
  const faulthandlerText = dumpTraceback(FH);

  it("the periodic stacks file: each section's rank and host, a failed rank's `Error: 503` no dump", () => {
    const text = periodicDump("dump_traceback", [
      { status: 200, text: faulthandlerText },
      { status: 503, text: "ConnectionError: x" },
      { status: 200, text: faulthandlerText },
    ]);
    const dumps = dumpsOf(text, "stacks_20250101_120000.txt");
    expect(dumps.map((d) => [d.tool, d.rank, d.rankFrom, d.host, d.threads.length])).toEqual([
      ["faulthandler", 0, "worker_server", "node-0", 2],
      ["faulthandler", 2, "worker_server", "node-0", 2],
    ]);
    expect(dumps[1]?.threads[1]?.frames[0]).toEqual({
      function: "all_reduce",
      file: "/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py",
      line: 2501,
    });
  });

  it("the periodic py-spy file (`pyspy_dump_<ts>.txt`): py-spy's output per rank", () => {
    const text = periodicDump("pyspy_dump", [
      { status: 200, text: `Process 11: python train.py\nPython v3.12.3 (/usr/bin/python3.12)\n\n${readCapture(`stacks/${PYSPY}`)}` },
      { status: 500, text: "Failed to start py-spy" },
    ]);
    const dumps = dumpsOf(text, "pyspy_dump_20250101_120000.txt");
    expect(dumps.map((d) => [d.tool, d.rank, d.pid, d.threads[0]?.frames.length])).toEqual([["py-spy", 0, 11, 7]]);
  });

  it("the /stacks page (HTML): the text in <pre>, a failed rank's <p>", () => {
    const page = stacksPage([
      { status: 200, text: faulthandlerText },
      { status: 408, text: "Timeout: x" },
      { status: 200, text: faulthandlerText },
    ]);
    const dumps = dumpsOf(page, "stacks.html");
    expect(dumps.map((d) => [d.rank, d.host, d.threads.map((t) => t.frames.length)])).toEqual([
      [0, "node-0", [4, 2]],
      [2, "node-0", [4, 2]],
    ]);
  });

  it("analyze on a periodic file of 16 ranks, rank 9's main thread elsewhere: a stack_outlier naming rank 9", () => {
    const resps = Array.from({ length: 16 }, (_, rank) => ({
      status: 200,
      text:
        rank === 9
          ? faulthandlerText.replace("line 2501 in all_reduce", "line 88 in next_batch").replace("distributed_c10d.py", "loader.py")
          : faulthandlerText,
    }));
    const r = analyzeLogs([{ name: "stacks_20250101_120000.txt", text: periodicDump("dump_traceback", resps) }]);
    expect(r.findings.map((f) => [f.kind, f.ranks, f.waiting_ranks?.length])).toEqual([["stack_outlier", [9], 15]]);
  });
});
