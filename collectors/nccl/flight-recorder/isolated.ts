/**
 * Flight Recorder dumps read in a worker thread (read-worker.ts), so that a dump that would cost
 * more memory or time than the agent can spare fails its read instead of ending the agent. The reader itself is
 * bounded by each dump's budget (budget.ts); the worker is what holds when that is not enough: its
 * V8 heap is capped (resourceLimits: a heap past the cap ends the thread with
 * ERR_WORKER_OUT_OF_MEMORY) and each read has a wall-time limit (past it the thread is terminated).
 * Either way the read fails with one line, marked `over` ("memory", "time"), and the next read
 * starts a fresh worker. The worker starts with the first read and ends once idle for `idleMs`: it
 * is not resident between dumps. Reads run one at a time, in the order asked.
 */
import { Worker } from "node:worker_threads";
import { rankFromName } from "./ranks.js";
import type { ReadRequest, WorkerMessage } from "./read-worker.js";
import { MAX_FR_DUMP_BYTES, type ReadOptions } from "./read.js";
import type { FrOverLimit, FrRead } from "./types.js";
import { looksLikePickle } from "./unpickle.js";
import { workerSource } from "../../worker-source.js";

export interface IsolationLimits {
  /** The worker's V8 old-generation heap (MB); its young generation and stack are small and fixed. */
  heapMb: number;
  /** Wall time one read may take in a started worker (ms). */
  timeMs: number;
  /** The worker ends when no read came for this long (ms). */
  idleMs: number;
}

/**
 * The agent's limits. 64 MB of heap reads a dump of about 4 MB (10,000 entries with 20-frame
 * stacks, from a 131,072-rank job; PyTorch's default buffer is 2,000 entries) and keeps what the
 * worker adds to the agent's RSS under about 130 MB while it reads (measured: 100 MB for a 4 MB
 * dump, 130 MB at the cap). 15 s is ten times what such a dump takes.
 */
export const AGENT_LIMITS: IsolationLimits = { heapMb: 64, timeMs: 15_000, idleMs: 2_000 };

/**
 * The young generation (MB) and the stack (MB): about V8's default on the main thread, where
 * pickleparser's APPENDS spreads a list written at once as arguments. Such a list of more than
 * about 105,000 items overflows it here (120,000 on the main thread; pickle writes 1,000 at once).
 */
const YOUNG_MB = 8;
const STACK_MB = 1;
/** Pickle's last opcode. */
const STOP = 0x2e;
/** How long a worker may take to start (load its modules; from the TypeScript sources, transpile them). */
const START_MS = 60_000;

interface Running {
  worker: Worker;
  /** Resolves when the worker is ready to read: undefined, or why it could not start. */
  ready: Promise<string | undefined>;
}

export class IsolatedFrReader {
  private current: Running | undefined;
  private idle: NodeJS.Timeout | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private waiting = 0;
  private started = 0;

  constructor(private readonly limits: IsolationLimits = AGENT_LIMITS) {}

  /**
   * `bytes` read as readFrDump(bytes, name, opts) would, in the worker; never rejects. A pickle
   * whose last byte is not STOP is cut short (PyTorch writes its dump in place, so the agent sees
   * it half written): that is said here, without starting a worker for it.
   */
  read(bytes: Uint8Array, name: string, opts: ReadOptions = {}): Promise<FrRead> {
    // What readFrDump says first, said here without a worker: too large, or cut short.
    if (bytes.length > MAX_FR_DUMP_BYTES) return Promise.resolve(failed(name, `too large: over ${MAX_FR_DUMP_BYTES / (1024 * 1024)} MiB`));
    if (looksLikePickle(bytes) && bytes[bytes.length - 1] !== STOP) return Promise.resolve(failed(name, "truncated: the pickle ends before its STOP"));
    this.waiting++;
    if (this.idle !== undefined) clearTimeout(this.idle);
    this.idle = undefined;
    const run = this.queue.then(() => this.readNow({ bytes, name, opts }));
    this.queue = run;
    return run.finally(() => {
      if (--this.waiting === 0) this.idleSoon();
    });
  }

  /** Workers started so far (tests: one per run of reads, a fresh one after a failure). */
  get workersStarted(): number {
    return this.started;
  }

  /** Whether a worker is running now. */
  get running(): boolean {
    return this.current !== undefined;
  }

  /** Ends the worker now, if one runs (shutdown, tests). */
  async close(): Promise<void> {
    if (this.idle !== undefined) clearTimeout(this.idle);
    this.idle = undefined;
    const cur = this.current;
    this.current = undefined;
    if (cur !== undefined) await cur.worker.terminate();
  }

  private start(): Running {
    const src = workerSource(import.meta.url, "read-worker");
    const worker = new Worker(src.entry, {
      eval: src.eval,
      resourceLimits: { maxOldGenerationSizeMb: this.limits.heapMb, maxYoungGenerationSizeMb: YOUNG_MB, stackSizeMb: STACK_MB },
    });
    this.started++;
    // Never an unhandled "error" event (it would end the agent): each wait below listens for its own.
    worker.on("error", () => undefined);
    worker.on("exit", () => {
      if (this.current?.worker === worker) this.current = undefined;
    });
    // An idle worker never keeps the process alive (the timers of a read in progress do).
    worker.unref();
    const ready = new Promise<string | undefined>((resolve) => {
      const settle = (why: string | undefined): void => {
        clearTimeout(timer);
        worker.off("message", onMessage);
        worker.off("error", onError);
        worker.off("exit", onExit);
        resolve(why);
      };
      const onMessage = (m: WorkerMessage): void => {
        if ("ready" in m) settle(undefined);
      };
      const onError = (err: Error): void => settle(err.message.slice(0, 120));
      const onExit = (code: number): void => settle(`exit code ${code}`);
      const timer = setTimeout(() => settle(`not ready in ${START_MS / 1000} s`), START_MS);
      worker.on("message", onMessage);
      worker.on("error", onError);
      worker.on("exit", onExit);
    });
    return { worker, ready };
  }

  private stop(cur: Running): void {
    if (this.current === cur) this.current = undefined;
    void cur.worker.terminate();
  }

  private async readNow(req: ReadRequest): Promise<FrRead> {
    let cur: Running;
    try {
      cur = this.current ??= this.start();
    } catch (err) {
      return failed(req.name, `the reader could not start: ${err instanceof Error ? err.message : String(err)}`);
    }
    const why = await cur.ready;
    if (why !== undefined) {
      this.stop(cur);
      return failed(req.name, `the reader could not start: ${why}`);
    }
    return this.send(cur, req);
  }

  /** One read by a ready worker, within the time limit. */
  private send(cur: Running, req: ReadRequest): Promise<FrRead> {
    const w = cur.worker;
    const fail = (error: string, over?: FrOverLimit): FrRead => failed(req.name, error, over);
    return new Promise<FrRead>((resolve) => {
      const done = (r: FrRead, stop: boolean): void => {
        clearTimeout(timer);
        w.off("message", onMessage);
        w.off("error", onError);
        w.off("exit", onExit);
        if (stop) this.stop(cur);
        resolve(r);
      };
      const onMessage = (m: WorkerMessage): void => {
        if (!("ready" in m)) done(m, false);
      };
      const onError = (err: Error & { code?: string }): void => {
        if (err.code === "ERR_WORKER_OUT_OF_MEMORY")
          done(fail(`too large: reading it went over the reader's memory budget (${this.limits.heapMb} MB of heap)`, "memory"), true);
        else done(fail(`the reader failed: ${err.message.slice(0, 120)}`), true);
      };
      const onExit = (code: number): void => done(fail(`the reader stopped (exit code ${code})`), true);
      const timer = setTimeout(
        () => done(fail(`too large: reading it went over the reader's time budget (${this.limits.timeMs / 1000} s)`, "time"), true),
        this.limits.timeMs,
      );
      w.on("message", onMessage);
      w.on("error", onError);
      w.on("exit", onExit);
      w.postMessage(req);
    });
  }

  private idleSoon(): void {
    if (this.current === undefined) return;
    this.idle = setTimeout(() => {
      this.idle = undefined;
      if (this.waiting === 0) void this.close();
    }, this.limits.idleMs);
    this.idle.unref();
  }
}

/** A read that failed, as readFrDump says it: the rank from the file name where it has one. */
function failed(name: string, error: string, over?: FrOverLimit): FrRead {
  const rank = rankFromName(name);
  return { ok: false, source: name, ...(rank !== undefined ? { rank } : {}), error, ...(over !== undefined ? { over } : {}) };
}

let shared: IsolatedFrReader | undefined;

/** readFrDump in the agent's worker (AGENT_LIMITS), started on first use. */
export function readFrDumpIsolated(bytes: Uint8Array, name: string, opts: ReadOptions = {}): Promise<FrRead> {
  shared ??= new IsolatedFrReader();
  return shared.read(bytes, name, opts);
}
