/**
 * A simulated training job (test/sim Scenario) writing its NCCL logs the way a process does:
 *  - "path":   opens the path for every batch (O_APPEND), like a logger that reopens; after a delete
 *              or a rename it writes a new file at the path
 *  - "append": one O_APPEND descriptor per file for the whole run
 *  - "nccl":   one descriptor opened like NCCL's fopen(path, "w"): no O_APPEND, so after the file is
 *              truncated under it the next write lands at its old offset and leaves a hole of NULs
 * Counts what it wrote: lines, and COLL lines per rank (what ringwatch_nccl_rank_collectives_total
 * must add up to).
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
      if (l.kind === "coll") {
        this.coll++;
        this.collByRank.set(l.rank, (this.collByRank.get(l.rank) ?? 0) + 1);
      }
      const m = /commId (0x[0-9a-f]+)/.exec(l.text);
      if (m?.[1]) this.commIds.add(m[1]);
    }
    for (const [file, lines] of res.byFile) {
      if (file.startsWith("stderr-")) continue;
      this.write(join(this.dir, file), `${lines.join("\n")}\n`);
      this.lines += lines.length;
    }
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
