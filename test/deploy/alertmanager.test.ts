/**
 * The shipped Alertmanager configuration's inhibitions, run by the real Alertmanager: alerts are
 * posted to its API as Prometheus would send them, and its own view says which ones it suppresses.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../helpers/agent-process.js";
import {
  alertmanagerForTest,
  amAlerts,
  postAlerts,
  readText,
  startAlertmanager,
  startWebhook,
  type Alertmanager,
  type Webhook,
} from "../e2e/alerting/stack.js";
import { gate } from "./binaries.js";
import { alertmanagerFile } from "./rules.js";

const tools = gate(["alertmanager"]);

const A = { job: "ringwatch", instance: "10.0.0.1:9742", node: "node-a" };
const B = { job: "ringwatch", instance: "10.0.0.2:9742", node: "node-b" };

/** [labels, expected: inhibited or not] */
const CASES: [Record<string, string>, boolean][] = [
  // a hang inhibits its own rank-behind and GPU-signature alerts, not another communicator's
  [{ alertname: "RingwatchNcclHang", severity: "page", comm_id: "0xc1", rank: "3", ...B, pid: "2203" }, false],
  [{ alertname: "RingwatchNcclRankBehindCrossNode", severity: "critical", comm_id: "0xc1", rank: "3", ...B, pid: "2203" }, true],
  [{ alertname: "RingwatchNcclRankBehind", severity: "critical", comm_id: "0xc1", rank: "3", ...B, pid: "2203" }, true],
  [{ alertname: "RingwatchGpuHangSignature", severity: "info", comm_id: "0xc1", gpu: "0", signature: "spin", ...A }, true],
  [{ alertname: "RingwatchNcclRankBehindCrossNode", severity: "critical", comm_id: "0xc2", rank: "1", ...A, pid: "1101" }, false],
  // a node that cannot be scraped: its per-device alerts are echoes; another node's are not
  [{ alertname: "RingwatchTargetDown", severity: "critical", ...A }, false],
  [{ alertname: "RingwatchInfinibandPortDown", severity: "critical", device: "mlx5_0", port: "1", ...A }, true],
  [{ alertname: "RingwatchGpuFellOff", severity: "page", signal: "gpu_missing", gpu: "1", ...A }, true],
  [{ alertname: "RingwatchMtuMismatch", severity: "critical", device: "eth0", mtu: "1500", ...A }, true],
  [{ alertname: "RingwatchInfinibandPortDown", severity: "critical", device: "mlx5_0", port: "1", ...B }, false],
  // a critical port alert explains the warnings of the same port only
  [{ alertname: "RingwatchInfinibandSymbolErrorRate", severity: "warning", device: "mlx5_0", port: "1", ...B }, true],
  [{ alertname: "RingwatchInfinibandReceiveErrors", severity: "warning", device: "mlx5_1", port: "1", ...B }, false],
  // MTU: the name mismatch covers the kind outlier of the same interface
  [{ alertname: "RingwatchMtuMismatch", severity: "critical", device: "ib0", mtu: "2044", ...B }, false],
  [{ alertname: "RingwatchMtuOutlier", severity: "warning", device: "ib0", mtu: "2044", kind: "ipoib", ...B }, true],
  [{ alertname: "RingwatchMtuOutlier", severity: "warning", device: "ib1", mtu: "2044", kind: "ipoib", ...B }, false],
  // a GPU that fell off explains its failing gpu collector, not the mtu collector
  [{ alertname: "RingwatchGpuFellOff", severity: "page", signal: "dmon_down", ...B }, false],
  [{ alertname: "RingwatchCollectorFailing", severity: "warning", collector: "gpu", ...B }, true],
  [{ alertname: "RingwatchCollectorFailing", severity: "warning", collector: "mtu", ...B }, false],
];

const key = (l: Record<string, string>): string => JSON.stringify(Object.entries(l).sort());

describe.skipIf(tools.skip)(`shipped Alertmanager config: inhibitions in a real Alertmanager${tools.skip ? ` (SKIPPED: ${tools.message})` : ""}`, () => {
  let am: Alertmanager | undefined;
  let hook: Webhook | undefined;
  beforeAll(async () => {
    if (tools.fail) return;
    hook = await startWebhook();
    am = await startAlertmanager(tools.path.alertmanager, alertmanagerForTest(readText(alertmanagerFile), hook.url, "30s", "5m"));
  });
  afterAll(async () => {
    await am?.stop();
    await hook?.close();
  });

  it("Alertmanager is installed", () => {
    expect(tools.missing, tools.message).toEqual([]);
  });

  it.skipIf(tools.fail)("one root cause is notified once: each inhibition suppresses exactly its targets", async () => {
    const url = am?.url ?? "";
    await postAlerts(
      url,
      CASES.map(([labels]) => ({ labels })),
    );
    const want = new Map(CASES.map(([l, inhibited]) => [key(l), inhibited]));
    const seen = await eventually(async () => {
      const got = await amAlerts(url);
      const state = new Map(got.map((a) => [key(a.labels), a.status.inhibitedBy.length > 0]));
      if (got.length !== CASES.length) return undefined;
      for (const [k, inhibited] of want) if (state.get(k) !== inhibited) return undefined;
      return got;
    }, 15_000).catch(async () => amAlerts(url));
    const result = seen
      .map(
        (a) =>
          `${a.labels.alertname} ${a.labels.comm_id ?? ""}${a.labels.instance ?? ""} ${a.labels.device ?? a.labels.gpu ?? a.labels.collector ?? ""}: ${a.status.inhibitedBy.length > 0 ? "inhibited" : "active"}`,
      )
      .sort();
    const expected = CASES.map(
      ([l, inhibited]) =>
        `${l.alertname} ${l.comm_id ?? ""}${l.instance ?? ""} ${l.device ?? l.gpu ?? l.collector ?? ""}: ${inhibited ? "inhibited" : "active"}`,
    ).sort();
    expect(result).toEqual(expected);
  });
});
