/** Offline findings from PyTorch ProcessGroupNCCL output: watchdog timeouts, work status, desync reports. */
import type { Tracker } from "../state/tracker.js";
import { rankList, type Finding } from "./report.js";

function uniq<T>(xs: Iterable<T>): T[] {
  return [...new Set(xs)];
}

/** Every rank the logs' communicators name (for "which rank did not report"). */
function knownRanks(t: Tracker): Set<number> {
  let world: number[] = [];
  for (const c of t.comms.values()) if (c.ranks.size > world.length) world = [...c.ranks.keys()];
  return new Set(world);
}

export function pytorchFindings(t: Tracker): Finding[] {
  const out: Finding[] = [];
  const known = knownRanks(t);
  // Watchdog timeouts, grouped by (SeqNum, OpType): ranks at different sequence numbers diverged.
  const groups = new Map<string, typeof t.watchdogs>();
  for (const w of t.watchdogs) {
    const k = `${w.seq ?? "?"}|${w.opType ?? "?"}`;
    groups.set(k, [...(groups.get(k) ?? []), w]);
  }
  for (const ws of groups.values()) {
    const w0 = ws[0];
    if (!w0) continue;
    const ranks = uniq(ws.map((w) => w.rank).filter((r): r is number => r !== undefined)).sort((a, b) => a - b);
    const ran = Math.max(...ws.map((w) => w.ranForMs ?? 0));
    out.push({
      kind: "watchdog_timeout",
      severity: "critical",
      summary:
        `PyTorch watchdog timed out on rank ${ranks.length ? rankList(ranks) : "?"} in work SeqNum=${w0.seq ?? "?"} (${w0.opType ?? "?"})` +
        `${ran ? ` after ${ran} ms` : ""}${w0.timeoutMs ? ` (timeout ${w0.timeoutMs} ms)` : ""}.` +
        (groups.size > 1 ? " Other ranks timed out at a different SeqNum: the ranks diverged." : ""),
      ranks,
      processes: uniq(ws.map((w) => w.processKey).filter((p): p is string => p !== undefined)),
      comm_id: null,
      evidence: ws.map((w) => w.where).slice(0, 5),
      ...(w0.seq !== undefined ? { seq: w0.seq } : {}),
      ...(w0.opType ? { op: w0.opType } : {}),
      ...(w0.timeoutMs !== undefined ? { timeout_ms: w0.timeoutMs } : {}),
    });
  }
  // Every other rank timed out in the same work: a known rank that printed no timeout never enqueued it.
  let silentCulprit = false;
  if (groups.size === 1 && known.size > 0) {
    const ws = [...groups.values()][0] ?? [];
    const reported = new Set(ws.map((w) => w.rank).filter((r): r is number => r !== undefined));
    const silent = [...known].filter((r) => !reported.has(r)).sort((a, b) => a - b);
    const w0 = ws[0];
    if (w0 && reported.size > 0 && silent.length > 0 && silent.length <= Math.max(1, Math.floor(known.size / 4))) {
      silentCulprit = true;
      out.push({
        kind: "rank_behind",
        severity: "critical",
        summary:
          `Rank ${rankList(silent)} printed no watchdog timeout while rank ${rankList([...reported])} timed out in work SeqNum=${w0.seq ?? "?"} (${w0.opType ?? "?"}): ` +
          `it never enqueued that collective. Look at what rank ${rankList(silent)} was doing (py-spy dump of its process).`,
        ranks: silent,
        processes: [],
        comm_id: null,
        evidence: ws.map((w) => w.where).slice(0, 3),
        ...(w0.seq !== undefined ? { seq: w0.seq } : {}),
        ...(w0.opType ? { op: w0.opType } : {}),
      });
    }
  }
  // "last enqueued NCCL work": the rank with the smallest value never enqueued what the others wait in.
  const enq = new Map<number, { enq: number; done?: number; where: string; proc?: string }>();
  for (const s of t.workStatus) {
    if (s.rank === undefined || s.lastEnqueued === undefined) continue;
    enq.set(s.rank, { enq: s.lastEnqueued, done: s.lastCompleted, where: s.where, proc: s.processKey });
  }
  if (enq.size >= 2) {
    const values = [...enq.values()].map((e) => e.enq);
    const min = Math.min(...values);
    const max = Math.max(...values);
    if (min < max) {
      const behind = [...enq].filter(([, e]) => e.enq === min).map(([r]) => r);
      out.push({
        kind: "rank_behind",
        severity: "critical",
        summary:
          `Rank ${rankList(behind)} enqueued NCCL work only up to #${min} while other ranks reached #${max}: it never entered work #${min + 1}. ` +
          `"Not enqueued" usually means that rank's Python code took another path or is stuck on the CPU (pytorch#120438).`,
        ranks: behind,
        processes: uniq(behind.map((r) => enq.get(r)?.proc).filter((p): p is string => p !== undefined)),
        comm_id: null,
        evidence: behind.map((r) => enq.get(r)?.where).filter((w): w is string => w !== undefined),
        seq: min + 1,
      });
    } else {
      const stuck = [...enq].filter(([, e]) => e.done !== undefined && e.done < e.enq);
      // Not when a rank stayed silent: the others wait for it, the network is not to blame.
      if (stuck.length > 0 && !silentCulprit) {
        out.push({
          kind: "hang_suspected",
          severity: "critical",
          summary:
            `Every rank reporting enqueued work #${max} but completed only up to #${Math.min(...stuck.map(([, e]) => e.done ?? 0))}: ` +
            `all entered the collective and none finished ("enqueued but not completed" points at the network or a GPU, not at user code).`,
          ranks: stuck.map(([r]) => r).sort((a, b) => a - b),
          processes: uniq(stuck.map(([, e]) => e.proc).filter((p): p is string => p !== undefined)),
          comm_id: null,
          evidence: stuck.map(([, e]) => e.where).slice(0, 5),
          seq: max,
        });
      }
    }
  }
  // TORCH_NCCL_DESYNC_DEBUG / Flight Recorder: ranks that never joined collective #N.
  let frSeq: number | undefined; // Flight Recorder prints the sequence and the missing ranks on separate lines
  for (const d of t.desync) {
    if (d.what === "not_all_joined") frSeq = d.seq;
    if (d.what === "missing_ranks" && d.seq === undefined && frSeq !== undefined) d.seq = frSeq;
    if (d.what === "finished_not_joined" && d.ranks && d.ranks.length > 0) {
      const seq = d.nextSeq ?? (d.seq !== undefined ? d.seq + 1 : undefined);
      out.push({
        kind: "rank_behind",
        severity: "critical",
        summary: `PyTorch's desync report: rank ${rankList(d.ranks)} finished collective #${d.seq ?? "?"} but never joined #${seq ?? "?"}; the other ranks wait for it. Look at what that rank does after collective #${d.seq ?? "?"}.`,
        ranks: [...d.ranks].sort((a, b) => a - b),
        processes: [],
        comm_id: null,
        evidence: [d.where],
        ...(seq !== undefined ? { seq } : {}),
      });
    } else if ((d.what === "never_joined" || d.what === "missing_ranks") && d.ranks && d.ranks.length > 0) {
      out.push({
        kind: "rank_behind",
        severity: "critical",
        summary: `PyTorch's desync report: rank ${rankList(d.ranks)} did not join collective #${d.seq ?? "?"}; the other ranks wait for it.`,
        ranks: [...d.ranks].sort((a, b) => a - b),
        processes: [],
        comm_id: null,
        evidence: [d.where],
        ...(d.seq !== undefined ? { seq: d.seq } : {}),
      });
    }
  }
  // PyTorch error lines come in bursts (DistBackendError, its reason, the NCCL error): one finding per rank.
  const byRank = new Map<string, typeof t.ptErrors>();
  for (const e of t.ptErrors) byRank.set(String(e.rank ?? "?"), [...(byRank.get(String(e.rank ?? "?")) ?? []), e]);
  for (const [rank, es] of byRank) {
    const texts = uniq(es.map((e) => e.text ?? e.what.replace(/_/g, " ")));
    const peer = es.find((e) => e.peer)?.peer;
    out.push({
      kind: peer ? "network_error" : "nccl_error",
      severity: "critical",
      summary: `PyTorch reported an NCCL failure${rank !== "?" ? ` on rank ${rank}` : ""}: ${texts.join("; ")}${peer ? ` (the last error points at peer ${peer})` : ""}.`,
      ranks: rank !== "?" ? [Number(rank)] : [],
      processes: uniq(es.map((e) => e.processKey).filter((p): p is string => p !== undefined)),
      comm_id: null,
      evidence: es.map((e) => e.where).slice(0, 5),
      ...(peer ? { peer } : {}),
    });
  }
  return out;
}
