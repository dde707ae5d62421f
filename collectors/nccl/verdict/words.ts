/**
 * The words of the findings, one place for all of them: for each kind, its summaries (what
 * happened, where) and its advice (what to do), as functions of plain facts (numbers, strings,
 * rank lists), never of a source's types. `ringwatch analyze` prints them, and the live verdicts
 * log them (PyTorch's lines, NCCL RAS, Flight Recorder). The sources work out the facts and build
 * the finding (verdict/finding.ts); to change what a kind says, change it here.
 *
 * Grouped by kind, in the order of the table of verdict/finding-kinds.ts (stack_outlier with the
 * Python stacks a rank_behind is given). Within a kind, one template per source and situation;
 * each ends with its advice where it has one.
 */
import { rankList, type FindingKind } from "./report.js";

// ---------------------------------------------------------------------------------------------
// Phrases the kinds share.

/** `rank 3`, `ranks 0-2,5`. */
export function theRanks(ranks: readonly number[]): string {
  return `${ranks.length === 1 ? "rank" : "ranks"} ${rankList(ranks)}`;
}

/** One word for one rank, another for several. */
function verb(ranks: readonly unknown[], one: string, many: string): string {
  return ranks.length === 1 ? one : many;
}

/** `a, b, c, d and 3 more`: processes (host:pid) named in a summary. */
function processList(keys: readonly string[]): string {
  return keys.length > 4 ? `${keys.slice(0, 4).join(", ")} and ${keys.length - 4} more` : keys.join(", ");
}

/** The process that logged a line, or what to call it when the line names none. */
function here(process: string | undefined): string {
  return process ?? "the logging process (no host:pid in the line)";
}

/** A peer as NCCL's WARNs name it: `10.0.0.7<43210>`. */
export function peerAddress(peer: string | undefined, port: number | undefined): string {
  return peer === undefined ? "" : `${peer}${port !== undefined ? `<${port}>` : ""}`;
}

/** How many bytes, in words: `65536 bytes`. */
function bytes(n: number | undefined): string {
  return n === undefined ? "an unknown size" : `${n} bytes`;
}

/** ` (called from job.py:20)`, or nothing without a frame. */
function calledFrom(frame: string | undefined): string {
  return frame !== undefined ? ` (called from ${frame})` : "";
}

/** A rank as NCCL RAS names it: where its process runs. */
export interface RankAt {
  rank: number;
  pid?: number;
  node?: string;
  gpu?: string;
}

/** `rank 12 (process 323032 on 10.0.0.7, GPU 4), ...`: at most 10, then how many more. */
export function ranksAt(ranks: readonly RankAt[]): string {
  const parts = ranks
    .slice(0, 10)
    .map((r) => `rank ${r.rank}${r.pid !== undefined ? ` (process ${r.pid} on ${r.node ?? "?"}${r.gpu !== undefined ? `, GPU ${r.gpu}` : ""})` : ""}`);
  return parts.join(", ") + (ranks.length > 10 ? `, and ${ranks.length - 10} more` : "");
}

/** A job process as NCCL RAS lists it (dead, or with no data). */
export interface RasProcessAt {
  pid: number;
  node: string;
  gpus: string;
}

function rasProcesses(ps: readonly RasProcessAt[]): string {
  return ps.map((x) => `process ${x.pid} on ${x.node} (GPU ${x.gpus})`).join(", ");
}

/** RAS's operation counts per collective type: `AllReduce: 1 at #60, 1 at #61; ...`. */
function rasCounts(ops: readonly { op: string; counts: string }[]): string {
  return ops.map((o) => `${o.op}: ${o.counts}`).join("; ");
}

/** ` NCCL returned ncclSystemError (2: ...), passed up ...`: a process's error-return chain, told after a failure. */
export function ncclReturned(chain: string): string {
  return ` NCCL returned ${chain}.`;
}

/** A PyTorch process group's label and the stack frame of user code that called a collective. */
interface FrCollective {
  /** `0 (default_pg)`. */
  group: string;
  seq: number;
  op?: string;
  /** `job.py:20`: the innermost frame outside PyTorch of the ranks that wait in it. */
  frame?: string;
}

// ---------------------------------------------------------------------------------------------
// rank_behind: a rank never entered (or never finished) the collective the others wait in.

/** A rank this many collectives behind is in another phase of the job, not one collective late. */
const FAR_BEHIND = 1000;

/** Ranks behind in a communicator, the ranks ahead of them, and the collective they wait in. */
interface BehindInComm {
  comm: string;
  behind: readonly number[];
  processes: readonly string[];
  ahead: readonly number[];
  seq: number;
  op?: string;
}

export const rankBehindWords = {
  /** A rank's own Python exception while other ranks hang: the rank they waited for. */
  failedFirst: (f: {
    ranks: readonly number[];
    /** The rank whose exception is quoted (the first read). */
    rank: number;
    /** A CUDA error or out of memory: the GPU's, not the job's code alone. */
    gpu: boolean;
    exception: string;
    message: string;
    where: string;
    waiting: readonly number[];
    seq?: number;
    op?: string;
  }): string =>
    `${f.ranks.length === 1 ? `Rank ${f.ranks[0]} failed` : `Ranks ${rankList(f.ranks)} failed`} with an exception before the others' hang` +
    ` (rank ${f.rank}: ${f.exception}: ${f.message}, at ${f.where}) and left the job: ` +
    `${theRanks(f.waiting)}, whose ${f.seq !== undefined ? `collective SeqNum=${f.seq}${f.op !== undefined ? ` (${f.op})` : ""}` : "collective"} did not finish, waited for ${f.ranks.length === 1 ? "it" : "them"}` +
    ` (their "enqueued but not completed" follows from it). ` +
    (f.gpu
      ? "That error is the cause: a CUDA error or out of memory on that rank's GPU (its Xid lines in the kernel log say whether the GPU failed); fix it and restart."
      : "That exception is the cause, not the network or a GPU: fix it and restart."),

  /** logs/: the COLL lines of a communicator. */
  logs: (f: BehindInComm & { reached: number }): string =>
    `Rank ${rankList(f.behind)} (${f.processes.join(", ")}) never entered collective #${f.seq}${f.op ? ` (${f.op})` : ""} of communicator ${f.comm}; ` +
    `rank ${rankList(f.ahead)} entered it${f.reached > f.seq ? ` (and enqueued up to #${f.reached})` : ""} and wait there. ` +
    `Look at what rank ${rankList(f.behind)} was doing instead (py-spy dump of that process): it is stuck or took another code path.`,

  /** Init START without Init COMPLETE on these ranks while the others completed init and entered collective #seq. */
  initNeverCompleted: (f: BehindInComm): string =>
    `Rank ${rankList(f.behind)} (${f.processes.join(", ")}) never completed init of communicator ${f.comm} (Init START, no Init COMPLETE); ` +
    `rank ${rankList(f.ahead)} completed it and entered collective #${f.seq}${f.op ? ` (${f.op})` : ""}, where they wait for it. ` +
    `Rank ${rankList(f.behind)}'s last lines say which init step it is in (bootstrap, connection setup to a peer).`,

  /** PyTorch's desync report (TORCH_NCCL_DESYNC_DEBUG, Flight Recorder): finished #seq, never joined #next. */
  desyncFinished: (f: { ranks: readonly number[]; seq?: number; next?: number }): string =>
    `PyTorch's desync report: rank ${rankList(f.ranks)} finished collective #${f.seq ?? "?"} but never joined #${f.next ?? "?"}; the other ranks wait for it. Look at what that rank does after collective #${f.seq ?? "?"}.`,

  /** PyTorch's ncclUniqueId fetch timed out: `behind` never published the id of the communicator `waiting` created. */
  uniqueIdWait: (f: { behind?: number; waiting: readonly number[] }): string =>
    `${f.waiting.length > 0 ? `Rank ${rankList(f.waiting)}` : "A rank"} waited the store's timeout for the ncclUniqueId of ${f.behind !== undefined ? `rank ${f.behind}` : "the communicator's first rank"} and never got it: ` +
    `${f.behind !== undefined ? `rank ${f.behind}` : "that rank"} never reached the creation of this communicator (its first collective): it is behind, in an earlier step, stuck or gone. ` +
    `The store answered, so this is no network fault; look at what ${f.behind !== undefined ? `rank ${f.behind}` : "it"} was doing (its log, a py-spy dump).`,

  /** PyTorch's desync report: did not join #seq. */
  desyncNotJoined: (f: { ranks: readonly number[]; seq?: number }): string =>
    `PyTorch's desync report: rank ${rankList(f.ranks)} did not join collective #${f.seq ?? "?"}; the other ranks wait for it.`,

  /** PyTorch's lines: every other rank timed out in one work, these printed nothing. */
  pytorchSilent: (f: { group: string; silent: readonly number[]; reported: readonly number[]; seq?: number; op?: string }): string =>
    `Rank ${rankList(f.silent)} printed no watchdog timeout while ${theRanks(f.reported)} of ${f.group} timed out in work SeqNum=${f.seq ?? "?"} (${f.op ?? "?"}): ` +
    `it never enqueued that collective. Look at what rank ${rankList(f.silent)} was doing (py-spy dump of its process).`,

  /**
   * PyTorch's status lines: the ranks enqueued only up to #seq-1 and completed it while others
   * reached #reached; `waiting` (and the works `waits` they wait in) where known.
   */
  pytorchNotEnqueued: (f: {
    group: string;
    behind: readonly number[];
    seq: number;
    reached: number;
    waiting: readonly number[];
    waits: readonly number[];
  }): string => {
    const one = f.behind.length === 1;
    const by = f.reached - (f.seq - 1);
    const far =
      by >= FAR_BEHIND
        ? ` That is ${by} collectives: ${one ? "it" : "they"} stopped long before the others, or ${one ? "is" : "are"} in another phase of the job.`
        : "";
    const inWork = f.waits.length === 1 && f.waits[0] === f.seq;
    const waitText =
      f.waiting.length > 0
        ? `, which ${theRanks(f.waiting)} ${inWork ? verb(f.waiting, "waits in", "wait in") : `got to (${verb(f.waiting, "it waits", "they wait")} in #${rankList(f.waits)})`}`
        : "";
    return (
      `In ${f.group}, ${theRanks(f.behind)} enqueued NCCL work only up to #${f.seq - 1} and completed all of it while others reached #${f.reached}: ${one ? "it" : "they"} never enqueued #${f.seq}${waitText}. ` +
      `"Not enqueued" means that rank's Python code took another path or is stuck on the CPU (py-spy dump its process).${far}`
    );
  },

  /** PyTorch's watchdog lines only: the ranks still wait in SeqNum=seq, which the others got past. */
  pytorchStillWaits: (f: {
    group: string;
    behind: readonly number[];
    seq: number;
    op?: string;
    ahead: readonly number[];
    aheadWait?: { seq: number; op?: string };
  }): string => {
    const a = f.aheadWait;
    const differ =
      f.op !== undefined && a?.op !== undefined && f.op !== a.op
        ? ` The ranks wait in different collectives (${f.op} vs ${a.op}): the ones behind never reached the others' collective.`
        : "";
    return (
      `In ${f.group}, ${theRanks(f.behind)} still ${verb(f.behind, "waits", "wait")} in work SeqNum=${f.seq}${f.op ? ` (${f.op})` : ""}, which ${theRanks(f.ahead)} got past${a ? `: ${verb(f.ahead, "it waits", "they wait")} in SeqNum=${a.seq}${a.op ? ` (${a.op})` : ""}` : ""}. ` +
      `${verb(f.behind, "Rank", "Ranks")} ${rankList(f.behind)} ${verb(f.behind, "is", "are")} behind.${differ}`
    );
  },

  /** PyTorch's status lines: the ranks enqueued #seq and did not complete it while others completed up to #completed. */
  pytorchNotCompleted: (f: { group: string; behind: readonly number[]; seq: number; ahead: readonly number[]; completed: number }): string =>
    `In ${f.group}, ${theRanks(f.behind)} enqueued work #${f.seq} but completed only up to #${f.seq - 1} while ${theRanks(f.ahead)} completed up to #${f.completed}: "enqueued but not completed" points below Python, at that rank's GPU or its network.`,

  /** TORCH_DISTRIBUTED_DEBUG=DETAIL: a mismatch of sequence numbers, the lower rank is behind. */
  detailSeq: (f: { rank: number; seq: number; other: number; otherSeq: number }): string =>
    `Rank ${f.rank} is at collective #${f.seq} while rank ${f.other} is at #${f.otherSeq}: rank ${f.rank} skipped a collective or has not reached it. Look at rank ${f.rank}'s code path (py-spy dump its process).`,

  /** A monitoredBarrier the ranks did not pass; `reporter` waited `timeoutMs`. */
  monitoredBarrier: (f: { ranks: readonly number[]; reporter?: number; timeoutMs?: number }): string => {
    const by = f.reporter !== undefined ? ` (rank ${f.reporter} waited${f.timeoutMs !== undefined ? ` ${f.timeoutMs} ms` : ""})` : "";
    return `Rank ${rankList(f.ranks)} failed to pass monitoredBarrier${by}: ${verb(f.ranks, "it", "they")} never reached the barrier the others wait at. Look at what ${verb(f.ranks, "that rank does", "those ranks do")} before it (py-spy dump).`;
  },

  /** PyTorch's store-based barrier at init: every rank that joined it is seen waiting, so the others never came. */
  storeBarrierAbsent: (f: { ranks: readonly number[]; key: string; waiting: readonly number[] }): string =>
    `Rank ${rankList(f.ranks)} never reached PyTorch's store-based barrier (${f.key}) that ${verb(f.waiting, "rank", "ranks")} ${rankList(f.waiting)} ${verb(f.waiting, "waits", "wait")} in: ` +
    `every rank that joined it is among those waiting. Look at why ${verb(f.ranks, "that rank", "those ranks")} did not get to init_process_group / new_group (its own log: a crash, data loading, a download; py-spy dump its process).`,

  /** PyTorch's TCPStore server: `missing` of `expected` clients never connected (the line names none). */
  storeClientsAbsent: (f: { missing: number; expected: number }): string =>
    `${f.missing} of the ${f.expected} ranks never connected to PyTorch's store: ${f.missing === 1 ? "it is" : "they are"} behind the rank that hosts it (not started, crashed, or stuck before init_process_group). ` +
    `The line names no rank; ${f.missing === 1 ? "the rank whose log stops before its init is the one" : "the ranks whose logs stop before their init are those"}.`,

  /** DETAIL's `Running collective` lines where the log stops: a guess, if the job hung there. */
  detailRunning: (f: { behind: readonly number[]; seq: number; ahead: readonly number[]; aheadSeq: number; op?: string }): string =>
    `Where the log stops, rank ${rankList(f.behind)} last ran collective #${f.seq} while ${verb(f.ahead, "rank", "ranks")} ${rankList(f.ahead)} already ran #${f.aheadSeq}${f.op ? ` (${f.op})` : ""} (TORCH_DISTRIBUTED_DEBUG=DETAIL): ` +
    `if the job hung here, rank ${rankList(f.behind)} never reached #${f.seq + 1} and the others wait for it (py-spy dump its process).`,

  /** NCCL RAS: the ranks at a lower count of the types `trails`, which `others` ranks launched. */
  ras: (f: {
    comm: string;
    behind: readonly RankAt[];
    trails: readonly { op: string; top: number }[];
    others: number;
    ops: readonly { op: string; counts: string }[];
  }): string =>
    `NCCL RAS: on communicator ${f.comm}, ${ranksAt(f.behind)} never entered ${f.trails.map((o) => `${o.op} #${o.top}`).join(" and ")}, which ${f.others} other rank${f.others === 1 ? "" : "s"} launched and wait in (${rasCounts(f.ops)}). ` +
    `Look at what those processes do instead (py-spy dump, or the rank's own log).`,

  /**
   * Flight Recorder: the ranks enqueued only up to #at while others reached #aheadAt; `waiting`
   * wait in the next one; `last`: what the first of them last enqueued; `missing`: ranks without a dump.
   */
  frNotEnqueued: (
    f: FrCollective & {
      behind: readonly number[];
      at: number;
      ahead: readonly number[];
      aheadAt: number;
      waiting?: readonly number[];
      last?: { rank: number; seq: number; op: string; state?: string; frame?: string };
      missing: readonly number[];
    },
  ): string => {
    const l = f.last;
    const lastText = l
      ? `${f.behind.length === 1 ? "Its" : `Rank ${l.rank}'s`} last collective was #${l.seq} (${l.op}${l.state ? `, ${l.state}` : ""})${l.frame !== undefined ? `, called from ${l.frame}` : ""}. `
      : "";
    return (
      `Flight Recorder, process group ${f.group}: ${theRanks(f.behind)} enqueued collectives only up to #${f.at} while ${theRanks(f.ahead)} reached #${f.aheadAt}: ` +
      `${theRanks(f.behind)} never enqueued collective #${f.seq}${f.op !== undefined ? ` (${f.op})` : ""}, which ${f.waiting ? `${theRanks(f.waiting)} ${verb(f.waiting, "waits", "wait")} in${calledFrom(f.frame)}` : "the others wait in"}. ` +
      `${lastText}"Not enqueued" means that rank's Python code never got there: another code path, or stuck on the CPU (py-spy dump its process).${frMissing(f.missing)}`
    );
  },

  /** Flight Recorder: every rank enqueued #seq, `ahead` completed it, the ranks behind did not. */
  frNotCompleted: (f: FrCollective & { behind: readonly number[]; ahead: readonly number[]; missing: readonly number[] }): string =>
    `Flight Recorder, process group ${f.group}: every rank enqueued collective #${f.seq}${f.op !== undefined ? ` (${f.op})` : ""} and ${theRanks(f.ahead)} completed it, but ${theRanks(f.behind)} did not ` +
    `(last completed #${f.seq - 1}): ${verb(f.behind, "it", "they")} entered it and did not finish. "Enqueued but not completed" points below Python: that rank's GPU or its network links.${frMissing(f.missing)}`,
};

/** ` There is no dump from rank 7: it may be behind too.` */
function frMissing(missing: readonly number[]): string {
  return missing.length > 0 ? ` There is no dump from ${theRanks(missing)}: ${verb(missing, "it", "they")} may be behind too.` : "";
}

// ---------------------------------------------------------------------------------------------
// rank_missing: member ranks of a process group left no Flight Recorder dump.

interface MissingFacts {
  group: string;
  /** Ranks in the group, when a dump says. */
  size?: number;
  missing: readonly number[];
  /** Ranks whose dump could not be read. */
  unreadable: readonly number[];
  /** Ranks with a dump. */
  dumped: readonly number[];
}

function missingHead(f: MissingFacts): string {
  const unreadable = f.unreadable.length > 0 ? ` (the dump of ${theRanks(f.unreadable)} could not be read)` : "";
  const size = f.size !== undefined ? ` (${f.size} ranks)` : "";
  return `Flight Recorder, process group ${f.group}${size}: no dump from ${theRanks(f.missing)}${unreadable}`;
}

export const rankMissingWords = {
  /** Every rank with a dump waits in one collective: the ranks without one are the likely culprits. */
  culprit: (f: MissingFacts & Omit<FrCollective, "group">): string => {
    const n = f.dumped.length;
    const present = n === 1 ? `${theRanks(f.dumped)}, the only rank with a dump, waits` : `all ${n} ranks with a dump wait`;
    return (
      `${missingHead(f)}, while ${present} in collective #${f.seq}${f.op !== undefined ? ` (${f.op})` : ""}${calledFrom(f.frame)}. ` +
      `The ranks without a dump most likely never entered it: check that their processes are alive and where they are (py-spy dump).`
    );
  },

  /** Ranks without a dump, and nothing to blame on them. */
  partial: (f: MissingFacts): string => {
    const n = f.dumped.length;
    return `${missingHead(f)}: what is said here covers the ${n} rank${n === 1 ? "" : "s"} with one.`;
  },
};

// ---------------------------------------------------------------------------------------------
// Python stacks (py-spy, faulthandler) read beside the logs: where a rank behind is, and
// stack_outlier, the ranks whose stack is not the one most ranks wait in.

/** One stack as a sentence shows it: its frames from the job's own code inward, `file:line function` each. */
export interface StackChain {
  ranks: readonly number[];
  /** Outermost shown first, innermost last. */
  frames: readonly string[];
  /** Frames left out between the job's own frame (the first) and the innermost ones. */
  gap: boolean;
}

function chain(c: StackChain): string {
  const [first, ...rest] = c.frames;
  return first === undefined ? "(no frame)" : c.gap ? `${first} -> ... -> ${rest.join(" -> ")}` : c.frames.join(" -> ");
}

export const pythonStackWords = {
  /** Appended to a rank_behind finding: where that rank's Python is. */
  where: (f: StackChain & { tool: string; thread: string; evidence: string; inCollective: boolean }): string =>
    ` Where ${theRanks(f.ranks)} ${verb(f.ranks, "is", "are")} (${f.tool} dump at ${f.evidence}, ${f.thread}): ${chain(f)} (innermost last)` +
    (f.inCollective ? `; ${verb(f.ranks, "it waits", "they wait")} in a collective too: compare it with the one the others wait in.` : "."),

  /** stack_outlier: most ranks wait in one collective, these ranks are elsewhere. */
  outlier: (f: {
    total: number;
    waiting: readonly number[];
    /** `torch/distributed/distributed_c10d.py:2501 all_reduce`: the innermost collective frame of the stack most ranks share. */
    at: string;
    /** The job's own frame that called it. */
    from?: string;
    outliers: readonly (StackChain & { inCollective: boolean })[];
    moreGroups: number;
  }): string => {
    const others = f.outliers.map(
      (o) => `${theRanks(o.ranks)} ${verb(o.ranks, "is", "are")} ${o.inCollective ? "in another collective" : "elsewhere"}: ${chain(o)}`,
    );
    const more = f.moreGroups > 0 ? `; and ${f.moreGroups} more group${f.moreGroups === 1 ? "" : "s"} of ranks (use --json)` : "";
    const one = f.outliers.reduce((a, o) => a + o.ranks.length, 0) === 1 && f.moreGroups === 0;
    return (
      `Python stacks of ${f.total} ranks: ${f.waiting.length} (${theRanks(f.waiting)}) wait in ${f.at}${f.from !== undefined ? `, called from ${f.from}` : ""}; ` +
      `${others.join("; ")}${more}. ` +
      (one
        ? "The rank that is not where the others wait is the likely culprit: its stack says where it is stuck, or which other path it took."
        : "The ranks that are not where the others wait are the likely culprits: their stacks say where they are stuck, or which other path they took.")
    );
  },
};

// ---------------------------------------------------------------------------------------------
// gpu_xid, nvswitch_sxid, hca_error, gpu_pcie_error: kernel log lines pasted beside the logs, and
// the Xid and SXid lines of NCCL RAS diagnostics.

/** How the processes found by device relate to it: on its host (`sure`), or on some host with a device at that address. */
function use(kind: FindingKind, one: boolean, sure: boolean): string {
  if (kind === "hca_error") return `${one ? "uses" : "use"} ${sure ? "this HCA" : "an HCA of this name"} for NCCL's network`;
  if (kind === "nvswitch_sxid") return `${one ? "runs" : "run"} on ${sure ? "this NVSwitch's node" : "a node with NVSwitches"}`;
  return `${one ? "runs" : "run"} on ${sure ? "this GPU" : "a GPU at this address"}`;
}

export const hardwareWords = {
  /** HCAs NCCL's NET/IB could not open (`Unable to open device mlx5_58`) and went on without. */
  unopenedHca: (f: {
    devices: readonly string[];
    host?: string;
    processes: readonly string[];
    ranks: readonly number[];
    count: number;
    served: boolean;
  }): string =>
    `NCCL could not open ${f.devices.length > 0 ? `HCA ${f.devices.join(", ")}` : "an HCA"}${f.host !== undefined ? ` on ${f.host}` : ""} (ibv_open_device failed${f.count > 1 ? `, ${f.count} times` : ""})` +
    `${f.processes.length > 0 ? ` in ${f.processes.join(", ")}${f.ranks.length > 0 ? ` (${theRanks(f.ranks)})` : ""}` : ""}` +
    (f.served
      ? ` and goes on without ${f.devices.length > 1 ? "them" : "it"}. The job runs on the HCAs that opened, with less network bandwidth.`
      : ". No line shows NET/IB going on with another HCA: if none opened, NCCL falls back to sockets (or fails, with NCCL_NET=IB).") +
    " In a container the device's /dev/infiniband/uverbs* node is most often not mounted (the RDMA device plugin gave the pod fewer HCAs than sysfs shows): list the pod's HCAs in NCCL_IB_HCA, or give it the devices.",
  /**
   * One device's events: what the kernel said and what to do (`title`, `advice`: the reader of
   * kernel lines gives them), the pids the driver named, and the ranks of these logs on it:
   * `on` (on its host, or the one host of the logs when the lines name none), else `maybe`.
   */
  event: (f: {
    kind: FindingKind;
    subject: string;
    host?: string;
    title: string;
    count: number;
    firstAt: string;
    advice: string;
    pids: readonly number[];
    names: readonly string[];
    on?: {
      ranks: readonly number[];
      processes: readonly string[];
      /** Found by the pid the driver named alone, not by the device. */
      byPid: boolean;
      /** The lines name no host: taken to be the logs' one host, this one. */
      assumedHost?: string;
      assumed: boolean;
      /** The event can have broken these ranks (not info only). */
      cause: boolean;
    };
    maybe?: { ranks: readonly number[]; hosts: readonly string[]; logHosts: number };
  }): string => {
    const where = f.host !== undefined ? ` on ${f.host}` : "";
    const times = f.count === 1 ? "" : `, ${f.count} times`;
    let text = `${f.subject}${where} reported ${f.title}${times} (first at ${f.firstAt}). ${f.advice}`;
    if (f.pids.length > 0) text += ` The driver named pid ${f.pids.slice(0, 4).join(", ")}${f.names.length > 0 ? ` (${f.names.slice(0, 3).join(", ")})` : ""}.`;
    const on = f.on;
    if (on !== undefined) {
      const who = on.processes.slice(0, 4).join(", ") + (on.processes.length > 4 ? ` and ${on.processes.length - 4} more` : "");
      const one = on.ranks.length === 1 || (on.ranks.length === 0 && on.processes.length === 1);
      const how = on.byPid ? `${one ? "is" : "are"} the process the driver named` : use(f.kind, one, true);
      const hedge = on.assumed ? ` (if the kernel lines are from ${on.assumedHost ?? "that host"}: they name no host)` : "";
      const cause = on.cause ? ": a hang or a rank behind in these logs may start here" : "";
      text += on.ranks.length > 0 ? ` Rank${one ? "" : "s"} ${rankList(on.ranks)} (${who}) ${how}${hedge}${cause}.` : ` ${who} ${how}${hedge}.`;
    } else if (f.maybe !== undefined) {
      const m = f.maybe;
      const one = m.ranks.length === 1;
      text += ` The kernel lines name no host, and the logs have ${m.logHosts}: rank${one ? "" : "s"} ${rankList(m.ranks)} on ${m.hosts.slice(0, 4).join(", ")} ${use(f.kind, one, false)} or ${one ? "has" : "have"} the pid the driver named. Give the kernel log with its host (journalctl -k, or a pdsh prefix) to tell which.`;
    }
    return text;
  },
};

/** `once`, `3 times`, `at least 64 times`. */
function times(count: number, atLeast: boolean): string {
  return `${atLeast ? "at least " : ""}${count === 1 && !atLeast ? "once" : `${count} times`}`;
}

/** What NCCL's Xid guidance says to do (its classes: diagnostics_xid.cc), as ringwatch names the Xid catalogue's actions. */
export type DiagXidGuidance = "reset_gpu" | "restart_job" | "pre_ampere" | "other";

const DIAG_XID_ADVICE: Record<DiagXidGuidance, string> = {
  reset_gpu:
    "NVIDIA's Xid catalogue says to reset the GPU: drain the node and reset the GPU (nvidia-smi -r, or reboot the node) before it runs a job again. That host's kernel log (journalctl -k | grep Xid) says which GPU.",
  restart_job:
    "NVIDIA's Xid catalogue says to restart the application that hit it; the GPU itself is fine unless it repeats. That host's kernel log (journalctl -k | grep Xid) says which GPU and process.",
  pre_ampere:
    "The GPU is older than Ampere: look the Xid up in NVIDIA's archived Xid documentation, and in that host's kernel log (journalctl -k | grep Xid) for which GPU.",
  other: "Look the Xid up in NVIDIA's Xid catalogue for what to do, and in that host's kernel log (journalctl -k | grep Xid) for which GPU.",
};

/** Xid and SXid events that NCCL RAS diagnostics found in the kernel log of a job's host (NCCL 2.32.3+). */
export const diagHardwareWords = {
  xid: (f: { code: number; host?: string; count: number; atLeast: boolean; guidance: DiagXidGuidance }): string =>
    `NCCL RAS diagnostics: the kernel log of ${f.host ?? "a host of the job"} reported Xid ${f.code} ${times(f.count, f.atLeast)}. ${DIAG_XID_ADVICE[f.guidance]}`,

  sxid: (f: { code: number; host?: string; count: number; atLeast: boolean; classification: string; links?: string }): string => {
    const fatal = f.classification === "Fatal";
    return (
      `NCCL RAS diagnostics: the kernel log of ${f.host ?? "a host of the job"} reported NVSwitch SXid ${f.code} (${f.classification}${f.links !== undefined ? `, link(s) ${f.links}` : ""}) ${times(f.count, f.atLeast)}. ` +
      (fatal
        ? "A fatal SXid breaks the NVLink fabric of that node: its jobs fail until the Fabric Manager and the GPUs are reset. Drain the node."
        : "The fabric keeps working: see NVIDIA's Fabric Manager guide for this SXid, and drain the node if it repeats.")
    );
  },
};

// ---------------------------------------------------------------------------------------------
// nccl_diagnostic: NCCL RAS diagnostics (NCCL 2.31.2+) found a problem on the job's nodes.

/** ` of communicator 0x...`, or nothing. */
function ofComm(comm: string | undefined): string {
  return comm !== undefined ? ` of communicator ${comm}` : "";
}

/** `ranks 0-7`, `ranks 0-7 and 8 more` (NCCL lists at most 8 ranks and then counts them). */
function ranksAndMore(ranks: readonly number[], total: number | undefined): string {
  const more = total !== undefined && total > ranks.length ? ` and ${total - ranks.length} more` : "";
  return ranks.length === 0 ? "some ranks" : `${theRanks(ranks)}${more}`;
}

/** What differs between ranks in a mismatch line of NCCL's diagnostics. */
export type DiagMismatch = "gpu_count" | "gpu_model" | "cuda_driver" | "nvidia_driver" | "nvlink_links";

const DIAG_MISMATCH: Record<DiagMismatch, { what: string; advice: string }> = {
  gpu_count: {
    what: "number of GPUs per node",
    advice: "A GPU is missing on those nodes (it failed, or CUDA_VISIBLE_DEVICES hides it): run nvidia-smi -L there, and drain a node that lost one.",
  },
  gpu_model: {
    what: "GPU model",
    advice: "The job runs on nodes with different GPUs: it goes at the slowest one's pace. Run it on one node type.",
  },
  cuda_driver: {
    what: "CUDA driver version",
    advice: "Nodes with different drivers can make NCCL fail or slow down: put every node of the job on the same driver.",
  },
  nvidia_driver: {
    what: "NVIDIA driver version",
    advice: "Nodes with different drivers can make NCCL fail or slow down: put every node of the job on the same driver.",
  },
  nvlink_links: {
    what: "number of NVLink links per GPU",
    advice:
      "NVLink links are missing on those GPUs, so traffic between the GPUs of that node is slower or fails: check nvidia-smi nvlink -s there, then reset the GPUs or drain the node.",
  },
};

/** What to do about the checks told in NCCL's own words (ncclDiagnosticWords.said), by NCCL's label (`IOMMU mode`), else by check. */
const DIAG_ADVICE: Record<string, string> = {
  rdma_topo:
    "The PCIe layout of GPUs and NICs on those nodes is not what rdma_topo expects, which slows or breaks GPUDirect RDMA: run rdma_topo check on the node and fix what it reports.",
  iommu:
    "An IOMMU that translates addresses (DMA remapping) makes GPUDirect RDMA slow or fail: check the IOMMU mode of those nodes (iommu=pt on the kernel command line is passthrough).",
  ats: "With the IOMMU translating addresses, GPUDirect RDMA needs ATS on the NIC, or it is slow or fails: check the IOMMU mode and the NIC's ATS setting on those nodes.",
  paths:
    "DIS means NCCL found no path between some GPUs: a GPU or a link is missing from that node's topology. Compare nvidia-smi topo -m on those nodes with a healthy one.",
};

export const ncclDiagnosticWords = {
  /** `ranks` differ from rank `ref`, which has `refValue`. */
  mismatch: (f: { comm?: string; what: DiagMismatch; ranks: readonly number[]; total?: number; ref?: number; refValue?: string; across?: number }): string => {
    const m = DIAG_MISMATCH[f.what];
    const than = f.ref !== undefined ? ` than rank ${f.ref}${f.refValue !== undefined ? ` (${f.refValue})` : ""}` : " than the others";
    const across = f.across !== undefined ? `, among the ${f.across} ranks${ofComm(f.comm)}` : ofComm(f.comm);
    return `NCCL RAS diagnostics: ${ranksAndMore(f.ranks, f.total)} ${f.ranks.length === 1 && !f.total ? "has" : "have"} a different ${m.what}${than}${across}. ${m.advice}`;
  },

  /** Uncorrected ECC errors (`threshold` undefined), or corrected ones at or above NCCL_DIAGNOSTICS_ECC_THRESHOLD. */
  ecc: (f: { comm?: string; ranks: readonly number[]; total?: number; worst?: string; threshold?: string }): string => {
    const who = `the GPU memory of ${ranksAndMore(f.ranks, f.total)}`;
    const worst = f.worst !== undefined ? ` (worst count ${f.worst})` : "";
    return f.threshold === undefined
      ? `NCCL RAS diagnostics: ${who}${ofComm(f.comm)} has uncorrected ECC errors${worst}. Such a GPU can return wrong data or crash the job: drain the node, reset the GPU and check nvidia-smi -q -d ECC.`
      : `NCCL RAS diagnostics: ${who}${ofComm(f.comm)} has corrected ECC errors at or above the threshold of ${f.threshold}${worst}. Corrected errors do no harm by themselves, but a count that keeps growing is a GPU to replace: watch nvidia-smi -q -d ECC.`;
  },

  /** NVLink links down (`inactive`) or at different speeds. */
  nvlink: (f: { comm?: string; ranks: readonly number[]; total?: number; inactive: boolean }): string =>
    f.inactive
      ? `NCCL RAS diagnostics: NVLink links are down on the GPUs of ${ranksAndMore(f.ranks, f.total)}${ofComm(f.comm)}. Traffic between those GPUs is slower or fails: check nvidia-smi nvlink -s on that node, then reset the GPUs or drain the node.`
      : `NCCL RAS diagnostics: NVLink links run at different speeds on the GPUs of ${ranksAndMore(f.ranks, f.total)}${ofComm(f.comm)}. A degraded link slows every collective through it: check nvidia-smi nvlink -s on that node.`,

  /** An NCCL_* variable set differently across the ranks: each value with the ranks that have it (`(unset)` as NCCL prints it). */
  env: (f: { comm?: string; variable: string; across?: number; values: readonly { value: string; ranks: readonly number[]; total?: number }[] }): string => {
    const values =
      f.values.length > 0
        ? `: ${f.values.map((v) => `${v.value === "(unset)" ? "unset" : `${f.variable}=${v.value}`} on ${ranksAndMore(v.ranks, v.total)}`).join(", ")}`
        : " (the lines with each value are not in this log)";
    return (
      `NCCL RAS diagnostics: ${f.variable} is not the same on all ${f.across !== undefined ? `${f.across} ` : ""}ranks${ofComm(f.comm)}${values}. ` +
      `Ranks with different NCCL settings can pick different networks or algorithms, and then hang or run slow: set ${f.variable} the same for every rank (the launcher's environment, the container image).`
    );
  },

  /** The gather missed ranks: the checks named could not see them. */
  incomplete: (f: { comm?: string; gathered: number; of: number; checks: readonly string[] }): string => {
    const missing = f.of - f.gathered;
    return (
      `NCCL RAS diagnostics gathered only ${f.gathered} of ${f.of} ranks${ofComm(f.comm)} (${f.checks.join(", ")}): ${missing} rank${missing === 1 ? "" : "s"} did not answer, so these checks say nothing about ${missing === 1 ? "it" : "them"}. ` +
      "A process that does not answer is stuck outside NCCL, stopped or gone: the NCCL RAS status report (ncclras) says which."
    );
  },

  /** rdma_topo check failed: `sample` is the line of its output NCCL kept. */
  rdmaTopoFailed: (f: { comm?: string; ranks: readonly number[]; total?: number; first?: number; exit?: string; sample?: string }): string => {
    const first = f.first !== undefined ? ` (rank ${f.first}: exit ${f.exit ?? "?"}${f.sample ? `, "${f.sample}"` : ""})` : "";
    return `NCCL RAS diagnostics: rdma_topo check failed on ${ranksAndMore(f.ranks, f.total)}${ofComm(f.comm)}${first}. ${DIAG_ADVICE.rdma_topo}`;
  },

  /** Any other problem, in NCCL's own words (`said`: each line after its label), with the check's advice. */
  said: (f: { comm?: string; check: string; label: string; said: readonly string[] }): string =>
    `NCCL RAS diagnostics, ${f.label}${ofComm(f.comm)}: ${f.said.join("; ")}. ${DIAG_ADVICE[f.label] ?? DIAG_ADVICE[f.check] ?? "Compare the nodes NCCL names with a healthy one."}`,
};

// ---------------------------------------------------------------------------------------------
// collective_mismatch: the ranks issued different collectives (or sizes) at one point.

/** A size mismatch on a data connection, as the process that hit it logged it. */
export interface SizeMismatchFacts {
  /** `host:pid [dev]`; undefined when the line names no process. */
  process?: string;
  /** `10.0.0.7<43210>`, when the line names the peer. */
  peer?: string;
  /** `NET/IB`, `NET/Socket`; undefined for another transport. */
  transport?: string;
  localSize?: number;
  remoteSize?: number;
}

function sizeWords(f: SizeMismatchFacts): { hereText: string; peerText: string; net: string; sizes: string; short: string } {
  const hereText = here(f.process);
  const peerText = f.peer !== undefined ? `peer ${f.peer}` : "its peer";
  const net = f.transport ?? "the network transport";
  const known = f.localSize !== undefined && f.remoteSize !== undefined;
  const sizes = !known
    ? `a message from ${peerText} did not fit what ${hereText} posted`
    : f.transport === "NET/IB"
      ? `${hereText} sent ${bytes(f.localSize)} where ${peerText} had posted ${bytes(f.remoteSize)}`
      : `${peerText} sent ${bytes(f.remoteSize)} where ${hereText} had posted ${bytes(f.localSize)}`;
  const short = known ? ` (${bytes(f.localSize)} here, ${bytes(f.remoteSize)} from the peer)` : "";
  return { hereText, peerText, net, sizes, short };
}

/** A collective as TORCH_DISTRIBUTED_DEBUG=DETAIL prints it. */
export interface Fingerprint {
  seq?: number;
  op?: string;
  shape?: string;
  dtype?: string;
}

/** `#12 ALLREDUCE shape [1024] Float`. */
export function fingerprintText(f: Fingerprint | undefined): string {
  return f === undefined
    ? "?"
    : [f.seq !== undefined ? `#${f.seq}` : undefined, f.op, f.shape !== undefined ? `shape [${f.shape}]` : undefined, f.dtype]
        .filter((x) => x !== undefined)
        .join(" ");
}

/** torchfrtrace's classes of what differs at one collective. */
const FR_CLASS = { op: "collective type mismatch", size: "size mismatch", dtype: "dtype mismatch", state: "state mismatch" } as const;

export const collectiveMismatchWords = {
  /** logs/: two ranks' COLL lines at one sequence index. */
  logs: (f: { comm: string; seq: number; rankA: number; opA: string; rankB: number; opB: string }): string =>
    `Collective mismatch on communicator ${f.comm} at collective #${f.seq}: rank ${f.rankA} issued ${f.opA}, rank ${f.rankB} issued ${f.opB}. ` +
    `The ranks' code took different paths; NCCL will wait forever. Compare what each rank does before collective #${f.seq}.`,

  /** logs/ without Init lines: two processes' COLL lines at one opCount. */
  unresolved: (f: {
    opCount: string;
    nranks: number;
    a: { process: string; cudaDev?: number; op: string };
    b: { process: string; cudaDev?: number; op: string };
  }): string => {
    const who = (p: { process: string; cudaDev?: number }): string => `${p.process}${p.cudaDev !== undefined ? ` (cudaDev ${p.cudaDev})` : ""}`;
    return (
      `Collective mismatch at opCount 0x${f.opCount} of a ${f.nranks}-rank communicator: ${who(f.a)} issued ${f.a.op}, ${who(f.b)} issued ${f.b.op}. ` +
      `(No Init lines in these logs, so ranks are named by process.)`
    );
  },

  /** A size mismatch on a data connection (NET/IB, NET/Socket WARNs). */
  sizes: (f: SizeMismatchFacts): string => {
    const w = sizeWords(f);
    return (
      `The ranks issued different collectives or sizes: ${w.sizes} (${w.net}). ` +
      `Compare the collective calls (op, count, datatype) of the two ranks before this point, and check that NCCL_PROTO / NCCL_ALGO and the NCCL version are the same on every rank.`
    );
  },

  /** Gloo's pair got a message larger than the buffer posted for it (`op.preamble.length <= op.nbytes. 128 vs 8`). */
  gloo: (f: { ranks: readonly number[]; sent?: number; expected?: number; count: number }): string =>
    `Gloo received a message larger than the buffer posted for it${f.ranks.length > 0 ? ` on ${theRanks(f.ranks)}` : ""}` +
    `${f.sent !== undefined ? ` (${f.sent} bytes sent, ${f.expected} expected)` : ""}${f.count > 1 ? `, in ${f.count} processes` : ""}: ` +
    "the ranks of a Gloo group were in different operations at the same point (another collective, or the same one with another size: an object list or a tensor whose size depends on the rank's data). " +
    "Compare what each rank does on its Gloo groups (barriers, broadcast_object_list, all_gather_object, the CPU group beside NCCL's) before this point.",

  /** NCCL's own detection (`Mismatched collective detected ... rank 39`). */
  ncclDetected: (f: { rank?: number; message: string }): string =>
    `NCCL detected mismatched collectives${f.rank !== undefined ? ` at and around rank ${f.rank}` : ""}: "${f.message}". The ranks' code issued different collectives (or sizes); look at the collective calls of rank ${f.rank ?? "?"} and its neighbours.`,

  /** PyTorch's watchdog lines: the ranks wait in one SeqNum, in different OpTypes. */
  pytorch: (f: { group: string; seq: number; ops: readonly { op: string; ranks: readonly number[] }[] }): string =>
    `The ranks of ${f.group} wait in the same work SeqNum=${f.seq} but in different collectives: ${f.ops.map((o) => `${theRanks(o.ranks)} in ${o.op}`).join(", ")}. Their code issued different collectives (one in a data-dependent branch, or a rank that skipped one); the job cannot go on.`,

  /** PyTorch's watchdog lines: ranks of one group timed out in the same work and collective with different NumelIn. */
  pytorchSizes: (f: { group: string; seq: number; op: string; sizes: readonly { numel: number; ranks: readonly number[] }[] }): string =>
    `The ranks of ${f.group} timed out in the same work SeqNum=${f.seq} (${f.op}) with different sizes: ${f.sizes.map((x) => `${theRanks(x.ranks)} with NumelIn=${x.numel}`).join(", ")}. ` +
    "Every rank passes as many elements to this collective, so they are in different ones: a size that depends on each rank's data, or a tensor one rank gathers and another does not. Compare what each rank does before it.",

  /** TORCH_DISTRIBUTED_DEBUG=DETAIL: two ranks' fingerprints differ. */
  detail: (f: { rankA?: number; a?: Fingerprint; rankB?: number; b?: Fingerprint }): string => {
    const A = f.a ?? {};
    const B = f.b ?? {};
    const diffs: string[] = [];
    if (A.seq !== undefined && B.seq !== undefined && A.seq !== B.seq) diffs.push(`sequence number ${A.seq} vs ${B.seq}`);
    if (A.op !== undefined && B.op !== undefined && A.op !== B.op) diffs.push(`op ${A.op} vs ${B.op}`);
    if (A.shape !== undefined && B.shape !== undefined && A.shape !== B.shape) diffs.push(`tensor shape [${A.shape}] vs [${B.shape}]`);
    if (A.dtype !== undefined && B.dtype !== undefined && A.dtype !== B.dtype) diffs.push(`dtype ${A.dtype} vs ${B.dtype}`);
    const what = diffs.length > 0 ? diffs.join(", ") : "the rest of the line was cut";
    return `PyTorch (TORCH_DISTRIBUTED_DEBUG=DETAIL) found the ranks running different collectives: rank ${f.rankA ?? "?"} runs ${fingerprintText(f.a)}, rank ${f.rankB ?? "?"} runs ${fingerprintText(f.b)} (${what}). Their code diverged: a collective in a data-dependent branch, or tensors of different sizes.`;
  },

  /** NCCL RAS: ranks launched more of one type and fewer of another. */
  rasCrossed: (f: { comm: string; crossed: readonly RankAt[]; ops: readonly { op: string; counts: string }[] }): string =>
    `NCCL RAS: on communicator ${f.comm}, ${ranksAt(f.crossed)} launched more of one collective type and fewer of another than the other ranks (${rasCounts(f.ops)}): the ranks issued different collectives. Compare the stacks of both groups.`,

  /** NCCL RAS: only the ranks ahead are listed (`named`; else `first.atTop` of them). */
  rasAhead: (f: {
    comm: string;
    named: readonly RankAt[];
    first: { op: string; top: number; atTop: number; below: number };
    ops: readonly { op: string; counts: string }[];
  }): string =>
    `NCCL RAS: on communicator ${f.comm}, ${f.named.length > 0 ? ranksAt(f.named) : `${f.first.atTop} ranks`} launched ${f.first.op} #${f.first.top}, which the other ${f.first.below} ranks have not (${rasCounts(f.ops)}). ` +
    `Either those ranks took a code path with an extra ${f.first.op}, or the others are stuck before it: compare the stacks of both groups.`,

  /** Flight Recorder: at collective #seq, `found` recorded another value than `expected` (torchfrtrace's class `kind`). */
  flightRecorder: (f: {
    group: string;
    seq: number;
    kind: keyof typeof FR_CLASS;
    op: string;
    found: { ranks: readonly number[]; value: string };
    expected: { ranks: readonly number[]; value: string };
  }): string => {
    const { found: x, expected: e } = f;
    const tail = ` (${FR_CLASS[f.kind]}).`;
    let text: string;
    if (f.kind === "op")
      text = `${theRanks(x.ranks)} issued ${x.value} where ${theRanks(e.ranks)} issued ${e.value}${tail} The ranks' code took different paths: compare the stacks.`;
    else if (f.kind === "size")
      text = `${theRanks(x.ranks)} called ${f.op} with ${x.value} where ${theRanks(e.ranks)} used ${e.value}${tail} The ranks passed tensors of different shapes.`;
    else if (f.kind === "dtype") text = `${theRanks(x.ranks)} called ${f.op} with dtypes ${x.value} where ${theRanks(e.ranks)} used ${e.value}${tail}`;
    else {
      const hint = x.value === "scheduled" ? " Its kernel has not started: that GPU, or the stream the collective waits on, is busy with something else." : "";
      text = `${theRanks(x.ranks)} ${verb(x.ranks, "is", "are")} ${x.value} in ${f.op} while ${theRanks(e.ranks)} ${verb(e.ranks, "is", "are")} ${e.value}${tail}${hint}`;
    }
    return `Flight Recorder, process group ${f.group}, collective #${f.seq}: ${text}`;
  },
};

// ---------------------------------------------------------------------------------------------
// hang_suspected: a collective that every rank (seen) is in and none finishes, or a sign of a hang.

/** What a native backtrace's (or py-spy's) thread waits in, as hangSuspectedWords.nativeWait names it. */
type NativeWaitWords = "init" | "collective" | "teardown" | "store" | "mpi" | "cuda" | "pytorch";

/** Whose call a native backtrace's thread stopped in. */
const NATIVE_WAIT_OWNER: Readonly<Record<Exclude<NativeWaitWords, "pytorch">, string>> = {
  init: "NCCL",
  collective: "NCCL",
  teardown: "NCCL",
  store: "PyTorch's store client",
  mpi: "MPI",
  cuda: "CUDA",
};

/** What holds a thread in each kind of wait, and how the other ranks tell which rank is elsewhere. */
const NATIVE_WAIT_ADVICE: Readonly<Record<NativeWaitWords, string>> = {
  pytorch:
    "torch.distributed's blocking calls return when their peers take part (a send when the peer posts the matching recv, a barrier or a collective when every rank of the group joins): a rank that is behind (in another call, a data loader, a save) or gone holds it. One dump is one moment: a second one in the same place, and the other ranks' dumps (py-spy dump --native shows NCCL's or Gloo's call beneath), say which rank is elsewhere.",
  init: "A communicator's init returns only when every rank has joined it: a rank that never called it, or one that cannot reach the others (the bootstrap's interface, NCCL_SOCKET_IFNAME, a firewall), holds every rank there. The other ranks' backtraces, or their NCCL INFO lines (Init START without Init COMPLETE), say which.",
  collective:
    "A collective returns only when its peers take part: a rank that is behind (in another collective, a data loader, a save) or a dead peer holds it. The other ranks' backtraces or logs say which rank is elsewhere.",
  mpi: "An MPI collective returns when every rank of its communicator takes part: a rank elsewhere, or gone, holds it (Horovod's coordinator gathers the ranks' ready tensors with MPI_Gather: a rank that stopped submitting holds every rank). The other ranks' backtraces say which is elsewhere.",
  store:
    "A store get or wait returns when another rank sets the key (the ncclUniqueId rank 0 publishes, a barrier's count, the rendezvous): a rank that never got there holds it, as does a store that no longer answers (its host gone). The other ranks' logs or backtraces say which rank is elsewhere; the store's timeout (init_process_group's timeout) ends the wait with an error, unless the client was built without one.",
  cuda: "A kernel launch waits while the GPU's queue is full, a synchronize until the GPU's work before it finishes: work that does not finish (often an NCCL kernel waiting for a peer) holds it. One backtrace of a busy GPU can look the same: a second one a minute later in the same place, and the GPU at 100 % utilization with no progress, tell a hang.",
  teardown:
    "Finalizing or destroying a communicator waits for its outstanding work and its peers: a rank that left, or work that never completed, holds it (ncclCommAbort does not wait).",
};

/** A py-spy thread idle in a tensor collective, which NCCL only enqueues. */
const TENSOR_COLLECTIVE_IDLE =
  "A tensor collective on NCCL returns once enqueued: a thread idle in one most often waits for the GPU's launch queue, as a healthy job's does, so one dump does not tell a hang; a second one a minute later in the same place, or `py-spy dump --native` (NCCL's or CUDA's call beneath), does.";

/** How to tell a stuck process from a busy step with stack dumps, said where dumps are the only evidence. */
const DUMPS_ALONE_ADVICE =
  "Stacks are dumped when a job seems stuck, so a hang is suspected here, not shown: a dump is one moment, and a healthy step passes through the same frames. A second dump a minute later in the same frames says the process is stuck there; `py-spy dump --native` shows the NCCL, CUDA or store call beneath a Python frame, and the other ranks' dumps (or their NCCL_DEBUG=INFO logs) say which rank is elsewhere.";

export const hangSuspectedWords = {
  /** Stack dumps and nothing else that tells a hang or a failure: where their threads stand. */
  dumpsAlone: (f: { threads: number; shown: readonly string[]; ncclOwnOnly: boolean }): string =>
    `No finding here tells of a hang or a failure but these stack dumps (${f.threads === 1 ? "one thread" : `${f.threads} threads`}): ${f.shown.join("; ")}${f.threads > f.shown.length ? `; and ${f.threads - f.shown.length} more` : ""}. ` +
    (f.ncclOwnOnly
      ? "These are only NCCL's own threads (its proxy, its IB async-event thread), which wait there in a healthy job too: the application's thread that waits is not in these lines (the rest of gdb's `thread apply all bt` output has it). "
      : "") +
    DUMPS_ALONE_ADVICE,

  /** Appended to a dump's note (a CUDA wait, a running thread's sample) where the dumps are the only evidence. */
  dumpsAloneRaised:
    "No finding here tells of a hang or a failure but these stack dumps, and stacks are dumped when a job seems stuck: a hang is suspected, not shown.",

  /** XLA's rendezvous waited for participants that did not come (`... and may be stuck`). */
  xlaRendezvous: (f: { names: readonly string[]; ranks: readonly number[]; seconds: number; expected?: number }): string =>
    `XLA's rendezvous${
      f.names.length > 0
        ? ` (${f.names
            .slice(0, 3)
            .map((n) => `"${n}"`)
            .join(", ")})`
        : ""
    } waited ${f.seconds} s${f.ranks.length > 0 ? ` on ${theRanks(f.ranks)}` : ""} for participants that did not come${f.expected !== undefined ? ` (${f.expected} threads expected)` : ""}, and may be stuck. ` +
    "A participant that never arrives is a rank (or a device's thread) behind, stuck or gone; where it initializes a clique, that is XLA's NCCL communicator, whose init waits for every rank. Find the rank that did not come in the other processes' logs; if the wait goes on, XLA's termination timeout ends the process.",

  /** gdb's backtraces of threads stopped inside NCCL's calls (`threads` of them, in `calls`). */
  nativeWait: (f: {
    tool: "gdb" | "lldb" | "py-spy";
    threads: number;
    calls: readonly string[];
    wait: NativeWaitWords;
    caller?: string;
    /** The sample saw a thread wait (idle, or in a sleep or poll; for torch.distributed, in a call that blocks). */
    waiting?: boolean;
  }): string =>
    (f.wait === "pytorch"
      ? `A py-spy dump shows ${f.threads === 1 ? "a thread" : `${f.threads} threads`} idle inside torch.distributed's ${f.calls.join(", ")}`
      : `A native backtrace (${f.tool === "py-spy" ? "py-spy --native" : f.tool}) shows ${f.threads === 1 ? "a thread" : `${f.threads} threads`} stopped inside ${NATIVE_WAIT_OWNER[f.wait]}'s ${f.calls.join(", ")}`) +
    `${f.caller !== undefined ? ` (called from ${f.caller})` : ""}: ${f.threads === 1 ? "it was" : "they were"} waiting there when stopped. ` +
    (f.wait === "pytorch" && f.waiting === false ? TENSOR_COLLECTIVE_IDLE : NATIVE_WAIT_ADVICE[f.wait]),

  /** Gloo's own timeout (a CPU barrier, a `gloo:` group): the ranks that waited for a peer. */
  glooTimeout: (f: { ranks: readonly number[]; ms: number; ops: readonly string[]; behind?: boolean }): string =>
    `Gloo timed out after ${f.ms} ms waiting for a ${f.ops.join("/")}${f.ranks.length > 0 ? ` on ${theRanks(f.ranks)}` : ""}: a peer never came to the same collective of a Gloo process group (a CPU barrier such as the one before a checkpoint save). ` +
    (f.behind
      ? "The failure these logs show elsewhere is the likely reason: a rank that failed never came to it."
      : "The rank that never arrived is behind: its own log, or a stack dump of it, says where it is (another collective, a data loader, a save of its own)."),
  /** logs/: `waiting` of `seen` ranks wait in #seq for the ranks behind. */
  logs: (f: { comm: string; seq: number; op?: string; waiting: number; seen: number; behind: readonly number[]; reached: number }): string =>
    `Communicator ${f.comm} is stuck in collective #${f.seq}${f.op ? ` (${f.op})` : ""}: ${f.waiting} of ${f.seen} ranks seen wait in it for rank ${rankList(f.behind)}` +
    `${f.reached > f.seq ? ` (they enqueued up to #${f.reached})` : ""}.`,

  /** PyTorch's status lines: every rank entered work #seq and none completed it. */
  pytorch: (f: { group: string; ranks: readonly number[]; seq: number; enqueued: number }): string =>
    `In ${f.group}, ${theRanks(f.ranks)} entered work #${f.seq} and none completed it (enqueued up to #${f.enqueued}): every rank is in the collective and it does not finish ("enqueued but not completed" points at the network or a GPU, not at user code).`,

  /** PyTorch's heartbeat monitor timed out, or its watchdog got stuck for `seconds` with `pending` collectives. */
  heartbeat: (f: { group: string; ranks: readonly number[]; seconds: number; pending: number }): string =>
    `PyTorch's heartbeat monitor timed out on ${f.ranks.length ? theRanks(f.ranks) : "a rank"} of ${f.group}${f.seconds ? `: its watchdog got stuck for ${f.seconds} s` : ""}${f.pending ? ` with ${f.pending} collective${f.pending === 1 ? "" : "s"} pending` : ""}. ` +
    "A NCCL or CUDA call blocks the watchdog: a collective that never completes (a rank that never joined it, a dead peer, the network) or a GPU fault. " +
    "The process is killed after it dumps its Flight Recorder: give the dumps to ringwatch analyze.",

  /** monitoredBarrier: `reporter` got errors waiting for the ranks. */
  barrierErrors: (f: { ranks: readonly number[]; reporter?: number }): string =>
    `Rank ${rankList(f.ranks)} failed or died: ${f.reporter !== undefined ? `rank ${f.reporter}` : "a rank"} reached monitoredBarrier but got errors waiting for it. ` +
    `The job stops there; rank ${rankList(f.ranks)}'s own log has the first error.`,

  /**
   * Init START without Init COMPLETE on these ranks, and no rank of the communicator went on to a
   * collective in these logs: init had not finished where they end (a cut log, or a hang in init).
   */
  initIncomplete: (f: { comm: string; ranks: readonly number[]; processes: readonly string[]; nranks?: number; completed: readonly number[] }): string =>
    `Communicator ${f.comm}${f.nranks !== undefined ? ` (${f.nranks} ranks)` : ""}: ${f.ranks.length === 0 ? `${f.processes.join(", ")}` : `rank ${rankList(f.ranks)}`} logged Init START and no Init COMPLETE` +
    `${f.completed.length > 0 ? ` (rank ${rankList(f.completed)} completed init)` : ""}: init had not finished where these logs end. ` +
    "If the job stopped here, it hangs in communicator init: bootstrap or connection setup to a peer (the network, a firewall, NCCL_SOCKET_IFNAME), or a rank that never called ncclCommInitRank; the last lines of these ranks say which step.",

  /** PyTorch's TCPStore server timed out waiting for its clients: `joined` of `expected` connected. */
  storeClients: (f: { seconds: number; joined: number; expected: number }): string =>
    `PyTorch's store waited ${f.seconds} s for its clients and only ${f.joined} of ${f.expected} connected: the job hangs at init (the rank hosting the store, at MASTER_ADDR:MASTER_PORT, gave up). ` +
    "The ranks that never connected crashed or are stuck before init_process_group, started late, or cannot reach the store's host and port (a firewall, the wrong address); their own logs say which.",

  /** PyTorch's store-based barrier at init timed out: `joined` of `world` ranks reached it. */
  storeBarrier: (f: { key: string; ranks: readonly number[]; world?: number; joined?: number; timeout?: string }): string => {
    const who = `rank ${rankList(f.ranks)} waited`;
    const within = f.timeout !== undefined ? ` within ${f.timeout}` : "";
    if (f.world !== undefined && f.joined !== undefined && f.joined > f.world)
      return (
        `PyTorch timed out initializing a process group: ${f.joined} ranks joined its store-based barrier (${f.key}) where the world has ${f.world} (${who}). ` +
        "Another job shares this rendezvous store (the same MASTER_ADDR:MASTER_PORT, or a stale store): give each job its own port."
      );
    const count = f.world !== undefined && f.joined !== undefined ? `only ${f.joined} of ${f.world} ranks` : "not every rank";
    return (
      `PyTorch timed out initializing a process group: ${count} reached its store-based barrier (${f.key})${within}; ${who}. ` +
      "The job hangs at init: the ranks that never joined crashed, are stuck before init_process_group / new_group (data loading, a download, another rank's earlier error) or started late; their own logs say which."
    );
  },

  /** PyTorch's store-based barrier at init, still waiting: `joined` of `world` ranks, nobody joining for `seconds`. */
  storeBarrierWaiting: (f: { key: string; ranks: readonly number[]; world: number; joined: number; seconds: number; timeout?: string }): string =>
    f.joined > f.world
      ? `PyTorch is still initializing a process group: rank ${rankList(f.ranks)} waited ${Math.round(f.seconds)} s or more in its store-based barrier (${f.key}), ` +
        `which ${f.joined} ranks joined where the world has ${f.world}: it waits for the count to equal the world's, which it never will${f.timeout !== undefined ? ` (it gives up after ${f.timeout})` : ""}. ` +
        "Another launch shares this rendezvous store (the same MASTER_ADDR:MASTER_PORT, or a stale store): give each job its own port."
      : `PyTorch is still initializing a process group: rank ${rankList(f.ranks)} waited ${Math.round(f.seconds)} s or more in its store-based barrier (${f.key}), ` +
        `and only ${f.joined} of ${f.world} ranks reached it meanwhile${f.timeout !== undefined ? ` (it gives up after ${f.timeout})` : ""}. ` +
        "The job hangs at init if the others never come: they crashed, are stuck before init_process_group / new_group (data loading, a download, another rank's earlier error), or started late; their own logs say which.",

  /** monitoredBarrier: every rank but these reached it. */
  barrier: (f: { ranks: readonly number[] }): string => `The job hangs at a monitoredBarrier: every rank but ${rankList(f.ranks)} reached it.`,

  /** Flight Recorder: every rank enqueued #seq and none completed it; `states`: how many ranks in each state. */
  flightRecorder: (f: FrCollective & { states: readonly { state: string; count: number }[] }): string => {
    const states = f.states.map((s) => `${s.count} ${s.state}`).join(", ");
    return (
      `Flight Recorder, process group ${f.group}: every rank enqueued collective #${f.seq}${f.op !== undefined ? ` (${f.op})` : ""}${calledFrom(f.frame)} ` +
      `and none completed it${states ? ` (${states})` : ""}: all entered it and none finished. "Enqueued but not completed" points at the network or a GPU, not at user code.`
    );
  },
};

// ---------------------------------------------------------------------------------------------
// watchdog_timeout: PyTorch's watchdog gave up on a work.

export const watchdogTimeoutWords = {
  /** PyTorch's stack of a failed collective, printed by the watchdog, with no timeout or error line beside it. */
  stackAlone: (f: { rank?: number; op: string; caller?: string }): string =>
    `PyTorch's watchdog printed the stack of a failed collective${f.rank !== undefined ? ` on rank ${f.rank}` : ""}: ${f.op}${f.caller !== undefined ? `, called from ${f.caller}` : ""}. ` +
    "It prints it only for a collective it found timed out or failed; that line is not in these lines (its SeqNum and timeout are there). The other ranks' logs say whether they reached the same collective.",

  /** Watchdog timeout lines of one work (`seq` undefined: the line was cut before it). */
  timedOut: (f: { group: string; ranks: readonly number[]; seq?: number; op?: string; ranForMs: number; timeoutMs?: number }): string =>
    `PyTorch watchdog timed out on ${f.ranks.length ? theRanks(f.ranks) : "a rank"} of ${f.group} ${f.seq !== undefined ? `in work SeqNum=${f.seq} (${f.op ?? "?"})` : "in a collective (the line was cut before its SeqNum)"}` +
    `${f.ranForMs ? ` after ${f.ranForMs} ms` : ""}${f.timeoutMs ? ` (timeout ${f.timeoutMs} ms)` : ""}.`,

  /** Ranks that printed only "Some NCCL operations have failed or timed out ... taking the entire process down". */
  aftermath: (f: { ranks: readonly number[] }): string =>
    `Rank ${rankList(f.ranks)} printed only that NCCL operations failed or timed out and took ${f.ranks.length === 1 ? "its process" : "their processes"} down: ${f.ranks.length === 1 ? "its" : "their"} watchdog saw the failure too.`,

  /** Only the watchdog's C++ stack raising the timeout (WorkNCCL::checkTimeout), not its message. */
  stackOnly: (f: { ranks: readonly number[] }): string =>
    `PyTorch's watchdog raised a collective timeout${f.ranks.length > 0 ? ` on ${theRanks(f.ranks)}` : ""}: its C++ stack (WorkNCCL::checkTimeout) is in these lines, its message (the work's SeqNum and OpType, the rank) is not. ` +
    "A collective did not finish within the process group's timeout; the timeout's own line, or the other ranks' logs, say which work and which rank.",

  /** Ranks that printed only NCCL's `Abort COMPLETE` of their communicator. */
  aborted: (f: { ranks: readonly number[] }): string => abortedSentence(f.ranks),

  /** Said after a timeout when every rank shown entered that work and none completed it. */
  noneCompleted: (f: { ranks: readonly number[]; enqueued: number }): string =>
    `${f.ranks.length > 1 ? `Every rank shown (${rankList(f.ranks)}) entered it` : "The rank entered it"} and none completed it (enqueued up to #${f.enqueued}): the collective itself does not finish ("enqueued but not completed" points at the network or a GPU, not at user code).`,

  /** `failure detected by watchdog at work sequence id: N`; `first`: the status of the first rank, where known. */
  failureDetected: (f: { group: string; ranks: readonly number[]; seq: number; first?: { rank: number; enqueued: number; completed?: number } }): string => {
    const s = f.first;
    const status =
      s !== undefined
        ? ` (${f.ranks.length === 1 ? "it" : `rank ${s.rank}`} enqueued up to #${s.enqueued}${s.completed !== undefined ? `, completed up to #${s.completed}` : ""})`
        : "";
    return `PyTorch's watchdog detected a failure (an error or a timeout) on ${theRanks(f.ranks)} of ${f.group} at work #${f.seq}${status}.`;
  },

  /** A rank whose own timeout raised the dump: its status says where. */
  ownSignal: (f: { group: string; rank: number; enqueued: number; completed: number }): string =>
    `Rank ${f.rank}'s watchdog timed out in ${f.group}: it enqueued NCCL work up to #${f.enqueued} and completed only up to #${f.completed}, so work #${f.completed + 1} never finished. The other ranks' logs say whether they enqueued it.`,

  /** Ranks that dumped on another rank's signal: that rank's watchdog fired first. */
  firstSignal: (f: { group: string; rank: number; receivers: readonly number[] }): string =>
    `Rank ${f.rank}'s watchdog timed out first in ${f.group}: ${f.receivers.length ? theRanks(f.receivers) : "other ranks"} dumped on its signal. Rank ${f.rank}'s own log says in which collective; the ranks with nothing pending did not enqueue it.`,
};

// ---------------------------------------------------------------------------------------------
// network_error: a connection or a peer failed.

/** IB work-completion status numbers (ibv_wc_status) that come up in NCCL reports. */
const IB_STATUS: Record<number, string> = {
  4: "local protection error",
  5: "work request flushed (the QP went to error state earlier)",
  10: "remote access error",
  12: "transport retry counter exceeded: the peer stopped answering (link down, peer crashed, or a fabric problem)",
  13: "RNR retry counter exceeded",
};

/** ` on rank 3 (PG 1)`: where a PyTorch error was. */
function onRank(rank: string | undefined, group: string | undefined): string {
  return `${rank !== undefined ? ` on rank ${rank}` : ""}${group !== undefined ? ` (${group})` : ""}`;
}

/** What one of PyTorch's error lines says (`what`: its form; `text`: its words). */
export function pytorchErrorText(what: string, text: string | undefined): string {
  return what === "last_error" ? (text !== undefined ? `last error: ${text}` : "") : (text ?? what.replace(/_/g, " "));
}

/** The WARN kinds of a failed TCP socket (errors.ts's SOCKET_KINDS). */
const SOCKET_WARN_KINDS: ReadonlySet<string> = new Set(["connection_reset", "connection_closed", "connect_failed"]);

export const networkErrorWords = {
  /** libmlx5's `mlx5: <host>: got completion with error:` (`host_unknown` where the provider knew no name). */
  mlx5Completion: (f: { host: string; count: number }): string =>
    `An RDMA operation failed on ${f.host === "host_unknown" ? "a host libmlx5 did not name" : f.host}: the ConnectX provider (libmlx5) printed a work completion with an error${f.count > 1 ? ` (${f.count} times)` : ""}, ` +
    "which it does for every error but a flush and a retry timeout: a remote access or protection error, a receiver not ready, or a peer that exited or deregistered its buffer. Its queue pair is in the error state; the peer's log, and the NCCL WARN that follows in this process, say which.",
  /** NCCL's connect retries that these lines end in, with no WARN after them. */
  connectRetries: (f: { processes: readonly string[]; errors: readonly string[]; count: number }): string =>
    `NCCL on ${f.processes.join(", ")} kept retrying a connection (${f.errors.join(", ")}; ${f.count} retries in these lines) and the lines end before it connected: ` +
    "the peer it dials does not listen (not started yet, exited, or the address NCCL picked is wrong: the bootstrap interface, NCCL_SOCKET_IFNAME, a pod's address). NCCL gives up after about 20 s with `Connect to ... failed`; the peer's own log says whether it ever came up.",
  /** Gloo could not connect its full mesh at process-group init (`words`: Gloo's, `no error`, `Connect timeout [none]`). */
  glooConnect: (f: { ranks: readonly number[]; words: readonly string[] }): string =>
    `Gloo could not connect its process group's full mesh${f.ranks.length > 0 ? ` on ${theRanks(f.ranks)}` : ""} (${f.words.map((w) => `"${w}"`).join(", ")}): ` +
    "the process group could not be set up because a rank could not reach a peer over TCP. " +
    (f.words.some((w) => w.startsWith("connect [127.") || w.startsWith("connect [localhost]") || w.startsWith("connect [::1]"))
      ? "The peer's address is a loopback one: its host name resolves to 127.0.x.x or ::1 (the line many distributions' /etc/hosts give the machine's own name), so a rank on another host dials itself; map the host name to the address the other hosts reach, or set GLOO_SOCKET_IFNAME. "
      : "") +
    "Check the interface Gloo picked (GLOO_SOCKET_IFNAME; the address the host name resolves to), firewalls between the hosts, and whether every rank was started (a peer that exited or never came up refuses or times out).",
  /** PyTorch's c10d store client gave up connecting to the store. */
  storeConnect: (f: { peers: readonly string[]; seconds: number; count: number }): string =>
    `PyTorch's store client timed out after ${f.seconds} s connecting to ${f.peers.slice(0, 3).join(", ")}${f.peers.length > 3 ? ` and ${f.peers.length - 3} more` : ""}` +
    `${f.count > 1 ? ` (${f.count} times in these lines)` : ""}: the rank never reached the rendezvous store every rank joins before NCCL starts. ` +
    (f.peers.some((p) => p.startsWith("172.17."))
      ? "172.17.x.x is Docker's default bridge: an address only that host's containers reach; run the containers with the host's network (--network=host) or hand over the host's own address. "
      : "") +
    "Check that the store's host and port (MASTER_ADDR/MASTER_PORT, or the address the framework handed over) are reachable from this host (a firewall, the wrong interface's address) and that the process that serves it is up.",
  /** A process's return chain carried ncclRemoteError with no network WARN of its own. */
  chain: (f: { process: string; chain: string; warn?: string }): string =>
    `NCCL on ${f.process} failed because a remote process exited or the network failed: ${f.chain}${f.warn !== undefined ? ` after WARN "${f.warn}"` : ""}. ` +
    "This process only saw it happen: the first error is in a peer's log (a crashed rank, a connection reset, an IB completion error).",

  /** A system error with no WARN of its own, on a host where another process's socket failed. */
  socketChain: (f: { process: string; chain: string; socket: string }): string =>
    `NCCL failed on ${f.process}: ${f.chain}, with no WARN of its own in the excerpt, while ${f.socket} on the same host lost a socket connection: ` +
    "most likely the same failure (the bootstrap or a proxy connection); this process's first error is earlier in its log.",

  /** Network errors that followed a CUDA failure: said in that failure's finding. */
  fallout: (f: { processes: readonly string[]; peer?: string }): string =>
    `The network errors that followed on ${f.processes.length > 0 ? f.processes.join(", ") : "other processes"}${f.peer !== undefined ? ` (peer ${f.peer})` : ""} come from it.`,

  /**
   * NCCL's WARNs of failed connections, by the peer they point at: the processes that saw them
   * (`host:pid [dev]`, or a launcher's rank for a line that names no process), the WARN kinds, IB's completion status, what the system or plugin said, the processes'
   * return chains (`ncclReturned` texts), and a CUDA failure nearby that likely caused them.
   */
  logs: (f: {
    peer?: string;
    seenBy: readonly (string | number)[];
    kinds: readonly string[];
    lines: number;
    ib?: { status: number; vendorErr?: number };
    said?: { byPlugin: boolean; error: string; rc?: number };
    chains: string;
    root?: { process: string; key: string; message: string; sameHost: boolean };
    /** The ranks at the other end, where the lines name them. */
    peerRanks?: readonly number[];
  }): string => {
    const ibText = f.ib
      ? ` IB completion status ${f.ib.status}${f.ib.vendorErr !== undefined ? ` vendor err ${f.ib.vendorErr}` : ""}${IB_STATUS[f.ib.status] ? `: ${IB_STATUS[f.ib.status]}` : ""}.`
      : "";
    const s = f.said;
    const errText = s
      ? ` The ${s.byPlugin ? "net plugin" : "system"} said: ${s.error}${s.rc !== undefined ? ` (RC ${s.rc}${s.rc === 113 ? ", no route to host" : ""})` : ""}.`
      : "";
    const r = f.root;
    const rootText = r
      ? `Likely fallout of the CUDA failure on ${r.process} ("${r.message}"), ${r.sameHost ? "a process of the same host" : "the peer"}: `
      : "";
    const where =
      f.seenBy.length > 0
        ? ` on ${f.seenBy
            .slice(0, 4)
            .map((x) => (typeof x === "number" ? `rank ${x}` : x))
            .join(", ")}`
        : "";
    const many = f.lines > 1 ? "s" : "";
    const peerRanks = f.peerRanks !== undefined && f.peerRanks.length > 0 ? `rank ${rankList(f.peerRanks)}` : undefined;
    const at = f.peer !== undefined ? ` at peer ${f.peer}` : peerRanks !== undefined ? ` with ${peerRanks}` : "";
    const head = `Network error${many}${at}${where}`;
    // Only TCP sockets failed (the bootstrap, a proxy, NET/Socket): the IP path, not an HCA.
    const tcp = f.kinds.every((k) => SOCKET_WARN_KINDS.has(k))
      ? "the TCP path between the hosts (the interface NCCL_SOCKET_IFNAME picks, routes, firewalls)"
      : undefined;
    return (
      `${rootText}${head}: ${f.kinds.join(", ")} (${f.lines} line${many}).${ibText}${errText}${f.chains} ` +
      (r
        ? `Fix the GPU failure of ${r.key} first.`
        : f.peer !== undefined || peerRanks !== undefined
          ? `Check the peer's processes (${peerRanks !== undefined ? `${peerRanks}'s own log has the first error: a crash there closes the connection too` : "its own log has the first error"}), ${tcp ?? "this node's HCA port (ringwatch_infiniband_*) and the link between"}.`
          : `Check ${tcp ?? "this node's HCA port (ringwatch_infiniband_*) and its link"}, and the peers' logs for the first error.`)
    );
  },

  /** PyTorch's error lines of one rank: a remote process or the network failed. */
  pytorch: (f: { rank?: string; group?: string; texts: readonly string[]; peer?: string }): string =>
    `NCCL${onRank(f.rank, f.group)} lost a peer: ${f.texts.join("; ")}${f.peer ? ` (the last error points at peer ${f.peer})` : ""}. A remote process died or the network failed; the first rank to fail is the one to look at.`,

  /** NCCL RAS cannot reach `count` job processes. */
  rasDead: (f: { count: number; processes: readonly RasProcessAt[] }): string => {
    const procs = rasProcesses(f.processes);
    return `NCCL RAS cannot reach ${f.count} job process(es)${procs ? `: ${procs}` : ""}. They died or their node is cut off from the network: check those nodes first.`;
  },
};

// ---------------------------------------------------------------------------------------------
// nccl_error: NCCL failed in a process (its WARN, its return chain, PyTorch's or RAS's word).

/** NCCL's `comm ... rank 4 nranks 8 ... - Abort COMPLETE` of ranks the failure's own lines do not name. */
function abortedSentence(ranks: readonly number[]): string {
  const one = ranks.length === 1;
  return `${one ? "Rank" : "Ranks"} ${rankList(ranks)} aborted ${one ? "its communicator" : "their communicators"} (NCCL's "Abort COMPLETE"), as PyTorch does after a timeout or an error ${one ? "it" : "they"} saw: ${one ? "it" : "they"} failed too.`;
}

/**
 * NCCL found no interface to bootstrap over (`Bootstrap : no socket interface found`), or took an
 * address of none (`ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor
 * AF_INET6(10)`, an empty address): where to look, after the words; "" for any other error.
 */
function interfaceHint(texts: readonly string[]): string {
  if (!texts.some((t) => t.includes("no socket interface found") || t.includes("is neither AF_INET"))) return "";
  return (
    " NCCL found no usable network interface for its bootstrap: NCCL_SOCKET_IFNAME names no interface of this host (a typo, an interface of another machine), or only the loopback and container bridges are up. " +
    "Set it to the interface that joins the nodes (`ip -br addr` lists them); a network problem of the host's setup, not of the fabric."
  );
}

export const ncclErrorWords = {
  /** A process killed by a signal, as UCX's handler caught it; `inNccl`: NCCL's functions in its backtrace. */
  caughtSignal: (f: { process: string; handler: "UCX" | "Open MPI"; signal: number; what: string; inNccl: readonly string[] }): string =>
    `${f.process !== "" ? `Process ${f.process}` : "A process of the job (the lines cut before its name)"} crashed: ${f.signal !== 0 ? `signal ${f.signal}${f.what !== "" ? ` (${f.what})` : ""}, ` : ""}caught by ${f.handler}'s handler${f.inNccl.length > 0 ? `, in ${[...new Set(f.inNccl)].join(" < ")}` : ""}. ` +
    (f.signal === 7
      ? "A bus error inside NCCL in a container is most often /dev/shm too small for NCCL's shared-memory buffers: give the container more (docker run --shm-size=16g, a Kubernetes emptyDir with medium: Memory at /dev/shm), or set NCCL_SHM_DISABLE=1 to test. "
      : "") +
    "The other ranks then wait for it until their own timeout.",
  /** Ranks that printed only NCCL's `Abort COMPLETE` of their communicator after an error that names no rank. */
  aborted: (f: { ranks: readonly number[] }): string => abortedSentence(f.ranks),

  /** The process that hit a size mismatch on a data connection (`message`: its WARN; `chain`: `ncclReturned` or ""). */
  sizeMismatch: (f: SizeMismatchFacts & { message: string; chain: string }): string => {
    const w = sizeWords(f);
    return `NCCL failed on ${w.hereText}: ${w.net} size mismatch with ${w.peerText}${w.short}, "${f.message.slice(0, 160)}".${f.chain} The cause is the collective_mismatch above.`;
  },

  /** A CUDA call inside NCCL failed. */
  cuda: (f: { process?: string; message: string; chain: string }): string =>
    `A CUDA call inside NCCL failed on ${here(f.process)}: "${f.message}". This process's GPU is the root cause (${/memory/i.test(f.message) ? "memory exhausted: another process on the GPU, or the job's own allocations" : "a fault or a wrong build"}); network errors of its peers follow from it.${f.chain}`,

  /** The bootstrap root saw one rank check in twice. */
  /** NCCL could not use NVML (`No NVML device handle. Skipping nvlink detection.`): it goes on, blind to NVLink. */
  nvml: (f: { process?: string; message: string; chain: string }): string =>
    `NCCL could not use NVML on ${here(f.process)}: "${f.message}".${f.chain} It goes on without what NVML tells (NVLink between the GPUs), so it may route GPU-to-GPU traffic over PCIe or host memory, much slower. ` +
    "Check that the container's libnvidia-ml.so matches the host driver (the NVIDIA container toolkit mounts it) and that nvidia-smi works inside the job.",

  /** `Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000`. */
  sharedGpu: (f: { process?: string; message: string; chain: string }): string =>
    `Two ranks of one communicator are on one GPU (${here(f.process)}: "${f.message}"), so NCCL refuses to form it (ncclInvalidUsage).${f.chain} ` +
    "Give each rank its own GPU: set the device from the local rank before the first collective (torch.cuda.set_device(local_rank), hvd.local_rank()), and check CUDA_VISIBLE_DEVICES per process.",

  duplicateRank: (f: { process?: string; rank: number; chain: string }): string =>
    `NCCL's bootstrap root on ${here(f.process)} saw rank ${f.rank} check in twice: two processes were started as rank ${f.rank}, so the communicator cannot form. ` +
    `Check how the launcher gives ranks (RANK / LOCAL_RANK, SLURM_PROCID, a second job on the same NCCL_COMM_ID or MASTER_PORT).${f.chain}`,

  /** NCCL's bootstrap got a setup message of another size than expected. */
  bootstrap: (f: { process?: string; localSize?: number; remoteSize?: number; chain: string }): string =>
    `NCCL's bootstrap failed on ${here(f.process)}: a setup message of ${bytes(f.remoteSize)} arrived where ${bytes(f.localSize)} were expected, so the ranks disagree on the setup exchange (different NCCL versions, mismatched init calls, or two jobs on one NCCL_COMM_ID / port).${f.chain}`,

  /** A net plugin failed to initialize. */
  netPlugin: (f: { process?: string; message: string; chain: string }): string =>
    f.message.includes("nitializ")
      ? `The net plugin failed to initialize on ${here(f.process)}: "${f.message}".${f.chain} NCCL goes on with another network, often NET/Socket (see socket_transport); check the plugin's libraries and devices (EFA, libfabric) in the job's container.`
      : `A libfabric call of the net plugin failed on ${here(f.process)}: "${f.message}".${f.chain} The plugin returns an error to NCCL, and the NCCL call that needed it fails; ` +
        "check the EFA devices and libfabric's provider on that host (fi_info -p efa), and the plugin's and libfabric's versions against the NCCL in the job's container.",

  /** nccl-tests' own failure lines, where no NCCL line of those hosts says more. */
  ncclTests: (f: { check: "NCCL" | "CUDA"; words: string; at: string; processes: readonly string[] }): string =>
    `nccl-tests stopped: ${f.check === "NCCL" ? "an NCCL call" : "a CUDA call"} failed with "${f.words.replace(/ \(run with NCCL_DEBUG=INFO for details\)[ /]*$/, "")}" (${f.at}) on ${f.processes.join(", ")}. ` +
    (f.check === "NCCL"
      ? "No NCCL line of these processes is in the logs: run with NCCL_DEBUG=INFO (NCCL_DEBUG_FILE per process) to see which call failed and why."
      : "The GPU's memory or state, not the network: look at the GPU (nvidia-smi, the kernel log's Xid lines) and the test's sizes (-b/-e)."),

  /** A WARN of NCCL's RAS service, which no communicator depends on. */
  rasService: (f: { process?: string; message: string }): string =>
    `NCCL's RAS service failed on ${here(f.process)}: "${f.message}". The job's communicators do not depend on it; RAS queries (ncclras, ringwatch's RAS watch) may not reach this process` +
    (/in use/i.test(f.message)
      ? ": another process of the host holds RAS's client address (NCCL_RAS_ADDR, localhost:28028 by default), and only one process per host can."
      : "."),

  /** Any other NCCL error WARN (`kind`: the WARN's kind, `internal_error`). */
  other: (f: { kind: string; process?: string; message: string; chain: string }): string =>
    `NCCL ${f.kind.replace("_", " ")} on ${here(f.process)}: "${f.message}".${f.chain}${interfaceHint([f.message])}`,

  /** An error-return chain that no other finding told; `warn`: the WARN right before it, if any. */
  chain: (f: { process: string; chain: string; warn?: string }): string =>
    `NCCL failed on ${f.process}: ${f.chain}${f.warn !== undefined ? ` after WARN "${f.warn}"` : "; no WARN line in the excerpt says why (look earlier in this process's log, or run with NCCL_DEBUG=INFO)"}.${interfaceHint(f.warn !== undefined ? [f.warn] : [])}`,

  /** A CUDA error stopped PyTorch's watchdog on a rank. */
  pytorchCuda: (f: { rank?: string; group?: string; error: string }): string =>
    `A CUDA error stopped PyTorch's NCCL watchdog${onRank(f.rank, f.group)}: ${f.error}. The fault is on that rank's GPU (a kernel's bad memory access, or the GPU itself: look at the kernel log for an Xid), not in the network; ` +
    "the other ranks then wait for it. Rerun with CUDA_LAUNCH_BLOCKING=1 to find the kernel.",

  /** PyTorch's error lines of one rank, no peer named. */
  pytorch: (f: { rank?: string; group?: string; texts: readonly string[]; seq?: number; op?: string; by?: string }): string =>
    `${f.by ?? "PyTorch"} reported an NCCL failure${onRank(f.rank, f.group)}${f.seq !== undefined ? ` in work SeqNum=${f.seq}${f.op !== undefined ? ` (${f.op})` : ""}` : ""}${f.texts.length > 0 ? `: ${f.texts.join("; ")}.` : ": its `Last error:` row is the last of the excerpt, so the error's own words are not in it."}${interfaceHint(f.texts)}`,

  /** NCCL RAS: the ranks of a communicator are in different states; `odd`: those not in the largest group. */
  rasStates: (f: { comm: string; states: readonly { count: number; status?: string }[]; odd: readonly RankAt[] }): string =>
    `NCCL RAS: the ranks of communicator ${f.comm} are in different states (${f.states.map((g) => `${g.count} ${g.status ?? "?"}`).join(", ")})${f.odd.length > 0 ? `: ${ranksAt(f.odd)}` : ""}.`,

  /** NCCL RAS has no data from `missing` ranks of a communicator. */
  rasIncomplete: (f: { comm: string; missing: number; ranks: readonly RankAt[] }): string =>
    `NCCL RAS has no data for communicator ${f.comm} from ${f.missing} rank(s)${f.ranks.length > 0 ? ` (${ranksAt(f.ranks)})` : ""}: those processes did not answer; they may be stuck outside NCCL or gone.`,

  /** NCCL RAS reports errors on a communicator. */
  rasErrors: (f: { comm: string; errors: readonly string[]; ranks: readonly RankAt[] }): string =>
    `NCCL RAS reports errors on communicator ${f.comm}: ${f.errors.join("; ") || "see the report"}${f.ranks.length > 0 ? ` (${ranksAt(f.ranks)})` : ""}.`,

  /** NCCL RAS has no communicator data from `count` job processes. */
  rasNoData: (f: { count: number; processes: readonly RasProcessAt[] }): string => {
    const procs = rasProcesses(f.processes);
    return `NCCL RAS has no communicator data from ${f.count} job process(es)${procs ? `: ${procs}` : ""}.`;
  },
};

// ---------------------------------------------------------------------------------------------
// socket_transport: NCCL moves data over TCP sockets.

interface SocketFacts {
  /** The processes on sockets; none when only an orphan WARN of NET/Socket says so. */
  processes: readonly string[];
  /** NET/IB found no device (or was disabled). */
  noIb: boolean;
  /** The interfaces NET/Socket uses (`eth0:10.0.0.7<0>`). */
  interfaces: readonly string[];
}

function socketsOn(f: SocketFacts): string {
  const on = f.processes.length > 0 ? processList(f.processes) : "the process that logged the NET/Socket warning";
  const why = f.noIb ? " (NET/IB : No device found, NCCL_IB_DISABLE set, or libibverbs missing)" : "";
  return `${on}${why}${f.interfaces.length > 0 ? `, NET/Socket on ${f.interfaces.slice(0, 3).join(", ")}` : ""}`;
}

export const socketTransportWords = {
  /** Every process of the logs on one host: the sockets join ranks of that host. */
  oneHost: (f: SocketFacts & { host: string }): string =>
    `NCCL moves data between the ranks of ${f.host} over TCP sockets on ${socketsOn(f)}, not over NVLink/PCIe (P2P) or shared memory. ` +
    "On one host that happens when P2P and SHM are disabled (NCCL_P2P_DISABLE, NCCL_SHM_DISABLE), when the ranks look like different hosts to NCCL (NCCL_HOSTID, containers without a shared /dev/shm or IPC namespace) or when they share a GPU; these lines do not say which. " +
    "Fine for a test; a real job loses most of its bandwidth this way.",

  /** One host, no channel over sockets, and NCCL could not load libibverbs there. */
  quietHostNoVerbs: (f: { host: string; processes: readonly string[] }): string =>
    `NCCL could not load libibverbs on ${f.host} (${f.processes.slice(0, 4).join(", ")}${f.processes.length > 4 ? ", ..." : ""}), so it selected TCP sockets for traffic between nodes. ` +
    `These lines show ranks of ${f.host} alone, which NVLink/PCIe (P2P) and shared memory join, and no channel line of them goes through the sockets; a host without InfiniBand warns so. ` +
    "If the job also runs on other nodes, their traffic goes over TCP: install the IB verbs library (rdma-core: libibverbs1 and the HCA's provider) in the job's image.",

  /** Between nodes; `loopback`: one of the interfaces is `lo`. */
  betweenNodes: (f: SocketFacts & { loopback: boolean }): string =>
    `NCCL moves data between nodes over TCP sockets, not InfiniBand/RoCE, on ${socketsOn(f)}. ` +
    (f.loopback ? "lo is the loopback interface: other nodes cannot reach it; set NCCL_SOCKET_IFNAME to the interface that joins the nodes. " : "") +
    `Sockets reach a small fraction of IB bandwidth and load the CPUs. Check that the IB devices and libibverbs are visible to the job (NCCL_IB_HCA, container device mounts).`,
};

// ---------------------------------------------------------------------------------------------
// gdr_disabled: GPUDirect RDMA is off.

export const gdrDisabledWords = {
  /**
   * `processes`: those with GDR off (none: only lines that name no process say so); `said`: what
   * NCCL said of it; `sockets`: one of them uses NET/Socket.
   */
  off: (f: { processes: readonly string[]; said: readonly string[]; sockets: boolean; unsupported?: boolean }): string => {
    const on = f.processes.length > 0 ? processList(f.processes) : "the process that logged it";
    if (f.unsupported === true)
      return `GPUDirect RDMA is off on ${on}: ${f.said.slice(0, 3).join("; ")}. This GPU cannot do it, so inter-node traffic is staged through host memory; nothing to fix in the software.`;
    const far = f.said.some((x) => x.includes("(distance "));
    return (
      `GPUDirect RDMA is off on ${on}${f.said.length > 0 ? `: ${f.said.slice(0, 3).join("; ")}` : ""}${f.processes.length === 0 ? " (no host:pid in the line)" : ""}. Inter-node traffic is staged through host memory (roughly 10-50 % slower on large messages). ` +
      (f.sockets ? "On the NET/Socket transport GDR cannot work at all: fix the socket transport first. " : "") +
      (far
        ? "The GPU and the NIC are further apart in PCIe than NCCL_NET_GDR_LEVEL allows (not under one PCIe switch): place them closer or raise NCCL_NET_GDR_LEVEL if the platform's peer-to-peer path is fast. "
        : "") +
      `Check that nvidia_peermem is loaded (ringwatch_gdr_peermem_loaded) and the GPU-NIC distance (NCCL_NET_GDR_LEVEL).`
    );
  },
};

// ---------------------------------------------------------------------------------------------
// dump_unreadable: a Flight Recorder dump that could not be used.

export const dumpUnreadableWords = {
  failed: (f: { source: string; rank?: number; error: string }): string =>
    `Flight Recorder dump ${f.source}${f.rank !== undefined ? ` (rank ${f.rank})` : ""} could not be read: ${f.error}.`,
  noRank: (f: { source: string }): string =>
    `Flight Recorder dump ${f.source} names no rank (no "rank" key, and its file name does not end in one, as in nccl_trace_rank_3): left out.`,
  duplicate: (f: { rank: number; used: string; source: string }): string =>
    `Two Flight Recorder dumps of rank ${f.rank}: ${f.used} is used, ${f.source} is left out.`,
  truncated: (): string => "More process groups or ranks than ringwatch analyzes (1,024 groups, 65,536 ranks per group): some were left out.",
};

// ---------------------------------------------------------------------------------------------
// kernel_log_truncated: kernel events left out of the report.

export const kernelLogTruncatedWords = {
  dropped: (f: { dropped: number; kept: number }): string =>
    `${f.dropped} more kernel events are not shown: the report keeps ${f.kept} devices and codes, the most severe first. Give analyze fewer nodes' kernel logs at a time to see them.`,
};

// ---------------------------------------------------------------------------------------------
// Horovod's stall inspector (logs/horovod/): rank_behind, and hang_suspected where the report names
// only the ranks that did submit.

/** `more than 60 s ago`, or the stall-check time when the report's line does not say (it wrapped). */
function stallAge(seconds: number | undefined): string {
  return seconds !== undefined ? `more than ${seconds} s ago` : "longer ago than the stall-check time (HOROVOD_STALL_CHECK_TIME_SECONDS)";
}

export const horovodStallWords = {
  /** The coordinator refused a tensor the ranks submitted differently (its words name no rank). */
  mismatched: (f: { message: string; reporters: readonly number[] }): string =>
    `Horovod's coordinator refused a collective the ranks submitted differently: "${f.message}"` +
    `${f.reporters.length > 0 ? ` (reported by ${theRanks(f.reporters)}; Horovod does not say which rank differs)` : " (Horovod does not say which rank differs)"}. ` +
    "Every rank must submit each tensor name with the same op, shape, data type, device and root: look for a rank-dependent branch, or a tensor placed on the CPU on some ranks only.",

  /** Stall reports whose lines name neither ranks nor tensors. */
  unnamed: (f: { reports: number; seconds?: number }): string =>
    `Horovod's stall inspector reported tensors that some ranks submitted and the others did not${f.seconds !== undefined ? ` for more than ${f.seconds} s` : ""}` +
    `${f.reports > 1 ? ` (${f.reports} reports)` : ""}; these lines name neither the ranks nor the tensors. ` +
    "A rank that stopped or took another path holds the others up: Horovod's full report (the lines after this one) names the missing ranks.",
  /** `ranks` have not submitted the tensors the other ranks wait in; `names`: some of them, per rank; `reports`: how many reports named them. */
  missing: (f: {
    ranks: readonly number[];
    seconds?: number;
    names: readonly { ranks: readonly number[]; tensors: readonly string[] }[];
    reports: number;
    shutdown?: { ranks: readonly number[]; seconds?: number };
  }): string => {
    const what = f.names
      .slice(0, 3)
      .map((n) => `${f.names.length > 1 ? `${theRanks(n.ranks)}: ` : ""}${n.tensors.slice(0, 3).join(", ")}${n.tensors.length > 3 ? ", ..." : ""}`)
      .join("; ");
    const stop = f.shutdown
      ? ` ${theRanks(f.shutdown.ranks)} stalled past the shutdown time${f.shutdown.seconds !== undefined ? ` (${f.shutdown.seconds} s)` : ""}: Horovod shuts the job down.`
      : f.reports > 1
        ? ` Reported ${f.reports} times: the stall lasts.`
        : "";
    return (
      `Horovod's stall inspector: ${theRanks(f.ranks)} ${verb(f.ranks, "has", "have")} not submitted the tensors the other ranks submitted ` +
      `${stallAge(f.seconds)}${what ? ` (${what})` : ""}; the other ranks wait for ${verb(f.ranks, "it", "them")}.${stop} ` +
      `Look at what ${theRanks(f.ranks)} ${verb(f.ranks, "does", "do")} instead (py-spy dump): a slow or stuck rank (validation or checkpointing on one rank, uneven data), ` +
      "or tensors named differently on different ranks, which never match."
    );
  },

  /** The oldest report's tensors by the ranks that submitted them, where two such sets cross (no rank is merely late). */
  crossed: (f: { sets: readonly { ranks: readonly number[]; tensors: readonly string[] }[]; seconds?: number }): string => {
    const what = f.sets
      .slice(0, 3)
      .map((x) => `${theRanks(x.ranks)} submitted ${x.tensors.slice(0, 2).join(", ")}${x.tensors.length > 2 ? `, ... (${x.tensors.length} tensors)` : ""}`)
      .join("; ");
    return (
      `Horovod's stall inspector: the ranks submitted different tensors ${stallAge(f.seconds)} (${what}), and each waits for a tensor the others have not submitted: ` +
      "they run different collectives, not one late rank. Look for a branch or an order that differs between ranks (a loss or metric reduced on some ranks only, a data-dependent condition)."
    );
  },

  /** The oldest report lists only the ranks that submitted (`ready`); `absent`: the ranks below the highest of them that did not. */
  readyOnly: (f: { absent: readonly number[]; ready: readonly number[]; seconds?: number; tensors: readonly string[] }): string => {
    const max = Math.max(...f.ready);
    const tensors = `${f.tensors.slice(0, 3).join(", ")}${f.tensors.length > 3 ? ", ..." : ""}`;
    return f.absent.length > 0
      ? `Horovod's stall inspector: ${theRanks(f.ready)} submitted ${tensors} ${stallAge(f.seconds)}, ${theRanks(f.absent)} did not, and the others wait for ${verb(f.absent, "it", "them")} ` +
          `(this Horovod lists only the ranks that submitted: ranks above ${max} may be missing too). Look at what ${theRanks(f.absent)} ${verb(f.absent, "does", "do")} instead (py-spy dump).`
      : `Horovod's stall inspector: ${theRanks(f.ready)} submitted ${tensors} ${stallAge(f.seconds)} and wait for the others; ` +
          `this Horovod lists only the ranks that submitted, so the ranks that did not are those above ${max}. Look at what they do instead (py-spy dump).`;
  },
};

// ---------------------------------------------------------------------------------------------
// Flight Recorder's analyzer (torchfrtrace / fr_trace) output pasted as text (flight-recorder/text-*.ts):
// rank_behind, collective_mismatch, rank_missing.

/** A collective as torchfrtrace's text names it. */
interface FrTextCollective {
  /** `0 (default_pg)`, or undefined when the text does not say. */
  group?: string;
  seq?: number;
  op?: string;
  /** `job.py:20`: the innermost frame outside PyTorch of its stack. */
  frame?: string;
}

function frTextAt(f: FrTextCollective): string {
  return `${f.group !== undefined ? `process group ${f.group}, ` : ""}collective ${f.seq !== undefined ? `#${f.seq}` : "(number not printed)"}${f.op !== undefined ? ` (${f.op})` : ""}`;
}

export const frTextWords = {
  /** `missing` never joined the collective `waiting` are in (`state`: its state on those ranks). */
  notJoined: (f: FrTextCollective & { missing: readonly number[]; waiting?: readonly number[]; state?: string }): string =>
    `torchfrtrace (Flight Recorder's analyzer): ${theRanks(f.missing)} never joined ${frTextAt(f)}` +
    `${f.waiting && f.waiting.length > 0 ? `, which ${theRanks(f.waiting)} ${verb(f.waiting, "is", "are")} in${f.state ? ` (${f.state})` : ""}` : ""}${f.frame !== undefined ? `, called from ${f.frame}` : ""}; the others wait for ${verb(f.missing, "it", "them")}. ` +
    `Look at what ${theRanks(f.missing)} ${verb(f.missing, "does", "do")} instead (py-spy dump): another code path, or stuck on the CPU.`,

  /** The ranks that recorded another op, size, dtype or state than the others at that collective. */
  mismatch: (
    f: FrTextCollective & { ranks: readonly number[]; kind?: "op" | "size" | "dtype" | "state"; expected?: string; found?: string; said: string },
  ): string => {
    const who = f.ranks.length > 0 ? theRanks(f.ranks) : "some ranks";
    const what =
      f.expected !== undefined && f.found !== undefined
        ? f.kind === "op"
          ? `${who} issued ${f.found} where the others issued ${f.expected}`
          : f.kind === "state"
            ? `${who} ${f.ranks.length === 1 ? "is" : "are"} ${f.found} while the others are ${f.expected}`
            : `${who} recorded ${f.found} where the others recorded ${f.expected}`
        : `${who} differ from the others: ${f.said}`;
    const advice =
      f.kind === "op"
        ? " The ranks' code took different paths: compare their stacks."
        : f.kind === "size" || f.kind === "dtype"
          ? " The ranks passed tensors of different shapes or types."
          : "";
    return `torchfrtrace (Flight Recorder's analyzer), ${frTextAt(f)}: ${what}.${advice}`;
  },

  /** all_to_all: the inputs and outputs of all ranks do not add up. */
  numel: (f: FrTextCollective & { input?: number; output?: number }): string =>
    `torchfrtrace (Flight Recorder's analyzer), ${frTextAt(f)}: the ranks' inputs (${f.input ?? "?"} elements in all) and outputs (${f.output ?? "?"}) do not add up; ` +
    "one rank passed split sizes that do not match the others'. The analyzer cannot tell which.",

  /** The analyzer had no dump from these ranks. */
  noDumps: (f: { ranks: readonly number[] }): string =>
    `torchfrtrace (Flight Recorder's analyzer) had no dump from ${theRanks(f.ranks)}: ${verb(f.ranks, "it", "they")} may be the rank behind, or died. Collect ${verb(f.ranks, "its", "their")} dump or log.`,
};
