/**
 * A job's NCCL log puts control characters (ESC, BEL, CR, DEL, a C1 NEL) in a field that becomes a
 * label value (the HCA device name of `NET/IB : Using [0]<device>:1/IB`). The built agent follows
 * the real file; a real HTTP scrape shows each control as `\xNN` (docs/metrics.md, Conventions),
 * no raw control anywhere in the scrape, and Debian's `promtool check metrics` accepts it.
 */
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gate } from "../deploy/binaries.js";
import { eventually, sample, samplesOf, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { promtoolCheckMetrics } from "../helpers/check-metrics.js";
import { parsePromText } from "../helpers/exposition.js";
import { testTempDir } from "../helpers/test-temp-dir.js";

const tools = gate(["promtool"]);
const COMM = "0x49bbd7790311d5eb";
/** ESC [31m (red), BEL, CR, DEL and NEL (U+0085, a C1 control) inside the device name. */
const DEVICE = "mlx5\u001b[31m\u0007\r\u007f\u0085_0";
const SHOWN = "mlx5\\x1b[31m\\x07\\x0d\\x7f\\x85_0";

let agent: RunningAgent | undefined;
afterEach(async () => {
  await agent?.stop();
  agent = undefined;
});

/** Lines of one rank as NCCL 2.21 writes them with NCCL_DEBUG_SUBSYS=INIT,COLL,NET (the shapes of fixtures 02, 51 and 56). */
function rankLog(device: string): { init: string; colls: string } {
  const hdr = (tid: number): string => `node-a:4242:${tid} [0] NCCL INFO `;
  const init = [
    `${hdr(4242)}NCCL version 2.21.5+cuda12.4`,
    `${hdr(4274)}NET/IB : Using [0]${device}:1/IB [1]mlx5_3:1/IB ; OOB ib0:10.0.0.1<0>`,
    `${hdr(4274)}ncclCommInitRank comm 0x5500aa0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 18000 commId ${COMM} - Init COMPLETE`,
    `${hdr(4302)}Channel 00/0 : 1[1] -> 0[0] [receive] via NET/IB/0/GDRDMA`,
  ];
  const colls = [1, 2, 3].map(
    (n) =>
      `${hdr(4242)}AllReduce: opCount ${n} sendbuff 0x7f0000001000 recvbuff 0x7f0000001000 count 4194304 datatype 7 op 0 root 0 comm 0x5500aa0 [nranks=2] stream 0x55aa0000`,
  );
  return { init: init.join("\n") + "\n", colls: colls.join("\n") + "\n" };
}

/** A character the exposition must never carry raw: a C0 control but the line feed, DEL, a C1 control. */
const isRawControl = (c: string): boolean => {
  const n = c.charCodeAt(0);
  return c !== "\n" && (n < 0x20 || (n >= 0x7f && n <= 0x9f));
};

describe("control characters from a job's log in label values", () => {
  it("are written \\xNN on /metrics; the scrape holds no raw control and passes promtool check metrics", async () => {
    const dir = testTempDir();
    agent = await startAgent([
      "--no-collector.gpu",
      "--no-collector.infiniband",
      "--no-collector.gdr",
      "--no-collector.mtu",
      `--collector.nccl.path=${dir}`,
      "--collector.nccl.check-pids=false",
    ]);
    const a = agent;
    const log = join(dir, "nccl-node-a-4242.log");
    const { init, colls } = rankLog(DEVICE);
    writeFileSync(log, init);
    appendFileSync(log, colls);

    // Both writes read: the device list, and every line after it (the three collectives, the last opCount 3).
    const lines = `${init}${colls}`.split("\n").length - 1;
    const text = await eventually(async () => {
      const t = await a.scrape();
      return samplesOf(t, "ringwatch_nccl_process_net_device_info").length > 0 && sample(t, "ringwatch_nccl_log_lines_total") === lines ? t : undefined;
    }, 20_000);
    expect(sample(text, `ringwatch_nccl_comm_slowest_rank_progress{comm_id="${COMM}"}`)).toBe(4);
    const devices = samplesOf(text, "ringwatch_nccl_process_net_device_info");
    // The rank's process sends over the crafted port (its channel line goes via NET/IB/0): that one series.
    expect(devices).toEqual([`ringwatch_nccl_process_net_device_info{pid="4242",host_pid="",device="${SHOWN.replace(/\\/g, "\\\\")}",port="1"} 1`]);
    const series = parsePromText(text).series.filter((s) => s.name === "ringwatch_nccl_process_net_device_info");
    expect(series.map((s) => s.labels.device)).toEqual([SHOWN]); // what Prometheus stores: backslash, x, 1, b
    expect([...text].filter(isRawControl)).toEqual([]);

    if (tools.fail) throw new Error(tools.message);
    if (tools.skip) return; // said once, by gate()
    const check = await promtoolCheckMetrics(tools.path.promtool, text);
    expect({ code: check.code, stdout: check.stdout, stderr: check.stderr }).toEqual({ code: 0, stdout: "", stderr: "" });
  });
});
