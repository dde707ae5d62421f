/**
 * What the RAS watch asks beyond STATUS in a hang episode, and what came of it: RAS diagnostics once
 * per episode (ras/diagnostics.ts says when) and NCCL Inspector's job-wide switch, opt-in
 * (ras/profiler-switch.ts says when). The watch says whether this node may (the elected querier,
 * while RAS may be asked) and runs the exchange it is handed as its connection in flight; each
 * exchange (ras/escalation.ts) is counted here: diagnostics as a query for `diagnostics`, switches
 * by `to|result`. Inspector switched on by this agent is switched off at its stop.
 */
import type { Logger } from "pino";
import type { RasAddress, RasQueryOutcome } from "./client.js";
import { DiagnosticsEpisode } from "./diagnostics.js";
import { askDiagnostics, switchInspector, type ExchangeContext } from "./escalation.js";
import type { DiagReport } from "./parse-diag.js";
import { ProfilerSwitch, type SwitchTo } from "./profiler-switch.js";
import type { RasConnection } from "./socket-owner.js";

/** `to|result` of Inspector switches: result ok (NCCL answered OK), refused (another answer), failed (no answer). */
export const SWITCH_RESULTS = ["ok", "refused", "failed"] as const;

/** The watch's settings an exchange reads (RasWatchOptions). */
export interface EscalationOptions {
  address: RasAddress;
  log: Logger;
  now: () => number;
  intervalMs: number;
  maxBytes?: number;
  legTimeoutSeconds?: number;
}

/** What the escalation reads from the watch, at each use: its settings may change (SIGHUP). */
export interface HangEscalationContext {
  options: () => EscalationOptions;
  /** Who may answer (ras/who-may-answer.ts), as for a query. */
  verify: (c: RasConnection) => string | undefined;
  /** Counts a diagnostics exchange as a query with this result. */
  counted: (outcome: RasQueryOutcome) => void;
}

export class HangEscalation {
  private readonly diag = new DiagnosticsEpisode();
  private readonly profiler: ProfilerSwitch | undefined;
  /** Inspector switches sent, by `to|result`. */
  readonly switches = new Map<string, number>((["on", "off"] as const).flatMap((to) => SWITCH_RESULTS.map((r) => [`${to}|${r}`, 0] as const)));

  /** `inspectorWindowMs`: how long Inspector is switched on when a hang begins; undefined: never. */
  constructor(
    inspectorWindowMs: number | undefined,
    private readonly ctx: HangEscalationContext,
  ) {
    if (inspectorWindowMs !== undefined) this.profiler = new ProfilerSwitch(inspectorWindowMs);
  }

  /** Whether a hang is suspected on this node now: a new episode may escalate. */
  setHang(hang: boolean): void {
    this.diag.setHang(hang);
    this.profiler?.setHang(hang);
  }

  setWindow(ms: number): void {
    this.profiler?.setWindow(ms);
  }

  /** The job's service is gone: Inspector is off with it. */
  jobGone(): void {
    this.profiler?.jobGone();
  }

  /** Whether this agent holds Inspector on (undefined: the switch is off). */
  get inspectorOn(): boolean | undefined {
    return this.profiler?.isOn;
  }

  /** The RAS diagnostics of this hang episode, when this node asked them. */
  get diagnostics(): { report: DiagReport; atMs: number } | undefined {
    return this.diag.report !== undefined && this.diag.atMs !== undefined ? { report: this.diag.report, atMs: this.diag.atMs } : undefined;
  }

  /** The exchange due now, if any (`mayControl`: this node may escalate now); the switch before diagnostics. */
  due(now: number, mayControl: boolean): ((signal: AbortSignal) => Promise<void>) | undefined {
    const to = this.profiler?.due(now, mayControl);
    if (to !== undefined) return () => this.switchInspector(to);
    if (!this.diag.due(now, mayControl)) return undefined;
    this.diag.asked();
    return (signal) => this.askDiagnostics(signal);
  }

  /** Inspector off (the agent's stop, where this agent holds it on). */
  switchOff(): Promise<void> {
    return this.switchInspector("off");
  }

  private exchange(): ExchangeContext {
    const o = this.ctx.options();
    return {
      address: o.address,
      log: o.log,
      maxBytes: o.maxBytes ?? 4 * 1024 * 1024,
      legTimeoutSeconds: o.legTimeoutSeconds ?? 5,
      verify: this.ctx.verify,
    };
  }

  /** Inspector on or off (ras/escalation.ts), counted; the switch learns the answer. */
  private async switchInspector(to: SwitchTo, signal?: AbortSignal): Promise<void> {
    const result = await switchInspector(this.exchange(), to, signal);
    this.switches.set(`${to}|${result}`, (this.switches.get(`${to}|${result}`) ?? 0) + 1);
    const o = this.ctx.options();
    this.profiler?.answered(to, result === "ok", o.now(), o.intervalMs);
  }

  /** RAS diagnostics (ras/escalation.ts), counted as a query for `diagnostics`; the episode learns the answer. */
  private async askDiagnostics(signal: AbortSignal): Promise<void> {
    const r = await askDiagnostics(this.exchange(), signal);
    if (r === undefined) return;
    this.ctx.counted(r.outcome);
    const o = this.ctx.options();
    const now = o.now();
    if (r.report === undefined) this.diag.failed(now, o.intervalMs);
    else this.diag.answered(r.report, now, o.intervalMs);
  }
}
