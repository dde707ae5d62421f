/**
 * NCCL Inspector's job-wide switch, opt-in (--collector.nccl.ras-inspector-switch): when a hang
 * episode begins, the job's querier sends `CONTROL PROFILER_MASK 0x46` (Inspector's own mask:
 * collectives, point-to-point, kernel channels) through the RAS client socket (NCCL 2.31.2+), so
 * that the ranks' Inspector records show who is late; after the window it sends
 * `CONTROL PROFILER_MASK none`. Off is always sent: at the window's end, when the hang ends, and
 * when the agent stops, and again each interval until NCCL answers OK. NCCL floods the mask to every
 * process it reaches over RAS; its `OK` says the value parsed and the broadcast left, which is all
 * the confirmation NCCL gives. The job must load the Inspector plugin (NCCL_PROFILER_PLUGIN,
 * NCCL_INSPECTOR_ENABLE=1); a mask cannot load it.
 */

/** Inspector's event mask (Coll | P2p | KernelCh: plugins/profiler/inspector). */
export const INSPECTOR_MASK = "0x46";

export type SwitchTo = "on" | "off";

export class ProfilerSwitch {
  /** On as far as NCCL confirmed, since when. */
  private onSinceMs: number | undefined;
  private wantOn = false;
  private nextTryMs = 0;
  private episode = false;

  constructor(private windowMs: number) {}

  setWindow(ms: number): void {
    this.windowMs = ms;
  }

  /** True while this agent switched the mask on and has not had off confirmed. */
  get isOn(): boolean {
    return this.onSinceMs !== undefined;
  }

  /** A hang suspected on this node now: its beginning switches on (once per episode). */
  setHang(hang: boolean): void {
    if (hang && !this.episode) this.wantOn = true;
    if (!hang) this.wantOn = false;
    this.episode = hang;
  }

  /** What to send now, if anything. `mayAsk`: this node is the querier, its NCCL has CONTROL, RAS may be asked. */
  due(now: number, mayAsk: boolean): SwitchTo | undefined {
    if (now < this.nextTryMs) return undefined;
    if (this.onSinceMs !== undefined && (!this.episode || now - this.onSinceMs >= this.windowMs)) return "off";
    if (this.wantOn && this.onSinceMs === undefined && mayAsk) return "on";
    return undefined;
  }

  /** The job's service is gone: its processes, and their mask, with it. */
  jobGone(): void {
    this.onSinceMs = undefined;
    this.nextTryMs = 0;
  }

  /** NCCL's answer: `OK` confirms; anything else is tried again an interval later (on: not at all). */
  answered(to: SwitchTo, ok: boolean, now: number, intervalMs: number): void {
    if (to === "on") {
      this.wantOn = false;
      if (ok) this.onSinceMs = now;
      return;
    }
    if (ok) this.onSinceMs = undefined;
    else this.nextTryMs = now + intervalMs;
  }
}
