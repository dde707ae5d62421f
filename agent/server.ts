/** node:http server: the exposition at the telemetry path, /healthz, and a small landing page. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { ListenAddress } from "./config.js";

export interface MetricsServer {
  /** Resolves with the bound port once listening; rejects with a one-line error (e.g. address in use). */
  listen(addr: ListenAddress): Promise<number>;
  /** Stops accepting, lets in-flight requests finish, then closes the rest after graceMs. */
  close(graceMs?: number): Promise<void>;
}

function landingPage(version: string, path: string): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>ringwatch</title></head>
<body>
<h1>ringwatch ${version}</h1>
<p>GPU, InfiniBand, GPUDirect RDMA, MTU and NCCL metrics for this node.</p>
<ul><li><a href="${path}">Metrics</a></li><li><a href="/healthz">Health</a></li></ul>
</body></html>
`;
}

export function createMetricsServer(registry: Registry, logger: Logger, opts: { telemetryPath: string; version: string }): MetricsServer {
  const landing = landingPage(opts.version, opts.telemetryPath);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" }).end("method not allowed\n");
      return;
    }
    if (path === opts.telemetryPath) {
      const body = await registry.metrics();
      res.writeHead(200, { "content-type": registry.contentType, "content-length": Buffer.byteLength(body) });
      res.end(req.method === "HEAD" ? undefined : body);
      return;
    }
    if (path === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
      return;
    }
    if (path === "/") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(landing);
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      logger.error({ err: err instanceof Error ? err.message : String(err) }, "error serving request");
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end("internal error\n");
    });
  });
  server.keepAliveTimeout = 65_000;

  return {
    listen(addr: ListenAddress): Promise<number> {
      return new Promise((resolve, reject) => {
        const onError = (err: NodeJS.ErrnoException): void => {
          const where = `${addr.host ?? ""}:${addr.port}`;
          reject(new Error(err.code === "EADDRINUSE" ? `cannot listen on ${where}: address already in use` : `cannot listen on ${where}: ${err.message}`));
        };
        server.once("error", onError);
        server.listen({ port: addr.port, host: addr.host }, () => {
          server.off("error", onError);
          const a = server.address();
          resolve(typeof a === "object" && a ? a.port : addr.port);
        });
      });
    },
    close(graceMs = 3000): Promise<void> {
      return new Promise((resolve) => {
        if (!server.listening) return resolve();
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}
