/** A tiny concurrency limiter: at most `max` of the wrapped tasks run at once, the rest queue. */
export type Limiter = <T>(task: () => Promise<T>) => Promise<T>;

export function createLimiter(max: number): Limiter {
  const limit = Math.max(1, Math.floor(max));
  let active = 0;
  const queue: (() => void)[] = [];

  const next = (): void => {
    active--;
    queue.shift()?.();
  };

  return <T>(task: () => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const start = (): void => {
        active++;
        void Promise.resolve()
          .then(task)
          .then(
            (v) => {
              next();
              resolve(v);
            },
            (e: unknown) => {
              next();
              reject(e instanceof Error ? e : new Error(String(e)));
            },
          );
      };
      if (active < limit) start();
      else queue.push(start);
    });
}
