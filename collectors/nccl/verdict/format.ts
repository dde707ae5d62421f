/** The human form of an analyze report: the verdict first, then what it rests on. */
import { normalizeFile } from "./python-file.js";
import { rankList, type Finding, type Report } from "./report.js";

const MARK = { critical: "CRITICAL", warning: "WARNING", info: "INFO" } as const;

/** Stack lines shown per finding (all of them are in --json). */
const MAX_STACK_LINES = 16;

function stackLines(f: Finding): string[] {
  const out: string[] = [];
  for (const s of (f.stacks ?? []).slice(0, 3)) {
    if (s.frames.length === 0) continue;
    out.push(`      ${s.ranks.length === 1 ? "rank" : "ranks"} ${rankList(s.ranks)} called it from:`);
    for (const fr of s.frames.slice(0, MAX_STACK_LINES)) out.push(`        ${fr.file}:${fr.line} ${fr.function}`);
    if (s.frames.length > MAX_STACK_LINES) out.push(`        ... ${s.frames.length - MAX_STACK_LINES} more frames (use --json)`);
  }
  return out;
}

/** Python stacks shown per finding, and frames per stack (all of them are in --json). */
const MAX_PYTHON_STACKS = 4;
const MAX_PYTHON_FRAMES = 12;

function pythonStackLines(f: Finding): string[] {
  const out: string[] = [];
  for (const s of (f.python_stacks ?? []).slice(0, MAX_PYTHON_STACKS)) {
    out.push(`      ${s.ranks.length === 1 ? "rank" : "ranks"} ${rankList(s.ranks)}: ${s.tool} dump ${s.evidence}, ${s.thread}, innermost first:`);
    for (const fr of s.frames.slice(0, MAX_PYTHON_FRAMES))
      out.push(`        ${fr.line === null ? `${fr.function} (${normalizeFile(fr.file)})` : `${normalizeFile(fr.file)}:${fr.line} ${fr.function}`}`);
    const more = s.frames.length - Math.min(s.frames.length, MAX_PYTHON_FRAMES) + s.frames_left_out;
    if (more > 0) out.push(`        ... ${more} more frames${s.frames.length > MAX_PYTHON_FRAMES ? " (use --json)" : ""}`);
  }
  if ((f.python_stacks?.length ?? 0) > MAX_PYTHON_STACKS) out.push(`      ... ${(f.python_stacks?.length ?? 0) - MAX_PYTHON_STACKS} more stacks (use --json)`);
  return out;
}

/** A finding: its mark and summary, the stacks it names, the lines that show it. */
function findingLines(f: Finding, indent: string): string[] {
  const out = [`${indent}${MARK[f.severity]} ${f.kind}: ${f.summary}`];
  out.push(...stackLines(f).map((l) => indent.slice(2) + l));
  out.push(...pythonStackLines(f).map((l) => indent.slice(2) + l));
  if (f.evidence.length > 0) out.push(`${indent}    evidence: ${f.evidence.join(", ")}`);
  return out;
}

export function formatReport(r: Report, inputs: { files: number; lines: number; dumps?: number }): string {
  const out: string[] = [];
  const dumps = inputs.dumps ? `, ${inputs.dumps} Flight Recorder dump(s)` : "";
  out.push(
    `ringwatch analyze: ${inputs.files} file(s), ${inputs.lines} lines${dumps}, ${r.processes.length} process(es), ${r.communicators.length} communicator(s)`,
  );
  out.push("");
  out.push(`VERDICT: ${r.headline}`);
  if (r.findings.length === 0) {
    if (r.communicators.length > 0) out.push("Every communicator's ranks seen here are at the same collective; transport and GPUDirect RDMA as listed below.");
    else if (r.process_groups.length > 0) out.push("Every process group's ranks in the Flight Recorder dumps completed every collective they enqueued.");
    else if (r.processes.length > 0)
      out.push(
        "NCCL lines were read, but no communicator's Init line: collectives cannot be tied to ranks (NCCL_DEBUG_SUBSYS=INIT,COLL from the job's start shows them).",
      );
    else out.push("No NCCL line was found: are NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=INIT,COLL set for these runs?");
  }
  for (const inc of r.incidents) {
    out.push("");
    const [lead, ...rest] = inc.findings.map((i) => r.findings[i]).filter((f): f is Finding => f !== undefined);
    if (lead === undefined) continue;
    out.push(...findingLines(lead, "  "));
    if (rest.length > 0) out.push(`      with it (${rest.length}):`);
    for (const f of rest) out.push(...findingLines(f, "        "));
  }
  if (r.process_groups.length > 0) {
    out.push("", "PROCESS GROUPS (Flight Recorder)");
    for (const g of r.process_groups.slice(0, 64)) {
      const label = g.desc && g.desc !== g.process_group ? `${g.process_group} (${g.desc})` : g.process_group;
      const missing = g.missing_ranks.length > 0 ? `  no dump: rank ${rankList(g.missing_ranks)}` : "";
      out.push(`  ${label}  size ${g.size ?? "?"}  dumps ${g.ranks.length}${missing}`);
      for (const k of g.ranks.slice(0, 16)) {
        out.push(
          `    rank ${k.rank}  last enqueued ${k.last_enqueued ?? "?"}  started ${k.last_started ?? "?"}  completed ${k.last_completed ?? "?"}  (${k.dump})`,
        );
      }
      if (g.ranks.length > 16) out.push(`    ... and ${g.ranks.length - 16} more ranks (use --json for all)`);
    }
    if (r.process_groups.length > 64) out.push(`  ... and ${r.process_groups.length - 64} more (use --json for all)`);
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
