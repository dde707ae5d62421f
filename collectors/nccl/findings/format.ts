/** The human form of an analyze report: the verdict first, then what it rests on. */
import { rankList, type Report } from "./report.js";

const MARK = { critical: "CRITICAL", warning: "WARNING", info: "INFO" } as const;

export function formatReport(r: Report, inputs: { files: number; lines: number }): string {
  const out: string[] = [];
  out.push(`ringwatch analyze: ${inputs.files} file(s), ${inputs.lines} lines, ${r.processes.length} process(es), ${r.communicators.length} communicator(s)`);
  out.push("");
  if (r.findings.length === 0) {
    out.push("VERDICT: nothing wrong found in these logs.");
    if (r.communicators.length > 0) out.push("Every communicator's ranks seen here are at the same collective; transport and GPUDirect RDMA as listed below.");
    else out.push("No NCCL communicator was found: are NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=INIT,COLL set for these runs?");
  } else {
    out.push("VERDICT");
    for (const f of r.findings) {
      out.push(`  ${MARK[f.severity]} ${f.kind}: ${f.summary}`);
      if (f.evidence.length > 0) out.push(`      evidence: ${f.evidence.join(", ")}`);
    }
  }
  if (r.communicators.length > 0) {
    out.push("", "COMMUNICATORS");
    for (const c of r.communicators) {
      const range = c.collectives_min === c.collectives_max ? `${c.collectives_max}` : `${c.collectives_min}..${c.collectives_max}`;
      out.push(
        `  ${c.comm_id}  nranks ${c.nranks ?? "?"}  ranks seen ${c.ranks_seen}  collectives ${range}${c.last_op ? `  last ${c.last_op}` : ""}${c.torn_down ? "  torn down" : ""}`,
      );
    }
  }
  if (r.processes.length > 0) {
    out.push("", "PROCESSES");
    for (const p of r.processes.slice(0, 64)) {
      const ranks = p.ranks.length ? `  rank ${rankList(p.ranks.map((x) => x.rank))}` : "";
      out.push(`  ${p.process}  NCCL ${p.nccl_version ?? "?"}  net ${p.net}  gdr ${p.gdr}${ranks}${p.warnings ? `  warnings ${p.warnings}` : ""}`);
    }
    if (r.processes.length > 64) out.push(`  ... and ${r.processes.length - 64} more (use --json for all)`);
  }
  return out.join("\n") + "\n";
}
