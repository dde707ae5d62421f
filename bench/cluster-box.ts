/**
 * The cluster in a box's figures (test/cluster/box.ts): collections per interval a job pays over a
 * healthy stretch, with one querier per job (--collector.nccl.ras-querier=elected) and with every node
 * asking (every-node, the rule before), and the takeover time when the querier's agent is killed.
 *   npm run bench:cluster                      32 nodes x 8 ranks
 *   BOX_NODES=128 npm run bench:cluster        128 nodes (about 9 GB of memory for the agents)
 *
 * BOX_SERIES=1 runs the series run instead: the box WITH the job's NCCL debug logs (box-logs.ts: per
 * node its 8 rank processes' files, NCCL 2.29.7, world + tp (8 contiguous) + dp (strided) and
 * BOX_COMMS more communicator families) and Debian's Prometheus scraping every agent (1 s) with the
 * shipped rules unchanged (`for:` included; no Alertmanager). Once every node publishes
 * ringwatch_nccl_hang_suspected for each of its communicators, a healthy stretch (BOX_HEALTHY_S, 20 s),
 * then the NCCL series Prometheus holds (now, and every series since Prometheus started, those that
 * went included); then the job hangs with rank BOX_BEHIND (77) behind (box.hang: the logs and RAS),
 * and it waits for RingwatchNcclHang naming that rank (/api/v1/alerts): the time from the hang to
 * pending and to firing, the alert's labels, and the series held during the hang.
 *   BOX_SERIES=1 npm run bench:cluster
 *   BOX_SERIES=1 BOX_AGENT=/tmp/rw-old/dist/agent/main.js node .bench/bench/cluster-box.js   an older build
 * It prints, in ms after the hang, when Prometheus first showed each step (the world communicator hung
 * on some node and on every node, the RAS and the node's own rank_behind, the rank's rank_info, the
 * alerts), and writes the figures as JSON to bench/out/cluster-box-series.json (BOX_OUT to change).
 * BOX_AGENT picks the agent build (default: this repository's dist/agent/main.js); the box passes only
 * flags that builds since the RAS querier understand. BOX_THRESHOLD_S (6) is the hang threshold.
 */
import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { collectionsPerInterval, describeSplit, jobSeries, startBox, type Box, type SeriesSplit } from "../test/cluster/box.js";
import { which } from "../test/deploy/binaries.js";
import { freePort, startPrometheus, type Prometheus } from "../test/e2e/alerting/stack.js";
import { memory } from "./proc.js";
import { agentMain, outDir, repoRoot } from "./paths.js";

const NODES = Number(process.env.BOX_NODES ?? 32);
const INTERVAL_S = Number(process.env.BOX_INTERVAL_S ?? 2);
const STRETCH = 10;
/** The box every figure uses: 8 ranks a node, NCCL 2.29.7 (opted in to timed queries), a 1 s settle. */
const BOX = { nodes: NODES, ranksPerNode: 8, version: "2.29.7", intervalS: INTERVAL_S, settleS: 1 } as const;

async function healthy(querier: "elected" | "every-node"): Promise<void> {
  const box = await startBox({ ...BOX, thresholdS: 6, flags: ["--collector.nccl.ras-poll-known-defective", `--collector.nccl.ras-querier=${querier}`] });
  try {
    // Past the job start: every node's first query, a settle and an interval.
    await new Promise((r) => setTimeout(r, (3 * INTERVAL_S + 2) * 1000));
    const from = Date.now();
    await new Promise((r) => setTimeout(r, STRETCH * INTERVAL_S * 1000));
    const f = collectionsPerInterval(box.cluster, from, Date.now(), INTERVAL_S);
    const nodes = new Set(
      box.cluster
        .collections()
        .filter((c) => c.t >= from)
        .map((c) => c.node),
    ).size;
    console.log(
      `${querier.padEnd(10)} ${NODES} nodes x 8 ranks, interval ${INTERVAL_S} s: ${f.perInterval.toFixed(2)} collections/interval (${f.collections} in ${STRETCH} intervals, ${f.messages} RAS messages), asked by ${nodes} node(s)`,
    );
    if (querier === "elected") {
      await box.kill(0);
      const t0 = Date.now();
      let took: number | undefined;
      while (took === undefined && Date.now() - t0 < 30_000) {
        await new Promise((r) => setTimeout(r, 100));
        took = box.cluster.collections().find((c) => c.t >= t0 && c.node !== 0)?.t;
      }
      console.log(`elected    takeover after the querier's agent was killed: ${took === undefined ? "none in 30 s" : `${took - t0} ms`}`);
    }
  } finally {
    await box.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// BOX_SERIES=1: the NCCL series the central Prometheus holds, healthy and hung

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface PromAlert {
  labels: Record<string, string>;
  state: "pending" | "firing" | "inactive";
  activeAt?: string;
}

async function alerts(prom: Prometheus): Promise<PromAlert[]> {
  const res = await fetch(`${prom.url}/api/v1/alerts`);
  const body = (await res.json()) as { data: { alerts: PromAlert[] } };
  return body.data.alerts;
}

async function count(prom: Prometheus, expr: string): Promise<number> {
  const r = await prom.query(`count(${expr})`);
  return Number(r[0]?.value[1] ?? 0);
}

async function agentsRssMB(box: Box): Promise<number> {
  let sum = 0;
  for (const a of box.agents) if (a.child.pid !== undefined && a.child.exitCode === null) sum += (await memory(a.child.pid).catch(() => ({ rssMB: 0 }))).rssMB;
  return sum;
}

function byName(s: SeriesSplit, n = 8): string {
  return s.byName
    .slice(0, n)
    .map(([name, c]) => `${name.replace(/^ringwatch_/, "")} ${c}`)
    .join(", ");
}

async function until<T>(what: string, timeoutMs: number, fn: () => Promise<T | undefined>): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(250);
  }
}

async function series(): Promise<void> {
  const prometheus = which("prometheus");
  if (prometheus === undefined) throw new Error("BOX_SERIES needs Debian's prometheus (apt-get install prometheus) on the PATH");
  const comms = Number(process.env.BOX_COMMS ?? 0);
  const thresholdS = Number(process.env.BOX_THRESHOLD_S ?? 6);
  const healthyS = Number(process.env.BOX_HEALTHY_S ?? 20);
  const agent = process.env.BOX_AGENT ?? agentMain;
  const behind = Number(process.env.BOX_BEHIND ?? Math.min(77, NODES * 8 - 1));
  const t0 = Date.now();
  const box = await startBox({ ...BOX, thresholdS, flags: ["--collector.nccl.ras-poll-known-defective"], logs: { comms }, agent });
  let prom: Prometheus | undefined;
  try {
    const logs = box.logs;
    if (logs === undefined) throw new Error("no logs");
    const perNode = Array.from({ length: NODES }, (_, n) => logs.commsOn(n));
    const expected = perNode.reduce((a, b) => a + b, 0);
    console.log(
      `series    ${NODES} nodes x 8 ranks, agent ${agent}, NCCL ${logs.version} logs, ${logs.commCount} communicators (${perNode[0]} per node: world, tp, ${perNode[0] !== undefined ? perNode[0] - 2 : "?"} more), RAS interval ${INTERVAL_S} s, hang threshold ${thresholdS} s; box up in ${Date.now() - t0} ms`,
    );
    prom = await startPrometheus(prometheus, {
      rules: readFileSync(join(repoRoot, "deploy/prometheus/ringwatch-rules.yml"), "utf8"),
      targets: box.agents.map((a) => ({ url: a.url, labels: { node: `node-${a.node}` } })),
      alertmanager: `http://127.0.0.1:${await freePort()}`,
    });
    const p = prom;
    const from = Date.now();
    const steadyMs = await until("every node's communicators in Prometheus", 300_000, async () =>
      (await count(p, "ringwatch_nccl_hang_suspected")) >= expected ? Date.now() - from : undefined,
    );
    console.log(`series    every node's ${expected} (node, communicator) pairs in Prometheus ${steadyMs} ms after it started; healthy for ${healthyS} s`);
    await sleep(healthyS * 1000);
    const healthy = await jobSeries(p.url, { heldFrom: from });
    const w = logs.stats();
    console.log(`healthy   now:  ${describeSplit(healthy.now)}; ${byName(healthy.now)}`);
    if (healthy.held) console.log(`healthy   held since Prometheus started: ${describeSplit(healthy.held)}`);
    console.log(
      `healthy   head block ${healthy.head.numSeries} series (every job); agents' RSS ${(await agentsRssMB(box)).toFixed(0)} MB; logs ${w.lines} lines, ${(w.bytes / 1e6).toFixed(1)} MB in ${(w.simMs / 1000).toFixed(0)} s (${(w.lines / (w.simMs / 1000)).toFixed(0)} lines/s)`,
    );

    const h = await box.hang({ behind });
    console.log(
      `hang      rank ${behind} (node ${Math.floor(behind / 8)}) behind: the logs stopped at step ${h.logs?.step} collective #${h.logs?.k} (${h.logs?.comm} ${h.logs?.op}) ${h.at - h.askedAt} ms after the ask; RAS too`,
    );
    // What Prometheus shows, polled until the page names the rank behind and every mark is set (or 60 s after).
    const world = box.commId;
    const node = `node-${Math.floor(behind / 8)}`;
    const marks = new Map<string, number>();
    const mark = (what: string, on: boolean): void => {
      if (on && !marks.has(what)) marks.set(what, Date.now() - h.at);
    };
    const watched: [string, string, number][] = [
      ["world hang_suspected 1 on some node", `ringwatch_nccl_hang_suspected{comm_id="${world}"} == 1`, 1],
      ["world hang_suspected 1 on every node", `ringwatch_nccl_hang_suspected{comm_id="${world}"} == 1`, NODES],
      [`another communicator's hang_suspected 1`, `ringwatch_nccl_hang_suspected{comm_id!="${world}"} == 1`, 1],
      [`ringwatch_nccl_ras_rank_behind of rank ${behind} (the querier's)`, `ringwatch_nccl_ras_rank_behind{rank="${behind}"} == 1`, 1],
      [`ringwatch_nccl_rank_behind of rank ${behind} on ${node}`, `ringwatch_nccl_rank_behind{rank="${behind}",node="${node}"} == 1`, 1],
      [`ringwatch_nccl_rank_info of rank ${behind} on ${node}`, `ringwatch_nccl_rank_info{comm_id="${world}",rank="${behind}",node="${node}"}`, 1],
      [`ringwatch_nccl_rank_info of all ${NODES * 8} ranks of world`, `ringwatch_nccl_rank_info{comm_id="${world}"}`, NODES * 8],
    ];
    const named = (a: PromAlert): boolean => a.labels.alertname === "RingwatchNcclHang" && a.labels.rank === String(behind);
    let firedAt: number | undefined;
    let firing: PromAlert[] = [];
    await until("RingwatchNcclHang naming the rank behind", 300_000, async () => {
      const [as, ...counts] = await Promise.all([alerts(p), ...watched.map(([, expr]) => count(p, expr))]);
      watched.forEach(([what, , want], i) => mark(what, (counts[i] ?? 0) >= want));
      const pages = as.filter((a) => a.labels.alertname === "RingwatchNcclHang");
      mark(`RingwatchNcclHang pending (any labels; first: rank ${pages[0]?.labels.rank ?? "none"})`, pages.length > 0);
      mark(
        "RingwatchNcclRasRankBehind firing",
        as.some((a) => a.labels.alertname === "RingwatchNcclRasRankBehind" && a.state === "firing"),
      );
      mark(`RingwatchNcclHang naming rank ${behind} pending`, as.some(named));
      if (firedAt === undefined && as.some((a) => named(a) && a.state === "firing")) {
        firedAt = Date.now();
        firing = as;
      }
      mark(`RingwatchNcclHang naming rank ${behind} firing`, firedAt !== undefined);
      const done = firedAt !== undefined && (marks.size >= watched.length + 4 || Date.now() - firedAt > 60_000);
      return done ? true : undefined;
    });
    console.log(`hang      after the hang (ms; threshold ${thresholdS} s, shipped rules: RingwatchNcclHang for: 15s):`);
    for (const [what, ms] of [...marks].sort((a, b) => a[1] - b[1])) console.log(`hang        ${String(ms).padStart(6)}  ${what}`);
    const notSeen = watched.map(([w]) => w).filter((w) => !marks.has(w));
    if (notSeen.length > 0) console.log(`hang        never (60 s after firing): ${notSeen.join("; ")}`);
    for (const a of firing.filter((x) => x.labels.alertname === "RingwatchNcclHang")) {
      const l = a.labels;
      console.log(
        `hang        RingwatchNcclHang ${a.state}: comm_id=${l.comm_id} rank=${l.rank ?? "-"} node=${l.node ?? "-"} pid=${l.pid ?? "-"} instance=${l.instance ?? "-"}`,
      );
    }
    const others = [...new Set(firing.filter((x) => x.labels.alertname !== "RingwatchNcclHang").map((x) => `${x.labels.alertname}(${x.state})`))];
    console.log(`hang        other alerts: ${others.join(", ") || "none"}`);
    // Each node's hang threshold for the world communicator (the logs': max(flag, 10 x the p99 gap between its advances)).
    const th = (await p.query(`ringwatch_nccl_hang_threshold_seconds{comm_id="${world}"}`)).map((r) => Number(r.value[1]));
    if (th.length > 0) console.log(`hang        world's hang threshold on the nodes: ${Math.min(...th)} to ${Math.max(...th)} s (${th.length} nodes)`);
    const hung = await jobSeries(p.url, { heldFrom: h.at });
    const run = await jobSeries(p.url, { heldFrom: from });
    console.log(`hung      now:  ${describeSplit(hung.now)}; ${byName(hung.now)}`);
    if (hung.held) console.log(`hung      held since the hang: ${describeSplit(hung.held)}`);
    if (run.held) console.log(`run       held since Prometheus started (healthy + hung): ${describeSplit(run.held)}`);
    console.log(`hung      head block ${hung.head.numSeries} series (every job); agents' RSS ${(await agentsRssMB(box)).toFixed(0)} MB`);
    const out = process.env.BOX_OUT ?? join(outDir, "cluster-box-series.json");
    await mkdir(dirname(out), { recursive: true });
    await writeFile(
      out,
      `${JSON.stringify(
        {
          nodes: NODES,
          agent,
          communicators: logs.commCount,
          thresholdS,
          healthy: { now: healthy.now, held: healthy.held, head: healthy.head },
          hung: { now: hung.now, held: hung.held, head: hung.head },
          run: run.held,
          hang: { rank: behind, askMs: h.at - h.askedAt, logs: h.logs, marksMs: Object.fromEntries(marks) },
          alerts: firing.filter((x) => x.labels.alertname === "RingwatchNcclHang").map((a) => ({ state: a.state, ...a.labels })),
        },
        null,
        2,
      )}\n`,
    );
    console.log(`series    written to ${out}`);
  } finally {
    await prom?.stop();
    await box.stop();
  }
}

if (process.env.BOX_SERIES === "1") await series();
else {
  await healthy("elected");
  await healthy("every-node");
}
