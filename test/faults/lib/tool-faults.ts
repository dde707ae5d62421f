/**
 * Runs misbehaving tools against real agents, all at once for one window: a clean reference agent,
 * and per fault mode one agent whose set-A tools misbehave and one whose set-B tools do. Records
 * every scrape (timed), the agents' resident memory and children, their logs, how they stop and
 * which of their processes outlive them.
 *
 * The window lasts at least windowMs and then until every agent has done what the checks look at
 * (settled()): events, not a time, so that a machine busy with other work makes it longer, not
 * wrong.
 */
import { processesWithEnv, sample, type RunningAgent } from "../../helpers/agent-process.js";
import { percentile, watchProcess, type ProcSample } from "./proc.js";
import { scrapeLoop, timedGet, type TimedScrape } from "./scrape.js";
import { FAULT_TOOLS, killTokened, makeRig, NcclWriter, startedRuns, startRigAgent, type FaultMode, type FaultSet, type StartedRun } from "./tool-rig.js";

/** Scrapes of each misbehaving agent, of the reference agent, and samples of each agent's process the window holds at least. */
export const MIN_SCRAPES = 6;
export const MIN_REFERENCE_SCRAPES = 21;
export const MIN_PROC_SAMPLES = 6;
/** How long the window may go on after windowMs while an agent has not settled (then the checks say what is missing). */
const SETTLE_LIMIT_MS = 120_000;
/** How long the final scrape waits for the agent to have read every NCCL line. */
const CATCH_UP_LIMIT_MS = 60_000;
/** The poll collectors, which each run a tool of both sets. */
const POLLED = ["infiniband", "gdr", "mtu"];

/** A misbehaving tool's run; `ended` when it was seen gone while the agent ran (killed, or exited on its own). */
export interface ToolRun extends StartedRun {
  ended: boolean;
}

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
  /** The runs of its misbehaving tools that started (FAULT_STARTED), in order. */
  started: ToolRun[];
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

/** Each agent's scrape latency next to the reference's in the same seconds (printed, not asserted: see expectServed). */
export function latencyTable(run: FaultRun): string {
  const rows = run.runs.map((o) => {
    const ms = o.scrapes.map((s) => s.ms);
    const from = Math.min(...o.scrapes.map((s) => s.atMs));
    const to = Math.max(...o.scrapes.map((s) => s.atMs + s.ms));
    const ref = run.referenceScrapes.filter((s) => s.atMs >= from && s.atMs <= to).map((s) => s.ms);
    const f = (x: number): string => x.toFixed(0).padStart(6);
    return `${`${o.mode}/${o.set}`.padEnd(16)} ${String(ms.length).padStart(7)} ${f(percentile(ms, 50))} ${f(Math.max(...ms))} ${f(percentile(ref, 50))} ${f(percentile(ref, 90))} ${f(Math.max(...ref))}`;
  });
  return [`${"agent".padEnd(16)} scrapes    p50    max  ref50  ref90 refmax (ms)`, ...rows].join("\n");
}

/** Sample lines of tool readings in an exposition. */
export function toolReadings(text: string): string[] {
  return text.split("\n").filter((l) => l !== "" && !l.startsWith("#") && TOOL_FAMILY.test(l) && !NOT_A_READING.test(l));
}

/** Scrapes until the agent has read every NCCL line written (CATCH_UP_LIMIT_MS at most); the last exposition. */
async function finalScrape(agent: RunningAgent, lines: number): Promise<string> {
  let last = "";
  const t0 = Date.now();
  while (Date.now() - t0 < CATCH_UP_LIMIT_MS) {
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
  /** Its FAULT_STARTED file. */
  startedFile: string;
  /** Pids of started runs seen gone. */
  ended: Set<number>;
  scraper: ReturnType<typeof scrapeLoop>;
  watcher: ReturnType<typeof watchProcess>;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Its misbehaving tools' runs so far; notes those that have ended (a pid seen gone stays ended). */
function toolRuns(l: Live): ToolRun[] {
  return startedRuns(l.startedFile).map((r) => {
    if (!l.ended.has(r.pid) && !alive(r.pid)) l.ended.add(r.pid);
    return { ...r, ended: l.ended.has(r.pid) };
  });
}

/**
 * What an agent has yet to do before the window closes ([] when nothing), whatever the fault: be
 * scraped and sampled often enough, take each poll collector through at least one poll (its
 * duration is set when a poll ends, failed or not), deliver a sample of a dmon that works, and see
 * each misbehaving tool start (its fault in place) and be gone at least once: exited by itself or
 * killed by the agent, which has then logged and counted what it saw. The identity query runs once
 * per dmon start, so once in all beside a dmon that works: killed before it had started, it is
 * not run again, and its failure logged is what there is to wait for.
 */
function unsettled(l: Live): string[] {
  const todo: string[] = [];
  const scrapes = l.scraper.scrapes;
  const minScrapes = l.mode === undefined ? MIN_REFERENCE_SCRAPES : MIN_SCRAPES;
  if (scrapes.length < minScrapes) todo.push(`${scrapes.length} of ${minScrapes} scrapes`);
  if (l.watcher.samples.length < MIN_PROC_SAMPLES) todo.push(`${l.watcher.samples.length} of ${MIN_PROC_SAMPLES} process samples`);
  const last = scrapes[scrapes.length - 1]?.body ?? "";
  for (const c of POLLED) if (sample(last, `ringwatch_collector_duration_seconds{collector="${c}"}`) === undefined) todo.push(`no ${c} poll done`);
  if (l.set !== "A" && !scrapes.some((s) => sample(s.body, 'ringwatch_gpu_power_watts{gpu="0"}') !== undefined)) todo.push("no dmon sample");
  if (l.set !== undefined) {
    const runs = toolRuns(l);
    const identityLogged = (): boolean => l.agent.logs().some((line) => line.includes("identity query"));
    for (const tool of FAULT_TOOLS[l.set]) {
      if (tool === "nvidia-smi" && identityLogged()) continue;
      if (!runs.some((r) => r.tool === tool)) todo.push(`${tool} not started`);
      else if (!runs.some((r) => r.tool === tool && r.ended)) todo.push(`${tool} not ended`);
    }
  }
  return todo;
}

const settled = (l: Live): boolean => unsettled(l).length === 0;

export async function runToolFaults(modes: readonly FaultMode[], windowMs: number): Promise<FaultRun> {
  const rig = makeRig();
  const writer = new NcclWriter(rig.ncclDir);
  await writer.advance(6000); // init blocks and a few steps before the agents start
  const specs: [FaultMode | undefined, FaultSet | undefined][] = [
    [undefined, undefined],
    ...modes.flatMap(
      (m) =>
        [
          [m, "A"],
          [m, "B"],
        ] as [FaultMode, FaultSet][],
    ),
  ];
  const live: Live[] = [];
  try {
    // One after the other: starting them all at once on a busy 2-core machine makes each slow.
    for (const [mode, set] of specs) {
      const { agent, token, started } = await startRigAgent(rig, set, mode);
      live.push({
        mode,
        set,
        agent,
        token,
        startedFile: started,
        ended: new Set(),
        scraper: scrapeLoop(agent.url + "/metrics", mode === undefined ? 100 : 250),
        watcher: watchProcess(agent.child.pid as number, 250),
      });
    }
    const t0 = Date.now();
    for (;;) {
      await new Promise((r) => setTimeout(r, 500));
      await writer.advance(1000);
      if (Date.now() - t0 < windowMs) continue;
      if (live.every(settled)) break;
      if (Date.now() - t0 > windowMs + SETTLE_LIMIT_MS) {
        const late = live.filter((l) => !settled(l)).map((l) => `${l.mode ?? "reference"}/${l.set ?? "-"}: ${unsettled(l).join(", ")}`);
        console.warn(`tool faults: not settled after ${Date.now() - t0} ms: ${late.join("; ")}`);
        break;
      }
    }
    const results = await Promise.all(
      live.map(async (l) => {
        const started = toolRuns(l);
        const scrapes = await l.scraper.stop();
        const proc = l.watcher.stop();
        const final = await finalScrape(l.agent, writer.lines);
        const stop = await l.agent.stop("SIGTERM");
        await new Promise((r) => setTimeout(r, 500));
        return { l, scrapes, final, proc, stop, leftovers: await processesWithEnv(l.token), started };
      }),
    );
    const reference = new Set<string>();
    const ref = results[0];
    for (const s of ref?.scrapes ?? []) for (const line of toolReadings(s.body)) reference.add(line);
    return {
      reference,
      referenceScrapes: ref?.scrapes ?? [],
      runs: results.slice(1).map(({ l, scrapes, final, proc, stop, leftovers, started }) => ({
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
        started,
      })),
    };
  } finally {
    for (const l of live) await killTokened(l.token);
    rig.remove();
  }
}
