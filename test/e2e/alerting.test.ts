/**
 * The alerting layer end to end, with real components on loopback: two ringwatch agents acting as
 * nodes (the built agent, fake `ip` replaying real captures, real fake rank processes writing NCCL
 * logs), Debian's Prometheus scraping them with the shipped rules (only `for:` shortened), and
 * Debian's Alertmanager with the shipped example config (receivers pointed at a webhook server in
 * this test, grouping waits shortened).
 *
 *   node-a: ranks 0-2 of a 4-rank communicator; they enter collective #40 and wait in it.
 *           ip: an Azure HPC VM's `ip addr` (eth0 MTU 1500).
 *   node-b: rank 3, which stops before collective #40: the rank behind, visible only across nodes.
 *           ip: iproute2 6.1's `ip -j -d link` (eth0 MTU 1400).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, fakesDir, sample, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { gate } from "../deploy/binaries.js";
import { alertmanagerFile, loadRules, rulesFile } from "../deploy/rules.js";
import { fixture } from "./env.js";
import {
  alertmanagerForTest,
  amAlerts,
  readText,
  rulesWithShortFor,
  startAlertmanager,
  startPrometheus,
  startWebhook,
  tempDir,
  type Alertmanager,
  type HookAlert,
  type Notification,
  type Prometheus,
  type Webhook,
} from "./alerting/stack.js";

const tools = gate(["prometheus", "alertmanager"]);

const COMM = "0x7a11e47c0ffee001";
const NRANKS = 4;
const STOP_AT = 40;

describe.skipIf(tools.skip)(`alerting end to end: agents -> Prometheus -> Alertmanager -> webhook${tools.skip ? ` (SKIPPED: ${tools.message})` : ""}`, () => {
  const ranks: ChildProcess[] = [];
  const agents: RunningAgent[] = [];
  const dirs: string[] = [];
  let prom: Prometheus | undefined;
  let am: Alertmanager | undefined;
  let hook: Webhook | undefined;
  let ranksStartedAt = 0;
  let node: Record<"a" | "b", RunningAgent>;

  function startRank(dir: string, rank: number, env: NodeJS.ProcessEnv): ChildProcess {
    const r = spawn(process.execPath, [join(fakesDir, "nccl-rank"), dir, String(rank), String(NRANKS), COMM], {
      env: { ...process.env, FAKE_RANK_PERIOD_MS: "100", ...env },
      stdio: "ignore",
    });
    ranks.push(r);
    return r;
  }

  const agentArgs = (ncclDir: string): string[] => [
    "--no-collector.gpu",
    "--no-collector.infiniband",
    "--no-collector.gdr",
    `--collector.mtu.ip=${join(fakesDir, "ip")}`,
    "--collector.interval=1s",
    "--collector.timeout=3s",
    `--collector.nccl.path=${ncclDir}`,
    "--collector.nccl.hang-threshold=3s",
  ];

  beforeAll(async () => {
    if (tools.fail) return;
    const dirA = tempDir("rw-alert-a-");
    const dirB = tempDir("rw-alert-b-");
    dirs.push(dirA, dirB);
    const a = await startAgent(agentArgs(dirA), {
      FAKE_IP_MODE: "no-json",
      FAKE_IP_TEXT: fixture("tools/ip_link/02-usernetes-azure-ip-addr-ipoib-4092-docker0.txt"),
    });
    agents.push(a);
    const b = await startAgent(agentArgs(dirB), {
      FAKE_IP_MODE: "normal",
      FAKE_IP_JSON: fixture("tools/ip_link/90-local-sandbox-iproute2-6.1-ip-j-d-link-ifb.txt"),
    });
    agents.push(b);
    node = { a, b };

    hook = await startWebhook();
    am = await startAlertmanager(tools.path.alertmanager, alertmanagerForTest(readText(alertmanagerFile), hook.url));
    prom = await startPrometheus(tools.path.prometheus, {
      rules: rulesWithShortFor(readText(rulesFile), "1s"),
      targets: [
        { url: a.url, labels: { node: "node-a" } },
        { url: b.url, labels: { node: "node-b" } },
      ],
      alertmanager: am.url,
    });

    ranksStartedAt = Date.now();
    for (const r of [0, 1, 2]) startRank(dirA, r, { FAKE_RANK_STALL_AFTER: String(STOP_AT) });
    startRank(dirB, 3, { FAKE_RANK_STOP_BEFORE: String(STOP_AT) });
  }, 60_000);

  afterAll(async () => {
    for (const r of ranks) if (r.exitCode === null && r.signalCode === null) r.kill("SIGKILL");
    await prom?.stop();
    await am?.stop();
    await Promise.all(agents.map((a) => a.stop()));
    await hook?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("Prometheus and Alertmanager are installed", () => {
    expect(tools.missing, tools.message).toEqual([]);
  });

  it.skipIf(tools.fail)("the test rules differ from the shipped ones only in `for:`", () => {
    const shipped = loadRules();
    const copy = loadRules(join(prom?.dir ?? "", "ringwatch-rules.yml"));
    const strip = (f: typeof shipped): unknown => f.groups.map((g) => ({ ...g, rules: g.rules.map(({ for: _for, ...rest }) => rest) }));
    expect(strip(copy)).toEqual(strip(shipped));
    const shippedFor = shipped.groups.flatMap((g) => g.rules).filter((r) => r.for !== undefined);
    expect(shippedFor.length).toBeGreaterThan(10);
    expect(copy.groups.flatMap((g) => g.rules).filter((r) => r.for !== undefined && r.for !== "1s")).toEqual([]);
    expect(copy.groups.flatMap((g) => g.rules).filter((r) => r.for !== undefined)).toHaveLength(shippedFor.length);
  });

  const alertsIn = (ns: Notification[], receiver: string, status: "firing" | "resolved", alertname: string): HookAlert[] =>
    ns
      .filter((n) => n.receiver === receiver && n.status === status)
      .flatMap((n) => n.alerts.filter((x) => x.labels.alertname === alertname && x.status === status));

  it.skipIf(tools.fail)(
    "the hang pages with the communicator, the rank behind and its node, then resolves when the job ends",
    async () => {
      const h = hook as Webhook;
      const rank3 = ranks[3] as ChildProcess;

      // Fires: one notification to the pager naming comm_id, rank 3 and node-b. Meanwhile, note when
      // node-a's agent first shows the verdict, to tell the agent's latency from the pipeline's.
      let verdictAt = 0;
      const paged = await eventually(
        async () => {
          if (!verdictAt && sample(await node.a.scrape(), `ringwatch_nccl_hang_suspected{comm_id="${COMM}"}`) === 1) verdictAt = Date.now();
          const got = alertsIn(h.notifications, "ringwatch-pager", "firing", "RingwatchNcclHang");
          return got.length > 0 ? got : undefined;
        },
        60_000,
        100,
      );
      const timeToPage = Date.now() - ranksStartedAt;
      console.info(
        `RingwatchNcclHang reached the pager ${(timeToPage / 1000).toFixed(1)} s after the ranks started (collective #${STOP_AT} at ~${STOP_AT / 10} s, hang threshold 3 s); ` +
          `node-a's agent showed the verdict at ${((verdictAt - ranksStartedAt) / 1000).toFixed(1)} s, so scrape + rules + for + Alertmanager took ${((Date.now() - verdictAt) / 1000).toFixed(1)} s`,
      );
      expect(verdictAt).toBeGreaterThan(0);
      expect(paged).toHaveLength(1);
      const alert = paged[0] as HookAlert;
      expect(alert.labels).toMatchObject({
        alertname: "RingwatchNcclHang",
        severity: "page",
        comm_id: COMM,
        rank: "3",
        node: "node-b",
        instance: new URL(node.b.url).host,
        pid: String(rank3.pid),
      });
      expect(alert.annotations.summary).toBe(`NCCL communicator ${COMM} is hung: rank 3 on node-b is behind`);
      expect(alert.annotations.description).toContain(`py-spy dump --pid ${rank3.pid}`);
      expect(alert.annotations.runbook_url).toBe("https://github.com/ringwatch/ringwatch/blob/main/deploy/prometheus/README.md#alert-ringwatchncclhang");
      // The hardware annotation's queries ran on the real Prometheus: the agents' kernel logs (this
      // machine's /dev/kmsg where readable) hold no Xid, or no agent reads one.
      expect(alert.annotations.hardware).toMatch(
        /^(No Xid that needs action in the last 30 min on the [12] of its 2 nodes that read their kernel log\.|Unknown: no node of it reads its kernel log \(kmsg collector\)\.)$/,
      );
      const notif = h.notifications.find((n) => n.receiver === "ringwatch-pager" && n.alerts.some((x) => x.labels.alertname === "RingwatchNcclHang"));
      expect(notif?.groupLabels).toEqual({ alertname: "RingwatchNcclHang", comm_id: COMM });
      expect(notif?.path).toBe("/ringwatch-pager");
      expect(timeToPage).toBeLessThan(40_000);

      // The same rank behind, as its own alert, reached Alertmanager but is inhibited by the hang.
      const behind = await eventually(async () => {
        const all = await amAlerts((am as Alertmanager).url);
        const x = all.find((a) => a.labels.alertname === "RingwatchNcclRankBehindCrossNode");
        return x && x.status.inhibitedBy.length > 0 ? x : undefined;
      }, 15_000);
      expect(behind.labels).toMatchObject({ comm_id: COMM, rank: "3", node: "node-b" });
      expect(h.notifications.flatMap((n) => n.alerts).filter((x) => x.labels.alertname === "RingwatchNcclRankBehindCrossNode")).toEqual([]);

      // The job ends: the ranks are killed, the verdict drops at once, and the pager gets "resolved".
      const endedAt = Date.now();
      await Promise.all(ranks.map((r) => new Promise((res) => (r.exitCode !== null ? res(null) : (r.once("exit", res), r.kill("SIGTERM"))))));
      // The alert that paged is the one resolved: the same comm_id, rank 3 and node-b. (Per-rank
      // series exist only while a communicator is suspect, so where one node's verdict drops a scrape
      // before the other's, the hang may show a moment as the communicator alone: an alert of other
      // labels, which is not the one that paged.)
      const resolved = await eventually(
        () => {
          const got = alertsIn(h.notifications, "ringwatch-pager", "resolved", "RingwatchNcclHang").filter((x) => x.labels.rank === "3");
          return Promise.resolve(got.length > 0 ? got : undefined);
        },
        30_000,
        100,
      );
      console.info(`RingwatchNcclHang resolved at the pager ${((Date.now() - endedAt) / 1000).toFixed(1)} s after the job ended`);
      expect(resolved[0]?.labels).toMatchObject({ comm_id: COMM, rank: "3", node: "node-b", pid: String(rank3.pid) });
      expect(resolved[0]?.startsAt).toBe(alert.startsAt);
    },
    90_000,
  );

  it.skipIf(tools.fail)(
    "an MTU mismatch between the two nodes reaches chat, naming both nodes",
    async () => {
      const h = hook as Webhook;
      const mismatches = await eventually(
        () => {
          const got = alertsIn(h.notifications, "ringwatch-chat", "firing", "RingwatchMtuMismatch");
          const nodes = new Set(got.map((x) => x.labels.node));
          return Promise.resolve(nodes.has("node-a") && nodes.has("node-b") ? got : undefined);
        },
        30_000,
        100,
      );
      const byNode = new Map(mismatches.map((x) => [x.labels.node, x]));
      expect(byNode.get("node-a")?.labels).toMatchObject({ severity: "critical", device: "eth0", mtu: "1500" });
      expect(byNode.get("node-b")?.labels).toMatchObject({ severity: "critical", device: "eth0", mtu: "1400" });
      // only eth0 differs: lo is left out, the other interfaces are DOWN or exist on one node only
      expect(new Set(mismatches.map((x) => x.labels.device))).toEqual(new Set(["eth0"]));
      expect(byNode.get("node-b")?.annotations.description).toContain("has MTU 1400, which only 50% of the nodes");
      // grouped per alert and node
      const groups = h.notifications.filter((n) => n.alerts.some((x) => x.labels.alertname === "RingwatchMtuMismatch")).map((n) => n.groupLabels);
      expect(groups).toContainEqual({ alertname: "RingwatchMtuMismatch", node: "node-b" });
      // the recording rule behind it, as Prometheus has it
      const share = await (prom as Prometheus).query('ringwatch:network_mtu_share:ratio{device="eth0"}');
      expect(share.map((s) => [s.metric.node, s.metric.mtu, Number(s.value[1])]).sort()).toEqual([
        ["node-a", "1500", 0.5],
        ["node-b", "1400", 0.5],
      ]);
    },
    60_000,
  );
});
