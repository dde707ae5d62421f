/**
 * The work and memory one Flight Recorder dump may cost to read, counted over the whole dump. A
 * pickle names an object once and then refers to it (its memo: BINGET, LONG_BINGET) in a few bytes,
 * so a 1 MB file can name a 900 KB rank list 4,096 times, or one entry of 64 tensors 50,000 times.
 * Limits per item (unpickle.ts, convert.ts) do not see that; these count every reference as the
 * work it makes, and a dump that goes past one stops being read at once: "too large: ... over
 * budget". The caps are far above what a real job writes: a 131,072-rank job's dump names its
 * ranks a few times (one 900 KB list per large group), a 20,000-entry buffer holds a few tensors
 * and 20-64 frames per entry (test/collectors/nccl/flight-recorder/budget.test.ts reads one).
 */

/** What is counted, its cap, and how a refusal names it. */
export const FR_BUDGET = {
  /** Bytes of objects the pickle builds (unpickle.ts: an estimate per opcode, every reference counted). */
  heap: { cap: 512 * 1024 * 1024, what: "objects built", unit: "bytes" },
  /** Ranks of every process group's rank list, each group counted (16 groups of 131,072 ranks). */
  ranks: { cap: 16 * 131_072, what: "ranks in process groups' rank lists", unit: "ranks" },
  /** Tensors and their dimensions in the entries' input and output sizes. */
  sizes: { cap: 4 * 1024 * 1024, what: "tensor sizes", unit: "tensors and dimensions" },
  /** Fields, frames and dtypes read from the entries and groups. */
  values: { cap: 8 * 1024 * 1024, what: "entry fields, frames and dtypes", unit: "values" },
  /** Characters of the text kept (names, states, dtypes, frames) and of rank lists parsed. */
  chars: { cap: 64 * 1024 * 1024, what: "text", unit: "characters" },
} as const;

export type BudgetKind = keyof typeof FR_BUDGET;

/** A dump that went past its budget: the one-line reason it is not read. */
export class OverBudget extends Error {
  constructor(
    readonly kind: BudgetKind,
    cap: number = FR_BUDGET[kind].cap,
  ) {
    super(`too large: ${FR_BUDGET[kind].what} over budget (more than ${cap.toLocaleString("en-US")} ${FR_BUDGET[kind].unit})`);
  }
}

/** The budget of one dump; spend() throws OverBudget once a count passes its cap. */
export class Budget {
  private readonly used: Record<BudgetKind, number> = { heap: 0, ranks: 0, sizes: 0, values: 0, chars: 0 };

  constructor(private readonly caps: Readonly<Record<BudgetKind, number>> = capsOf()) {}

  spend(kind: BudgetKind, n: number): void {
    const u = (this.used[kind] += n);
    if (u > this.caps[kind]) throw new OverBudget(kind, this.caps[kind]);
  }

  /** What was spent so far, per kind (tests, the bench). */
  spent(): Readonly<Record<BudgetKind, number>> {
    return { ...this.used };
  }
}

function capsOf(): Record<BudgetKind, number> {
  return { heap: FR_BUDGET.heap.cap, ranks: FR_BUDGET.ranks.cap, sizes: FR_BUDGET.sizes.cap, values: FR_BUDGET.values.cap, chars: FR_BUDGET.chars.cap };
}
