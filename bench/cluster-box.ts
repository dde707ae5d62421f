/**
 * The cluster in a box's figures (test/cluster/box.ts): collections per interval a job pays over a
 * healthy stretch, with one querier per job (--collector.nccl.ras-querier=elected) and with every node
 * asking (every-node, the rule before), and the takeover time when the querier's agent is killed.
 *   npm run bench:cluster                      32 nodes x 8 ranks
 *   BOX_NODES=128 npm run bench:cluster        128 nodes (about 9 GB of memory for the agents)
 */
import { collectionsPerInterval, startBox } from "../test/cluster/box.js";

const NODES = Number(process.env.BOX_NODES ?? 32);
const INTERVAL_S = Number(process.env.BOX_INTERVAL_S ?? 2);
const STRETCH = 10;

async function healthy(querier: "elected" | "every-node"): Promise<void> {
  const box = await startBox({
    nodes: NODES,
    ranksPerNode: 8,
    version: "2.29.7",
    intervalS: INTERVAL_S,
    settleS: 1,
    thresholdS: 6,
    flags: ["--collector.nccl.ras-poll-known-defective", `--collector.nccl.ras-querier=${querier}`],
  });
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

await healthy("elected");
await healthy("every-node");
