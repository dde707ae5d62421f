/**
 * A simulated training job (test/sim Scenario) writing its NCCL logs the way a process does:
 *  - "path":   opens the path for every batch (O_APPEND), like a logger that reopens; after a delete
 *              or a rename it writes a new file at the path
 *  - "append": one O_APPEND descriptor per file for the whole run
 *  - "nccl":   one descriptor opened like NCCL's fopen(path, "w"): no O_APPEND, so after the file is
 *              truncated under it the next write lands at its old offset and leaves a hole of NULs
 * Counts what it wrote: lines (what ringwatch_nccl_log_lines_total must add up to), COLL lines per
 * rank, and per communicator and rank the COLL lines and the last opCount, from which
 * expectedProgress() gives what ringwatch_nccl_rank_progress must be.
 */
import { appendFileSync, closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { Scenario, type JobSpec, type ScenarioOptions } from "../../sim/index.js";

export type WriteStyle = "path" | "append" | "nccl";

export class JobWriter {
  readonly sim: Scenario;
  lines = 0;
  coll = 0;
  readonly collByRank = new Map<number, number>();
  readonly commIds = new Set<string>();
  /** Per commId, per rank: the COLL lines written and the opCount of the last one. */
  readonly collByComm = new Map<string, Map<number, { lines: number; lastOpCount: number }>>();
  /** commId of each communicator name, from its Init line. */
  private readonly commIdOf = new Map<string, string>();
  private readonly fds = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly dir: string,
    job: JobSpec,
    readonly style: WriteStyle,
    opts: ScenarioOptions = {},
  ) {
    mkdirSync(dir, { recursive: true });
    this.sim = new Scenario(job, opts);
  }

  /** Paths of the rank files (NCCL_DEBUG_FILE=nccl-%h-%p.log). */
  files(): string[] {
    return this.sim.files().map((f) => join(this.dir, f));
  }

  /** Writes `simMs` more of the job, synchronously (a fault applied between two calls never splits a write). */
  step(simMs: number): void {
    const res = this.sim.advance(simMs);
    for (const l of res.lines) {
      if (l.stream !== "nccl") continue;
      const m = /commId (0x[0-9a-f]+)/.exec(l.text);
      if (m?.[1]) {
        this.commIds.add(m[1]);
        if (l.comm !== undefined) this.commIdOf.set(l.comm, m[1]);
      }
      if (l.kind === "coll") {
        this.coll++;
        this.collByRank.set(l.rank, (this.collByRank.get(l.rank) ?? 0) + 1);
        const id = (l.comm === undefined ? undefined : this.commIdOf.get(l.comm)) ?? l.comm ?? "";
        let ranks = this.collByComm.get(id);
        if (ranks === undefined) {
          ranks = new Map<number, { lines: number; lastOpCount: number }>();
          this.collByComm.set(id, ranks);
        }
        const r = ranks.get(l.rank) ?? { lines: 0, lastOpCount: 0 };
        r.lines++;
        r.lastOpCount = parseInt(/opCount ([0-9a-f]+)/.exec(l.text)?.[1] ?? "0", 16);
        ranks.set(l.rank, r);
      }
    }
    for (const [file, lines] of res.byFile) {
      if (file.startsWith("stderr-")) continue;
      this.write(join(this.dir, file), `${lines.join("\n")}\n`);
      this.lines += lines.length;
    }
  }

  /**
   * What ringwatch_nccl_rank_progress must be per `commId/rank` once every line is read: the
   * collectives each rank entered, as the agent counts them (collectors/nccl/series.ts
   * rankProgress): opCount + 1 of its last COLL line where the communicator numbers its operations
   * (opCount > 0 on some rank: NCCL before 2.27, or a multi-node communicator), else its COLL lines
   * (a single-node communicator from 2.27, whose opCount stays 0). Only the latter is a count of
   * lines; the lines read are ringwatch_nccl_log_lines_total against `lines`.
   */
  expectedProgress(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [id, ranks] of this.collByComm) {
      const numbered = [...ranks.values()].some((r) => r.lastOpCount > 0);
      for (const [rank, r] of ranks) out.set(`${id}/${rank}`, numbered ? r.lastOpCount + 1 : r.lines);
    }
    return out;
  }

  /** Writes `simPerTick` ms of job every `tickMs` of wall time until pause()/close(). */
  resume(tickMs = 100, simPerTick = 1000): void {
    this.pause();
    this.timer = setInterval(() => this.step(simPerTick), tickMs);
  }

  pause(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  close(): void {
    this.pause();
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
  }

  private write(path: string, text: string): void {
    if (this.style === "path") {
      appendFileSync(path, text);
      return;
    }
    let fd = this.fds.get(path);
    if (fd === undefined) {
      fd = openSync(path, this.style === "append" ? "a" : "w");
      this.fds.set(path, fd);
    }
    writeSync(fd, text); // at the descriptor's own position (O_APPEND: the end)
  }
}
