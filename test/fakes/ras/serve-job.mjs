// @ts-check
/**
 * The job mode of test/fakes/nccl-ras (`nccl-ras --job <file.json>`): a fake NCCL RAS service that answers
 * the client protocol exactly as the NCCL version of the job does (src/ras/client_support.cc,
 * rasClientEventLoop), rendering its reports from the job model (render.mjs).
 *
 * Protocol, per NCCL (all versions 2.24-2.32 unless said): one command per line, `\r\n` accepted, matched
 * case-insensitively; a line is cut at a NUL byte as NCCL's C strings are.
 *   CLIENT PROTOCOL <anything>  -> "SERVER PROTOCOL 2"
 *   TIMEOUT <n>                 -> "OK", or "ERROR: Invalid timeout value <n>" unless strtol reads the whole
 *                                  argument as a value >= 0 (an empty argument is 0, hence OK, as in NCCL);
 *                                  from 2.31.2 strtod instead: fractions, exponents and hex floats accepted;
 *                                  negative, inf/nan, out-of-range (ERANGE) and trailing junk refused
 *   SET FORMAT text|json        -> "OK" / "ERROR: Invalid format <x>" (2.28.7+; older: unknown command)
 *   MONITOR [g1,g2...]          -> "OK" / "ERROR: Invalid event group '<g>'" (2.29+; older: unknown command);
 *                                  groups lifecycle, trace, all; none given = lifecycle; the connection stays
 *                                  open and receives the events of its groups (PEER_DEAD, PEER_NEW: lifecycle)
 *   STATUS / VERBOSE STATUS     -> the report in the format set, then the server closes the connection. In
 *                                  text, the head (version lines, Job summary, "\nCommunicators...") leaves at
 *                                  once and the rest after the gathering delay. Once STATUS starts, NCCL reads
 *                                  nothing more from that client; lines already received with it are still
 *                                  answered (a second STATUS among them is ignored here; NCCL would restart).
 *   DIAGNOSTICS                 (2.31.2+; the whole line) in JSON format: "ERROR: diagnostics only supports
 *                                  text output", then closed; while another client of the same listener (NCCL:
 *                                  process) runs one: "BUSY: diagnostics already in progress", then closed;
 *                                  else nothing until the job-wide gather ends (the delay), then the answer
 *                                  (render.mjs renderDiagnostics, "completed in <delay> ms"), then closed. The
 *                                  run ends early if its client disconnects (NCCL drops it then too).
 *   CONTROL PROFILER_MASK <v>   (2.31.2+) -> "OK" (connection stays open; the mask is set job-wide), or
 *                                  "ERROR: Invalid profiler mask value '<v>'"; "CONTROL <other>" -> "ERROR:
 *                                  Unknown CONTROL subcommand '<other>'" (spaces after CONTROL skipped); v is
 *                                  none, all (0x7fff), a number (strtol base 0: 0x46, 70, 0106; >= 0) or names
 *                                  group,coll,p2p,proxyop,proxystep,proxyctrl,kernelch,netplugin,groupapi,
 *                                  collapi,p2papi,kernellaunch,cecoll,cesync,cebatch (any case, comma-separated,
 *                                  no spaces; empty items skipped as strtok does)
 *   anything else               -> "ERROR: Unknown command <line>" (so DIAGNOSTICS and CONTROL before 2.31.2)
 *   A line of 1024 bytes without a newline: NCCL drops the client (here too).
 * After a refused DIAGNOSTICS, a STATUS or a DIAGNOSTICS, NCCL reads nothing more from the client; lines
 * already received with it are still answered (a STATUS or DIAGNOSTICS among them is ignored here).
 *
 * The job is the file, re-read whenever a command arrives (so a test can rewrite it), unless a later
 * control line replaced it. Control lines on stdin, one JSON object a line:
 *   {"job": {...}}      use this job (until the file changes again)
 *   {"event": {...}}    send this MONITOR event (render.mjs renderEvent) to every monitoring client whose
 *                       groups include it and that is not running a STATUS
 *   {"delayMs": N}      STATUS answers wait N ms for "gathering" (default 0)
 * Each control line is acknowledged on stdout with "ctl <n>" (n counts them from 1) once applied (for an
 * event: once written to the clients' sockets).
 *   {"delayMs": N}      also the DIAGNOSTICS gather time
 * stderr: "conn" per connection, "cmd <line>" per command, "mask 0x<hex>" at start (the job's mask, render.mjs
 * defaultProfilerMask) and per accepted CONTROL PROFILER_MASK (the mask from then on: NCCL's override is
 * sticky, a new job file does not reset it), "diag" per DIAGNOSTICS run started;
 * stdout: "listening <port>" once bound.
 *
 * The protocol code is shared with the cluster mode (cluster-job.mjs): rasClientListener (one listener),
 * answerStatus (a STATUS answer from a job), notifyMonitors (a MONITOR event to the clients).
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { createInterface } from "node:readline";
import {
  EVENT_GROUPS,
  defaultProfilerMask,
  diagnosticsSource,
  formatLocalTime,
  rasFeatures,
  renderDiagnostics,
  renderEvent,
  renderJson,
  renderTextParts,
} from "./render.mjs";

const RECV_BUFFER = 1024; // struct rasClient recvBuffer

/**
 * strtol(arg, &end, 10) stored in an int, accepted by NCCL iff >= 0 and *end == '\0'.
 * @param {string} arg
 */
export function timeoutAccepted(arg) {
  const m = /^[ \t\n\v\f\r]*([+-]?)(\d+)/.exec(arg);
  if (!m) return arg === ""; // no digits: end = arg, so only the empty argument passes (as 0)
  if (m[0].length !== arg.length) return false;
  let v = BigInt(`${m[1]}${m[2]}`);
  const max = (1n << 63n) - 1n;
  if (v > max) v = max; // strtol saturates at LONG_MAX / LONG_MIN...
  if (v < -max - 1n) v = -max - 1n;
  return BigInt.asIntN(32, v) >= 0n; // ...and the int keeps the low 32 bits
}

const LONG_MAX = (1n << 63n) - 1n;

/**
 * strtod(arg, &end) as NCCL 2.31.2+ checks it: accepted iff errno stays 0, *end == '\0', the value is finite
 * and not < 0 (so "-0" passes, as does an empty argument: no conversion leaves end at its '\0').
 * @param {string} arg
 */
export function timeoutAcceptedStrtod(arg) {
  const m =
    /^[ \t\n\v\f\r]*([+-]?)(?:0[xX]((?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+))(?:[pP]([+-]?\d+))?|((?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(inf(?:inity)?)|(nan(?:\([0-9A-Za-z_]*\))?))/i.exec(
      arg,
    );
  if (!m) return arg === "";
  if (m[0].length !== arg.length) return false;
  if (m[5] !== undefined || m[6] !== undefined) return false; // inf, nan: not finite
  let v;
  if (m[2] !== undefined) {
    const [int = "", frac = ""] = m[2].split(".");
    v = parseInt(`${int}${frac}` || "0", 16) * 2 ** (Number(m[3] ?? 0) - 4 * frac.length);
  } else v = Number(m[4]);
  if (!Number.isFinite(v)) return false; // ERANGE (overflow)
  const nonZeroDigits = m[2] !== undefined ? /[1-9a-f]/i.test(m[2]) : /[1-9]/.test((m[4] ?? "").replace(/[eE].*$/, ""));
  if (nonZeroDigits && Math.abs(v) < 2.2250738585072014e-308) return false; // ERANGE (underflow: glibc sets it below DBL_MIN)
  return !(m[1] === "-" && v > 0);
}

const PROFILER_EVENTS = [
  "group",
  "coll",
  "p2p",
  "proxyop",
  "proxystep",
  "proxyctrl",
  "kernelch",
  "netplugin",
  "groupapi",
  "collapi",
  "p2papi",
  "kernellaunch",
  "cecoll",
  "cesync",
  "cebatch",
];

/**
 * rasParseProfilerMask (NCCL 2.31.2+): the mask as NCCL's int holds it, unsigned (e.g. 0xffffffff for -1), or
 * null if refused.
 * @param {string} str the value after CONTROL PROFILER_MASK and its spaces
 * @returns {number | null}
 */
export function parseProfilerMask(str) {
  if (str === "") return null;
  if (str.toLowerCase() === "none") return 0;
  if (str.toLowerCase() === "all") return 0x7fff;
  if (str[0] !== undefined && str[0] >= "0" && str[0] <= "9") {
    // strtol(str, &end, 0): 0x.. hex, 0.. octal, else decimal; the whole string, and >= 0.
    const m = /^(?:0[xX]([0-9a-fA-F]+)|0([0-7]*)|([1-9][0-9]*))/.exec(str);
    if (!m || m[0].length !== str.length) return null;
    let v = m[1] !== undefined ? BigInt(`0x${m[1]}`) : m[2] !== undefined ? (m[2] === "" ? 0n : BigInt(`0o${m[2]}`)) : BigInt(m[3] ?? "0");
    if (v > LONG_MAX) v = LONG_MAX; // strtol saturates; errno is not checked
    return Number(BigInt.asUintN(32, v)); // (int)val
  }
  if (str.length >= 1023) return null; // snprintf into char buf[1024]
  let mask = 0;
  for (const tok of str.split(",")) {
    if (tok === "") continue; // strtok_r skips empty tokens
    const bit = PROFILER_EVENTS.indexOf(tok.toLowerCase());
    if (bit < 0) return null;
    mask |= 1 << bit;
  }
  return mask;
}

/**
 * @param {string} spec what follows "MONITOR"
 * @returns {{ mask: number } | { error: string }}
 */
export function parseMonitor(spec) {
  let mask = 0;
  for (const token of spec
    .replace(/^ +/, "")
    .split(",")
    .filter((t) => t !== "")) {
    const t = token.toLowerCase();
    if (t === "lifecycle") mask |= EVENT_GROUPS.LIFECYCLE;
    else if (t === "trace") mask |= EVENT_GROUPS.TRACE;
    else if (t === "all") mask |= EVENT_GROUPS.ALL;
    else return { error: `ERROR: Invalid event group '${token}'\n` };
  }
  return { mask: mask || EVENT_GROUPS.LIFECYCLE };
}

/**
 * One client of a RAS client listener: `state` "status" once a STATUS started, "diag" while its DIAGNOSTICS
 * runs, "finished" once NCCL is done with it (NCCL reads nothing more in any of these), `format` as SET FORMAT
 * left it, `mask` the MONITOR event groups (0: not monitoring).
 * @typedef {{ sock: import("node:net").Socket, state: "connected" | "status" | "diag" | "finished", format: "text" | "json", mask: number, buf: Buffer }} Client
 */

/**
 * A RAS client listener speaking NCCL's client protocol (the header above says how), for one job or for one
 * node of a simulated cluster (cluster-job.mjs). The caller binds the server.
 * @param {{ version: () => string, onStatus: (c: Client, verbose: boolean) => void, onDiagnostics?: (c: Client) => void,
 *   onProfilerMask?: (mask: number) => void, log?: (line: string) => void }} hooks
 *   version: the NCCL version answering (read at every command); onStatus: a STATUS or VERBOSE STATUS started
 *   (answer with answerStatus); onDiagnostics: a DIAGNOSTICS run started (answer with answerDiagnostics; the
 *   client is "diag" until then, which makes other clients' DIAGNOSTICS BUSY); onProfilerMask: an accepted
 *   CONTROL PROFILER_MASK (the broadcast); log: "conn" per connection, "cmd <line>" per command
 * @returns {{ server: import("node:net").Server, clients: Set<Client> }}
 */
export function rasClientListener(hooks) {
  /** @type {Set<Client>} */
  const clients = new Set();
  const log = hooks.log ?? (() => {});

  /** @param {Client} c @param {string} cmd @param {boolean} afterStatus */
  function command(c, cmd, afterStatus) {
    log(`cmd ${cmd}`);
    const v = rasFeatures(String(hooks.version()));
    const lower = cmd.toLowerCase();
    const reply = (/** @type {string} */ s) => c.sock.write(s);
    if (lower.startsWith("client protocol ")) reply("SERVER PROTOCOL 2\n");
    else if (lower.startsWith("timeout ")) {
      const arg = cmd.slice("timeout ".length);
      const ok = v.timeoutStrtod ? timeoutAcceptedStrtod(arg) : timeoutAccepted(arg);
      reply(ok ? "OK\n" : `ERROR: Invalid timeout value ${arg}\n`);
    } else if (v.json && lower.startsWith("set format ")) {
      const f = cmd.slice("set format ".length);
      if (f.toLowerCase() === "text" || f.toLowerCase() === "json") {
        c.format = /** @type {"text" | "json"} */ (f.toLowerCase());
        reply("OK\n");
      } else reply(`ERROR: Invalid format ${f}\n`);
    } else if (lower === "status" || lower === "verbose status") {
      if (!afterStatus) {
        c.state = "status";
        hooks.onStatus(c, lower === "verbose status");
      }
    } else if (v.diagnostics && lower === "diagnostics") {
      if (afterStatus) return;
      if (c.format !== "text") {
        reply("ERROR: diagnostics only supports text output\n");
        c.state = "finished";
      } else if ([...clients].some((o) => o.state === "diag")) {
        reply("BUSY: diagnostics already in progress\n");
        c.state = "finished";
      } else {
        c.state = "diag";
        if (hooks.onDiagnostics) hooks.onDiagnostics(c);
        else c.state = "finished";
      }
    } else if (v.monitor && (lower === "monitor" || lower.startsWith("monitor "))) {
      const r = parseMonitor(cmd.slice("monitor".length));
      if ("error" in r) reply(r.error);
      else {
        c.mask = r.mask;
        reply("OK\n");
      }
    } else if (v.control && lower.startsWith("control ")) {
      const sub = cmd.slice("control ".length).replace(/^ +/, "");
      if (sub.toLowerCase().startsWith("profiler_mask ")) {
        const value = sub.slice("profiler_mask ".length).replace(/^ +/, "");
        const mask = parseProfilerMask(value);
        if (mask === null) reply(`ERROR: Invalid profiler mask value '${value}'\n`);
        else {
          hooks.onProfilerMask?.(mask);
          reply("OK\n");
        }
      } else reply(`ERROR: Unknown CONTROL subcommand '${sub}'\n`);
    } else reply(`ERROR: Unknown command ${cmd}\n`);
  }

  const server = createServer((sock) => {
    log("conn");
    /** @type {Client} */
    const c = { sock, state: "connected", format: "text", mask: 0, buf: Buffer.alloc(0) };
    clients.add(c);
    sock.on("close", () => {
      clients.delete(c);
      if (c.state === "diag") c.state = "finished"; // NCCL drops the run with its client
    });
    sock.on("error", () => {});
    sock.on("data", (data) => {
      if (c.state !== "connected") return; // NCCL no longer reads from a client running STATUS or DIAGNOSTICS
      c.buf = Buffer.concat([c.buf, data]);
      let afterStatus = false;
      let nl;
      while ((nl = c.buf.indexOf(10)) >= 0) {
        let line = c.buf.subarray(0, nl).toString("latin1");
        c.buf = c.buf.subarray(nl + 1);
        if (line.endsWith("\r")) line = line.slice(0, -1);
        const nul = line.indexOf("\0");
        if (nul >= 0) line = line.slice(0, nul);
        command(c, line, afterStatus);
        if (/** @type {string} */ (c.state) !== "connected") afterStatus = true; // command() may have started one
      }
      if (/** @type {string} */ (c.state) === "finished")
        sock.end(); // a refused DIAGNOSTICS: closed once sent
      else if (c.buf.length >= RECV_BUFFER && c.state === "connected") sock.destroy(); // "excessively long input line"
    });
  });
  return { server, clients };
}

/**
 * Answers a STATUS from `job` as NCCL does: in text, the head at once and the rest after `delayMs` of
 * "gathering"; in JSON, all of it after the delay; then the server closes the connection.
 * @param {Client} c @param {any} job @param {boolean} verbose @param {number} delayMs
 */
export function answerStatus(c, job, verbose, delayMs) {
  try {
    if (c.format === "text") c.sock.write(renderTextParts(job, { verbose }).head);
  } catch (e) {
    process.stderr.write(`error ${String(e)}\n`);
    c.sock.destroy();
    return;
  }
  setTimeout(() => {
    try {
      c.sock.end(c.format === "json" ? renderJson(job) : renderTextParts(job, { verbose }).tail);
    } catch (e) {
      process.stderr.write(`error ${String(e)}\n`);
      c.sock.destroy();
    }
  }, delayMs);
}

/**
 * Answers a DIAGNOSTICS run as NCCL does: nothing while the job-wide gather runs (`delayMs`), then the whole
 * answer (render.mjs renderDiagnostics of `job`, from `from`, "completed in <delayMs> ms"), then the server
 * closes the connection. The client stays "diag" (other DIAGNOSTICS on its listener are BUSY) until then, or
 * until it disconnects.
 * @param {Client} c @param {any} job @param {number} delayMs @param {{ host: string, pid: number }} [from]
 */
export function answerDiagnostics(c, job, delayMs, from) {
  setTimeout(() => {
    if (c.state !== "diag") return;
    c.state = "finished";
    if (c.sock.destroyed) return;
    try {
      c.sock.end(renderDiagnostics(job, { ...(from ?? diagnosticsSource(job)), ms: delayMs }));
    } catch (e) {
      process.stderr.write(`error ${String(e)}\n`);
      c.sock.destroy();
    }
  }, delayMs);
}

/**
 * Sends a MONITOR event (render.mjs renderEvent) to every client whose groups include it and that is not
 * running a STATUS (rasClientsNotifyEvent), each in its own format; resolves once written to their sockets.
 * @param {Iterable<Client>} clients @param {any} event @param {string} [time] "%F %T"; default event.time, else now
 */
export function notifyMonitors(clients, event, time) {
  const group = (event.group ?? "LIFECYCLE") === "LIFECYCLE" ? EVENT_GROUPS.LIFECYCLE : EVENT_GROUPS.TRACE;
  const at = time ?? event.time ?? formatLocalTime(new Date());
  const writes = [...clients]
    .filter((c) => c.state === "connected" && (c.mask & group) !== 0)
    .map((c) => new Promise((resolve) => c.sock.write(renderEvent(event, { format: c.format, time: at }), () => resolve(undefined))));
  return Promise.all(writes).then(() => undefined);
}

/**
 * "host:port" (IPv6 in brackets) split for server.listen.
 * @param {string} addr
 */
export function parseListenAddr(addr) {
  const colon = addr.lastIndexOf(":");
  return { host: addr.slice(0, colon).replace(/^\[|\]$/g, ""), port: Number(addr.slice(colon + 1)) };
}

/**
 * @param {string} jobFile
 * @param {string} [addr] host:port
 */
export function serveJob(jobFile, addr = "127.0.0.1:0") {
  /** @type {string | null} */
  let fileText = null;
  /** @type {any} */
  let job = null;
  let delayMs = 0;

  const currentJob = () => {
    let text;
    try {
      text = readFileSync(jobFile, "utf8");
    } catch {
      return job;
    }
    if (text !== fileText) {
      try {
        job = JSON.parse(text);
        fileText = text;
      } catch {
        // A file being rewritten: keep the last job, read it again next time.
      }
    }
    return job;
  };
  currentJob();
  if (job === null) throw new Error(`nccl-ras: cannot read a job from ${jobFile}`);

  const { server, clients } = rasClientListener({
    version: () => String(currentJob().version),
    onStatus: (c, verbose) => answerStatus(c, currentJob(), verbose, delayMs),
    onDiagnostics: (c) => {
      process.stderr.write("diag\n");
      answerDiagnostics(c, currentJob(), delayMs);
    },
    onProfilerMask: (mask) => process.stderr.write(`mask 0x${mask.toString(16)}\n`),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  process.stderr.write(`mask 0x${defaultProfilerMask(currentJob()).toString(16)}\n`); // the mask the job starts with

  let ctl = 0;
  createInterface({ input: process.stdin }).on("line", (line) => {
    if (!line.trim()) return;
    const n = ++ctl;
    const ack = () => process.stdout.write(`ctl ${n}\n`);
    /** @type {any} */
    let msg;
    try {
      msg = JSON.parse(line);
    } catch (e) {
      process.stderr.write(`error control line ${n}: ${String(e)}\n`);
      return ack();
    }
    if (msg.job) job = msg.job;
    if (typeof msg.delayMs === "number") delayMs = msg.delayMs;
    if (!msg.event) return ack();
    void notifyMonitors(clients, msg.event).then(ack);
  });

  const { host, port } = parseListenAddr(addr);
  server.listen(port, host, () => {
    const a = server.address();
    process.stdout.write(`listening ${a && typeof a === "object" ? a.port : 0}\n`);
  });
  process.on("SIGTERM", () => process.exit(0));
  return server;
}
