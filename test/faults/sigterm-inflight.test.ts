/**
 * SIGTERM while scrapes are in flight and tools hang (ignoring SIGTERM themselves): scrapes issued
 * just before the signal and two clients reading a 1 MB exposition slowly all get status 200 and
 * the whole body; an idle keep-alive connection is closed; every child is gone; the agent exits 0
 * within 5 s.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processesWithEnv, sample, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { manyLogs } from "./lib/many-logs.js";
import { timedGet, type TimedScrape } from "./lib/scrape.js";
import { idleKeepAlive, slowGet, type ClientResult } from "./lib/slow-client.js";
import { childPids } from "./lib/proc.js";
import { killTokened, makeRig, newToken, rigEnv, rigFlags, tokenEnv, type Rig } from "./lib/tool-rig.js";

const RANKS = 1800;
const QUICK = 6;
let rig: Rig;
let token: string;
let agent: RunningAgent | undefined;
let size = 0;
let childrenBefore: number[] = [];
let quick: TimedScrape[] = [];
let slow: ClientResult[] = [];
let idleClosed = false;
let stop: { code: number | null; ms: number };
let leftovers: number[] = [];

beforeAll(async () => {
  rig = makeRig();
  const logs = manyLogs(rig.ncclDir);
  logs.write(0, RANKS); // 1,800 ranks, each rank's series shown: a 1 MB exposition, more than the socket buffers of a client that reads slowly hold
  token = newToken();
  const env = rigEnv({ ...tokenEnv(token), FAULT_IP: "hang-hard", FAULT_LSMOD: "hang-hard", FAULT_NVSMI_DMON: "hang-hard" });
  agent = await startAgent(
    [
      ...rigFlags(rig),
      "--collector.nccl.max-communicators=4096",
      // Every rank's series, as a small cluster may choose: the exposition this test needs is big.
      "--collector.nccl.rank-series=always",
      "--collector.nccl.max-series=100000",
      "--collector.timeout=10s",
    ],
    env,
    30_000,
  );
  const a = agent;
  // Wait until the exposition is big and the hanging tools are running.
  for (let i = 0; i < 120; i++) {
    const s = await timedGet(a.url + "/metrics");
    size = s.body.length;
    childrenBefore = childPids(a.child.pid as number);
    if (sample(s.body, "ringwatch_nccl_log_files") === RANKS && size > 900_000 && childrenBefore.length >= 3) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const idle = await idleKeepAlive(a.url + "/healthz");
  const slowOnes = [slowGet(a.url + "/metrics", 40), slowGet(a.url + "/metrics", 40)];
  await new Promise((r) => setTimeout(r, 200)); // the slow ones are reading
  const quickOnes = Array.from({ length: QUICK }, () => timedGet(a.url + "/metrics"));
  const stopping = a.stop("SIGTERM"); // same tick: the requests are on their way
  [stop, quick, slow] = await Promise.all([stopping, Promise.all(quickOnes), Promise.all(slowOnes)]);
  idleClosed = await Promise.race([idle.closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 1000))]);
  idle.agent.destroy();
  await new Promise((r) => setTimeout(r, 500));
  leftovers = await processesWithEnv(token);
  console.log(
    `SIGTERM: exit ${stop.code} after ${stop.ms} ms; exposition ${(size / 1e6).toFixed(1)} MB; slow readers took ${slow.map((s) => s.ms.toFixed(0)).join(", ")} ms; quick scrapes ${quick.map((s) => s.ms.toFixed(0)).join(", ")} ms`,
  );
}, 120_000);

afterAll(async () => {
  await killTokened(token);
  rig.remove();
});

const complete = (body: string): boolean => body.includes("ringwatch_build_info") && body.endsWith("\n") && body.includes(`ringwatch_nccl_log_files ${RANKS}`);

describe("SIGTERM with scrapes in flight and hanging tools", () => {
  it("had a 1 MB exposition and hanging children when the signal came", () => {
    expect(size).toBeGreaterThan(900_000);
    expect(childrenBefore.length).toBeGreaterThanOrEqual(3); // dmon, lsmod and ip hang and ignore SIGTERM
  });

  it("answers the scrapes issued just before SIGTERM with 200 and the whole exposition", () => {
    expect(quick.map((s) => s.error ?? s.status)).toEqual(Array(QUICK).fill(200));
    expect(quick.every((s) => complete(s.body))).toBe(true);
  });

  it("lets the slow readers finish: 200, every byte of Content-Length", () => {
    for (const s of slow) {
      expect(s.error).toBeUndefined();
      expect(s.status).toBe(200);
      expect(s.received).toBe(s.contentLength);
      expect(complete(s.body)).toBe(true);
    }
    // They really were slow: reading took a good part of a second or more.
    expect(Math.min(...slow.map((s) => s.ms))).toBeGreaterThan(500);
  });

  it("closes an idle keep-alive connection", () => {
    expect(idleClosed).toBe(true);
  });

  it("exits 0 within 5 s and leaves no child behind (SIGKILL for those that ignore SIGTERM)", () => {
    expect(stop.code).toBe(0);
    expect(stop.ms).toBeLessThan(5000);
    expect(leftovers).toEqual([]);
    expect((agent as RunningAgent).stderr()).toBe("");
  });
});
