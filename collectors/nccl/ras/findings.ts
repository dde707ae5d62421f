/**
 * Findings from NCCL RAS reports (`ncclras` output saved with the logs; collectors/nccl/ras/parse-text.ts).
 * RAS sees the whole job, so its report names culprits on other nodes too: ranks with a lower
 * operation count never entered the collective the others wait in; processes it cannot reach are
 * dead or cut off. The commHash RAS prints is NCCL's commId, so comm_id matches the live metrics.
 */
import { splitCounts, type OpSpread } from "./counts.js";
import type { RasCommEntry, RasGroup, RasRank, RasReport } from "./parse-text.js";
import type { Finding } from "../verdict/report.js";

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

/** `rank 12 (process 323032 on 10.0.0.7, GPU 4), ...`: at most 10, then how many more. */
export function described(ranks: readonly RasRank[]): string {
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

/** Different operation counts: who never entered the collective the others wait in (ras/counts.ts). */
function countMismatch(e: RasCommEntry, where: string): Finding | undefined {
  const split = splitCounts(e.ops);
  if (split === undefined) return undefined;
  const comm = commIdOfHash(e.commHash);
  const first = split.ops[0] as OpSpread;
  const counts = split.ops.map((o) => `${o.op}: ${o.counts}`).join("; ");
  if (split.behind.length > 0) {
    // The type the behind ranks trail in, named by its first block (NCCL's order of types).
    const trails = split.ops.filter((o) => o.below > 0);
    const trail = trails[0] ?? first;
    const others = trail.atTop;
    return {
      kind: "rank_behind",
      severity: "critical",
      summary:
        `NCCL RAS: on communicator ${comm}, ${described(split.behind)} never entered ${trails.map((o) => `${o.op} #${o.top}`).join(" and ")}, which ${others} other rank${others === 1 ? "" : "s"} launched and wait in (${counts}). ` +
        `Look at what those processes do instead (py-spy dump, or the rank's own log).`,
      ...base(e, where, split.behind),
      seq: trail.top,
      op: trail.op,
      count: split.behind.length + split.unlistedBelow,
    };
  }
  // No rank is lower in one type and higher in none: either the ranks issued different collectives
  // (crossed), or only the ranks ahead are listed (NCCL lists the smaller groups).
  const named = split.crossed.length > 0 ? split.crossed : split.ahead;
  const crossed = split.crossed.length > 0;
  return {
    kind: "collective_mismatch",
    severity: "critical",
    summary: crossed
      ? `NCCL RAS: on communicator ${comm}, ${described(split.crossed)} launched more of one collective type and fewer of another than the other ranks (${counts}): the ranks issued different collectives. Compare the stacks of both groups.`
      : `NCCL RAS: on communicator ${comm}, ${named.length > 0 ? described(named) : `${first.atTop} ranks`} launched ${first.op} #${first.top}, which the other ${first.below} ranks have not (${counts}). ` +
        `Either those ranks took a code path with an extra ${first.op}, or the others are stuck before it: compare the stacks of both groups.`,
    ...base(e, where, named),
    seq: first.top,
    op: first.op,
    count: crossed ? split.crossed.length : first.atTop,
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
    const ranks = [...e.ranks, ...e.ops.flatMap((o) => ranksOf(o.groups)), ...ranksOf(e.statusGroups)];
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
