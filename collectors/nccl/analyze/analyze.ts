/**
 * `ringwatch analyze`: the same state and verdicts as the live collector, built offline from any set
 * of logs (a file per rank, or one combined stdout with many ranks interleaved) and PyTorch Flight
 * Recorder dumps.
 */
import { analyzeFrDumps } from "../flight-recorder/analyze.js";
import { readFrDump } from "../flight-recorder/read.js";
import type { FrRead } from "../flight-recorder/types.js";
import { parseLine } from "../logs/parse/line.js";
import { LineUnwrapper } from "../logs/parse/unwrap.js";
import { RasReader } from "../ras/parse-text.js";
import { looksLikeJson, rasReportFromJson } from "../ras/parse-json.js";
import { transportOf } from "../logs/state/transport.js";
import { Tracker } from "../logs/state/tracker.js";
import { commFindings } from "../logs/findings/comm.js";
import { withProcessRanks } from "../logs/findings/procs.js";
import { flightRecorderFindings, processGroupSummaries } from "../flight-recorder/findings.js";
import { HardwareTally, hardwareFindings, type HardwareEvent } from "../logs/findings/hardware.js";
import { pytorchFindings } from "../logs/pytorch/findings.js";
import { pytorchDebugFindings } from "../logs/pytorch/findings-debug.js";
import { rasFindings, type RasSource } from "../ras/findings.js";
import { diagLine, type DiagReport } from "../ras/parse-diag.js";
import { diagFindings } from "../ras/diag-findings.js";
import { transportFindings, type OrphanLines } from "../logs/findings/transport.js";
import { reportedResults } from "../logs/pytorch/findings-errors.js";
import { FailedStackReader, withFailedStacks } from "../logs/pytorch/failed-stack.js";
import { NcclTestsReader, ncclTestsFindings, ncclTestsOneHost, type NcclTestsDevice } from "../logs/nccl-tests/failure.js";
import { FrTextReader } from "../flight-recorder/text-report.js";
import { cutHeader, headerProcess } from "../logs/parse/cut-header.js";
import { nccl1Warn } from "../logs/parse/nccl1-warn.js";
import { parsePrefix } from "../logs/parse/prefix.js";
import type { ProcessState } from "../logs/state/model.js";
import { frTextFindings } from "../flight-recorder/text-findings.js";
import { headlineOf, incidentsOf } from "../verdict/incidents.js";
import { StackReader } from "../stacks/reader.js";
import { FrameBudget } from "../stacks/types.js";
import { placeStacks, pySpyNativeWaits, stackPrefix, withPythonStacks } from "./stacks.js";
import { evidenceSources, type EvidenceSources, type LineReader } from "./evidence.js";
import { withDumpsAlone } from "./dump-alone.js";
import { sortFindings, type CommunicatorSummary, type Finding, type ProcessSummary, type Report } from "../verdict/report.js";

/** Entries kept per process group of each dump: the analysis compares the last 64 collectives, and a rank may run ahead. */
export const FR_ENTRIES_PER_GROUP = 512;

export interface LogText {
  /** Name used in evidence (`name:line`). */
  name: string;
  text: string;
}

/** The lines of one log, in order; each line() or skip() is the next line number, from 1. */
export interface LogLines {
  line(text: string): void;
  /** Lines that were not read (too long), so that the next line keeps its number. */
  skip(n: number): void;
  /** Lines so far. */
  readonly count: number;
}

/**
 * A reader of the kernel's lines among the logs (Xid, SXid, HCA driver events), given by the caller:
 * the nccl collector does not read kernel logs itself (agent/analyze-kernel.ts joins collectors/kmsg).
 */
export interface HardwareLog {
  /** The reader of one log, by its name: the events of each line as read (before lines are put back together), numbered from 1. */
  lines(name: string): {
    line(text: string, lineNo: number): readonly HardwareEvent[];
    /** What the log's last lines settle once no line follows (a row that waited for the next one). */
    end?(): readonly HardwareEvent[];
  };
}

/**
 * A set of logs, read one after the other into the same state and verdicts as the live collector:
 * NCCL and PyTorch lines, NCCL RAS reports as text or as a JSON document, NCCL RAS diagnostics
 * (`NCCL DIAG` lines), the Flight Recorder analyzer's text, Python stack dumps (py-spy,
 * faulthandler: analyze/stacks.ts) and the other evidence pasted among the lines (analyze/evidence.ts),
 * and Flight Recorder dumps. The CLI (agent/analyze.ts) reads the bytes and hands over lines or whole dumps; report()
 * says what they mean.
 */
export class LogAnalysis {
  private readonly tracker = new Tracker({ maxComms: 100_000, maxProcesses: 100_000 });
  private readonly ras: RasSource[] = [];
  /** The NCCL RAS diagnostics lines of each log (ras/parse-diag.ts), wherever they stand in it. */
  private readonly diag: { source: string; report: DiagReport }[] = [];
  private readonly dumps: FrRead[] = [];
  /** The readers of each log whose output shapes other findings (torchfrtrace's text, stacks, nccl-tests). */
  private readonly texts: TextReaders[] = [];
  /** The other evidence of pasted text (evidence.ts), each source reading every log. */
  private readonly evidence: EvidenceSources = evidenceSources();
  private readonly unwrappers: LineUnwrapper[] = [];
  private readonly kernel = new HardwareTally();
  /** Each log's hardware reader, for what its last lines settle (HardwareLog end). */
  private readonly kernelEnds: (() => readonly HardwareEvent[])[] = [];
  /** Frames all the logs' stack dumps may hold together. */
  private readonly stackFrames = new FrameBudget();
  /** Per log: torchrun's local rank (`[default3]:`) → the process its NCCL lines name, to place that prefix's stack dumps. */
  private readonly torchrun = new Map<string, Map<number, string>>();
  /** `host:pid` of NCCL lines that gave no event (findings/transport.ts's judgement of one host). */
  private readonly seenProcesses = new Set<string>();
  /** The rank an actor's prefix gives a pid on lines that are no NCCL line (`(VllmWorker rank=1 pid=2699412) ERROR ...`); undefined: two ranks. */
  private readonly pidRanks = new Map<number, number | undefined>();

  constructor(private readonly hardware?: HardwareLog) {}

  /**
   * A log read as lines, its name used in evidence (`name:line`). Lines as pasted are first put
   * back together (parse/unwrap.ts: an error glued to a progress bar, rows of a wrapped line).
   */
  lines(name: string): LogLines {
    const reader = new RasReader();
    this.ras.push({ source: name, reports: reader.reports() });
    const diag: DiagReport = { results: [], busy: false, errors: [] };
    this.diag.push({ source: name, report: diag });
    // Readers that read every line, and those that read only lines with one of their marks (one scan for all: evidence.ts's gate).
    const pasted: LineReader[] = this.evidence.pasted.filter((s) => s.marks === undefined).map((s) => s.reader(name));
    const gated: LineReader[] = this.evidence.pasted.filter((s) => s.marks !== undefined).map((s) => s.reader(name));
    const gate = this.evidence.gate;
    const connectRetries = this.evidence.connectRetries.forLog(name);
    const frText = new FrTextReader();
    const ncclTests = new NcclTestsReader(name);
    const failedStack = new FailedStackReader(name);
    const stacks = new StackReader(name, stackPrefix, this.stackFrames);
    this.texts.push({
      source: name,
      frText,
      failedStack,
      stacks,
      ncclTests,
    });
    const t = this.tracker;
    const torchrun = this.torchrun;
    const seen = this.seenProcesses;
    const pidRanks = this.pidRanks;
    const unwrapper = new LineUnwrapper((text, lineNo) => {
      const ev = parseLine(text);
      if (ev === undefined) {
        // A connect's retry (2.19+): before the last, a retrying process; the last, the failed connect it announces.
        if (connectRetries.retryLine(text, lineNo)) return;
        // NCCL 1.x's WARN, with no header.
        const old = text.charCodeAt(0) === 87 /* W */ ? nccl1Warn(text) : undefined;
        if (old !== undefined) return void t.ingest(old, { source: name, lineNo });
        const h = seen.size < MAX_SEEN || connectRetries.wantsHeader(text) ? headerProcess(text) : undefined;
        if (h !== undefined) {
          if (seen.size < MAX_SEEN) seen.add(h.process);
          connectRetries.line(text, h, lineNo);
        } else if (pidRanks.size < MAX_SEEN) actorRank(text, pidRanks);
        return;
      }
      if (ev.host !== undefined && ev.pid !== undefined && connectRetries.open) connectRetries.event(ev.host, ev.pid, ev.tid);
      t.ingest(ev, { source: name, lineNo });
      const l = ev.launcher;
      if (l?.kind === "torchrun" && l.localRank !== undefined && ev.host !== undefined && ev.pid !== undefined) {
        let m = torchrun.get(name);
        if (m === undefined) torchrun.set(name, (m = new Map<number, string>()));
        m.set(l.localRank, `${ev.host}:${ev.pid}`);
      }
    });
    this.unwrappers.push(unwrapper);
    const kernel = this.hardware?.lines(name);
    const tally = this.kernel;
    if (kernel?.end !== undefined) this.kernelEnds.push(kernel.end.bind(kernel));
    let lineNo = 0;
    const own = this.texts[this.texts.length - 1] as TextReaders;
    return {
      line(text: string): void {
        lineNo++;
        own.lastLine = text;
        unwrapper.push(text, lineNo);
        reader.line(text, lineNo);
        diagLine(diag, text, lineNo);
        for (const r of pasted) r.line(text, lineNo);
        if (gate.test(text)) for (const r of gated) r.line(text, lineNo);
        frText.line(text, lineNo);
        ncclTests.line(text, lineNo);
        failedStack.line(text, lineNo);
        stacks.line(text, lineNo);
        if (kernel !== undefined) for (const e of kernel.line(text, lineNo)) tally.add(e);
      },
      skip(n: number): void {
        lineNo += n;
      },
      get count(): number {
        return lineNo;
      },
    };
  }

  /** A RAS report saved as JSON (`ncclras -f json`): true when `text` is one; else read it as lines. */
  rasDocument(name: string, text: string): boolean {
    const report = rasReportFromJson(text);
    if (report === undefined) return false;
    this.ras.push({ source: name, reports: [report] });
    return true;
  }

  /**
   * A PyTorch Flight Recorder dump (a pickle, read whole up to MAX_FR_DUMP_BYTES), named by its file
   * name (`nccl_trace_rank_3`: the rank, where the dump does not say). What it returns is also kept:
   * a dump that cannot be read is a finding, and its rank counts as one without a dump.
   */
  flightRecorderDump(name: string, bytes: Uint8Array): FrRead {
    const r = readFrDump(bytes, name, { entriesPerGroup: FR_ENTRIES_PER_GROUP });
    this.dumps.push(r);
    return r;
  }

  /**
   * A dump read elsewhere, as readFrDump(bytes, name, { entriesPerGroup: FR_ENTRIES_PER_GROUP })
   * reads it (`ringwatch analyze` reads each in a worker thread: flight-recorder/isolated.ts).
   */
  flightRecorderRead(r: FrRead): void {
    this.dumps.push(r);
  }

  /** Flight Recorder dumps given so far, readable or not. */
  get dumpCount(): number {
    return this.dumps.length;
  }

  report(): Report {
    for (const u of this.unwrappers) u.end();
    for (const end of this.kernelEnds) for (const e of end()) this.kernel.add(e);
    this.kernelEnds.length = 0;
    // A process whose lines end at a connect's last retry: that connect failed (NCCL's WARN was cut off).
    for (const { ev, ctx } of this.evidence.connectRetries.failedConnects()) this.tracker.ingest(ev, ctx);
    for (const x of this.texts) {
      const key = x.lastLine !== undefined ? cutHeader(x.lastLine) : undefined;
      if (key !== undefined) this.seenProcesses.add(key);
    }
    withActorRanks(this.tracker, this.pidRanks);
    return reportOf(this.tracker, this.ras, this.diag, this.dumps, this.kernel, this.texts, this.evidence, this.torchrun, this.seenProcesses);
  }
}

/** Every line of every log, in order (`\n` or `\r\n` ends a line; a last line without one counts). */
export function analyzeLogs(logs: readonly LogText[], hardware?: HardwareLog): Report {
  const a = new LogAnalysis(hardware);
  for (const log of logs) {
    if (looksLikeJson(log.text) && a.rasDocument(log.name, log.text)) continue;
    const lines = a.lines(log.name);
    let i = 0;
    while (i < log.text.length) {
      let nl = log.text.indexOf("\n", i);
      if (nl < 0) nl = log.text.length;
      // CRLF is one line end, as the CLI's reader (LineSplitter) takes it.
      lines.line(log.text.slice(i, nl > i && log.text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl));
      i = nl + 1;
    }
  }
  return a.report();
}

function summaries(t: Tracker): { processes: ProcessSummary[]; communicators: CommunicatorSummary[] } {
  const ranksByProc = new Map<string, { comm_id: string; rank: number }[]>();
  const communicators: CommunicatorSummary[] = [];
  for (const c of t.comms.values()) {
    const ranks = [...c.ranks.values()];
    for (const r of ranks) ranksByProc.set(r.processKey, [...(ranksByProc.get(r.processKey) ?? []), { comm_id: c.key, rank: r.rank }]);
    const counts = ranks.map((r) => r.collectives);
    communicators.push({
      comm_id: c.key,
      nranks: c.nranks ?? null,
      ranks_seen: ranks.length,
      collectives_max: counts.length ? Math.max(...counts) : 0,
      collectives_min: counts.length ? Math.min(...counts) : 0,
      last_op: c.seqOps.get(c.maxCollectives)?.op ?? null,
      torn_down: ranks.length > 0 && ranks.every((r) => r.tornDownMs !== undefined),
    });
  }
  const processes = [...t.processes.values()].map((p) => {
    const tr = transportOf(p);
    return {
      process: p.key,
      host: p.host,
      pid: p.pid,
      nccl_version: p.version ?? null,
      net: tr.net,
      gdr: tr.gdr,
      files: [...p.sources.keys()],
      ranks: (ranksByProc.get(p.key) ?? []).sort((a, b) => a.rank - b.rank),
      warnings: p.warnings.length,
    };
  });
  return { processes, communicators };
}

/** `(VllmWorker rank=1 pid=2699412) ...`, `(MegatronPolicyWorker[rank=107] pid=3340050, ...) ...`: pid and rank, kept in m. */
function actorRank(text: string, m: Map<number, number | undefined>): void {
  if (text.indexOf("rank=") < 0) return;
  const l = parsePrefix(text, 0, Math.min(text.length, 256)).launcher;
  if (l?.kind !== "ray" || l.pid === undefined || l.rank === undefined) return;
  const had = m.get(l.pid);
  m.set(l.pid, m.has(l.pid) && had !== l.rank ? undefined : l.rank);
}

/**
 * A process of the NCCL lines with no rank of its own gets the rank an actor's prefix gave its pid
 * on other lines (nccl-pasted 313: vLLM's worker traceback beside NCCL's lines), where exactly one
 * process has that pid and the prefix gave it one rank.
 */
function withActorRanks(t: Tracker, pidRanks: ReadonlyMap<number, number | undefined>): void {
  if (pidRanks.size === 0) return;
  const byPid = new Map<number, ProcessState[]>();
  for (const p of t.processes.values()) if (pidRanks.has(p.pid)) byPid.set(p.pid, [...(byPid.get(p.pid) ?? []), p]);
  for (const [pid, ps] of byPid) {
    const rank = pidRanks.get(pid);
    const p = ps[0];
    if (ps.length === 1 && p !== undefined && rank !== undefined) p.launcherRank ??= rank;
  }
}

/** nccl-tests' table of every rank, where it puts them all on one host. */
function oneHostOf(devices: readonly NcclTestsDevice[], perProcess: number | undefined): Pick<OrphanLines, "oneHostJob"> {
  const host = ncclTestsOneHost(devices, perProcess);
  if (host === undefined) return {};
  const processes = [...new Set(devices.map((d) => `${d.host}:${d.pid}`))];
  return { oneHostJob: { host, processes, ranks: new Set(devices.map((d) => d.rank)).size } };
}

/** The most processes kept from lines that gave no event. */
const MAX_SEEN = 65_536;

/**
 * The readers of one log's lines whose output shapes other findings, not findings of its own alone:
 * torchfrtrace's text (its blocks claim the desync reader's lines), PyTorch's failed stacks and Python
 * stack dumps (placed on the findings of their ranks), nccl-tests' table (one host's job).
 */
interface TextReaders {
  source: string;
  frText: FrTextReader;
  ncclTests: NcclTestsReader;
  failedStack: FailedStackReader;
  stacks: StackReader;
  /** The log's last line: one cut right after its NCCL header still names a process (cut-header.ts). */
  lastLine?: string;
}

/**
 * torchfrtrace's `Not all ranks joining collective` blocks are also read, line by line, by the
 * PyTorch desync reader (logs/parse/desync.ts: the opening line and `missing ranks: {...}`); the
 * block's finding says more (process group, op, the stack), so the desync reader's rank_behind whose
 * evidence lies inside such a block is left out.
 */
function withoutFrTextDuplicates(findings: Finding[], texts: readonly TextReaders[]): Finding[] {
  const claimed = new Set<string>();
  for (const x of texts) for (const b of x.frText.blocks) if (b.what === "not_joined") for (const n of b.lines) claimed.add(`${x.source}:${n}`);
  if (claimed.size === 0) return findings;
  return findings.filter((f) => !(f.kind === "rank_behind" && f.evidence.length > 0 && f.evidence.every((e) => claimed.has(e))));
}

/** The hosts of the processes that failure findings name (`host:pid`, or a host alone); a note at info is none. */
function failureHosts(findings: readonly Finding[]): Set<string> {
  const out = new Set<string>();
  for (const f of findings) {
    if ((f.kind !== "nccl_error" && f.kind !== "network_error") || f.severity === "info") continue;
    for (const p of f.processes) {
      const c = p.lastIndexOf(":");
      out.add(c > 0 ? p.slice(0, c) : p);
    }
  }
  return out;
}

function reportOf(
  t: Tracker,
  ras: readonly RasSource[],
  diag: readonly { source: string; report: DiagReport }[],
  dumps: readonly FrRead[],
  hardware: HardwareTally,
  texts: readonly TextReaders[],
  evidence: EvidenceSources,
  torchrun: ReadonlyMap<string, ReadonlyMap<number, string>>,
  seen: ReadonlySet<string>,
): Report {
  const fr = analyzeFrDumps(dumps);
  const stackDumps = texts.flatMap((x) => x.stacks.end());
  const stacks = placeStacks(t, stackDumps, torchrun);
  // py-spy's native frames join gdb's backtraces as one source of waits.
  evidence.nativeWaits.withPySpy(pySpyNativeWaits(stackDumps, stacks));
  const base = [
    ...hardwareFindings(t, hardware),
    ...flightRecorderFindings(fr),
    ...rasFindings(ras),
    ...diag.flatMap((d) => diagFindings(d.source, d.report)),
    ...commFindings(t),
    ...withFailedStacks(
      withoutFrTextDuplicates(pytorchFindings(t), texts),
      texts.flatMap((x) => x.failedStack.stacks),
    ),
    ...texts.flatMap((x) => frTextFindings(x.source, x.frText.blocks, x.frText.noDumps)),
    ...evidence.alone.flatMap((s) => s.findings([])),
    ...pytorchDebugFindings(t.pt),
    ...transportFindings(
      t,
      {
        warnings: t.orphanWarnings,
        gdrDisabled: t.orphanGdrDisabled,
        netLinks: t.orphanNetLinks,
        seen: [...seen],
        ...oneHostOf(
          texts.flatMap((x) => x.ncclTests.devices),
          texts.find((x) => x.ncclTests.perProcess !== undefined)?.ncclTests.perProcess,
        ),
      },
      reportedResults(t.pt),
    ),
  ];
  for (const source of evidence.after) base.push(...source.findings(base));
  const findings = sortFindings(
    withDumpsAlone(
      withPythonStacks(
        withProcessRanks(t, [
          ...base,
          ...ncclTestsFindings(
            texts.flatMap((x) => x.ncclTests.failures),
            failureHosts(base),
          ),
        ]),
        stacks,
      ),
      stackDumps,
      stacks,
      evidence.nativeWaits.gdbStops(),
    ),
  );
  const incidents = incidentsOf(findings);
  return { headline: headlineOf(findings, incidents), incidents, findings, ...summaries(t), process_groups: processGroupSummaries(fr) };
}
