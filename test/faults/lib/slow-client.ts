/** HTTP clients for shutdown tests: one that reads the body slowly, one that keeps an idle connection. */
import { Agent, request } from "node:http";

export interface ClientResult {
  status: number;
  contentLength: number;
  received: number;
  body: string;
  ms: number;
  error?: string;
}

/** GET that reads the body one chunk every `pauseMs` (about 64 KiB per chunk). */
export function slowGet(url: string, pauseMs: number): Promise<ClientResult> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const done = (r: Omit<ClientResult, "ms">): void => resolve({ ...r, ms: performance.now() - t0 });
    const req = request(url, { agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let received = 0;
      void (async () => {
        try {
          for await (const chunk of res) {
            chunks.push(chunk as Buffer);
            received += (chunk as Buffer).length;
            if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
          }
          done({
            status: res.statusCode ?? 0,
            contentLength: Number(res.headers["content-length"] ?? -1),
            received,
            body: Buffer.concat(chunks).toString("utf8"),
          });
        } catch (err) {
          done({
            status: res.statusCode ?? 0,
            contentLength: Number(res.headers["content-length"] ?? -1),
            received,
            body: "",
            error: err instanceof Error ? err.message : String(err),
          });
        }
      })();
    });
    req.on("error", (err) => done({ status: 0, contentLength: -1, received: 0, body: "", error: err.message }));
    req.end();
  });
}

/** A keep-alive connection that made one request and then sits idle; resolves when the server closes it. */
export async function idleKeepAlive(url: string): Promise<{ first: number; closed: Promise<void>; agent: Agent }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const first = await new Promise<number>((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
  const sockets = Object.values(agent.freeSockets).flat();
  const closed = new Promise<void>((resolve) => {
    if (sockets.length === 0) resolve();
    for (const s of sockets) s?.once("close", () => resolve());
  });
  return { first, closed, agent };
}
