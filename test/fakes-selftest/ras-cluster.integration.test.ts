/**
 * test/fakes/nccl-ras --cluster: one process serving a RAS client listener per simulated node (127.0.1.x),
 * one shared job: reports, progress, hang, kill (PEER_DEAD to MONITOR clients), version change, and the count
 * of collections and of the RAS-network messages they cost (checked against a message-by-message replay of
 * NCCL's RAS collective, src/ras/collectives.cc).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { queryRas } from "../../collectors/nccl/ras/client.js";
import { collectionMessages, countsAfter } from "../fakes/ras/cluster-job.mjs";
import { parseDiagnostics } from "../../collectors/nccl/ras/parse-diag.js";
import { renderDiagnostics, renderEvent, renderText, uniformJob, withMissing } from "../fakes/ras/render.mjs";
import { startRasCluster, type ClusterSpec, type RasCluster } from "../helpers/ras-cluster.js";
import { openRawRas, type RawRas } from "../helpers/ras-raw-client.js";

const started: RasCluster[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((c) => c.stop()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const PID_BASE = 5000;
const base: ClusterSpec = { version: "2.29.7", nodes: 4, ranksPerNode: 8, port: 0, pidBase: PID_BASE, stepMs: 40 };

async function cluster(over: Partial<ClusterSpec> = {}): Promise<RasCluster> {
  const dir = mkdtempSync(join(tmpdir(), "rw-rascluster-"));
  dirs.push(dir);
  const c = await startRasCluster(dir, { ...base, ...over });
  started.push(c);
  return c;
}

// ---- clients ------------------------------------------------------------------------------------------------

interface JsonRank {
  rank: number;
  host: string;
  pid: number;
  cuda_dev: number;
  nvml_dev: number;
  status: { init_state: number };
  collective_counts: Record<string, number>;
}
interface JsonMissing {
  rank: number;
  host: string;
  pid: number;
  status: { unresponsive: boolean; considered_dead: boolean };
}
interface JsonReport {
  nccl_version: string;
  communicators: { hash: string; size: number; ranks: JsonRank[]; missing_ranks: JsonMissing[] }[];
}

/** The production client's query (CLIENT PROTOCOL 2, TIMEOUT 5, SET FORMAT json when asked, STATUS). */
async function status(c: RasCluster, node: number, json: boolean): Promise<{ text: string; format: "json" | "text" }> {
  const r = await queryRas({ host: c.hostOf(node), port: c.portOf(node), legTimeoutSeconds: 5, deadlineMs: 30_000, maxBytes: 8 << 20, json });
  if (!r.ok) throw new Error(`STATUS on node ${node}: ${r.result}: ${r.reason}`);
  return r;
}

async function jsonStatus(c: RasCluster, node: number): Promise<JsonReport> {
  const r = await status(c, node, true);
  expect(r.format).toBe("json");
  return JSON.parse(r.text) as JsonReport;
}

const countsBy = (report: JsonReport, op: string): Map<number, number> =>
  new Map(report.communicators[0]?.ranks.map((r) => [r.rank, r.collective_counts[op] ?? -1]) ?? []);

/** A bare RAS client connection. */
const raw = (host: string, port: number): Promise<RawRas> => openRawRas(port, host);

/** Resolves with the error code of a connection attempt ("" if it connected). */
function connectError(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, host);
    s.once("connect", () => {
      s.destroy();
      resolve("");
    });
    s.once("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

/** A port free on every address given (bound and released). */
async function freePort(hosts: string[]): Promise<number> {
  for (;;) {
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, hosts[0], r));
    const a = srv.address();
    await new Promise<void>((r) => srv.close(() => r()));
    if (a === null || typeof a === "string") throw new Error("no port");
    const results = await Promise.all(hosts.slice(1).map((h) => connectError(h, a.port)));
    if (results.every((e) => e === "ECONNREFUSED")) return a.port;
  }
}

// ---- the message-count formula, replayed ----------------------------------------------------------------------

/**
 * NCCL's RAS_COLL_COMMS collective among `n` processes (ring order), `dead` skipped, started at `root`,
 * replayed message by message with the messages delivered in the order `pick` chooses: links per
 * src/ras/peers.cc rasLinkCalculatePeer (next +1, prev -1, dead peers skipped, -1 if it comes back to itself),
 * one connection per peer pair sent to once (linkFlag); a request seen before (finished or ongoing) is answered
 * at once with an empty response, a new one is forwarded on every connection but the one it came from and
 * answered once every forwarded one was (src/ras/collectives.cc rasNetSendCollReq, rasMsgHandleCollReq,
 * rasMsgHandleCollResp, rasCollReadyResp). Returns the messages sent, and who took part.
 */
function replayCollective(n: number, dead: Set<number>, root: number, pick: (k: number) => number): { messages: number; reached: number; rootDone: boolean } {
  const linkPeer = (p: number, dir: number): number => {
    let q = (p + dir + n) % n;
    while (q !== p && dead.has(q)) q = (q + dir + n) % n;
    return q !== p ? q : -1;
  };
  const conns = (p: number): number[] => [...new Set([linkPeer(p, 1), linkPeer(p, -1)].filter((q) => q !== -1))];
  type Msg = { kind: "req" | "resp"; from: number; to: number };
  const queue: Msg[] = [];
  let messages = 0;
  const send = (m: Msg): void => {
    queue.push(m);
    messages++;
  };
  const finished = new Set<number>();
  const ongoing = new Map<number, { from: number; sent: number; recv: number }>();
  let rootDone = false;
  const forward = (p: number, from: number): void => {
    const to = conns(p).filter((q) => q !== from);
    ongoing.set(p, { from, sent: to.length, recv: 0 });
    for (const q of to) send({ kind: "req", from: p, to: q });
    if (to.length === 0) ready(p);
  };
  const ready = (p: number): void => {
    const o = ongoing.get(p);
    if (!o) throw new Error(`${p} is not in the collective`);
    ongoing.delete(p);
    if (o.from === -1) rootDone = true;
    else {
      send({ kind: "resp", from: p, to: o.from });
      finished.add(p);
    }
  };
  forward(root, -1);
  while (queue.length > 0) {
    const [m] = queue.splice(pick(queue.length), 1);
    if (m === undefined) break;
    if (m.kind === "req") {
      if (finished.has(m.to) || ongoing.has(m.to) || (m.to === root && rootDone)) send({ kind: "resp", from: m.to, to: m.from });
      else forward(m.to, m.from);
    } else {
      const o = ongoing.get(m.to);
      if (!o) throw new Error(`a response for ${m.to}, which waits for none`);
      if (++o.recv === o.sent) ready(m.to);
    }
  }
  return { messages, reached: finished.size + 1, rootDone };
}

/** A small deterministic PRNG (mulberry32). */
function prng(seed: number): (k: number) => number {
  let a = seed >>> 0;
  return (k) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * k);
  };
}

describe("the RAS collective's message count (cluster-job.mjs collectionMessages)", () => {
  it("matches a message-by-message replay of NCCL's collective, in any delivery order, dead processes skipped", () => {
    expect([1, 2, 3, 4, 24, 32, 256].map(collectionMessages)).toEqual([0, 2, 8, 10, 50, 66, 514]);
    for (let n = 1; n <= 40; n++) {
      for (let seed = 1; seed <= 12; seed++) {
        const pick = prng(n * 1000 + seed);
        const r = replayCollective(n, new Set(), pick(n), pick);
        expect(r, `n=${n} seed=${seed}`).toEqual({ messages: collectionMessages(n), reached: n, rootDone: true });
      }
    }
    // 4 nodes x 8 ranks with node 3 (ranks 24..31) or node 1 (8..15) dead: the ring closes over the living.
    for (const deadNode of [1, 3]) {
      const dead = new Set(Array.from({ length: 8 }, (_, i) => deadNode * 8 + i));
      for (let seed = 1; seed <= 20; seed++) {
        const pick = prng(seed);
        const root = [0, 2, 16, 23].find((r) => !dead.has(r)) ?? 0;
        expect(replayCollective(32, dead, root, pick)).toEqual({ messages: collectionMessages(24), reached: 24, rootDone: true });
      }
    }
  });
});

describe("nccl-ras --cluster", { timeout: 120_000 }, () => {
  it("4 nodes x 8 ranks: STATUS on node 2 reports all 32 ranks under 127.0.1.1..4; counts grow; collections counted", async () => {
    const c = await cluster();
    expect([0, 1, 2, 3].map((n) => c.addressOf(n))).toEqual([0, 1, 2, 3].map((n) => `127.0.1.${n + 1}:${c.portOf(n)}`));
    const first = await jsonStatus(c, 2);
    expect(first.nccl_version).toBe("2.29.7");
    const comm = first.communicators[0];
    expect(comm?.hash).toBe("0x49bbd7790311d5eb");
    expect(comm?.size).toBe(32);
    expect(comm?.missing_ranks).toEqual([]);
    expect(comm?.ranks.map((r) => [r.rank, r.host, r.pid, r.cuda_dev, r.nvml_dev])).toEqual(
      Array.from({ length: 32 }, (_, r) => [r, `127.0.1.${Math.floor(r / 8) + 1}`, PID_BASE + r, r % 8, r % 8]),
    );
    const ar0 = countsBy(first, "AllReduce").get(0) ?? -1;
    // One shared clock: every rank at the same count, AllGather every 5th step.
    expect(new Set(countsBy(first, "AllReduce").values())).toEqual(new Set([ar0]));
    expect(new Set(countsBy(first, "AllGather").values())).toEqual(new Set([countsAfter(ar0).AllGather]));
    let later = first;
    await expect
      .poll(
        async () => {
          later = await jsonStatus(c, 2);
          return countsBy(later, "AllReduce").get(31) ?? -1;
        },
        { timeout: 30_000, interval: 100 },
      )
      .toBeGreaterThan(ar0 + 5);
    expect(countsBy(later, "AllGather").get(31)).toBe(countsAfter(countsBy(later, "AllReduce").get(31) ?? 0).AllGather);
    // A VERBOSE STATUS in text on node 0 is a collection too.
    const v = await raw(c.hostOf(0), c.portOf(0));
    v.sock.write("VERBOSE STATUS\n");
    expect(await v.closed).toContain("NCCL version 2.29.7 compiled with CUDA");

    const log = c.collections();
    expect(log.length).toBeGreaterThanOrEqual(3);
    expect(log.slice(0, -1).every((l) => l.node === 2 && l.command === "STATUS" && l.format === "json" && l.messages === 66)).toBe(true);
    expect(log.at(-1)).toMatchObject({ node: 0, command: "VERBOSE STATUS", format: "text", messages: 66 });
    expect(log.every((l, i) => i === 0 || l.t >= (log[i - 1]?.t ?? 0))).toBe(true);
    const s = await c.stats();
    expect(s).toEqual({
      collections: log.length,
      byNode: { "0": 1, "1": 0, "2": log.length - 1, "3": 0 },
      messages: 66 * log.length,
      statusByFormat: { text: 1, json: log.length - 1 },
      diagnostics: 0,
      broadcasts: 0,
      profilerMask: 0,
    });
  });

  it("hang rank 13: it stays one AllReduce behind and every count stands; resume: all progress, 13 still behind", async () => {
    const c = await cluster();
    await expect.poll(async () => countsBy(await jsonStatus(c, 0), "AllReduce").get(0), { timeout: 30_000, interval: 50 }).toBeGreaterThanOrEqual(2);
    await c.control({ hang: { rank: 13 } });
    const a = await jsonStatus(c, 1);
    const ar = countsBy(a, "AllReduce");
    const top = ar.get(0) ?? -1;
    expect(ar.get(13)).toBe(top - 1);
    expect([...ar].filter(([r]) => r !== 13).every(([, n]) => n === top)).toBe(true);
    expect(countsBy(a, "AllGather").get(13)).toBe(countsAfter(top - 1).AllGather);
    await new Promise((r) => setTimeout(r, 10 * (base.stepMs ?? 40)));
    const b = await jsonStatus(c, 3);
    expect(countsBy(b, "AllReduce")).toEqual(ar);
    expect(countsBy(b, "AllGather")).toEqual(countsBy(a, "AllGather"));
    // The text report is NCCL's, byte for byte: rank 13 listed behind on node 127.0.1.2.
    const text = (await status(c, 1, false)).text;
    const job = uniformJob({
      version: "2.29.7",
      nodes: 4,
      ranksPerNode: 8,
      pidBase: PID_BASE,
      hostOf: (n) => `127.0.1.${n + 1}`,
      countsOf: (r) => countsAfter(r === 13 ? top - 1 : top),
    });
    expect(text).toBe(renderText(job));
    expect(text).toContain(`  Rank 13 has launched up to operation ${top - 1} -- GPU 5 managed by process ${PID_BASE + 13} on node 127.0.1.2\n`);

    await c.control({ resume: true });
    let after = b;
    await expect
      .poll(
        async () => {
          after = await jsonStatus(c, 0);
          return countsBy(after, "AllReduce").get(0) ?? -1;
        },
        { timeout: 30_000, interval: 50 },
      )
      .toBeGreaterThan(top + 2);
    const arAfter = countsBy(after, "AllReduce");
    expect(arAfter.get(13)).toBe((arAfter.get(0) ?? 0) - 1);
    expect(arAfter.get(31)).toBe(arAfter.get(0));
  });

  it("kill node 3: its listener refuses, the others report ranks 24-31 dead, MONITOR clients get PEER_DEAD; 50 messages a collection", async () => {
    const c = await cluster();
    const monJson = await raw(c.hostOf(0), c.portOf(0));
    expect(await monJson.ask("SET FORMAT json\n", "OK\n")).toBe("OK\n");
    expect(await monJson.ask("MONITOR lifecycle\n", "OK\n")).toBe("OK\n");
    const monText = await raw(c.hostOf(1), c.portOf(1));
    expect(await monText.ask("MONITOR\n", "OK\n")).toBe("OK\n");
    const plain = await raw(c.hostOf(2), c.portOf(2));
    expect(await plain.ask("CLIENT PROTOCOL 2\n", "SERVER PROTOCOL 2\n")).toBe("SERVER PROTOCOL 2\n");
    const onDead = await raw(c.hostOf(3), c.portOf(3));
    expect(await onDead.ask("MONITOR\n", "OK\n")).toBe("OK\n");
    await jsonStatus(c, 3); // a collection while all 32 live

    const [j0, t0, p0] = [monJson.text().length, monText.text().length, plain.text().length];
    await c.control({ kill: { node: 3 } });
    expect(await connectError(c.hostOf(3), c.portOf(3))).toBe("ECONNREFUSED");
    expect(await onDead.closed).toBe("OK\n");

    // One PEER_DEAD per dead process, in each client's format, as rasClientsNotifyEvent writes it (the ack
    // comes once they are written; reading them may take a moment longer).
    const events = Array.from({ length: 8 }, (_, i) => ({ type: "PEER_DEAD", peer: { host: "127.0.1.4", pid: PID_BASE + 24 + i, cudaDevs: [i] } }));
    const time = (): string => /^\[([^\]]+)\]/.exec(monText.text().slice(t0))?.[1] ?? "";
    await expect.poll(() => monText.text().slice(t0), { timeout: 20_000 }).toBe(events.map((e) => renderEvent(e, { time: time() })).join(""));
    expect(monText.text().slice(t0)).toContain(`PEER_DEAD: Process ${PID_BASE + 31} on node 127.0.1.4 managing GPU 7 \n`);
    await expect.poll(() => monJson.text().slice(j0), { timeout: 20_000 }).toBe(events.map((e) => renderEvent(e, { format: "json", time: time() })).join(""));
    expect(plain.text().slice(p0)).toBe("");

    const report = await jsonStatus(c, 1);
    const comm = report.communicators[0];
    expect(comm?.size).toBe(32);
    expect(comm?.ranks.map((r) => r.rank)).toEqual(Array.from({ length: 24 }, (_, r) => r));
    expect(comm?.missing_ranks.map((m) => [m.rank, m.host, m.pid, m.status.unresponsive, m.status.considered_dead])).toEqual(
      Array.from({ length: 8 }, (_, i) => [24 + i, "127.0.1.4", PID_BASE + 24 + i, true, true]),
    );
    const text = (await status(c, 0, false)).text;
    expect(text).toContain("DEAD\n  8 job processes are considered dead (unreachable via the RAS network)\n");
    expect(text).toContain("#0-0 (49bbd7790311d5eb) INCOMPLETE\n  Missing communicator data from 8 ranks\n");

    expect(c.collections().map((l) => [l.node, l.format, l.messages])).toEqual([
      [3, "json", collectionMessages(32)],
      [1, "json", collectionMessages(24)],
      [0, "text", collectionMessages(24)],
    ]);
    expect(await c.stats()).toMatchObject({ collections: 3, byNode: { "0": 1, "1": 1, "2": 0, "3": 1 }, messages: 66 + 50 + 50 });
  });

  it("a 2.27.3 job (version control line): a new job, every node up again; text only, no MONITOR; collections counted as text", async () => {
    const c = await cluster({ gatherDelayMs: 150 });
    await c.control({ kill: { node: 1 } });
    await c.control({ version: "2.27.3" });
    // A new job: node 1 runs again, on the same port.
    expect(await connectError(c.hostOf(1), c.portOf(1))).toBe("");
    const r = await raw(c.hostOf(2), c.portOf(2));
    expect(await r.ask("SET FORMAT json\n", "ERROR: Unknown command SET FORMAT json\n")).toBe("ERROR: Unknown command SET FORMAT json\n");
    expect(await r.ask("MONITOR\n", "ERROR: Unknown command MONITOR\n")).toBe("ERROR: Unknown command MONITOR\n");
    r.sock.destroy();
    const t0 = Date.now();
    const q = await status(c, 2, true);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    expect(q.format).toBe("text");
    expect(q.text).toMatch(/^NCCL version 2\.27\.3 compiled with CUDA 12\.6\n/);
    expect(q.text).toContain("Communicators... (0.15s)\n");
    expect(q.text).toContain(
      "  Nodes  Processes         GPUs  Processes     GPUs\n(total)   per node  per process    (total)  (total)\n      4          8            1         32       32\n",
    );
    expect(c.collections().map((l) => [l.node, l.format, l.messages])).toEqual([[2, "text", 66]]);
    expect((await c.stats()).statusByFormat).toEqual({ text: 1, json: 0 });
  });

  it("listen false: nothing listens until {listen: true}; initialising ranks report INIT and launch nothing", async () => {
    const hosts = [0, 1, 2, 3].map((n) => `127.0.1.${n + 1}`);
    const port = await freePort(hosts);
    const c = await cluster({ listen: false, port });
    expect(await connectError(c.hostOf(0), port)).toBe("ECONNREFUSED");
    await c.control({ initialising: true });
    await c.control({ listen: true });
    expect(c.addressOf(3)).toBe(`127.0.1.4:${port}`);
    const a = await jsonStatus(c, 3);
    expect(a.communicators[0]?.ranks.every((r) => r.status.init_state === 7 && r.collective_counts.AllReduce === 0)).toBe(true);
    expect((await status(c, 0, false)).text).toMatch(/^ {4}0 +1 +4 +8 +32 +32 +INIT +OK$/m);
    await c.control({ initialising: false });
    await expect.poll(async () => countsBy(await jsonStatus(c, 0), "AllReduce").get(5), { timeout: 30_000, interval: 50 }).toBeGreaterThan(0);
    const b = await jsonStatus(c, 0);
    expect(b.communicators[0]?.ranks.every((r) => r.status.init_state === 0)).toBe(true);
  });
});

describe("nccl-ras --cluster, NCCL 2.32.3: DIAGNOSTICS collections and CONTROL PROFILER_MASK broadcasts", { timeout: 120_000 }, () => {
  const job32 = (): ReturnType<typeof uniformJob> =>
    uniformJob({ version: "2.32.3", nodes: 4, ranksPerNode: 8, pidBase: PID_BASE, hostOf: (n) => `127.0.1.${n + 1}` });

  it("a run on node 1 is a job-wide collection (logged DIAGNOSTICS, 66 messages); BUSY on the same node only; kill: incomplete, 24 peers", async () => {
    const c = await cluster({ version: "2.32.3", gatherDelayMs: 300, diag: { eccUncorrected: { 11: 2 } } });
    const a = await raw(c.hostOf(1), c.portOf(1));
    a.sock.write("DIAGNOSTICS\n");
    await new Promise((r) => setTimeout(r, 50));
    const busy = await raw(c.hostOf(1), c.portOf(1));
    busy.sock.write("DIAGNOSTICS\n");
    expect(await busy.closed).toBe("BUSY: diagnostics already in progress\n");
    // Another node's listener (NCCL: another process) runs its own, concurrently.
    const other = await raw(c.hostOf(2), c.portOf(2));
    other.sock.write("DIAGNOSTICS\n");
    const want = { ...job32(), diag: { eccUncorrected: { 11: 2 } } };
    const textA = await a.closed;
    expect(textA).toBe(renderDiagnostics(want, { host: "127.0.1.2", pid: PID_BASE + 8, ms: 300 }));
    expect(textA).toContain(
      "127.0.1.2:5008 NCCL DIAG [INFO] ECC: uncorrected volatile errors on rank(s) {11} (worst=2) across 32 ranks in comm 0x49bbd7790311d5eb\n",
    );
    expect(textA).toContain("NCCL DIAG [OK]   Xid/SXid: no events requiring immediate attention across 4 hosts\n");
    expect(await other.closed).toBe(renderDiagnostics(want, { host: "127.0.1.3", pid: PID_BASE + 16, ms: 300 }));
    expect(c.collections().map((l) => [l.node, l.command, l.format, l.messages])).toEqual([
      [1, "DIAGNOSTICS", "text", 66],
      [2, "DIAGNOSTICS", "text", 66],
    ]);
    expect(await c.stats()).toMatchObject({ collections: 2, diagnostics: 2, messages: 132, statusByFormat: { text: 0, json: 0 }, broadcasts: 0 });

    await c.control({ kill: { node: 3 } });
    const d = await raw(c.hostOf(0), c.portOf(0));
    d.sock.write("DIAGNOSTICS\n");
    const after = await d.closed;
    expect(after).toBe(
      renderDiagnostics(withMissing(want, 0, [24, 25, 26, 27, 28, 29, 30, 31], { dead: true }), { host: "127.0.1.1", pid: PID_BASE, ms: 300 }),
    );
    expect(after).toContain(
      "127.0.1.1:5000 NCCL DIAG [INFO] ECC: diagnostics incomplete, gathered 24/32 ranks in comm 0x49bbd7790311d5eb/0x6b8c2f3d1a4e5b70/0x1f2e3d4c5b6a7988\n",
    );
    expect(after).toContain("NCCL DIAG [OK]   Xid/SXid: no events requiring immediate attention across 3 hosts\n");
    expect(parseDiagnostics(after).completed).toEqual({ ms: 300, peers: 24 });
    expect(c.collections().at(-1)).toMatchObject({ node: 0, command: "DIAGNOSTICS", messages: collectionMessages(24) });
  });

  it("CONTROL PROFILER_MASK: OK, the connection stays open, one broadcast each, the job-wide mask in stats; a new job starts at its default again", async () => {
    const c = await cluster({ version: "2.32.3", inspector: true });
    expect(await c.stats()).toMatchObject({ broadcasts: 0, profilerMask: 0x46 });
    const r = await raw(c.hostOf(2), c.portOf(2));
    expect(await r.ask("CONTROL PROFILER_MASK none\n", "OK\n")).toBe("OK\n");
    expect(await c.stats()).toMatchObject({ broadcasts: 1, profilerMask: 0, collections: 0 });
    expect(await r.ask("CONTROL PROFILER_MASK coll, kernelch\n", "ERROR: Invalid profiler mask value 'coll, kernelch'\n")).toBe(
      "ERROR: Invalid profiler mask value 'coll, kernelch'\n",
    );
    expect(await r.ask("control profiler_mask coll,p2p,kernelch\n", "OK\n")).toBe("OK\n");
    expect(await c.stats()).toMatchObject({ broadcasts: 2, profilerMask: 0x46 });
    const s = await raw(c.hostOf(0), c.portOf(0));
    expect(await s.ask("CONTROL PROFILER_MASK all\n", "OK\n")).toBe("OK\n");
    expect(await c.stats()).toMatchObject({ broadcasts: 3, profilerMask: 0x7fff });
    // TIMEOUT is strtod's on 2.32.3.
    expect(await s.ask("TIMEOUT 2.5\n", "OK\n")).toBe("OK\n");
    await c.control({ version: "2.32.3" });
    expect(await c.stats()).toMatchObject({ broadcasts: 3, profilerMask: 0x46 });
    await c.control({ version: "2.30.7" });
    const old = await raw(c.hostOf(0), c.portOf(0));
    expect(await old.ask("CONTROL PROFILER_MASK none\n", "ERROR: Unknown command CONTROL PROFILER_MASK none\n")).toBe(
      "ERROR: Unknown command CONTROL PROFILER_MASK none\n",
    );
    expect(await old.ask("DIAGNOSTICS\n", "ERROR: Unknown command DIAGNOSTICS\n")).toBe("ERROR: Unknown command DIAGNOSTICS\n");
    expect(await c.stats()).toMatchObject({ broadcasts: 3, diagnostics: 0, collections: 0 });
  });
});
