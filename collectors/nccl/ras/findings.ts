/**
 * Findings from NCCL RAS reports (`ncclras` output saved with the logs; collectors/nccl/ras/parse-text.ts).
 * RAS sees the whole job, so its report names culprits on other nodes too: ranks with a lower
 * operation count never entered the collective the others wait in; processes it cannot reach are
 * dead or cut off. The commHash RAS prints is NCCL's commId, so comm_id matches the live metrics.
 */
import { splitCounts, type OpSpread } from "./counts.js";
import type { RasCommEntry, RasGroup, RasRank, RasReport } from "./parse-text.js";
import type { Finding } from "../verdict/report.js";
import { collectiveMismatch, ncclError, networkError, rankBehind } from "../verdict/finding.js";
import { collectiveMismatchWords, ncclErrorWords, networkErrorWords, rankBehindWords, ranksAt } from "../verdict/words.js";

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

/** `rank 12 (process 323032 on 10.0.0.7, GPU 4), ...`: at most 10, then how many more (verdict/words.ts). */
export const described: (ranks: readonly RasRank[]) => string = ranksAt;

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
  const ops = split.ops;
  if (split.behind.length > 0) {
    // The type the behind ranks trail in, named by its first block (NCCL's order of types).
    const trails = split.ops.filter((o) => o.below > 0);
    const trail = trails[0] ?? first;
    return rankBehind({
      summary: rankBehindWords.ras({ comm, behind: split.behind, trails, others: trail.atTop, ops }),
      ...base(e, where, split.behind),
      seq: trail.top,
      op: trail.op,
      count: split.behind.length + split.unlistedBelow,
    });
  }
  // No rank is lower in one type and higher in none: either the ranks issued different collectives
  // (crossed), or only the ranks ahead are listed (NCCL lists the smaller groups).
  const named = split.crossed.length > 0 ? split.crossed : split.ahead;
  const crossed = split.crossed.length > 0;
  return collectiveMismatch({
    summary: crossed
      ? collectiveMismatchWords.rasCrossed({ comm, crossed: split.crossed, ops })
      : collectiveMismatchWords.rasAhead({ comm, named, first, ops }),
    ...base(e, where, named),
    seq: first.top,
    op: first.op,
    count: crossed ? split.crossed.length : first.atTop,
  });
}

function commFinding(e: RasCommEntry, where: string): Finding[] {
  const out: Finding[] = [];
  if (e.kind === "MISMATCH") {
    const f = countMismatch(e, where);
    if (f) out.push(f);
    if (e.statusGroups.length > 1) {
      const odd = ranksOf([...e.statusGroups].sort((a, b) => b.count - a.count).slice(1));
      out.push(
        ncclError({
          severity: "warning",
          summary: ncclErrorWords.rasStates({ comm: commIdOfHash(e.commHash), states: e.statusGroups, odd }),
          ...base(e, where, odd),
        }),
      );
    }
  } else if (e.kind === "INCOMPLETE") {
    out.push(
      ncclError({
        severity: "warning",
        summary: ncclErrorWords.rasIncomplete({ comm: commIdOfHash(e.commHash), missing: e.missingRanks ?? e.ranks.length, ranks: e.ranks }),
        ...base(e, where, e.ranks),
        ...(e.missingRanks !== undefined ? { count: e.missingRanks } : {}),
      }),
    );
  } else {
    const ranks = [...e.ranks, ...e.ops.flatMap((o) => ranksOf(o.groups)), ...ranksOf(e.statusGroups)];
    out.push(
      ncclError({
        summary: ncclErrorWords.rasErrors({ comm: commIdOfHash(e.commHash), errors: e.errors, ranks }),
        ...base(e, where, ranks),
      }),
    );
  }
  return out;
}

export function rasFindings(sources: readonly RasSource[]): Finding[] {
  const out: Finding[] = [];
  for (const { source, reports } of sources) {
    for (const r of reports) {
      for (const e of r.comms) out.push(...commFinding(e, `${source}:${e.lineNo}`));
      for (const p of r.processes) {
        const facts = { count: p.count || p.processes.length, processes: p.processes };
        const fields = {
          ranks: [],
          processes: p.processes.map((x) => `${x.node}:${x.pid}`),
          comm_id: null,
          evidence: [`${source}:${p.lineNo}`],
          count: facts.count,
        };
        // Dead (or cut off): the network's; no data: NCCL's, a warning.
        out.push(
          p.kind === "DEAD"
            ? networkError({ summary: networkErrorWords.rasDead(facts), ...fields })
            : ncclError({ severity: "warning", summary: ncclErrorWords.rasNoData(facts), ...fields }),
        );
      }
    }
  }
  return out;
}
