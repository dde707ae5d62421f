/** Real clients for the security tests: node:https (a new connection each time), curl and openssl s_client. */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { request } from "node:https";
import type { PeerCertificate, TLSSocket } from "node:tls";

export interface HttpsResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Serial number of the certificate the server presented. */
  serverSerial: string;
  protocol: string | null;
}

export interface HttpsOptions {
  ca?: string;
  cert?: string;
  key?: string;
  host?: string;
  auth?: { user: string; password: string };
  headers?: Record<string, string>;
}

/** GET over a fresh TLS connection (no agent, no session reuse); files are paths. */
export function httpsGet(port: number, path: string, opts: HttpsOptions = {}): Promise<HttpsResult> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.auth) headers.authorization = `Basic ${Buffer.from(`${opts.auth.user}:${opts.auth.password}`).toString("base64")}`;
    const req = request(
      {
        host: opts.host ?? "127.0.0.1",
        port,
        path,
        method: "GET",
        agent: false,
        headers,
        ca: opts.ca ? readFileSync(opts.ca) : undefined,
        cert: opts.cert ? readFileSync(opts.cert) : undefined,
        key: opts.key ? readFileSync(opts.key) : undefined,
        timeout: 10_000,
      },
      (res) => {
        const socket = res.socket as TLSSocket;
        const peer: PeerCertificate = socket.getPeerCertificate();
        const protocol = socket.getProtocol();
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, serverSerial: peer.serialNumber, protocol }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end();
  });
}

export interface ToolResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a client tool to completion (argument array, no shell). */
export function runTool(cmd: string, args: string[], input?: string, timeoutMs = 15_000): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input ?? "");
  });
}

/** curl -s with a status line at the end of stdout: "\nHTTP <code>". */
export function curl(url: string, extra: string[] = []): Promise<ToolResult & { status: number | undefined }> {
  return runTool("curl", ["-sS", "--max-time", "10", "-w", "\nHTTP %{http_code}", ...extra, url]).then((r) => {
    const m = /\nHTTP (\d{3})$/.exec(r.stdout);
    return { ...r, status: m && m[1] !== "000" ? Number(m[1]) : undefined };
  });
}
