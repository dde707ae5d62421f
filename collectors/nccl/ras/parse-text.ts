/**
 * NCCL RAS reports: what the `ncclras` client prints (NCCL 2.24+, text form), saved to a file or
 * pasted into a job's log. The report is multi-line, so this is a small state machine fed one line
 * at a time per source (parseLine stays per line). It keeps what names a culprit:
 *
 *   #0-0 (fa93daea854b060b) MISMATCH                      <- communicator entry (commHash = commId)
 *     Communicator ranks have different AllGather operation counts
 *     30 ranks have launched up to operation 640
 *     2 ranks have launched up to operation 641
 *     Rank 12 -- GPU 4 managed by process 323032 on node 10.137.190.124
 *   DEAD                                                  <- process entries of the Errors section
 *     2 job processes are considered dead (unreachable via the RAS network)
 *     Process 4242 on node 10.0.0.7 managing GPU 3
 *
 * Entries are INCOMPLETE / ERROR / MISMATCH per communicator, INCOMPLETE / DEAD per process, and
 * TIMEOUT. A rank line names the group above it: NCCL lists the ranks of outlier groups only
 * (at most 10 ranks and 25% of the communicator). Lines are cut at fixed words (no backtracking regex).
 */

export interface RasRank {
  rank: number;
  /** As NCCL prints it (`4`, or with the NVML index); undefined when not found. */
  gpu?: string;
  /** NVML's index of the GPU (nvidia-smi's, dmon's): the `NVML n` of `gpu`, else its CUDA index. */
  nvmlDev?: number;
  pid?: number;
  node?: string;
}

/** Ranks with one operation count (or one status). */
export interface RasGroup {
  count: number;
  /** `launched up to operation N`; 0 for `not launched any operations`. */
  opCount?: number;
  status?: string;
  ranks: RasRank[];
}

/** The ranks of one collective type at different operation counts. */
export interface RasOpMismatch {
  /** `AllReduce`, `AllGather`, ...; `collective` (NCCL 2.24, one count for all types). */
  op: string;
  groups: RasGroup[];
}

export interface RasCommEntry {
  kind: "MISMATCH" | "INCOMPLETE" | "ERROR";
  /** The communicator's hash, 16 hex digits: NCCL's `commId` without `0x`. */
  commHash: string;
  /** Line number of the entry's header. */
  lineNo: number;
  /**
   * MISMATCH of operation counts, one per collective type whose counts differ (NCCL 2.26+ counts
   * each type apart and writes one block per type; NCCL 2.24 writes one block, `collective`).
   */
  ops: RasOpMismatch[];
  /** Status groups (MISMATCH of status). */
  statusGroups: RasGroup[];
  /** INCOMPLETE: ranks whose data is missing. */
  missingRanks?: number;
  /** ERROR: `Asynchronous errors on 2 ranks`, `2 ranks reported ...`. */
  errors: string[];
  /** Rank lines not under a group (INCOMPLETE, ERROR). */
  ranks: RasRank[];
}

export interface RasProcess {
  pid: number;
  node: string;
  gpus: string;
}

export interface RasProcessEntry {
  kind: "DEAD" | "INCOMPLETE";
  count: number;
  lineNo: number;
  processes: RasProcess[];
}

export interface RasReport {
  /** Line number of the report's first line. */
  lineNo: number;
  /** Communicator groups of the summary table: status and errors (`RUNNING`, `MISMATCH`). */
  table: { comms: number; ranks: number; status: string; errors: string }[];
  comms: RasCommEntry[];
  processes: RasProcessEntry[];
  /** `Encountered N communication timeouts while gathering communicator data`. */
  timeouts: number;
  /** `NCCL version 2.26.2 compiled with ...` (text) or `nccl_version` (JSON). */
  version?: string;
  /** JSON only: every rank of every communicator, with its counts per collective type. */
  full?: RasCommRanks[];
}

/** One rank of a communicator as the JSON report gives it. */
export interface RasRankCounts extends RasRank {
  /** Operations launched, per collective type. */
  counts: ReadonlyMap<string, number>;
  /** RUNNING, INIT, FINALIZE, ABORT (as the text report words it). */
  status: string;
}

export interface RasMissingRank extends RasRank {
  /** It did not answer at all (else it answered without this communicator). */
  unresponsive: boolean;
  /** RAS considers its process dead. */
  dead: boolean;
}

/** Every rank of one communicator (JSON). */
export interface RasCommRanks {
  commHash: string;
  size: number;
  ranks: RasRankCounts[];
  missing: RasMissingRank[];
}

const MAX_ENTRIES = 10_000;
const MAX_RANKS = 1_000;
/** NCCL has 5 collective types (and 3 more since 2.28); more blocks than this in one entry are ignored. */
const MAX_OPS = 32;

function int(s: string | undefined): number | undefined {
  if (s === undefined || s.length === 0 || s.length > 15) return undefined;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
  }
  return Number(s);
}

function isHex(s: string): boolean {
  if (s.length === 0 || s.length > 16) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

/** `#0-0 (fa93daea854b060b) MISMATCH` → its parts, or undefined. */
function commHeader(line: string): { commHash: string; kind: RasCommEntry["kind"] } | undefined {
  if (!line.startsWith("#")) return undefined;
  const words = line.split(" ");
  if (words.length !== 3) return undefined;
  const [id, hash, kind] = words as [string, string, string];
  const dash = id.indexOf("-");
  if (dash < 0 || int(id.slice(1, dash)) === undefined || int(id.slice(dash + 1)) === undefined) return undefined;
  if (!hash.startsWith("(") || !hash.endsWith(")") || !isHex(hash.slice(1, -1))) return undefined;
  if (kind !== "MISMATCH" && kind !== "INCOMPLETE" && kind !== "ERROR") return undefined;
  return { commHash: hash.slice(1, -1).padStart(16, "0"), kind };
}

/** `GPU 4 managed by process 323032 on node 10.137.190.124` (after ` -- `). */
function managed(rest: string, r: RasRank): void {
  const by = rest.indexOf(" managed by process ");
  const on = rest.indexOf(" on node ");
  if (!rest.startsWith("GPU ") || by < 0 || on < by) return;
  r.gpu = rest.slice(4, by);
  const nvml = r.gpu.indexOf("(NVML ");
  const dev = int(nvml < 0 ? r.gpu : r.gpu.slice(nvml + 6, r.gpu.length - 1));
  if (dev !== undefined) r.nvmlDev = dev;
  const pid = int(rest.slice(by + 20, on));
  if (pid !== undefined) r.pid = pid;
  r.node = rest.slice(on + 9);
}

/** `Rank 12 [has ...] -- GPU ...`: the rank and what the line says about it. */
function rankLine(text: string): { r: RasRank; has: string } | undefined {
  if (!text.startsWith("Rank ")) return undefined;
  const sep = text.indexOf(" -- ");
  const head = sep < 0 ? text : text.slice(0, sep);
  const sp = head.indexOf(" ", 5);
  const rank = int(sp < 0 ? head.slice(5) : head.slice(5, sp));
  if (rank === undefined) return undefined;
  const r: RasRank = { rank };
  if (sep >= 0) managed(text.slice(sep + 4), r);
  return { r, has: sp < 0 ? "" : head.slice(sp + 1) };
}

/** The most blanks a document puts before a whole report. */
const MAX_INDENT = 8;

/** A line that opens a report or its sections, at i: the table's header, `Job summary`, `Communicators...`. */
function isHeading(line: string, i: number): boolean {
  return line.startsWith("Group     Comms", i) || (line.startsWith("Job summary", i) && line.length === i + 11) || line.startsWith("Communicators...", i);
}

/** Feeds the lines of one source; reports() gives what was found. */
export class RasReader {
  private readonly found: RasReport[] = [];
  private report: RasReport | undefined;
  private comm: RasCommEntry | undefined;
  private proc: RasProcessEntry | undefined;
  private inTable = false;
  private lastGroup: RasGroup | undefined;
  /** The collective type whose counts the lines below list. */
  private lastOp: RasOpMismatch | undefined;
  /** From the `NCCL version` line that heads a report. */
  private version: string | undefined;
  /** Blanks before every line of the report, as a document indented it (NCCL's user guide: two). */
  private indent = 0;

  reports(): readonly RasReport[] {
    return this.found;
  }

  line(raw: string, lineNo: number): void {
    let line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    // A report indented as a whole: its heading's blanks are taken off every line of it.
    let lead = 0;
    while (line.charCodeAt(lead) === 32 && lead <= MAX_INDENT) lead++;
    if (lead > 0 && lead <= MAX_INDENT && isHeading(line, lead)) this.indent = lead;
    else if (lead === 0 && line.length > 0) this.indent = 0;
    if (this.indent > 0 && lead >= this.indent) line = line.slice(this.indent);
    if (isHeading(line, 0)) {
      this.start(lineNo);
      this.inTable = line.startsWith("Group");
      return;
    }
    if (line.startsWith("NCCL version ")) {
      this.version = line.slice(13, line.indexOf(" ", 13) < 0 ? undefined : line.indexOf(" ", 13));
      return;
    }
    const r = this.report;
    if (r === undefined) return;
    if (line.length === 0) {
      this.inTable = false;
      return;
    }
    if (this.inTable) {
      this.tableRow(r, line);
      return;
    }
    if (line.startsWith("  ")) this.detail(line.slice(2));
    else this.top(r, line, lineNo);
  }

  /** A new report starts, unless the current one has nothing yet (its sections come one by one). */
  private start(lineNo: number): void {
    const r = this.report;
    if (r === undefined || r.table.length > 0 || r.comms.length > 0 || r.processes.length > 0) {
      if (this.found.length >= MAX_ENTRIES) return;
      this.report = { lineNo, table: [], comms: [], processes: [], timeouts: 0, ...(this.version !== undefined ? { version: this.version } : {}) };
      this.found.push(this.report);
    }
    this.comm = undefined;
    this.proc = undefined;
    this.lastGroup = undefined;
    this.lastOp = undefined;
  }

  /** `    0         1         4         8        32        32   RUNNING  MISMATCH` (the second header line is not one). */
  private tableRow(r: RasReport, line: string): void {
    const w = line.trim().split(/ +/);
    const comms = int(w[1]);
    const ranks = int(w[4]);
    if (w.length === 8 && int(w[0]) !== undefined && comms !== undefined && ranks !== undefined && r.table.length < MAX_ENTRIES) {
      r.table.push({ comms, ranks, status: w[6] as string, errors: w[7] as string });
    }
  }

  /** A line at the left margin: an entry header; any other line ends the entry above. */
  private top(r: RasReport, line: string, lineNo: number): void {
    this.comm = undefined;
    this.proc = undefined;
    this.lastGroup = undefined;
    this.lastOp = undefined;
    const h = commHeader(line);
    if (h !== undefined) {
      if (r.comms.length >= MAX_ENTRIES) return;
      this.comm = { kind: h.kind, commHash: h.commHash, lineNo, ops: [], statusGroups: [], errors: [], ranks: [] };
      r.comms.push(this.comm);
      return;
    }
    if ((line === "DEAD" || line === "INCOMPLETE") && r.processes.length < MAX_ENTRIES) {
      this.proc = { kind: line, count: 0, lineNo, processes: [] };
      r.processes.push(this.proc);
    }
  }

  /** An indented line: belongs to the entry above. */
  private detail(text: string): void {
    const r = this.report as RasReport;
    if (text.startsWith("Encountered ") && text.includes(" communication timeout")) {
      r.timeouts += int(text.slice(12, text.indexOf(" ", 12))) ?? 0;
      return;
    }
    const p = this.proc;
    if (p !== undefined) {
      this.processLine(p, text);
      return;
    }
    const c = this.comm;
    if (c !== undefined) this.commLine(c, text);
  }

  private processLine(p: RasProcessEntry, text: string): void {
    if (text.startsWith("Process ")) {
      const on = text.indexOf(" on node ");
      const managing = text.indexOf(" managing GPU");
      const pid = int(text.slice(8, on));
      if (pid === undefined || on < 0 || managing < on || p.processes.length >= MAX_RANKS) return;
      const gpus = text.slice(managing + 13);
      p.processes.push({ pid, node: text.slice(on + 9, managing), gpus: gpus.startsWith("s ") ? gpus.slice(2) : gpus.trimStart() });
      return;
    }
    // `Missing communicator data from 2 job processes`, `2 job processes are considered dead ...`
    const words = text.split(" ");
    const n = int(words[0]) ?? int(words[words.indexOf("from") + 1]);
    if (n !== undefined) p.count = n;
  }

  private commLine(c: RasCommEntry, text: string): void {
    const rl = rankLine(text);
    if (rl !== undefined) {
      this.rankOf(c, rl.r, rl.has);
      return;
    }
    if (text.startsWith("Communicator ranks have different ") && text.endsWith(" operation counts")) {
      // A new block: the groups and ranks below belong to this type alone.
      if (c.ops.length >= MAX_OPS) return;
      this.lastOp = { op: text.slice(34, -17), groups: [] };
      c.ops.push(this.lastOp);
      this.lastGroup = undefined;
      return;
    }
    if (text.startsWith("Communicator ranks have different status")) {
      this.lastOp = undefined;
      this.lastGroup = undefined;
      return;
    }
    if (text.startsWith("Missing communicator data from ")) {
      c.missingRanks = int(text.slice(31).split(" ")[0]);
      return;
    }
    const words = text.split(" ");
    const n = int(words[0]);
    if (n !== undefined && words[1] === "ranks" && words[2] === "have") {
      const g: RasGroup = { count: n, ranks: [] };
      if (text.includes(" have launched up to operation ")) g.opCount = int(words[words.length - 1]);
      else if (text.endsWith(" have not launched any operations")) g.opCount = 0;
      else if (words[3] === "status") g.status = words[4];
      if (g.status !== undefined) c.statusGroups.push(g);
      else if (g.opCount !== undefined) this.opOf(c).groups.push(g);
      this.lastGroup = g;
      return;
    }
    if (c.kind === "ERROR" && c.errors.length < 32) c.errors.push(text);
  }

  /** The block of counts being read; a count line with no block header above (cut paste) gets one. */
  private opOf(c: RasCommEntry): RasOpMismatch {
    if (this.lastOp === undefined) {
      this.lastOp = { op: "collective", groups: [] };
      c.ops.push(this.lastOp);
    }
    return this.lastOp;
  }

  /** A rank line: in its own one-rank group (`Rank 7 has launched up to operation 9 -- ...`) or the last group's. */
  private rankOf(c: RasCommEntry, r: RasRank, has: string): void {
    if (has.startsWith("has launched up to operation ")) {
      const g = { count: 1, opCount: int(has.slice(29)), ranks: [r] };
      if (g.opCount !== undefined) this.opOf(c).groups.push(g);
      return;
    }
    if (has === "has not launched any operations") {
      this.opOf(c).groups.push({ count: 1, opCount: 0, ranks: [r] });
      return;
    }
    if (has.startsWith("has status ")) {
      c.statusGroups.push({ count: 1, status: has.slice(11), ranks: [r] });
      return;
    }
    const g = this.lastGroup;
    if (g !== undefined && g.ranks.length < MAX_RANKS) g.ranks.push(r);
    else if (g === undefined && c.ranks.length < MAX_RANKS) c.ranks.push(r);
  }
}
