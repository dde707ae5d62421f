/**
 * Do no harm at cluster scale, proven in a cluster in a box (test/cluster/box.ts): 32 built agents,
 * one per simulated node, and one simulated job of 256 ranks (8 per node) whose RAS listeners share
 * one job state and count every job-wide collection. Debian's Prometheus scrapes every agent with the
 * shipped rules; Debian's Alertmanager routes. Intervals are short (2 s) so the suite fits CI;
 * bench/cluster-box.ts prints the same figures for 64 or 128 nodes. The last suite gives a box of 8
 * nodes the job's NCCL debug logs (box-logs.ts) and checks the NCCL series budget in Prometheus,
 * healthy and hung (BOX_SERIES=1 bench/cluster-box.ts prints the figures at 32 nodes).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, sample, samplesOf } from "../helpers/agent-process.js";
import { collectionsPerInterval, jobSeries, startBox, type Box } from "./box.js";
import { gate } from "../deploy/binaries.js";
import { alertmanagerFile, rulesFile } from "../deploy/rules.js";
import {
  alertmanagerForTest,
  amAlerts,
  freePort,
  readText,
  rulesWithShortFor,
  startAlertmanager,
  startPrometheus,
  startWebhook,
  type Alertmanager,
  type Prometheus,
  type Webhook,
} from "../e2e/alerting/stack.js";

const tools = gate(["prometheus", "alertmanager"]);
const NODES = 32;
const INTERVAL_S = 2;
const THRESHOLD_S = 6;
const COMM = "0x49bbd7790311d5eb";

/** Node n's role as its agent says it. */
function roleOf(text: string): string | undefined {
  const line = samplesOf(text, "ringwatch_nccl_ras_role")[0];
  if (line === undefined) return undefined;
  const at = line.indexOf('role="');
  return at < 0 ? undefined : line.slice(at + 6, line.indexOf('"', at + 6));
}

/** One alert of Prometheus's /api/v1/alerts. */
interface PromAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: string;
}

describe.skipIf(tools.skip)(`cluster in a box: ${NODES} agents, one job of ${NODES * 8} ranks${tools.skip ? ` (SKIPPED: ${tools.message})` : ""}`, () => {
  let box: Box;
  let prom: Prometheus | undefined;
  let am: Alertmanager | undefined;
  let hook: Webhook | undefined;
  let startedAt = 0;

  beforeAll(async () => {
    startedAt = Date.now();
    // NCCL 2.32.3 (RAS diagnostics) is in the defect table: the operator opted in to timed queries.
    box = await startBox({
      nodes: NODES,
      ranksPerNode: 8,
      version: "2.32.3",
      diag: { eccUncorrected: { 77: 1 } },
      intervalS: INTERVAL_S,
      settleS: 1,
      thresholdS: THRESHOLD_S,
      flags: ["--collector.nccl.ras-poll-known-defective"],
    });
    hook = await startWebhook();
    am = await startAlertmanager(tools.path.alertmanager, alertmanagerForTest(readText(alertmanagerFile), hook.url));
    prom = await startPrometheus(tools.path.prometheus, {
      rules: rulesWithShortFor(readText(rulesFile), "1s"),
      targets: box.agents.map((a) => ({ url: a.url, labels: { node: `node-${a.node}` } })),
      alertmanager: am.url,
    });
  }, 240_000);

  afterAll(async () => {
    await prom?.stop();
    await am?.stop();
    await hook?.close();
    await box?.stop();
  }, 60_000);

  it("job start: at most one query per node; then node 0 (rank 0) alone asks, about one collection per interval", async () => {
    // Every agent learns its role from its own first query.
    await eventually(async () => {
      const roles = await Promise.all(box.agents.map(async (a) => roleOf(await box.scrape(a.node))));
      return roles.every((r) => r === "querier" || r === "listener") ? roles : undefined;
    }, 120_000);
    const roles = await Promise.all(box.agents.map(async (a) => roleOf(await box.scrape(a.node))));
    expect(roles[0]).toBe("querier");
    expect(roles.slice(1).every((r) => r === "listener")).toBe(true);
    const firstByNode = new Map<number, number>();
    for (const c of box.cluster.collections()) if (c.node !== 0) firstByNode.set(c.node, (firstByNode.get(c.node) ?? 0) + 1);
    // Each listener asked exactly once: its first query, which told it its role.
    expect([...firstByNode.values()].every((n) => n === 1)).toBe(true);
    expect(firstByNode.size).toBe(NODES - 1);

    // A healthy stretch of 10 intervals: node 0 alone, once an interval (±10 %).
    const from = Date.now();
    await new Promise((r) => setTimeout(r, 10 * INTERVAL_S * 1000));
    const healthy = collectionsPerInterval(box.cluster, from, Date.now(), INTERVAL_S);
    const nodes = new Set(
      box.cluster
        .collections()
        .filter((c) => c.t >= from)
        .map((c) => c.node),
    );
    console.log(`cluster box: healthy stretch ${JSON.stringify(healthy)}, asked by nodes ${[...nodes].join(",")}; start took ${Date.now() - startedAt} ms`);
    expect([...nodes]).toEqual([0]);
    expect(healthy.perInterval).toBeLessThanOrEqual(2);
    expect(healthy.perInterval).toBeGreaterThan(0.5);
    const t0 = await box.scrape(0);
    expect(sample(t0, 'ringwatch_nccl_ras_queries_total{result="ok",reason="periodic"}')).toBeGreaterThan(5);
    const t5 = await box.scrape(5);
    expect(sample(t5, 'ringwatch_nccl_ras_queries_total{result="ok",reason="periodic"}')).toBe(1);
    expect(sample(t5, 'ringwatch_nccl_ras_peer_checks_total{result="serving"}')).toBeGreaterThan(0);
    expect(sample(t5, `ringwatch_nccl_ras_role{comm_id="${COMM}",role="listener"}`)).toBe(1);
  }, 240_000);

  it("rank 77 (node 9) stops: the page names rank 77, node 127.0.1.10 and pid 4077 within threshold + 2 intervals", async () => {
    const p = prom;
    if (p === undefined) throw new Error("no Prometheus");
    const t0 = Date.now();
    await box.cluster.control({ hang: { rank: 77 } });
    const alert = await eventually(async () => {
      const r = await p.query('ALERTS{alertname="RingwatchNcclRasRankBehind",alertstate="firing"}');
      return r.length > 0 ? r : undefined;
    }, 60_000);
    const ms = Date.now() - t0;
    console.log(`cluster box: RingwatchNcclRasRankBehind firing ${ms} ms after the hang (threshold ${THRESHOLD_S} s, interval ${INTERVAL_S} s)`);
    expect(alert.map((a) => [a.metric.rank, a.metric.node, a.metric.pid, a.metric.comm_id])).toEqual([["77", "127.0.1.10", "4077", COMM]]);
    // Threshold + 2 intervals for the agent, plus Prometheus's 1 s scrape and 1 s evaluation, with room for a busy machine.
    expect(ms).toBeLessThan((THRESHOLD_S + 2 * INTERVAL_S + 5) * 1000);
    const routed = await eventually(async () => {
      const a = await amAlerts(am?.url ?? "");
      return a.some((x) => x.labels.alertname === "RingwatchNcclHang") ? a : undefined;
    }, 30_000);
    expect(routed.some((x) => x.labels.comm_id === COMM)).toBe(true);
    // The querier asked RAS diagnostics once for this hang, the only node of 32 that did: rank 77's ECC errors.
    const diag = await eventually(async () => {
      const r = await p.query('ringwatch_nccl_ras_diagnostic{check="ecc"}');
      return r.length > 0 ? r : undefined;
    }, 30_000);
    expect(diag.map((d) => [d.metric.node, d.metric.comm_id])).toEqual([["node-0", COMM]]);
    expect((await box.cluster.stats()).diagnostics).toBe(1);
    expect(
      box.cluster
        .collections()
        .filter((c) => c.command === "DIAGNOSTICS")
        .map((c) => c.node),
    ).toEqual([0]);
    await box.cluster.control({ resume: true });
  }, 120_000);

  it("the querier's agent is killed: node 1 takes over within two intervals", async () => {
    await box.kill(0);
    const t0 = Date.now();
    const took = await eventually(() => Promise.resolve(box.cluster.collections().find((x) => x.t >= t0 && x.node === 1)), 60_000);
    const ms = took.t - t0;
    console.log(`cluster box: takeover by node 1 ${ms} ms after node 0's agent was killed`);
    expect(ms).toBeLessThan(2 * INTERVAL_S * 1000 + 2000);
    // The job logs a collection when it starts; the agent counts its query once the answer is in.
    const t1 = await eventually(async () => {
      const t = await box.scrape(1);
      return samplesOf(t, "ringwatch_nccl_ras_queries_total").some((l) => l.includes('reason="takeover"') && !l.endsWith(" 0")) ? t : undefined;
    }, 20_000);
    expect(sample(t1, `ringwatch_nccl_ras_role{comm_id="${COMM}",role="querier"}`)).toBe(1);
    expect(sample(t1, 'ringwatch_nccl_ras_queries_total{result="ok",reason="takeover"}')).toBe(1);
    // Then node 1 alone asks.
    const from = Date.now();
    await new Promise((r) => setTimeout(r, 5 * INTERVAL_S * 1000));
    const after = box.cluster.collections().filter((c) => c.t >= from);
    expect(new Set(after.map((c) => c.node))).toEqual(new Set([1]));
  }, 120_000);
});

describe("cluster in a box: what is never asked", () => {
  let box: Box | undefined;
  afterAll(async () => {
    await box?.stop();
  }, 60_000);

  it("without the opt-in and with no log naming the NCCL version: no query before the settle time nor after it (an unknown version counts as gated)", async () => {
    box = await startBox({ nodes: 4, ranksPerNode: 8, version: "2.29.7", intervalS: 1, settleS: 3, thresholdS: 6, listen: false });
    const b = box;
    await new Promise((r) => setTimeout(r, 2000));
    expect(b.cluster.collections()).toEqual([]);
    await b.cluster.control({ listen: true });
    // The service is seen (the socket tables, every 2 s): the gate says why nothing is asked.
    const unknown = 'ringwatch_nccl_ras_version_gate{nccl_version="",decision="suspicion_only",defect="unknown_version"}';
    await eventually(async () => (sample(await b.scrape(0), unknown) === 1 ? true : undefined), 30_000);
    // Past the settle time and several intervals: no node asked to learn the version.
    await new Promise((r) => setTimeout(r, 8000));
    expect(b.cluster.collections()).toEqual([]);
    for (const a of b.agents) expect(sample(await b.scrape(a.node), unknown), `node ${a.node}`).toBe(1);
  }, 120_000);
});

const LOG_NODES = 8;
/** Rank 21: node 2 (127.0.1.3), pid 4021. */
const BEHIND = 21;

describe.skipIf(tools.skip)(
  `cluster in a box with the job's NCCL logs: ${LOG_NODES} agents, ${LOG_NODES * 8} ranks, Prometheus${tools.skip ? ` (SKIPPED: ${tools.message})` : ""}`,
  () => {
    let box: Box | undefined;
    let prom: Prometheus | undefined;
    afterAll(async () => {
      await prom?.stop();
      await box?.stop();
    }, 60_000);

    it("the series budget at cluster scale: healthy, no per-(rank, communicator) series and one hang_suspected per (node, communicator); hung, RingwatchNcclHang names the rank behind and the hung communicator's ranks have series", async () => {
      box = await startBox({
        nodes: LOG_NODES,
        ranksPerNode: 8,
        version: "2.29.7",
        intervalS: INTERVAL_S,
        settleS: 1,
        thresholdS: THRESHOLD_S,
        flags: ["--collector.nccl.ras-poll-known-defective"],
        logs: {},
      });
      const b = box;
      const logs = b.logs;
      if (logs === undefined) throw new Error("no logs");
      prom = await startPrometheus(tools.path.prometheus, {
        rules: rulesWithShortFor(readText(rulesFile), "1s"),
        targets: b.agents.map((a) => ({ url: a.url, labels: { node: `node-${a.node}` } })),
        alertmanager: `http://127.0.0.1:${await freePort()}`, // nothing listens: the alerts are read from Prometheus
      });
      const p = prom;
      const from = Date.now();
      const world = b.commId;

      // Every node publishes ringwatch_nccl_hang_suspected for each communicator it holds a rank of.
      await eventually(
        async () => {
          const r = await p.query("count by (node) (ringwatch_nccl_hang_suspected)");
          const byNode = new Map(r.map((x) => [x.metric.node, Number(x.value[1])]));
          return b.agents.every((a) => byNode.get(`node-${a.node}`) === logs.commsOn(a.node));
        },
        { timeoutMs: 180_000, everyMs: 500, what: "every node's communicators in Prometheus" },
      );
      // A healthy stretch: the job moves 3 steps on every node (the world communicator's slowest rank).
      const progress = async (): Promise<Map<string, number>> =>
        new Map((await p.query(`ringwatch_nccl_comm_slowest_rank_progress{comm_id="${world}"}`)).map((x) => [x.metric.node ?? "", Number(x.value[1])]));
      const p0 = await progress();
      expect(p0.size).toBe(LOG_NODES);
      await eventually(
        async () => {
          const p1 = await progress();
          return [...p0].every(([node, v]) => (p1.get(node) ?? 0) >= v + 3);
        },
        { timeoutMs: 60_000, everyMs: 500, what: "3 more steps on every node" },
      );
      const healthy = await jobSeries(p.url, { heldFrom: from });
      console.log(
        `cluster box with logs: healthy, ${healthy.now.total} NCCL series now (${healthy.now.perComm} per communicator, ${healthy.now.other} other), ${healthy.held?.total} held since Prometheus started`,
      );
      expect(healthy.now.perRankComm).toBe(0);
      expect(healthy.held?.perRankComm).toBe(0);
      expect(await p.query("count by (node, comm_id) (ringwatch_nccl_hang_suspected) > 1")).toEqual([]);
      expect(await p.query("ringwatch_nccl_hang_suspected == 1")).toEqual([]);
      expect((await p.query("count(count by (comm_id) (ringwatch_nccl_hang_suspected))"))[0]?.value[1]).toBe(String(logs.commCount));

      // Rank 21 stops before the world AllReduce the others enter, in the logs and in RAS.
      const h = await b.hang({ behind: BEHIND });
      expect(h.logs).toMatchObject({ rank: BEHIND, comm: "world", op: "AllReduce" });
      const alert = await eventually(
        async () => {
          const r = await p.query('ALERTS{alertname="RingwatchNcclHang",alertstate="firing",rank!=""}');
          return r.length > 0 ? r : undefined;
        },
        { timeoutMs: 90_000, everyMs: 250, what: "RingwatchNcclHang naming a rank" },
      );
      console.log(
        `cluster box with logs: RingwatchNcclHang naming rank ${alert[0]?.metric.rank} firing ${Date.now() - h.at} ms after the hang (threshold ${THRESHOLD_S} s)`,
      );
      expect(alert.map((a) => [a.metric.comm_id, a.metric.rank, a.metric.node, a.metric.pid])).toEqual([
        [world, String(BEHIND), "node-2", String(4000 + BEHIND)],
      ]);
      // Every other communicator that now reads as hung holds the stopped process and shows no rank
      // behind (its last collective was entered by all): its page names that process instead of
      // sending the on-call to the network.
      const secondPages = await eventually(
        async () => {
          const hungComms = (await p.query(`max by (comm_id) (ringwatch_nccl_hang_suspected{comm_id!="${world}"}) == 1`)).map((r) => r.metric.comm_id);
          const res = await fetch(`${p.url}/api/v1/alerts`);
          const { alerts } = ((await res.json()) as { data: { alerts: PromAlert[] } }).data;
          const hangs = alerts.filter((a) => a.labels.alertname === "RingwatchNcclHang" && a.state === "firing");
          const named = new Set(hangs.filter((a) => a.labels.rank !== undefined).map((a) => a.labels.comm_id));
          const rankless = hangs.filter((a) => a.labels.rank === undefined);
          return rankless.length === hungComms.filter((c) => !named.has(c)).length ? rankless : undefined;
        },
        { timeoutMs: 60_000, everyMs: 500, what: "a RingwatchNcclHang for each other hung communicator" },
      );
      console.log(`cluster box with logs: ${secondPages.length} other communicator(s) hung with no rank behind`);
      for (const a of secondPages) expect(a.annotations.description).toContain(`rank ${BEHIND} of ${world} (pid ${4000 + BEHIND} on node-2)`);
      // The hung communicator's ranks have their series again: every node shows its 8.
      const info = await eventually(
        async () => {
          const r = await p.query(`ringwatch_nccl_rank_info{comm_id="${world}"}`);
          return r.length === LOG_NODES * 8 ? r : undefined;
        },
        { timeoutMs: 60_000, everyMs: 500, what: "every rank_info of the hung communicator" },
      );
      expect(info.find((r) => r.metric.rank === String(BEHIND))?.metric).toMatchObject({ node: "node-2", pid: String(4000 + BEHIND) });
      const hung = await jobSeries(p.url);
      console.log(
        `cluster box with logs: hung, ${hung.now.total} NCCL series now (${hung.now.perRankComm} per (rank, communicator), ${hung.now.perComm} per communicator)`,
      );
      expect(hung.now.perRankComm).toBeGreaterThanOrEqual(LOG_NODES * 8);
    }, 420_000);
  },
);
