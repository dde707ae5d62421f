/**
 * A client of NCCL's RAS socket (NCCL 2.24+; src/ras/client.cc is the reference client, `ncclras`).
 * Every NCCL process runs a RAS thread; the one that owns NCCL_RAS_ADDR (default localhost:28028)
 * answers for the whole job. The protocol is text, one command per line:
 *
 *   > CLIENT PROTOCOL 2        < SERVER PROTOCOL 2
 *   > TIMEOUT 5                < OK
 *   > SET FORMAT json          < OK (NCCL 2.28.7+), or `ERROR: Unknown command ...` (older: text follows)
 *   > STATUS                   < the report (what `ncclras` prints), then the server closes
 *
 * One query = one connection. Every step has the same deadline; the answer is capped in size.
 * Nothing listening (no NCCL job, or RAS off) is a normal answer, "unreachable". With `verify`, the
 * owner of the socket that answered is checked once it has greeted (it has accepted the connection,
 * so the kernel lists its end): a refusal ends the query there, "untrusted", before any report is read.
 */
import { connect, type Socket } from "node:net";
import type { RasConnection } from "./socket-owner.js";

export const RAS_CLIENT_PROTOCOL = 2;
export const RAS_DEFAULT_PORT = 28028;

export interface RasAddress {
  host: string;
  port: number;
}

export interface RasQueryOptions extends RasAddress {
  /** Seconds NCCL may wait for each of its peers (the TIMEOUT command; NCCL's default is 5). */
  legTimeoutSeconds: number;
  /** Deadline of the whole query, connection to last byte (ms). */
  deadlineMs: number;
  /** Larger answers are cut and the query fails. */
  maxBytes: number;
  /** Aborts the query (shutdown); it then ends as an error. */
  signal?: AbortSignal;
  /** Ask for the JSON report first (`SET FORMAT json`); an NCCL without it answers in text. */
  json?: boolean;
  /** Checks who answered (ras/socket-owner.ts), after its greeting: a reason to refuse it, or undefined. */
  verify?: (c: RasConnection) => string | undefined;
  /**
   * What to ask: STATUS (default), DIAGNOSTICS or CONTROL PROFILER_MASK (NCCL 2.31.2+, text only:
   * `json` is then ignored). A refusal (`ERROR: ...`, `BUSY: ...`) is an answer too: its line is the
   * text; so is CONTROL's one-line reply.
   */
  command?: "STATUS" | "DIAGNOSTICS" | `CONTROL PROFILER_MASK ${string}`;
}

export type RasFailure = "unreachable" | "timeout" | "error" | "untrusted";
/** `untrusted`: the socket that answered is held by no rank process the logs know (nor root); the answer is ignored. */
export type RasQueryOutcome = "ok" | RasFailure;
export const RAS_OUTCOMES: readonly RasQueryOutcome[] = ["ok", "unreachable", "timeout", "error", "untrusted"];

export type RasQueryResult = { ok: true; text: string; ms: number; format: "json" | "text" } | { ok: false; result: RasFailure; reason: string; ms: number };

/** The two ends of a connected socket, or undefined once it is closed. */
export function connectionOf(sock: Socket): RasConnection | undefined {
  const { localAddress, localPort, remoteAddress, remotePort } = sock;
  if (localAddress === undefined || localPort === undefined || remoteAddress === undefined || remotePort === undefined) return undefined;
  return { server: { address: remoteAddress, port: remotePort }, client: { address: localAddress, port: localPort } };
}

/** Runs a verify hook on a socket: a reason to refuse the peer, or undefined. */
export function refusedPeer(sock: Socket, verify: ((c: RasConnection) => string | undefined) | undefined): string | undefined {
  if (verify === undefined) return undefined;
  const c = connectionOf(sock);
  return c === undefined ? "the connection closed before its owner could be checked" : verify(c);
}

const UNREACHABLE = new Set(["ECONNREFUSED", "EADDRNOTAVAIL", "ENETUNREACH", "EHOSTUNREACH"]);
const MAX_REPLY_LINE = 1024;

/** `HOST:PORT`, `[v6]:PORT` or `HOST` (the default port), as NCCL_RAS_ADDR takes it; undefined if malformed. */
export function parseRasAddress(text: string): RasAddress | undefined {
  let host = text;
  let port = RAS_DEFAULT_PORT;
  if (text.startsWith("[")) {
    const end = text.indexOf("]");
    if (end < 0) return undefined;
    host = text.slice(1, end);
    const rest = text.slice(end + 1);
    if (rest !== "") {
      if (!rest.startsWith(":")) return undefined;
      const p = portOf(rest.slice(1));
      if (p === undefined) return undefined;
      port = p;
    }
  } else {
    const colon = text.lastIndexOf(":");
    if (colon >= 0) {
      if (text.indexOf(":") !== colon) return undefined; // a bare IPv6 address needs brackets
      host = text.slice(0, colon);
      const p = portOf(text.slice(colon + 1));
      if (p === undefined) return undefined;
      port = p;
    }
  }
  if (host === "" || host.includes(" ")) return undefined;
  return { host, port };
}

function portOf(s: string): number | undefined {
  if (s.length === 0 || s.length > 5) return undefined;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
  }
  const n = Number(s);
  return n >= 1 && n <= 65535 ? n : undefined;
}

type Step = "protocol" | "timeout" | "format" | "status";

/** Asks the RAS service for its status report. Never rejects. */
export function queryRas(o: RasQueryOptions): Promise<RasQueryResult> {
  const t0 = performance.now();
  const command = o.command ?? "STATUS";
  return new Promise((resolve) => {
    let step: Step = "protocol";
    let pending: Buffer = Buffer.alloc(0);
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    let format: "json" | "text" = "text";
    const finish = (r: { ok: true; text: string; format: "json" | "text" } | { ok: false; result: RasFailure; reason: string }): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      o.signal?.removeEventListener("abort", onAbort);
      sock.destroy();
      resolve({ ...r, ms: performance.now() - t0 });
    };
    const sock: Socket = connect({ host: o.host, port: o.port });
    const timer = setTimeout(() => finish({ ok: false, result: "timeout", reason: `no complete answer within ${o.deadlineMs} ms (at ${step})` }), o.deadlineMs);
    timer.unref();
    const onAbort = (): void => finish({ ok: false, result: "error", reason: "aborted" });
    if (o.signal?.aborted) queueMicrotask(onAbort);
    o.signal?.addEventListener("abort", onAbort, { once: true });

    sock.on("connect", () => sock.write(`CLIENT PROTOCOL ${RAS_CLIENT_PROTOCOL}\n`));
    sock.on("error", (err: NodeJS.ErrnoException) => {
      const code = err.code ?? "";
      const unreachable = UNREACHABLE.has(code) && step === "protocol";
      finish({ ok: false, result: unreachable ? "unreachable" : "error", reason: `${o.host}:${o.port}: ${code || err.message}` });
    });
    sock.on("end", () => {
      if (step !== "status") {
        finish({ ok: false, result: "error", reason: `the RAS service closed the connection at ${step}` });
        return;
      }
      finish({ ok: true, text: Buffer.concat(chunks, size).toString("utf8"), format });
    });
    /** One reply line of the handshake: the next command, or false when the query failed. */
    const handshake = (reply: string): boolean => {
      if (step === "protocol") {
        if (!reply.toUpperCase().startsWith("SERVER PROTOCOL ")) {
          finish({ ok: false, result: "error", reason: `not an NCCL RAS service: it answered "${reply.slice(0, 80)}"` });
          return false;
        }
        const refused = refusedPeer(sock, o.verify);
        if (refused !== undefined) {
          finish({ ok: false, result: "untrusted", reason: refused });
          return false;
        }
        step = "timeout";
        sock.write(`TIMEOUT ${o.legTimeoutSeconds}\n`);
        return true;
      }
      if (step === "format") {
        // An NCCL older than 2.28.7 does not know the command and says so; the report is then text.
        format = reply.toUpperCase() === "OK" ? "json" : "text";
        step = "status";
        sock.write(`${command}\n`);
        return true;
      }
      if (reply.toUpperCase() !== "OK") {
        finish({ ok: false, result: "error", reason: `the RAS service refused TIMEOUT ${o.legTimeoutSeconds}: "${reply.slice(0, 80)}"` });
        return false;
      }
      if (o.json === true && command === "STATUS") {
        step = "format";
        sock.write("SET FORMAT json\n");
        return true;
      }
      step = "status";
      sock.write(`${command}\n`);
      return true;
    };
    /** An NCCL without the command answers one ERROR line and keeps the connection open: that line is the answer. */
    const refusedAtOnce = (): boolean => {
      if (command === "STATUS" || size > MAX_REPLY_LINE) return false;
      // CONTROL answers one line (OK or ERROR) and keeps the connection open.
      if (command.startsWith("CONTROL ")) return Buffer.concat(chunks, size).indexOf(10) >= 0;
      const head = Buffer.concat(chunks, size);
      return head.indexOf(10) >= 0 && (head.subarray(0, 7).toString("latin1") === "ERROR: " || head.subarray(0, 6).toString("latin1") === "BUSY: ");
    };
    sock.on("data", (data: Buffer) => {
      if (done) return;
      if (step === "status") {
        size += data.length;
        if (size > o.maxBytes) {
          finish({ ok: false, result: "error", reason: `the RAS report is larger than ${o.maxBytes} bytes` });
          return;
        }
        chunks.push(data);
        if (refusedAtOnce()) finish({ ok: true, text: Buffer.concat(chunks, size).toString("utf8"), format: "text" });
        return;
      }
      pending = pending.length === 0 ? data : Buffer.concat([pending, data]);
      // Replies to the handshake, one line each; what follows the last one is the report.
      while ((step as Step) !== "status") {
        const nl = pending.indexOf(10);
        if (nl < 0) {
          if (pending.length > MAX_REPLY_LINE) finish({ ok: false, result: "error", reason: `no line end in the RAS reply to ${step}` });
          return;
        }
        let reply = pending.subarray(0, nl).toString("latin1");
        if (reply.endsWith("\r")) reply = reply.slice(0, -1);
        pending = pending.subarray(nl + 1);
        if (!handshake(reply)) return;
      }
      if (pending.length > 0) {
        size += pending.length;
        chunks.push(pending);
        pending = Buffer.alloc(0);
        if (refusedAtOnce()) finish({ ok: true, text: Buffer.concat(chunks, size).toString("utf8"), format: "text" });
      }
    });
  });
}
