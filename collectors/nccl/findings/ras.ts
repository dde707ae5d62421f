/**
 * Findings from NCCL RAS reports (`ncclras` output saved with the logs; collectors/nccl/ras/parse-text.ts).
 * RAS sees the whole job, so its report names culprits on other nodes too: ranks with a lower
 * operation count never entered the collective the others wait in; processes it cannot reach are
 * dead or cut off. The commHash RAS prints is NCCL's commId, so comm_id matches the live metrics.
 */
import type { RasCommEntry, RasGroup, RasRank, RasReport } from "../ras/parse-text.js";
import type { Finding } from "./report.js";

export interface RasSource {
  source: string;
  reports: readonly RasReport[];
}

/**
 * RAS prints the commHash zero-padded to 16 digits (`%016lx`); Init COMPLETE prints the same value as
 * `commId 0x%llx`, without padding. The comm_id of the live metrics is the latter.
 */
export function commIdOfHash(hash: string): string {
  let i = 0;
  while (i < hash.length - 1 && hash.charCodeAt(i) === 48) i++;
  return `0x${hash.slice(i)}`;
}

const who = (r: RasRank): string => (r.pid !== undefined && r.node !== undefined ? `${r.node}:${r.pid}` : "");

function ranksOf(groups: readonly RasGroup[]): RasRank[] {
  return groups.flatMap((g) => g.ranks);
}

function described(ranks: readonly RasRank[]): string {
  const parts = ranks.slice(0, 10).map((r) => `rank ${r.rank}${r.pid !== undefined ? ` (process ${r.pid} on ${r.node ?? "?"}${r.gpu !== undefined ? `, GPU ${r.gpu}` : ""})` : ""}`);
  return parts.join(", ") + (ranks.length > 10 ? `, and ${ranks.length - 10} more` : "");
}

function base(e: RasCommEntry, where: string, ranks: readonly RasRank[]): Pick<Finding, "ranks" | "processes" | "comm_id" | "evidence"> {
  return {
    ranks: [...new Set(ranks.map((r) => r.rank))].sort((a, b) => a - b),
    processes: [...new Set(ranks.map(who).filter((p) => p !== ""))],
    comm_id: commIdOfHash(e.commHash),
    evidence: [where],
  };
}

/** A MISMATCH of operation counts, split at the highest count: the groups below it never entered that collective. */
export interface OpCountSplit {
  op: string;
  /** The highest operation count: the collective the others wait in. */
  top: number;
  high: RasGroup;
  /** Groups with lower counts, lowest first. */
  behind: RasGroup[];
  /** Ranks of the lower groups that NCCL lists (only outlier groups are listed). */
  listedBehind: RasRank[];
  /** All ranks of the lower groups, listed or not. */
  behindCount: number;
}

export function opCountSplit(e: RasCommEntry): OpCountSplit | undefined {
  const groups = e.opGroups.filter((g) => g.opCount !== undefined).sort((a, b) => (a.opCount ?? 0) - (b.opCount ?? 0));
  const low = groups[0];
  const high = groups[groups.length - 1];
  if (low === undefined || high === undefined || low.opCount === high.opCount) return undefined;
  const top = high.opCount ?? 0;
  const behind = groups.filter((g) => (g.opCount ?? 0) < top);
  return { op: e.op ?? "collective", top, high, behind, listedBehind: ranksOf(behind), behindCount: behind.reduce((n, g) => n + g.count, 0) };
}

/** Different operation counts of one collective type: who never entered the last one. */
function countMismatch(e: RasCommEntry, where: string): Finding | undefined {
  const split = opCountSplit(e);
  if (split === undefined) return undefined;
  const { op, top, high, behind, listedBehind, behindCount } = split;
  const counts = [...behind, high].map((g) => `${g.count} at #${g.opCount ?? 0}`).join(", ");
  if (listedBehind.length > 0) {
    return {
      kind: "rank_behind",
      severity: "critical",
      summary:
        `NCCL RAS: on communicator ${commIdOfHash(e.commHash)}, ${described(listedBehind)} never entered ${op} #${top}, which ${high.count} other ranks launched and wait in (${counts}). ` +
        `Look at what those processes do instead (py-spy dump, or the rank's own log).`,
      ...base(e, where, listedBehind),
      seq: top,
      op,
      count: behindCount,
    };
  }
  // Only the ranks ahead are listed (they are the outliers): they issued a collective the others did not.
  const ahead = high.ranks;
  return {
    kind: "collective_mismatch",
    severity: "critical",
    summary:
      `NCCL RAS: on communicator ${commIdOfHash(e.commHash)}, ${ahead.length > 0 ? described(ahead) : `${high.count} ranks`} launched ${op} #${top}, which the other ${behindCount} ranks have not (${counts}). ` +
      `Either those ranks took a code path with an extra ${op}, or the others are stuck before it: compare the stacks of both groups.`,
    ...base(e, where, ahead),
    seq: top,
    op,
    count: high.count,
  };
}

function commFinding(e: RasCommEntry, where: string): Finding[] {
  const out: Finding[] = [];
  if (e.kind === "MISMATCH") {
    const f = countMismatch(e, where);
    if (f) out.push(f);
    if (e.statusGroups.length > 1) {
      const odd = [...e.statusGroups].sort((a, b) => b.count - a.count).slice(1);
      out.push({
        kind: "nccl_error",
        severity: "warning",
        summary: `NCCL RAS: the ranks of communicator ${commIdOfHash(e.commHash)} are in different states (${e.statusGroups.map((g) => `${g.count} ${g.status ?? "?"}`).join(", ")})${ranksOf(odd).length > 0 ? `: ${described(ranksOf(odd))}` : ""}.`,
        ...base(e, where, ranksOf(odd)),
      });
    }
  } else if (e.kind === "INCOMPLETE") {
    out.push({
      kind: "nccl_error",
      severity: "warning",
      summary: `NCCL RAS has no data for communicator ${commIdOfHash(e.commHash)} from ${e.missingRanks ?? e.ranks.length} rank(s)${e.ranks.length > 0 ? ` (${described(e.ranks)})` : ""}: those processes did not answer; they may be stuck outside NCCL or gone.`,
      ...base(e, where, e.ranks),
      ...(e.missingRanks !== undefined ? { count: e.missingRanks } : {}),
    });
  } else {
    const ranks = [...e.ranks, ...ranksOf(e.opGroups), ...ranksOf(e.statusGroups)];
    out.push({
      kind: "nccl_error",
      severity: "critical",
      summary: `NCCL RAS reports errors on communicator ${commIdOfHash(e.commHash)}: ${e.errors.join("; ") || "see the report"}${ranks.length > 0 ? ` (${described(ranks)})` : ""}.`,
      ...base(e, where, ranks),
    });
  }
  return out;
}

export function rasFindings(sources: readonly RasSource[]): Finding[] {
  const out: Finding[] = [];
  for (const { source, reports } of sources) {
    for (const r of reports) {
      for (const e of r.comms) out.push(...commFinding(e, `${source}:${e.lineNo}`));
      for (const p of r.processes) {
        const procs = p.processes.map((x) => `process ${x.pid} on ${x.node} (GPU ${x.gpus})`).join(", ");
        const n = p.count || p.processes.length;
        out.push({
          kind: p.kind === "DEAD" ? "network_error" : "nccl_error",
          severity: p.kind === "DEAD" ? "critical" : "warning",
          summary:
            p.kind === "DEAD"
              ? `NCCL RAS cannot reach ${n} job process(es)${procs ? `: ${procs}` : ""}. They died or their node is cut off from the network: check those nodes first.`
              : `NCCL RAS has no communicator data from ${n} job process(es)${procs ? `: ${procs}` : ""}.`,
          ranks: [],
          processes: p.processes.map((x) => `${x.node}:${x.pid}`),
          comm_id: null,
          evidence: [`${source}:${p.lineNo}`],
          count: n,
        });
      }
    }
  }
  return out;
}
