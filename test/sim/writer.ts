/**
 * Materialises a Scenario as real files: one `nccl-<host>-<pid>.log` per process (as
 * NCCL_DEBUG_FILE=nccl-%h-%p.log writes them), `stderr-<host>-<pid>.log` for PyTorch's stderr,
 * and optionally one combined stdout capture with launcher prefixes (`[1,3]<stdout>:` OpenMPI
 * --tag-output, or PyTorch's `[rank3]:`), interleaved in time order.
 */
import { appendFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { SimLine } from "./format.js";
import type { AdvanceResult, Scenario } from "./scenario.js";

export type LauncherStyle = "openmpi" | "pytorch";

export interface SinkOptions {
  /** Write the per-process NCCL_DEBUG_FILE logs (default true). */
  perRank?: boolean;
  /** Write PyTorch's stderr per process (default true). */
  stderr?: boolean;
  /** Also write every line into one stdout capture with launcher prefixes. */
  combined?: { file: string; style: LauncherStyle };
}

/** How a line appears on the launcher's combined stdout. */
export function combinedLine(sim: Scenario, l: SimLine, style: LauncherStyle): string {
  let text = l.text;
  // Without NCCL_DEBUG_FILE, NCCL <2.23 prints the version bare on stdout (fixtures 28, 04).
  if (l.kind === "version" && sim.spec.traits.bareVersionOnStdout) text = `NCCL version ${sim.spec.version.full}`;
  if (style === "openmpi") return `[1,${l.rank}]<${l.stream === "nccl" ? "stdout" : "stderr"}>:${text}`;
  return l.stream === "stderr" && text.startsWith(`[rank${l.rank}]:`) ? text : `[rank${l.rank}]:${text}`;
}

export class FileSink {
  private ready = false;
  lines = 0;
  bytes = 0;

  constructor(
    readonly dir: string,
    private readonly sim: Scenario,
    private readonly opts: SinkOptions = {},
  ) {}

  /** Appends one advance() result to the files. */
  async write(res: AdvanceResult): Promise<void> {
    if (!this.ready) {
      await mkdir(this.dir, { recursive: true });
      this.ready = true;
    }
    const perRank = this.opts.perRank ?? true;
    const stderr = this.opts.stderr ?? true;
    for (const [file, lines] of res.byFile) {
      const isErr = file.startsWith("stderr-");
      if ((isErr && !stderr) || (!isErr && !perRank)) continue;
      await this.append(file, lines);
    }
    const c = this.opts.combined;
    if (c !== undefined && res.lines.length > 0) {
      await this.append(
        c.file,
        res.lines.map((l) => combinedLine(this.sim, l, c.style)),
      );
    }
  }

  private async append(file: string, lines: string[]): Promise<void> {
    const text = `${lines.join("\n")}\n`;
    this.lines += lines.length;
    this.bytes += Buffer.byteLength(text);
    await appendFile(join(this.dir, file), text);
  }
}

export interface WriteResult {
  dir: string;
  lines: number;
  bytes: number;
}

/** Runs the scenario to `durationMs` as fast as possible, appending every `chunkMs` of simulated time. */
export async function writeScenario(sim: Scenario, dir: string, opts: SinkOptions & { durationMs: number; chunkMs?: number }): Promise<WriteResult> {
  const sink = new FileSink(dir, sim, opts);
  const chunk = opts.chunkMs ?? 1000;
  while (sim.nowMs < opts.durationMs) await sink.write(sim.advance(Math.min(chunk, opts.durationMs - sim.nowMs)));
  return { dir, lines: sink.lines, bytes: sink.bytes };
}

/**
 * Appends in (scaled) real time: every `tickMs` of wall time the scenario advances
 * `tickMs * speed` simulated ms. Content does not depend on timing; only when it lands does.
 * Stops at `durationMs` of simulated time or when `signal` aborts.
 */
export async function runRealtime(
  sim: Scenario,
  dir: string,
  opts: SinkOptions & { speed?: number; durationMs: number; tickMs?: number; signal?: AbortSignal },
): Promise<WriteResult> {
  const sink = new FileSink(dir, sim, opts);
  const tick = opts.tickMs ?? 100;
  const speed = opts.speed ?? 1;
  while (sim.nowMs < opts.durationMs && opts.signal?.aborted !== true) {
    await sink.write(sim.advance(Math.min(tick * speed, opts.durationMs - sim.nowMs)));
    if (sim.nowMs >= opts.durationMs) break;
    try {
      await sleep(tick, undefined, opts.signal === undefined ? {} : { signal: opts.signal });
    } catch {
      break;
    }
  }
  return { dir, lines: sink.lines, bytes: sink.bytes };
}
