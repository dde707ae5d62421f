/** Scrapes over real HTTP, timed: one at a time on a schedule, so a stalled agent shows up as latency. */
import { request } from "node:http";

export interface TimedScrape {
  atMs: number;
  ms: number;
  status: number;
  body: string;
  error?: string;
}

/** One GET with its own connection; never throws (errors are recorded). */
export function timedGet(url: string, timeoutMs = 10_000): Promise<TimedScrape> {
  const t0 = performance.now();
  const atMs = Date.now();
  return new Promise((resolve) => {
    const req = request(url, { agent: false, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ atMs, ms: performance.now() - t0, status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", (err) => resolve({ atMs, ms: performance.now() - t0, status: 0, body: "", error: err.message }));
    });
    req.on("timeout", () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    req.on("error", (err) => resolve({ atMs, ms: performance.now() - t0, status: 0, body: "", error: err.message }));
    req.end();
  });
}

/** Scrapes `url` every `everyMs` (never two at once) until stop(); resolves with every scrape. `scrapes`: those so far. */
export function scrapeLoop(url: string, everyMs = 250): { readonly scrapes: readonly TimedScrape[]; stop(): Promise<TimedScrape[]> } {
  const out: TimedScrape[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = Date.now();
      out.push(await timedGet(url));
      const wait = everyMs - (Date.now() - t0);
      if (wait > 0 && running) await new Promise((r) => setTimeout(r, wait));
    }
  })();
  return {
    scrapes: out,
    async stop() {
      running = false;
      await loop;
      return out;
    },
  };
}
