/**
 * The one polling wait of the tests and benchmarks (no vitest import, so bench/ can use it too).
 * fn is called every everyMs until it returns a value other than undefined or false without
 * throwing, and that value is returned. So each of these works:
 *   await eventually(() => expect(rec.lines()).toEqual(["a"]));          // a failing expect throws
 *   const t = await eventually(async () => { const t = await scrape(); return ok(t) ? t : undefined; });
 *   await eventually(() => child.exitCode !== null, { what: "the child exited" });
 * After timeoutMs the last error is thrown (a failing expect keeps its message and diff), or one
 * saying what was not met.
 */
export interface EventuallyOptions {
  timeoutMs?: number;
  everyMs?: number;
  /** What is waited for, for the timeout's message. */
  what?: string;
}

export async function eventually<T>(
  fn: () => T | Promise<T>,
  opts: number | EventuallyOptions = {},
  everyMs?: number,
): Promise<Exclude<Awaited<T>, undefined | false>> {
  const o = typeof opts === "number" ? { timeoutMs: opts, everyMs } : opts;
  const timeoutMs = o.timeoutMs ?? 15_000;
  const step = o.everyMs ?? 50;
  const t0 = Date.now();
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v as Exclude<Awaited<T>, undefined | false>;
      last = undefined;
    } catch (err) {
      last = err;
    }
    if (Date.now() - t0 > timeoutMs) {
      const what = o.what ?? "condition";
      if (last instanceof Error) {
        last.message = `${last.message}\n(${what} still not met after ${timeoutMs} ms)`;
        throw last;
      }
      throw new Error(`${what} not met in ${timeoutMs} ms${last !== undefined ? `: ${JSON.stringify(last)}` : ""}`);
    }
    await new Promise((r) => setTimeout(r, step));
  }
}
