/**
 * bcrypt off the main thread: one worker thread, started at the first check and ended after
 * IDLE_MS without one, compares one password at a time. The main thread keeps serving scrapes
 * while it works. Where a worker cannot be started, the check runs on the main thread (bcryptjs
 * yields every 100 ms there).
 */
import { Worker } from "node:worker_threads";
import bcrypt from "bcryptjs";
import { EMBEDDED } from "../../collectors/embedded.js";

/** A worker left without work this long is ended (it holds a few MB). */
const IDLE_MS = 30_000;

/** The worker: the same bcryptjs module as the main thread's (its ESM entry; in the single executable, its bundled copy), compareSync on each message. */
const SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
import(workerData.bcrypt).then(({ default: bcrypt }) => {
  parentPort.on("message", ({ password, hash }) => {
    let match = false;
    try { match = bcrypt.compareSync(password, hash); } catch {}
    parentPort.postMessage(match);
  });
  parentPort.postMessage("ready");
});
`;

export class BcryptThread {
  private worker: Worker | undefined;
  private ready: Promise<boolean> | undefined;
  private idle: NodeJS.Timeout | undefined;
  /** The check the worker is on: one at a time, so a reply is always this one's. */
  private waiting: ((match: boolean) => void) | undefined;
  private tail: Promise<unknown> = Promise.resolve();

  /** bcrypt.compare, one check at a time; false for a hash bcrypt cannot read. */
  compare(password: string, hash: string): Promise<boolean> {
    const run = this.tail.then(() => this.one(password, hash));
    this.tail = run;
    return run;
  }

  /** Ends the worker (the server closed). */
  stop(): void {
    clearTimeout(this.idle);
    const w = this.worker;
    this.worker = undefined;
    this.ready = undefined;
    if (w) void w.terminate();
  }

  private async one(password: string, hash: string): Promise<boolean> {
    clearTimeout(this.idle);
    try {
      if (!(await this.start())) return await bcrypt.compare(password, hash).catch(() => false);
      const worker = this.worker;
      if (!worker) return false;
      return await new Promise<boolean>((resolve) => {
        this.waiting = resolve;
        worker.postMessage({ password, hash });
      });
    } finally {
      this.waiting = undefined;
      this.idle = setTimeout(() => this.stop(), IDLE_MS);
      this.idle.unref();
    }
  }

  /** The worker, started if need be; false when there is none to be had. */
  private start(): Promise<boolean> {
    if (this.ready) return this.ready;
    let worker: Worker;
    try {
      worker = new Worker(SOURCE, { eval: true, workerData: { bcrypt: EMBEDDED?.modules["bcryptjs"] ?? import.meta.resolve("bcryptjs") } });
    } catch {
      return Promise.resolve(false);
    }
    worker.unref();
    this.worker = worker;
    this.ready = new Promise<boolean>((resolve) => {
      worker.on("message", (m: unknown) => {
        if (m === "ready") resolve(true);
        else this.waiting?.(m === true);
      });
      const gone = (): void => {
        resolve(false);
        this.waiting?.(false);
        if (this.worker === worker) {
          this.worker = undefined;
          this.ready = undefined;
        }
      };
      worker.on("error", gone);
      worker.on("exit", gone);
    });
    return this.ready;
  }
}
