/**
 * A cap shared among owners (the uids of the files a job wrote): when it is full, an owner that
 * holds at least two more entries than the newcomer's owner gives way, its idlest entry first. So
 * one user's flood of files or communicators cannot push another user's out, and costs that user
 * only its own idle entries; owners at even shares keep what they have (no churn). Used by the log
 * follower's file cap and the nccl collector's communicator cap (docs/security.md).
 */
export class OwnerShares {
  private readonly counts = new Map<number, number>();

  add(owner: number): void {
    this.counts.set(owner, (this.counts.get(owner) ?? 0) + 1);
  }

  remove(owner: number): void {
    const n = (this.counts.get(owner) ?? 1) - 1;
    if (n > 0) this.counts.set(owner, n);
    else this.counts.delete(owner);
  }

  /** The owner that gives way to a new entry of `owner`, if one holds at least two more. */
  yielderTo(owner: number): number | undefined {
    const mine = this.counts.get(owner) ?? 0;
    let heavy = owner;
    let most = mine;
    for (const [o, n] of this.counts) if (n > most) [heavy, most] = [o, n];
    return heavy === owner || most <= mine + 1 ? undefined : heavy;
  }
}

/** The entry of `items` that `idler` ranks first among those `eligible`, if any. */
export function idlest<T>(items: Iterable<T>, eligible: (t: T) => boolean, idler: (a: T, b: T) => boolean): T | undefined {
  let best: T | undefined;
  for (const t of items) if (eligible(t) && (best === undefined || idler(t, best))) best = t;
  return best;
}
