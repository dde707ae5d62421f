#!/usr/bin/env node
/*
 * How a tool misbehaves, for fault-injection tests (test/faults). The wrappers next to this file
 * (nvidia-smi, ibstat, perfquery, lsmod, ip) `exec` it in place of the real fake when their
 * FAULT_* variable is set, so the misbehaving process is the agent's own child:
 *
 *   misbehave.mjs <mode> <the tool's arguments...>
 *
 * "The real output" below is the real capture FAULT_REAL_CAPTURE without its line 1 (the
 * provenance line); without FAULT_REAL_CAPTURE, what the ordinary fake test/fakes/nvidia-smi
 * prints for the same arguments (--query-gpu picks fields from its capture by name).
 *
 *   hang         print nothing, never exit (SIGTERM ends it)
 *   hang-hard    print nothing, never exit, ignore SIGTERM (only SIGKILL ends it)
 *   crash        print the first third of the real output (whole lines), a message on stderr, exit 1
 *   signal       print the first third of the real output, then kill itself with FAULT_SIGNAL
 *                (default SIGSEGV)
 *   midline      print the real output up to the middle of a line, cut inside a number, then
 *                exit FAULT_EXIT (default 1)
 *   random       FAULT_BYTES (default 256 KiB) of seeded random bytes, exit 0
 *   nuls         FAULT_BYTES (default 256 KiB) of NUL bytes, exit 0
 *   header-junk  the real output's first lines (a dmon's `#` header; 3 lines of other tools), then
 *                junk lines (binary, ANSI, near-miss rows); a dmon keeps printing junk every 200 ms
 *                and never exits, the other tools exit 0
 *   flood        FAULT_BYTES (default 100 MiB) of the real output repeated (whole lines, a dmon's
 *                header once), as fast as the reader takes it, then exit 0
 *   flood-noline FAULT_BYTES (default 100 MiB) without a single newline, then exit 0
 *
 *   FAULT_LOG=<file>  append "<pid> <mode> <args>" per run (to count runs and find the pids)
 *   FAULT_STARTED=<file>  append one JSON line {pid, tool, mode, args} per run once the fault is in
 *                place (hang-hard: its SIGTERM handler installed): the signal a test waits for, so
 *                that what it sees is the fault and not a tool killed before it had started. tool
 *                is FAULT_TOOL (the wrappers next to this file set it), "nvidia-smi dmon" for a dmon.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const [mode = "hang", ...args] = process.argv.slice(2);
const env = process.env;
const isDmon = args[0] === "dmon";
if (env.FAULT_LOG) appendFileSync(env.FAULT_LOG, `${process.pid} ${mode} ${args.join(" ")}\n`);
process.stdout.on("error", () => process.exit(0)); // the reader went away (EPIPE): stop quietly

const bytesWanted = (dflt) => Number(env.FAULT_BYTES || dflt);

/** What the tool prints when it works (a dmon: the whole capture at once). */
function realOutput() {
  if (env.FAULT_REAL_CAPTURE) {
    const raw = readFileSync(env.FAULT_REAL_CAPTURE, "utf8");
    return raw.slice(raw.indexOf("\n") + 1);
  }
  const fake = join(dirname(fileURLToPath(import.meta.url)), "..", "nvidia-smi");
  const r = spawnSync(process.execPath, [fake, ...args], { env, maxBuffer: 64 * 1024 * 1024, encoding: "utf8" });
  return r.stdout || "";
}

/** Writes all chunks with back-pressure, then calls done. */
function writeAll(next, done) {
  const pump = () => {
    for (;;) {
      const chunk = next();
      if (chunk === undefined) return done();
      if (!process.stdout.write(chunk)) return process.stdout.once("drain", pump);
    }
  };
  pump();
}

/** xorshift32: the same "random" bytes on every run. */
function randomBytes(n, seed = 0x9e3779b9) {
  const b = Buffer.alloc(n);
  let x = seed >>> 0;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    b[i] = x & 0xff;
  }
  return b;
}

function firstThird(text) {
  const lines = text.split("\n");
  return lines.slice(0, Math.max(1, Math.floor(lines.length / 3))).join("\n") + "\n";
}

/** The output up to the middle of a line at about half of it, cut right after a number's first digit. */
function cutMidLine(text) {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  let at = Math.floor((lines.length - 1) / 2);
  while (at < lines.length - 1 && !/\d\d/.test(lines[at])) at++;
  const line = lines[at] ?? "";
  const m = /\d\d/.exec(line.slice(Math.floor(line.length / 2))) ?? /\d\d/.exec(line);
  const from = m && m.input !== line ? Math.floor(line.length / 2) : 0;
  const cut = m ? line.slice(0, from + m.index + 1) : line.slice(0, Math.floor(line.length / 2));
  return lines.slice(0, at).join("\n") + (at > 0 ? "\n" : "") + cut;
}

const JUNK = [
  "\u0000\u0000\u0000\u0000",
  "\u001b[31mERROR\u001b[0m \u00ff\u00fe garbled",
  "    0    -1e308  NaN  Infinity  0x10  99999999999999999999999",
  "#",
  "    x    1    2    3",
  "%%%% ^C ^Z \\x00 ]]]]",
];

switch (mode) {
  case "hang":
    setInterval(() => {}, 1 << 30);
    break;
  case "hang-hard":
    process.on("SIGTERM", () => {});
    setInterval(() => {}, 1 << 30);
    break;
  case "crash":
    process.stdout.write(firstThird(realOutput()), () => {
      process.stderr.write("fatal: simulated crash (test/fakes/faulty)\n");
      process.exit(1);
    });
    break;
  case "signal":
    process.stdout.write(firstThird(realOutput()), () => process.kill(process.pid, env.FAULT_SIGNAL || "SIGSEGV"));
    break;
  case "midline":
    process.stdout.write(cutMidLine(realOutput()), () => process.exit(Number(env.FAULT_EXIT || 1)));
    break;
  case "random":
    process.stdout.write(randomBytes(bytesWanted(256 * 1024)));
    break;
  case "nuls":
    process.stdout.write(Buffer.alloc(bytesWanted(256 * 1024)));
    break;
  case "header-junk": {
    const lines = realOutput().split("\n");
    const head = isDmon ? lines.filter((l) => l.startsWith("#")) : lines.slice(0, 3);
    process.stdout.write(head.join("\n") + "\n" + JUNK.join("\n") + "\n");
    if (isDmon) {
      let i = 0;
      setInterval(() => process.stdout.write(JUNK[i++ % JUNK.length] + "\n"), 200);
    }
    break;
  }
  case "flood": {
    const text = realOutput();
    const lines = text.split("\n").filter((l) => l !== "");
    const body = (isDmon ? lines.filter((l) => !l.startsWith("#")) : lines).join("\n") + "\n";
    const block = Buffer.from(body.repeat(Math.max(1, Math.ceil(65536 / body.length))));
    let left = bytesWanted(100 * 1024 * 1024);
    let first = isDmon ? Buffer.from(lines.filter((l) => l.startsWith("#")).join("\n") + "\n") : undefined;
    writeAll(
      () => {
        if (first) {
          const f = first;
          first = undefined;
          return f;
        }
        if (left <= 0) return undefined;
        left -= block.length;
        return block;
      },
      () => {},
    );
    break;
  }
  case "flood-noline": {
    const block = Buffer.alloc(65536, "x");
    let left = bytesWanted(100 * 1024 * 1024);
    writeAll(
      () => {
        if (left <= 0) return undefined;
        left -= block.length;
        return block;
      },
      () => {},
    );
    break;
  }
  default:
    process.stderr.write(`misbehave: unknown mode ${mode}\n`);
    process.exit(2);
}

if (env.FAULT_STARTED) {
  const tool = isDmon && env.FAULT_TOOL === "nvidia-smi" ? "nvidia-smi dmon" : env.FAULT_TOOL || "?";
  appendFileSync(env.FAULT_STARTED, JSON.stringify({ pid: process.pid, tool, mode, args }) + "\n");
}
