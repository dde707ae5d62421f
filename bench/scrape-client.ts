/**
 * An HTTP client that scrapes like Prometheus 2.42 (Debian 12's): keep-alive connections, the
 * same Accept (OpenMetrics preferred, text 0.0.4 accepted), Accept-Encoding: gzip, User-Agent and
 * scrape-timeout headers. `loadTest` runs N scrapers, each sending its next request when the
 * previous response has been read to the end, and reports the latency of every request (request
 * sent -> last body byte received; decompression is not included).
 */
import { Agent, request } from "node:http";
import { gunzipSync } from "node:zlib";
import { cpuSeconds } from "./proc.js";

export const PROMETHEUS_HEADERS: Readonly<Record<string, string>> = {
  Accept: "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
  "Accept-Encoding": "gzip",
  "User-Agent": "Prometheus/2.42.0",
  "X-Prometheus-Scrape-Timeout-Seconds": "10",
};

export interface Scrape {
  status: number;
  ms: number;
  /** Body bytes as received (compressed when contentEncoding is gzip). */
  wireBytes: number;
  contentEncoding: string;
  contentType: string;
  body: Buffer;
}

export function scrapeOnce(url: string, agent?: Agent, timeoutMs = 10_000): Promise<Scrape> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request(url, { agent, headers: PROMETHEUS_HEADERS, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on("data", (c: Buffer) => {
        chunks.push(c);
        bytes += c.length;
      });
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          ms: performance.now() - t0,
          wireBytes: bytes,
          contentEncoding: String(res.headers["content-encoding"] ?? "identity"),
          contentType: String(res.headers["content-type"] ?? ""),
          body: Buffer.concat(chunks, bytes),
        }),
      );
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`GET ${url}: no answer in ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end();
  });
}

/** The exposition as text (gunzipped when it came gzipped). */
export function bodyText(s: Scrape): string {
  return (s.contentEncoding === "gzip" ? gunzipSync(s.body) : s.body).toString("utf8");
}

/** Sample lines of an exposition (neither comments, `# EOF` included, nor blank lines). */
export function seriesCount(text: string): number {
  let n = 0;
  for (const line of text.split("\n")) if (line !== "" && !line.startsWith("#")) n++;
  return n;
}

export interface LoadResult {
  concurrency: number;
  requests: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
  requestsPerSecond: number;
  contentType: string;
  gzip: boolean;
  /** Bytes of the last response as received, and uncompressed. */
  wireBytes: number;
  bodyBytes: number;
  series: number;
  /** CPU (user + system) the server process used per measured request, ms; when its pid is known. */
  serverCpuMsPerRequest?: number;
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

async function run(url: string, agent: Agent, concurrency: number, requests: number): Promise<{ ms: number[]; errors: number; last?: Scrape; wallMs: number }> {
  const ms: number[] = [];
  let errors = 0;
  let issued = 0;
  let last: Scrape | undefined;
  const t0 = performance.now();
  const worker = async (): Promise<void> => {
    while (issued < requests) {
      issued++;
      try {
        const s = await scrapeOnce(url, agent);
        ms.push(s.ms);
        if (s.status === 200) last = s;
        else errors++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { ms, errors, ...(last === undefined ? {} : { last }), wallMs: performance.now() - t0 };
}

/** `warmup` requests, then `requests` measured ones, with `concurrency` scrapers on keep-alive connections. */
export async function loadTest(url: string, o: { concurrency: number; requests: number; warmup: number; serverPid?: number }): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: o.concurrency });
  try {
    await run(url, agent, o.concurrency, o.warmup);
    const cpu0 = o.serverPid === undefined ? 0 : await cpuSeconds(o.serverPid);
    const r = await run(url, agent, o.concurrency, o.requests);
    const cpu = o.serverPid === undefined ? undefined : (await cpuSeconds(o.serverPid)) - cpu0;
    if (r.last === undefined) throw new Error(`GET ${url}: no successful response in ${o.requests} requests`);
    const sorted = [...r.ms].sort((a, b) => a - b);
    const text = bodyText(r.last);
    return {
      concurrency: o.concurrency,
      requests: r.ms.length,
      errors: r.errors,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      maxMs: sorted.at(-1) ?? NaN,
      meanMs: sorted.reduce((a, b) => a + b, 0) / sorted.length,
      requestsPerSecond: (r.ms.length / r.wallMs) * 1000,
      contentType: r.last.contentType,
      gzip: r.last.contentEncoding === "gzip",
      wireBytes: r.last.wireBytes,
      bodyBytes: Buffer.byteLength(text),
      series: seriesCount(text),
      ...(cpu === undefined ? {} : { serverCpuMsPerRequest: (cpu * 1000) / r.ms.length }),
    };
  } finally {
    agent.destroy();
  }
}
