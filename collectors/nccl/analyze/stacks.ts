/**
 * Python stacks beside the logs in `ringwatch analyze` (py-spy and faulthandler dumps, PyTorch's
 * worker server pages: collectors/nccl/stacks/): each dump tied to a rank, the ranks grouped by
 * where their Python is, then
 * - a rank_behind finding says where its ranks are (`python_stacks`, and a sentence in its summary);
 * - the ranks whose stack is not the one most ranks wait in (stacks/group.ts), when no rank_behind
 *   told of them already, are a stack_outlier finding (warning: a dump taken while a healthy job
 *   runs also finds ranks in different places for a moment).
 * Without stacks no finding changes.
 */
import type { TrackedState } from "../logs/detect/verdict.js";
import { ranksOf } from "../logs/findings/procs.js";
import { parsePrefix } from "../logs/parse/prefix.js";
import type { ProcessState } from "../logs/state/model.js";
import { frameText, isAddressFrame, isCollectiveFrame, isLibraryFrame } from "../stacks/frames.js";
import { groupStacks, type RankStack, type StackGroup } from "../stacks/group.js";
import type { LinePrefix, StackDump, StackFrame, StackThread } from "../stacks/types.js";
import { stackOutlier } from "../verdict/finding.js";
import { nativeWait, type NativeWait } from "../logs/native/gdb-backtrace.js";
import type { Finding, FindingPythonStack } from "../verdict/report.js";
import { pythonStackWords, type StackChain } from "../verdict/words.js";

/** Frames of a stack in --json. */
const JSON_FRAMES = 32;
/** Innermost frames a sentence shows. */
const CHAIN_INNER = 3;
/** Stacks a finding lists in --json, and outlier groups a stack_outlier's sentence names. */
const MAX_FINDING_STACKS = 8;
const MAX_NAMED_GROUPS = 3;

/** A line's prefix as the log parser reads it (logs/parse/prefix.ts), for the stack reader: only the launchers that give a global rank give `rank`. */
export function stackPrefix(line: string): LinePrefix {
  const p = parsePrefix(line, 0, line.length);
  const out: LinePrefix = { end: p.end };
  const l = p.launcher;
  if (l === undefined) return out;
  if ((l.kind === "rank" || l.kind === "mpi" || l.kind === "srun") && l.rank !== undefined) out.rank = l.rank;
  if (l.localRank !== undefined) out.localRank = l.localRank;
  if (l.pid !== undefined) out.pid = l.pid;
  if (l.host !== undefined) out.host = l.host;
  return out;
}

/** A process's rank in the largest communicator it is in (the world), else a launcher's global rank, else any rank the logs give it. */
function globalRank(state: TrackedState, p: ProcessState): number | undefined {
  if (p.launcherRank !== undefined) return p.launcherRank;
  let best: { n: number; rank: number } | undefined;
  for (const key of p.comms.values()) {
    const c = state.comms.get(key);
    if (c === undefined) continue;
    for (const r of c.ranks.values()) {
      const n = c.nranks ?? c.ranks.size;
      if (r.processKey === p.key && (best === undefined || n > best.n)) best = { n, rank: r.rank };
    }
  }
  return best?.rank ?? ranksOf(state, [p])[0];
}

/**
 * Each dump with its rank: its own (worker server section, `[rankN]:` prefix, file name); a
 * torchrun `[defaultN]:` local rank, through the process the same log's NCCL lines with that prefix
 * name (`torchrun`: log name → local rank → `host:pid`); or its pid, where exactly one process of
 * the logs has it (on the dump's host, where it names one). Dumps tied to no rank are left out.
 */
export function placeStacks(state: TrackedState, dumps: readonly StackDump[], torchrun: ReadonlyMap<string, ReadonlyMap<number, string>>): RankStack[] {
  if (dumps.length === 0) return [];
  const byPid = new Map<number, ProcessState[]>();
  for (const p of state.processes.values()) {
    const list = byPid.get(p.pid);
    if (list === undefined) byPid.set(p.pid, [p]);
    else list.push(p);
  }
  const out: RankStack[] = [];
  for (const d of dumps) {
    let process: string | undefined;
    if (d.localRank !== undefined) process = torchrun.get(d.source)?.get(d.localRank);
    if (process === undefined && d.pid !== undefined) {
      const ps = (byPid.get(d.pid) ?? []).filter((p) => d.host === undefined || p.host === d.host);
      if (ps.length === 1) process = ps[0]?.key;
    }
    const proc = process !== undefined ? state.processes.get(process) : undefined;
    const rank = d.rank ?? (proc !== undefined ? globalRank(state, proc) : undefined);
    if (rank === undefined) continue;
    out.push({ rank, ...(process !== undefined ? { process } : {}), dump: d });
  }
  return out;
}

/** `MainThread`, `thread 0x00007f...`, `current thread 0x...`. */
function threadLabel(t: StackThread): string {
  if (t.name !== undefined) return t.name;
  if (t.id === "") return "current thread";
  return t.current === true ? `current thread ${t.id}` : `thread ${t.id}`;
}

/** The stack in a sentence: its innermost frames, and the job's own innermost frame before them where it lies further out. */
function chainOf(ranks: readonly number[], t: StackThread): StackChain {
  const fs = t.frames.filter((f) => !isAddressFrame(f));
  const job = fs.findIndex((f) => !isLibraryFrame(f));
  const inner = fs.slice(0, CHAIN_INNER).reverse();
  const shown: StackFrame[] = job >= CHAIN_INNER ? [fs[job] as StackFrame, ...inner] : inner;
  return { ranks, frames: shown.map(frameText), gap: job > CHAIN_INNER };
}

function toJson(ranks: readonly number[], g: StackGroup): FindingPythonStack {
  const frames = g.thread.frames;
  return {
    ranks: [...ranks],
    tool: g.dump.tool,
    thread: threadLabel(g.thread),
    frames: frames.slice(0, JSON_FRAMES).map((f) => ({ function: f.function, file: f.file, line: f.line ?? null })),
    frames_left_out: Math.max(0, frames.length - JSON_FRAMES),
    truncated: g.thread.truncated,
    in_collective: g.inCollective,
    evidence: g.dump.where,
  };
}

/** The latest of each key's stacks. */
function latestBy<K>(placed: readonly RankStack[], key: (s: RankStack) => K | undefined): Map<K, RankStack> {
  const m = new Map<K, RankStack>();
  for (const s of placed) {
    const k = key(s);
    if (k !== undefined) m.set(k, s);
  }
  return m;
}

/** The stacks of a rank_behind's ranks: by its processes (`host:pid`), else by its ranks. */
function stacksOf(f: Finding, byProcess: ReadonlyMap<string, RankStack>, byRank: ReadonlyMap<number, RankStack>): RankStack[] {
  const found = new Map<number, RankStack>();
  for (const p of f.processes) {
    const s = byProcess.get(p);
    if (s !== undefined) found.set(s.rank, s);
  }
  if (found.size === 0) {
    for (const r of f.ranks) {
      const s = byRank.get(r);
      if (s !== undefined) found.set(s.rank, s);
    }
  }
  return [...found.values()];
}

/** The findings with what the stacks say (see the top of this file); the same findings when no stack is placed. */
export function withPythonStacks(findings: readonly Finding[], placed: readonly RankStack[]): Finding[] {
  if (placed.length === 0) return [...findings];
  const byRank = latestBy(placed, (s) => s.rank);
  const byProcess = latestBy(placed, (s) => s.process);
  const told = new Set<number>();
  const out = findings.map((f) => {
    if (f.kind !== "rank_behind") return f;
    const mine = stacksOf(f, byProcess, byRank);
    if (mine.length === 0) return f;
    const groups = groupStacks(mine).groups.slice(0, MAX_NAMED_GROUPS);
    for (const g of groups) for (const r of g.ranks) told.add(r);
    const where = groups.map((g) =>
      pythonStackWords.where({
        ...chainOf(g.ranks, g.thread),
        tool: g.dump.tool,
        thread: threadLabel(g.thread),
        evidence: g.dump.where,
        inCollective: g.inCollective,
      }),
    );
    return {
      ...f,
      summary: f.summary + where.join(""),
      evidence: [...f.evidence, ...groups.map((g) => g.dump.where)],
      python_stacks: groups.map((g) => toJson(g.ranks, g)),
    };
  });
  const outlier = outlierFinding(placed, told);
  if (outlier !== undefined) out.push(outlier);
  return out;
}

/** The innermost collective frame of the stack most ranks share, and the job's frame that called it. */
function waitingAt(t: StackThread): { at: string; from?: string } {
  const fs = t.frames.filter((f) => !isAddressFrame(f));
  const c = fs.find(isCollectiveFrame) ?? fs[0];
  const job = fs.find((f) => !isLibraryFrame(f));
  return { at: c !== undefined ? frameText(c) : "(no frame)", ...(job !== undefined ? { from: frameText(job) } : {}) };
}

/** stack_outlier: the outlier groups' ranks no rank_behind told of. */
function outlierFinding(placed: readonly RankStack[], told: ReadonlySet<number>): Finding | undefined {
  const grouping = groupStacks(placed);
  const dominant = grouping.dominant;
  if (dominant === undefined) return undefined;
  const outliers = grouping.outliers.map((g) => ({ g, ranks: g.ranks.filter((r) => !told.has(r)) })).filter((o) => o.ranks.length > 0);
  if (outliers.length === 0) return undefined;
  const named = outliers.slice(0, MAX_NAMED_GROUPS);
  const ranks = outliers.flatMap((o) => o.ranks).sort((a, b) => a - b);
  return stackOutlier({
    summary: pythonStackWords.outlier({
      total: grouping.ranks,
      waiting: dominant.ranks,
      ...waitingAt(dominant.thread),
      outliers: named.map((o) => ({ ...chainOf(o.ranks, o.g.thread), inCollective: o.g.inCollective })),
      moreGroups: outliers.length - named.length + grouping.groupsLeftOut,
    }),
    ranks,
    processes: outliers.flatMap((o) => o.ranks.flatMap((r) => o.g.processOf.get(r) ?? [])),
    comm_id: null,
    evidence: [...named.flatMap((o) => o.g.evidence.slice(0, 2)), dominant.evidence[0] ?? dominant.dump.where],
    waiting_ranks: dominant.ranks,
    python_stacks: [...outliers.slice(0, MAX_FINDING_STACKS - 1).map((o) => toJson(o.ranks, o.g)), toJson(dominant.ranks, dominant)],
  });
}

/**
 * The threads of `py-spy dump --native` dumps stopped inside one of NCCL's calls (or a CUDA launch or
 * synchronize), as gdb's backtraces are read (logs/native/gdb-backtrace.ts: nccl-pasted 618, the main
 * thread in ncclGroupEnd under ProcessGroupNCCL::getNCCLComm), from their native frames only. A
 * sample is one instant of a running process: it counts as a wait (`waiting`) only where py-spy saw
 * the thread idle or its innermost frames wait (a sleep, a poll, a futex), not on its way through a
 * launch. The rank is the dump's own, or the one its placement among the logs gave it. A Python
 * frame of vLLM's or SGLang's ctypes wrapper of NCCL counts as the NCCL call it names; without
 * native frames, an idle thread in torch.distributed's API waits in its call (torchDistributedWait).
 */
/** vLLM's and SGLang's ctypes wrapper of NCCL: a frame `ncclCommWindowRegister (pynccl_wrapper.py:540)` is that NCCL call (nccl-pasted 783). */
const PYNCCL_WRAPPER = "pynccl_wrapper.py";

/** Functions whose frame, innermost, shows a thread that waits rather than runs. */
const WAIT_FRAMES = ["sleep", "sched_yield", "poll", "futex", "pthread_cond_", "select", "epoll_wait", "Synchronize"];

/** torch.distributed's Python API: a thread py-spy saw idle with this file's frame innermost waits in its call. */
const C10D_API = "torch/distributed/distributed_c10d.py";

/**
 * torch.distributed's calls that hold the calling thread until their peers take part, whatever the
 * backend: point-to-point (Gloo's, and NCCL's first one, which creates its communicator), barriers,
 * and the object collectives (they copy sizes to the host). A tensor collective on NCCL returns once
 * enqueued: a thread idle in it most often waits for the GPU's launch queue, as a healthy job's does.
 */
const BLOCKING_C10D = new Set([
  "send",
  "recv",
  "barrier",
  "monitored_barrier",
  "_store_based_barrier",
  "broadcast_object_list",
  "all_gather_object",
  "gather_object",
  "scatter_object_list",
  "send_object_list",
  "recv_object_list",
]);

/** torch.distributed's tensor collectives, which NCCL only enqueues: a thread idle in one is a note. */
const TENSOR_C10D = new Set([
  "all_reduce",
  "broadcast",
  "reduce",
  "all_gather",
  "all_gather_into_tensor",
  "_all_gather_base",
  "reduce_scatter",
  "reduce_scatter_tensor",
  "_reduce_scatter_base",
  "all_to_all",
  "all_to_all_single",
  "gather",
  "scatter",
  "batch_isend_irecv",
]);

/**
 * A py-spy thread idle with its innermost frame in torch.distributed's API (`send
 * (torch/distributed/distributed_c10d.py:2487)`, nccl-pasted 823), in a dump without native frames:
 * blocked in that call, which returns when its peers take part (a send when the matching recv is
 * posted, a barrier when the group's ranks join); `waiting` only for the calls that block
 * (BLOCKING_C10D), a note for a tensor collective (TENSOR_C10D), nothing for the API's other
 * functions. A thread py-spy saw active there was on its way through. Read only where py-spy dumped
 * one process (one pid, however many dumps): with several, the stacks compared say more.
 */
function torchDistributedWait(t: StackDump["threads"][number]): (Pick<NativeWait, "call" | "wait" | "caller"> & { blocking: boolean }) | undefined {
  const top = t.frames[0];
  if (t.status !== "idle" || top === undefined || !top.file.endsWith(C10D_API)) return undefined;
  // Any other function of the API (destroy_process_group, new_group's bookkeeping) is no wait for peers.
  if (!BLOCKING_C10D.has(top.function) && !TENSOR_C10D.has(top.function)) return undefined;
  const w: Pick<NativeWait, "call" | "wait" | "caller"> & { blocking: boolean } = {
    call: top.function,
    wait: "pytorch",
    blocking: BLOCKING_C10D.has(top.function),
  };
  // The caller outside torch.distributed (c10d_logger.py's `wrapper` is the API's own decorator).
  const caller = t.frames.slice(1).find((f) => f.file.indexOf("torch/distributed/") < 0);
  if (caller !== undefined) w.caller = caller.function;
  return w;
}

export function pySpyNativeWaits(dumps: readonly StackDump[], placed: readonly RankStack[]): NativeWait[] {
  const rankOf = new Map<StackDump, number>();
  for (const p of placed) rankOf.set(p.dump, p.rank);
  const out: NativeWait[] = [];
  // One process's dumps (several of the same pid, taken a minute apart, are still one process).
  const pids = new Set(dumps.filter((d) => d.tool === "py-spy").map((d) => d.pid ?? d.where));
  const alone = pids.size === 1;
  for (const d of dumps) {
    if (d.tool !== "py-spy") continue;
    for (const t of d.threads) {
      // Native frames; and the frames of vLLM's and SGLang's ctypes wrappers of NCCL (`pynccl_wrapper.py`), whose functions are NCCL's own calls.
      const native = t.frames.filter((f) => !f.file.endsWith(".py") || f.file.endsWith(PYNCCL_WRAPPER));
      const n = nativeWait(native.map((f) => f.function));
      const c10d = n === undefined && alone ? torchDistributedWait(t) : undefined;
      const w = n ?? c10d;
      if (w === undefined) continue;
      const waiting =
        c10d !== undefined ? c10d.blocking : t.status === "idle" || native.slice(0, 4).some((f) => WAIT_FRAMES.some((x) => f.function.indexOf(x) >= 0));
      const x: NativeWait = { tool: "py-spy", call: w.call, wait: w.wait, waiting, where: d.where };
      if (w.caller !== undefined) x.caller = w.caller;
      if (t.name !== undefined) x.thread = t.name;
      const rank = d.rank ?? rankOf.get(d);
      if (rank !== undefined) x.rank = rank;
      out.push(x);
    }
  }
  return out;
}
