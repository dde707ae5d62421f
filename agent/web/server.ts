/**
 * The HTTP(S) server: the exposition at the telemetry path, /healthz, the collectors' JSON documents
 * (/nccl/ras-role), and a small landing page.
 * With --web.config.file it speaks TLS (node:https), sends the configured headers, rate-limits and
 * asks every path for basic auth, like exporter-toolkit; the web config is re-read when its files
 * change (source.ts), and a changed certificate is used from the next connection on.
 *
 * What a client cannot take from others: connections are capped in all (from the open-file limit,
 * clients.ts) and per client, a connection that sends no complete request in HEADERS_TIMEOUT_MS,
 * or stays idle after a response for KEEP_ALIVE_TIMEOUT_MS, is closed, and password checks are
 * bounded (auth.ts). Running out of file descriptors is logged, never fatal.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { gzipSync } from "node:zlib";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { ListenAddress } from "../config/config.js";
import { PasswordChecks } from "./auth.js";
import type { WebRefusal } from "../self-metrics.js";
import { connectionLimits, hostClients, localUserOf, ownOpenFileLimit, Shares, THIS_HOST, type ClientOf } from "./clients.js";
import { checkClient, type TlsMaterial } from "./tls.js";
import { NO_WEB_CONFIG, WebConfigSource, type LoadedWebConfig } from "./source.js";
import { exposition } from "./exposition.js";

export interface MetricsServer {
  /** SIGHUP: puts a checked web config in force; false (old one kept) when it would turn TLS on or off. */
  replaceWebConfig(path: string | undefined, next: LoadedWebConfig): boolean;
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

export interface MetricsServerOptions {
  telemetryPath: string;
  version: string;
  /** A web config as loadWebConfig() returned it, and its path (re-read when its files change). */
  web?: { path: string | undefined; loaded: LoadedWebConfig; onReload?: (result: "success" | "failure") => void };
  /** Connections at most, in all and per client; default: connectionLimits() of this process's open-file limit. */
  connections?: { total: number; perClient: number };
  /** Who a connection comes from; default: hostClients() (this host's addresses are one client). */
  clientOf?: ClientOf;
  /** A request or connection was turned away at once (ringwatch_web_refused_total). */
  onRefused?: (reason: WebRefusal) => void;
  /** JSON documents by path (the collectors' documents()), computed at each request. */
  documents?: ReadonlyMap<string, () => unknown>;
}

/** A request's headers must be complete this long after the connection opened or the last response. */
const HEADERS_TIMEOUT_MS = 10_000;
/** The whole request (a GET has no body). */
const REQUEST_TIMEOUT_MS = 20_000;
/** Idle keep-alive connections are closed after this: longer than a 60 s scrape interval, so Prometheus reuses its connection. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** How often Node looks for connections past HEADERS_TIMEOUT_MS and REQUEST_TIMEOUT_MS. */
const CHECK_INTERVAL_MS = 1_000;
/** A TLS handshake not done in this long is dropped. */
const HANDSHAKE_TIMEOUT_MS = 10_000;
/** A server error (such as EMFILE on accept) is logged at most this often. */
const ERROR_LOG_INTERVAL_MS = 60_000;

/** Server options of node:tls that are not part of the secure context; public fields of tls.Server, read for each new connection. */
interface ClientCertPolicy {
  requestCert: boolean;
  rejectUnauthorized: boolean;
}

export function createMetricsServer(registry: Registry, logger: Logger, opts: MetricsServerOptions): MetricsServer {
  const landing = landingPage(opts.version, opts.telemetryPath);
  const source = new WebConfigSource(opts.web?.path, opts.web?.loaded ?? NO_WEB_CONFIG, logger, opts.web?.onReload);
  const clientOf = opts.clientOf ?? hostClients();
  const checks = new PasswordChecks();

  /** Rate limit, headers and basic auth of the web config; false when the request has been answered. */
  async function admit(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const web = source.current();
    if (web.limiter && !web.limiter.allow()) {
      opts.onRefused?.("rate_limit");
      res.writeHead(429, { "content-type": "text/plain; charset=utf-8" }).end("Too Many Requests\n");
      return false;
    }
    for (const [name, value] of Object.entries(web.settings?.headers ?? {})) res.setHeader(name, value);
    const client = clientOf(req.socket.remoteAddress);
    // This host's connections: one share of checks per local user, not one for all of them.
    const verdict = await checks.check(web.auth, req.headers.authorization, client === THIS_HOST ? () => localUserOf(req.socket) : client);
    if (verdict === "ok") return true;
    if (verdict === "busy") {
      opts.onRefused?.("password_checks_busy");
      // Too many password checks waiting: asking again later costs the server nothing now.
      res.writeHead(429, { "retry-after": "1", "content-type": "text/plain; charset=utf-8" }).end("Too Many Requests\n");
      return false;
    }
    res.writeHead(401, { "www-authenticate": "Basic", "content-type": "text/plain; charset=utf-8" }).end("Unauthorized\n");
    return false;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!(await admit(req, res))) return;
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" }).end("method not allowed\n");
      return;
    }
    if (path === opts.telemetryPath) {
      const text = await exposition(registry);
      // Prometheus asks for gzip: the text shrinks about tenfold. On this thread, not libuv's pool,
      // which a stuck file read may hold (docs/security.md); level 1 costs about 1 ms per 100 KB.
      const gzip = acceptsGzip(req.headers["accept-encoding"]);
      const body = gzip ? gzipSync(text, { level: 1 }) : Buffer.from(text);
      res.writeHead(200, {
        "content-type": registry.contentType,
        "content-length": body.length,
        vary: "accept-encoding",
        ...(gzip ? { "content-encoding": "gzip" } : {}),
      });
      res.end(req.method === "HEAD" ? undefined : body);
      return;
    }
    if (path === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
      return;
    }
    const document = opts.documents?.get(path);
    if (document !== undefined) {
      const body = `${JSON.stringify(document())}\n`;
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body), "cache-control": "no-store" });
      res.end(req.method === "HEAD" ? undefined : body);
      return;
    }
    if (path === "/") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(landing);
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
  }

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((err: unknown) => {
      logger.error({ err: err instanceof Error ? err.message : String(err) }, "error serving request");
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end("internal error\n");
    });
  };
  const initialTls = source.current().tls;
  const timeouts = { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: CHECK_INTERVAL_MS };
  const server: Server | HttpsServer = initialTls ? createTlsServer(initialTls, source, logger, onRequest, timeouts) : createServer(timeouts, onRequest);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  limitConnections(server, opts.connections ?? connectionLimits(ownOpenFileLimit()), clientOf, logger, opts.onRefused);

  return {
    replaceWebConfig: (path, next) => source.replace(path, next),
    listen(addr: ListenAddress): Promise<number> {
      return new Promise((resolve, reject) => {
        const onError = (err: NodeJS.ErrnoException): void => {
          const where = `${addr.host ?? ""}:${addr.port}`;
          reject(new Error(err.code === "EADDRINUSE" ? `cannot listen on ${where}: address already in use` : `cannot listen on ${where}: ${err.message}`));
        };
        server.once("error", onError);
        server.listen({ port: addr.port, host: addr.host }, () => {
          server.off("error", onError);
          logErrorsOf(server, logger);
          const a = server.address();
          resolve(typeof a === "object" && a ? a.port : addr.port);
        });
      });
    },
    close(graceMs = 3000): Promise<void> {
      checks.stop();
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

/**
 * At most `total` connections (Node closes the ones beyond at once) and `perClient` for one
 * client (closed as soon as they are accepted), so that one client cannot use up the file
 * descriptors or the connections of every other.
 */
function limitConnections(
  server: Server | HttpsServer,
  limits: { total: number; perClient: number },
  clientOf: ClientOf,
  logger: Logger,
  onRefused?: (reason: WebRefusal) => void,
): void {
  server.maxConnections = limits.total;
  const shares = new Shares(Number.POSITIVE_INFINITY, limits.perClient);
  server.on("connection", (socket: Socket) => {
    const client = clientOf(socket.remoteAddress);
    if (!shares.take(client)) {
      logger.debug({ client, limit: limits.perClient }, "connection refused: this client holds its share of the connections");
      onRefused?.("client_connection_share");
      socket.destroy();
      return;
    }
    socket.once("close", () => shares.give(client));
  });
  server.on("drop", () => {
    logger.debug({ limit: limits.total }, "connection refused: the server holds its maximum of connections");
    onRefused?.("connection_limit");
  });
}

/** Errors of a listening server (EMFILE or ENFILE on accept) are logged, at most once a minute; they end nothing. */
function logErrorsOf(server: Server | HttpsServer, logger: Logger): void {
  let lastMs = Number.NEGATIVE_INFINITY;
  server.on("error", (err: NodeJS.ErrnoException) => {
    const now = Date.now();
    if (now - lastMs < ERROR_LOG_INTERVAL_MS) return;
    lastMs = now;
    logger.warn({ reason: err.code ?? err.message }, "the HTTP server cannot accept a connection; going on");
  });
}

/**
 * node:https with the web config's TLS material. Before each new connection the web config is
 * looked at again (prepended to node:tls's own listener, so it applies to this very connection);
 * once the handshake is done, the client-certificate checks node:tls cannot make are made.
 */
function createTlsServer(
  initial: TlsMaterial,
  source: WebConfigSource,
  logger: Logger,
  onRequest: (req: IncomingMessage, res: ServerResponse) => void,
  timeouts: { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number },
): HttpsServer {
  const server = createHttpsServer(
    {
      ...initial.context,
      ...timeouts,
      handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
      requestCert: initial.requestCert,
      rejectUnauthorized: initial.rejectUnauthorized,
    },
    onRequest,
  );
  /** The TLS material in use, and the last one tried (not tried again on every connection if it failed). */
  let applied = initial;
  let tried = initial;
  server.prependListener("connection", (_socket: Socket) => {
    const tls = source.current().tls;
    if (!tls || tls === tried) return;
    tried = tls;
    try {
      server.setSecureContext(tls.context);
    } catch (err) {
      // Checked when loaded, so not expected; the previous certificate stays in use.
      logger.error({ reason: err instanceof Error ? err.message.split("\n")[0] : String(err) }, "cannot use the new TLS settings; keeping the previous ones");
      return;
    }
    Object.assign(server as unknown as ClientCertPolicy, {
      requestCert: tls.requestCert,
      rejectUnauthorized: tls.rejectUnauthorized,
    } satisfies ClientCertPolicy);
    applied = tls;
  });
  server.prependListener("secureConnection", (socket: TLSSocket) => {
    const why = checkClient(socket, applied);
    if (why === undefined) return;
    logger.debug({ remote: socket.remoteAddress, reason: why }, "TLS client refused");
    socket.destroy();
  });
  server.on("tlsClientError", (err, socket) => {
    logger.debug({ remote: socket.remoteAddress, reason: err.message.split("\n")[0] }, "TLS handshake failed");
    socket.destroy();
  });
  return server;
}

/** Whether an Accept-Encoding header takes gzip (not with q=0). */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  for (const part of header.split(",")) {
    const [coding = "", ...params] = part.split(";").map((x) => x.trim().toLowerCase());
    if (coding !== "gzip" && coding !== "*") continue;
    const q = params.find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}
