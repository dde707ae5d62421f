/**
 * Holds the GPU events (Xids, GPU PCIe errors) read before the gpu collector has listed its GPUs,
 * so that they are named by nvidia-smi's index (device-names.ts) rather than by sysfs order or a
 * PCI address: until the GPUs are known, or for at most 30 s (checked every 250 ms). At most
 * 10,000 are held (a kernel buffer's backlog); past that they are dropped and counted. An event
 * of another kind releases them first, so that the order is kept. Once released, the gate stays
 * open: every later event is published as it comes.
 */
import type { KernelEvent } from "./parse/events.js";

/** How long GPU events wait for the gpu collector's first identities before sysfs names them. */
export const GPU_NAMES_WAIT_MS = 30_000;
/** Events held while waiting, at most. */
export const MAX_HELD = 10_000;
const CHECK_EVERY_MS = 250;

export class GpuEventGate {
  /** undefined once released. */
  private held: Array<{ ev: KernelEvent; atMs: number }> | undefined = [];
  private heldSinceMs: number | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    /** Whether GPUs can be named now (DeviceNames.gpusKnown). */
    private readonly gpusKnown: () => boolean,
    private readonly now: () => number,
    private readonly publish: (ev: KernelEvent, atMs: number) => void,
    /** An event was held past MAX_HELD and is lost. */
    private readonly onDropped: () => void,
  ) {}

  /** Publishes the event, or holds it while GPU events wait for names. */
  handle(ev: KernelEvent, atMs: number): void {
    if (this.held !== undefined && (ev.kind === "xid" || ev.kind === "gpu_pcie") && !this.gpusKnown()) {
      this.heldSinceMs ??= this.now();
      if (this.held.length < MAX_HELD) this.held.push({ ev, atMs });
      else this.onDropped();
      this.timer ??= setInterval(() => this.release(), CHECK_EVERY_MS);
      this.timer.unref();
      return;
    }
    if (this.held !== undefined && this.held.length > 0) this.release(true);
    this.publish(ev, atMs);
  }

  /** Publishes what is held, in order, once the GPUs are known or the wait is over (or `force`). */
  release(force = false): void {
    if (this.held === undefined) return;
    if (!force && !this.gpusKnown() && this.now() - (this.heldSinceMs ?? this.now()) < GPU_NAMES_WAIT_MS) return;
    const events = this.held;
    this.held = undefined; // from now on, events are named as they come
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    for (const h of events) this.publish(h.ev, h.atMs);
  }

  /** Stops the check (on stop); what is still held is not published. */
  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
  }
}
