/**
 * PyTorch Flight Recorder, live. When a hang is suspected on this node (any evidence: COLL lines,
 * NCCL RAS), every rank's debug-info FIFO (`<pipe prefix><rank>.pipe`, TORCH_NCCL_DEBUG_INFO_PIPE_FILE)
 * gets one line, and each rank dumps its Flight Recorder to `<dump prefix><rank>`
 * (TORCH_FR_DUMP_TEMP_FILE); the dumps PyTorch writes by itself on a watchdog timeout land in the
 * same place. Every evaluation the dump files are looked at (one readdir, a stat each); a dump is
 * read once its size and mtime held still across two looks (PyTorch writes it in place, not by a
 * rename; one that cannot be read yet is tried again for SETTLE_MS before it counts), and the dumps of one episode (written within EPISODE_MS of the newest) are analyzed
 * together (flight-recorder/analyze.ts): the ranks behind with the Python stack of the collective
 * the others wait in, missing ranks, mismatches. One log line per new verdict, once the episode's
 * dumps are in: every rank asked has written a new dump (or POKE_WAIT_MS passed) and no dump file
 * is still waiting to be read; metrics from snapshot(), at once.
 */
import { read } from "node:fs";
import type { Logger } from "pino";
import { jobFsGate } from "../../job-fs-gate.js";
import { openJobFile, prefixRoot, RefusedFile, REFUSAL_WORDS, TrustRoots } from "../../untrusted-open.js";
import { flightRecorderFindings } from "./findings.js";
import type { Finding } from "../verdict/report.js";
import { analyzeFrDumps, type FrAnalysis } from "./analyze.js";
import { findPipes, pokePipe, rankFilesAsync, type PokeResult } from "./live-pipes.js";
import { readFrDumpIsolated } from "./isolated.js";
import type { FrRead } from "./types.js";

export interface FlightRecorderOptions {
  /** The job's TORCH_NCCL_DEBUG_INFO_PIPE_FILE; undefined: never poke, only read what PyTorch dumps. */
  pipePrefix?: string;
  /** The job's TORCH_FR_DUMP_TEMP_FILE (or TORCH_NCCL_DEBUG_INFO_TEMP_FILE). */
  dumpPrefix: string;
}

export interface FlightRecorderWatchOptions extends FlightRecorderOptions {
  now: () => number;
  log: Logger;
  /** No second poke within this long of the last (ms). Default 10 minutes. */
  cooldownMs?: number;
}

/** over_budget: reading it went past its budget, or the reader's memory or time (flight-recorder/isolated.ts). */
export type FrDumpOutcome = "ok" | "unreadable" | "too_large" | "over_budget";
export const FR_DUMP_OUTCOMES: readonly FrDumpOutcome[] = ["ok", "unreadable", "too_large", "over_budget"];
export const FR_POKE_RESULTS: readonly PokeResult[] = ["ok", "no_reader", "error"];

/**
 * Larger dumps are not even handed to the reader (a worker thread with a 64 MB heap, which reads
 * dumps up to about 4 MB; flight-recorder/isolated.ts) and are left to `ringwatch analyze`. A
 * 2,000-entry buffer with stacks is ~1 MB.
 */
export const MAX_LIVE_DUMP_BYTES = 16 * 1024 * 1024;
/** Collectives kept per process group and dump: the analysis needs the last few. */
const ENTRIES_PER_GROUP = 512;

/** An unreadable dump younger than this is looked at again before it counts as unreadable. */
const SETTLE_MS = 30_000;

/** How long the ranks asked for a dump are waited for before the verdict is logged without them (agent clock). */
const POKE_WAIT_MS = 60_000;

/** Dumps written this close to the newest belong to the same episode. */
const EPISODE_MS = 10 * 60_000;

export interface FlightRecorderSnapshot {
  /** Pokes by result. */
  pokes: ReadonlyMap<PokeResult, number>;
  /** Dump files read, by outcome. */
  dumps: ReadonlyMap<FrDumpOutcome, number>;
  /** The analysis of the latest episode's dumps. */
  analysis: FrAnalysis | undefined;
  /** Its findings, verdict first (ringwatch analyze's words). */
  findings: readonly Finding[];
  /** Newest dump mtime of the episode (epoch ms). */
  episodeMs: number | undefined;
}

/** What is published with the Flight Recorder off: no series. */
export const NO_FLIGHT_RECORDER: FlightRecorderSnapshot = { pokes: new Map(), dumps: new Map(), analysis: undefined, findings: [], episodeMs: undefined };

interface DumpFile {
  rank: number;
  path: string;
  size: number;
  mtimeMs: number;
  /** The (size, mtime) read, and what it gave. */
  readKey?: string;
  read?: FrRead;
}

export class FlightRecorderWatch {
  private opts: FlightRecorderWatchOptions;
  private readonly pokes = new Map<PokeResult, number>(FR_POKE_RESULTS.map((r) => [r, 0]));
  private readonly dumpCounts = new Map<FrDumpOutcome, number>(FR_DUMP_OUTCOMES.map((r) => [r, 0]));
  private readonly files = new Map<string, DumpFile>();
  private lastPokeMs: number | undefined;
  private hungBefore = false;
  private inFlight: Promise<void> | undefined;
  private analysis: FrAnalysis | undefined;
  private findings: readonly Finding[] = [];
  private episodeMs: number | undefined;
  private loggedVerdict: string | undefined;
  /** Ranks asked for a dump at the last poke, with the version of their dump read before it. */
  private readonly awaiting = new Map<number, string | undefined>();
  private awaitUntilMs = 0;
  /** Dumps in the latest analysis. */
  private episodeDumps = 0;
  private trust: TrustRoots | undefined;
  private trustDir: string | undefined;
  private readonly refusedLogged = new Set<string>();

  constructor(opts: FlightRecorderWatchOptions) {
    this.opts = { ...opts };
  }

  setOptions(o: FlightRecorderOptions): void {
    this.opts = { ...this.opts, ...o };
    if (o.pipePrefix === undefined) delete this.opts.pipePrefix;
  }

  /** Every evaluation: pokes when a hang begins, then looks at the dump files. */
  tick(hung: boolean): void {
    const rising = hung && !this.hungBefore;
    this.hungBefore = hung;
    if (rising) void this.poke();
    if (this.inFlight !== undefined) return;
    this.inFlight = this.look()
      .catch((err: unknown) => this.opts.log.warn({ reason: err instanceof Error ? err.message : String(err) }, "nccl: reading Flight Recorder dumps failed"))
      .finally(() => {
        this.inFlight = undefined;
      });
  }

  /** Resolves when no look is in flight (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.inFlight !== undefined) await this.inFlight;
  }

  snapshot(): FlightRecorderSnapshot {
    return { pokes: this.pokes, dumps: this.dumpCounts, analysis: this.analysis, findings: this.findings, episodeMs: this.episodeMs };
  }

  private async poke(): Promise<void> {
    const prefix = this.opts.pipePrefix;
    if (prefix === undefined) return;
    const now = this.opts.now();
    if (this.lastPokeMs !== undefined && now - this.lastPokeMs < (this.opts.cooldownMs ?? 10 * 60_000)) return;
    this.lastPokeMs = now;
    const pipes = await findPipes(prefix);
    const results: string[] = [];
    this.awaiting.clear();
    this.awaitUntilMs = now + POKE_WAIT_MS;
    for (const p of pipes) {
      const r = await pokePipe(p.path);
      if (r.result === "ok") this.awaiting.set(p.rank, this.dumpOf(p.rank)?.readKey);
      this.pokes.set(r.result, (this.pokes.get(r.result) ?? 0) + 1);
      results.push(`${p.rank}:${r.result}${r.reason !== undefined ? `(${r.reason})` : ""}`);
    }
    if (pipes.length === 0)
      this.opts.log.info(
        { pipe_prefix: prefix },
        `nccl: hang suspected, but no Flight Recorder pipe ${prefix}<rank>.pipe exists (the job sets TORCH_NCCL_DEBUG_INFO_PIPE_FILE and a trace buffer)`,
      );
    else this.opts.log.info({ pipe_prefix: prefix, ranks: results }, `nccl: hang suspected: asked ${pipes.length} rank(s) here for their Flight Recorder dump`);
  }

  private async look(): Promise<void> {
    const seen = new Set<string>();
    let changed = false;
    for (const f of await rankFilesAsync(this.opts.dumpPrefix, "")) {
      seen.add(f.path);
      // Opened, not stat()ed by path: the fd is what gets read (a FIFO or a link swapped in is refused).
      let opened;
      try {
        const roots = this.roots();
        opened = await jobFsGate.run(
          f.path,
          () => openJobFile(f.path, roots),
          (late) => jobFsGate.close(f.path, late.fd),
        );
      } catch (err) {
        this.refused(f.path, err);
        continue;
      }
      const st = opened.st;
      const prev = this.files.get(f.path);
      const key = `${st.size}:${st.mtimeMs}`;
      const still = prev !== undefined && prev.size === st.size && prev.mtimeMs === st.mtimeMs;
      const entry: DumpFile = prev ?? { rank: f.rank, path: f.path, size: st.size, mtimeMs: st.mtimeMs };
      entry.size = st.size;
      entry.mtimeMs = st.mtimeMs;
      this.files.set(f.path, entry);
      // Read once it held still across two looks, and only once per version of the file.
      if (!still || entry.readKey === key) {
        jobFsGate.close(f.path, opened.fd);
        continue;
      }
      const read = await this.read(entry, opened.fd);
      if (read === undefined) continue; // young and unreadable: perhaps still being written
      entry.readKey = key;
      entry.read = read;
      changed = true;
    }
    for (const p of [...this.files.keys()]) if (!seen.has(p)) this.files.delete(p);
    if (changed) this.analyze();
    if (this.episodeIn()) this.logVerdict();
  }

  private dumpOf(rank: number): DumpFile | undefined {
    for (const f of this.files.values()) if (f.rank === rank) return f;
    return undefined;
  }

  /** No dump file waits to be read, and every rank asked has a new dump read (or the wait is over). */
  private episodeIn(): boolean {
    for (const f of this.files.values()) if (f.read === undefined) return false;
    if (this.opts.now() >= this.awaitUntilMs) return true;
    for (const [rank, before] of this.awaiting) {
      const f = this.dumpOf(rank);
      if (f?.readKey === undefined || f.readKey === before) return false;
    }
    return true;
  }

  /** The dump, or undefined when it cannot be read yet but was written under SETTLE_MS ago. */
  private async read(f: DumpFile, fd: number): Promise<FrRead | undefined> {
    const name = f.path.slice(f.path.lastIndexOf("/") + 1);
    let r: FrRead;
    if (f.size > MAX_LIVE_DUMP_BYTES) {
      jobFsGate.close(f.path, fd);
      r = {
        ok: false,
        source: name,
        rank: f.rank,
        error: `too large: ${f.size} bytes, over ${MAX_LIVE_DUMP_BYTES / (1024 * 1024)} MiB (ringwatch analyze reads up to 64 MiB)`,
      };
      this.count("too_large");
    } else {
      try {
        // In a worker with its own heap and time limits: a dump that needs more fails, the agent goes on.
        r = await readFrDumpIsolated(await readFd(f.path, fd, f.size), name, { entriesPerGroup: ENTRIES_PER_GROUP });
      } catch (err) {
        r = { ok: false, source: name, rank: f.rank, error: (err as NodeJS.ErrnoException).code ?? String(err) };
      } finally {
        jobFsGate.close(f.path, fd);
      }
      // PyTorch writes in place: a dump cut short may still be on its way (the file's clock, not the
      // agent's). One over its budget is not read again: that would only spend the budget again.
      if (!r.ok && r.over === undefined && Date.now() - f.mtimeMs < SETTLE_MS) return undefined;
      this.count(r.ok ? "ok" : r.over !== undefined ? "over_budget" : "unreadable");
    }
    if (!r.ok) this.opts.log.warn({ path: f.path, rank: f.rank, reason: r.error }, `nccl: Flight Recorder dump ${f.path} could not be read: ${r.error}`);
    return r.ok ? { ok: true, dump: { ...r.dump, source: f.path } } : { ...r, source: f.path };
  }

  /** A dump that cannot be opened: a refusal (a FIFO, a link out of the folder) is logged once per path. */
  private refused(path: string, err: unknown): void {
    if (!(err instanceof RefusedFile) || this.refusedLogged.has(path)) return;
    if (this.refusedLogged.size >= 1024) this.refusedLogged.clear();
    this.refusedLogged.add(path);
    this.opts.log.warn({ path, code: err.code }, `nccl: Flight Recorder dump ${path} not read: ${REFUSAL_WORDS[err.code]}`);
  }

  /** The dump folder is the job's: what is read there must lie in it (or belong to the link's owner). */
  private roots(): TrustRoots {
    const dir = prefixRoot(this.opts.dumpPrefix);
    if (this.trustDir !== dir) {
      this.trustDir = dir;
      this.trust = new TrustRoots([dir]);
    }
    return this.trust as TrustRoots;
  }

  private count(o: FrDumpOutcome): void {
    this.dumpCounts.set(o, (this.dumpCounts.get(o) ?? 0) + 1);
  }

  private analyze(): void {
    const read = [...this.files.values()].filter((f) => f.read !== undefined);
    const newest = read.reduce((m, f) => Math.max(m, f.mtimeMs), -Infinity);
    const episode = read.filter((f) => newest - f.mtimeMs <= EPISODE_MS).sort((a, b) => a.rank - b.rank);
    if (episode.length === 0) return;
    this.episodeMs = newest;
    this.analysis = analyzeFrDumps(episode.map((f) => f.read as FrRead));
    this.findings = flightRecorderFindings(this.analysis);
    this.episodeDumps = episode.length;
  }

  /** The verdict of the episode's analysis, logged once per new verdict. */
  private logVerdict(): void {
    if (this.analysis === undefined) return;
    const top = this.findings.find((f) => f.severity !== "info") ?? this.findings[0];
    const key = top === undefined ? "" : `${top.kind}:${top.summary}`;
    if (top === undefined || key === this.loggedVerdict) return;
    this.loggedVerdict = key;
    const frames = top.stacks?.[0]?.frames.slice(0, 6).map((fr) => `${fr.file}:${fr.line} ${fr.function}`);
    // The rank behind's own last collective, and where its Python code called it.
    const last = this.analysis.groups.find((g) => g.behind !== undefined)?.behind?.last[0];
    const behindFrames = last?.frames.slice(0, 6).map((fr) => `${fr.file}:${fr.line} ${fr.name}`) ?? [];
    this.opts.log.warn(
      {
        kind: top.kind,
        process_group: top.process_group ?? null,
        ranks: top.ranks,
        seq: top.seq ?? null,
        op: top.op ?? null,
        dumps: this.episodeDumps,
        frames: frames ?? [],
        behind_last: last !== undefined ? { rank: last.rank, seq: last.seq, op: last.op, state: last.state ?? null } : null,
        behind_frames: behindFrames,
      },
      `nccl: Flight Recorder: ${top.summary}`,
    );
  }
}

/** Up to size bytes from the start of fd (the size fstat gave: a file that grew is read as it was). */
async function readFd(path: string, fd: number, size: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(size);
  let got = 0;
  while (got < size) {
    const from = got;
    const n = await jobFsGate.run(path, () => new Promise<number>((res, rej) => read(fd, buf, from, size - from, from, (err, k) => (err ? rej(err) : res(k)))));
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}
