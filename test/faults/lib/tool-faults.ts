/**
 * Runs misbehaving tools against real agents, all at once for one window: a clean reference agent,
 * and per fault mode one agent whose set-A tools misbehave and one whose set-B tools do. Records
 * every scrape (timed), the agents' resident memory and children, their logs, how they stop and
 * which of their processes outlive them.
 */
import { processesWithEnv, sample, type RunningAgent } from "../../helpers/agent-process.js";
import { watchProcess, type ProcSample } from "./proc.js";
import { scrapeLoop, timedGet, type TimedScrape } from "./scrape.js";
import { killTokened, makeRig, NcclWriter, startRigAgent, type FaultMode, type FaultSet } from "./tool-rig.js";

export interface Observation {
  mode: FaultMode;
  set: FaultSet;
  scrapes: TimedScrape[];
  /** A scrape after the window, once the NCCL lines were all read (or 10 s passed). */
  final: string;
  proc: ProcSample[];
  logs: string[];
  stderr: string;
  stop: { code: number | null; ms: number };
  /** Processes carrying the agent's token that were still alive 500 ms after it exited. */
  leftovers: number[];
  /** NCCL log lines the simulated job wrote. */
  ncclLines: number;
}

export interface FaultRun {
  /** Every tool-derived sample line the clean agent served during the window. */
  reference: Set<string>;
  referenceScrapes: TimedScrape[];
  runs: Observation[];
}

/** Families whose values come from the tools (counters of the agent's own troubles excluded). */
const TOOL_FAMILY = /^ringwatch_(gpu|infiniband|gdr|network)_/;
const NOT_A_READING = /^ringwatch_gpu_(dmon_up|dmon_restarts_total|errors_total|dmon_malformed_lines_total|hang_signature)\b/;

/** Sample lines of tool readings in an exposition. */
export function toolReadings(text: string): string[] {
  return text.split("\n").filter((l) => l !== "" && !l.startsWith("#") && TOOL_FAMILY.test(l) && !NOT_A_READING.test(l));
}

/** Scrapes until the agent has read every NCCL line written (10 s at most); the last exposition. */
async function finalScrape(agent: RunningAgent, lines: number): Promise<string> {
  let last = "";
  const t0 = Date.now();
  while (Date.now() - t0 < 10_000) {
    const s = await timedGet(agent.url + "/metrics");
    last = s.body;
    if (sample(last, "ringwatch_nccl_log_lines_total") === lines) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  return last;
}

interface Live {
  mode: FaultMode | undefined;
  set: FaultSet | undefined;
  agent: RunningAgent;
  token: string;
  scraper: ReturnType<typeof scrapeLoop>;
  watcher: ReturnType<typeof watchProcess>;
}

export async function runToolFaults(modes: readonly FaultMode[], windowMs: number): Promise<FaultRun> {
  const rig = makeRig();
  const writer = new NcclWriter(rig.ncclDir);
  await writer.advance(6000); // init blocks and a few steps before the agents start
  const specs: [FaultMode | undefined, FaultSet | undefined][] = [[undefined, undefined], ...modes.flatMap((m) => [[m, "A"], [m, "B"]] as [FaultMode, FaultSet][])];
  const live: Live[] = [];
  try {
    // One after the other: starting them all at once on a busy 2-core machine makes each slow.
    for (const [mode, set] of specs) {
      const { agent, token } = await startRigAgent(rig, set, mode);
      live.push({ mode, set, agent, token, scraper: scrapeLoop(agent.url + "/metrics", mode === undefined ? 100 : 250), watcher: watchProcess(agent.child.pid as number, 250) });
    }
    const until = Date.now() + windowMs;
    while (Date.now() < until) {
      await new Promise((r) => setTimeout(r, 500));
      await writer.advance(1000);
    }
    const results = await Promise.all(
      live.map(async (l) => {
        const scrapes = await l.scraper.stop();
        const proc = l.watcher.stop();
        const final = await finalScrape(l.agent, writer.lines);
        const stop = await l.agent.stop("SIGTERM");
        await new Promise((r) => setTimeout(r, 500));
        return { l, scrapes, final, proc, stop, leftovers: await processesWithEnv(l.token) };
      }),
    );
    const reference = new Set<string>();
    const ref = results[0];
    for (const s of ref?.scrapes ?? []) for (const line of toolReadings(s.body)) reference.add(line);
    return {
      reference,
      referenceScrapes: ref?.scrapes ?? [],
      runs: results.slice(1).map(({ l, scrapes, final, proc, stop, leftovers }) => ({
        mode: l.mode as FaultMode,
        set: l.set as FaultSet,
        scrapes,
        final,
        proc,
        logs: l.agent.logs(),
        stderr: l.agent.stderr(),
        stop,
        leftovers,
        ncclLines: writer.lines,
      })),
    };
  } finally {
    for (const l of live) await killTokened(l.token);
    rig.remove();
  }
}
