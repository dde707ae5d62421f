/**
 * mlx5's words for a work completion in error. These are the kernel's own consumers' completions
 * (NVMe over RDMA, NFS over RDMA, Lustre's o2ib, GPFS, IPoIB, the Ethernet driver's queues); NCCL's
 * are user space's and never print here.
 *
 * mlx5_ib (drivers/infiniband/hw/mlx5/cq.c) prints, after its `infiniband <dev>: <func>:<line>:(pid N): `:
 * - `WC error: 4, Message: local protection error` (`status`, 5.17+; 6.7+ prints it from dump_cqe),
 * - `dump error cqe` before the CQE's hex rows (`dump`; alone before 5.17),
 * - with dynamic debug on, mlx5_poll_one's `Responder error cqe on cqn 0x406:` (`debug`) and its
 *   `syndrome 0x5, vendor syndrome 0xf9` row (`syndrome`): for every error, flushed requests too,
 *   which the others never print (nor a retry counter exceeded).
 * One completion prints its lines in that order, on one device, at once: a line of a later form than
 * the last one of its device continues that completion (CompletionLines). A `debug` line's completion
 * is told by its `syndrome` row (0x5: a flushed request, what a queue pair already in error, or being
 * torn down, returns for all it still held); where another line told it first, the rows add nothing.
 *
 * mlx5e (the Ethernet side) prints one line each: `mlx5_core 0000:3b:00.1 eth1: Error cqe on cqn
 * 0x817, ci 0x8, qn 0x1dbb, opcode 0xd, syndrome 0x1, vendor syndrome 0x68` (nic.ts reads it).
 */

export type CompletionForm = "status" | "dump" | "debug" | "syndrome";

/** The order of one completion's lines. */
const ORDER: Readonly<Record<CompletionForm, number>> = { status: 0, dump: 1, debug: 2, syndrome: 3 };

/** The CQE syndrome of a flushed work request (MLX5_CQE_SYNDROME_WR_FLUSH_ERR). */
const FLUSH = "syndrome 0x5,";

/** A completion's lines come within this of each other (a live stream; pasted lines carry no time, 0). */
const SAME_COMPLETION_MS = 1_000;
/** Devices whose last completion line is kept. */
const MAX_DEVICES = 256;

/**
 * The form of the message after `infiniband <dev>: `, which must open with mlx5_ib's
 * `<func>:<line>:(pid N): ` and then the form's words; undefined for any other message.
 */
export function completionForm(text: string): CompletionForm | undefined {
  const pid = text.indexOf(":(pid ");
  if (pid <= 0 || pid > 64) return undefined;
  const close = text.indexOf("): ", pid);
  if (close < 0 || close - pid > 20) return undefined;
  const m = close + 3;
  if (text.startsWith("WC error: ", m)) return "status";
  if (text.startsWith("dump error cqe", m)) return "dump";
  if (text.startsWith("syndrome 0x", m) && text.indexOf(", vendor syndrome 0x", m) > 0) return "syndrome";
  const cqe = text.indexOf(" error cqe on cqn ", m);
  if (cqe > m && cqe - m <= 10) return "debug";
  return undefined;
}

/** True when the line's syndrome is a flushed request's (`syndrome 0x5, vendor syndrome ...`). */
export function isFlush(text: string): boolean {
  return text.indexOf(FLUSH) >= 0;
}

export class CompletionLines {
  /** Per device: the form of its last completion line, when, and whether that completion was counted. */
  private readonly last = new Map<string, { order: number; atMs: number; counted: boolean }>();

  /**
   * Whether this line reports a completion not counted yet: `count` for a new one, `flush` when its
   * syndrome row says the request was flushed. A `debug` line waits for its row; a row with no
   * `debug` line before it is no completion's.
   */
  take(device: string, form: CompletionForm, text: string, atMs: number): { count: false } | { count: true; flush: boolean } {
    const prev = this.last.get(device);
    const continues = prev !== undefined && ORDER[form] > prev.order && Math.abs(atMs - prev.atMs) <= SAME_COMPLETION_MS;
    if (form === "syndrome") {
      if (!continues || prev.order !== ORDER.debug) return { count: false };
      prev.order = ORDER.syndrome;
      if (prev.counted) return { count: false };
      prev.counted = true;
      return { count: true, flush: isFlush(text) };
    }
    if (continues) {
      prev.order = ORDER[form];
      return { count: false };
    }
    if (!this.last.has(device) && this.last.size >= MAX_DEVICES) this.last.delete(this.last.keys().next().value as string);
    // A `debug` line's completion is counted at its syndrome row, which says whether it was flushed.
    this.last.set(device, { order: ORDER[form], atMs, counted: form !== "debug" });
    return form === "debug" ? { count: false } : { count: true, flush: false };
  }
}
