/**
 * The gpu collector's log lines about nvidia-smi, none repeated while nothing changes: a failure
 * message once per kind and bus (warn); a reason the child ended at warn the first time and at
 * debug while it repeats; "not found" (info) once until dmon delivers, then "found" (info); a
 * groups fallback (warn). After 10 minutes of delivery by one child, the next problem is news again.
 */
import type { Logger } from "pino";
import type { NvsmiFailure } from "./failures.js";

/** A child that delivered for this long resets log de-duplication. */
export const QUIET_RESET_MS = 10 * 60_000;

export class DmonLog {
  private notFoundLogged = false;
  private lastLoggedProblem: string | undefined;
  private readonly loggedFailures = new Set<string>();

  constructor(
    private readonly log: Logger,
    /** The nvidia-smi binary, as configured. */
    private readonly file: string,
  ) {}

  /** nvidia-smi is not there (since the last "not found", with no sample since). */
  get absent(): boolean {
    return this.notFoundLogged;
  }

  /** nvidia-smi printed a failure message. */
  failure(f: NvsmiFailure): void {
    const key = `${f.kind}|${f.pciBusId ?? ""}`;
    if (this.loggedFailures.has(key)) return;
    this.loggedFailures.add(key);
    this.log.warn({ kind: f.kind, pciBusId: f.pciBusId }, `gpu: nvidia-smi reports: ${f.message}`);
  }

  /** nvidia-smi could not be started: it is looked for again every `retryS` seconds. */
  notFound(retryS: number): void {
    if (!this.notFoundLogged) this.log.info(`gpu: ${this.file} not found; GPU metrics are off until it appears (checked every ${retryS}s)`);
    this.notFoundLogged = true;
  }

  /** dmon delivered a sample at `nowMs`, from a child started at `startedMs`. */
  delivering(nowMs: number, startedMs: number | undefined): void {
    if (this.notFoundLogged) {
      this.log.info(`gpu: ${this.file} found; nvidia-smi dmon is delivering samples`);
      this.notFoundLogged = false;
    }
    // After a long healthy run, the next failure is news again: log it at warn.
    if (this.lastLoggedProblem !== undefined && nowMs - (startedMs ?? nowMs) > QUIET_RESET_MS) {
      this.lastLoggedProblem = undefined;
      this.loggedFailures.clear();
    }
  }

  /** The child ended: `reason` is logged at warn unless the last end logged had the same `key`. */
  ended(key: string, reason: string): void {
    if (key !== this.lastLoggedProblem) {
      this.lastLoggedProblem = key;
      this.log.warn(`gpu: ${reason}`);
    } else {
      this.log.debug(`gpu: ${reason}`);
    }
  }

  /** dmon rejected the groups `rejected` with `failure`; `fallback` is used instead. */
  fellBack(rejected: string, failure: NvsmiFailure | undefined, fallback: string): void {
    this.log.warn(`gpu: nvidia-smi dmon rejected groups "${rejected}" (${failure?.message ?? ""}); falling back to "${fallback}"`);
  }
}
