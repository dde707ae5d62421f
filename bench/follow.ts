/**
 * Benchmark of the NCCL log follower (collectors/follow). Not a test: run it by hand.
 *
 *   npx tsc -p tsconfig.json --outDir node_modules/.cache/rwbench && node node_modules/.cache/rwbench/bench/follow.js [MBperFile] [seconds]
 *
 * (the output goes under node_modules so that chokidar resolves from it)
 *
 * (a) catch-up: 16 files x 64 MB of COLL lines appear at once (written after start() next to the
 *     followed directory, then renamed into it: new files, read from their start); prints MB/s and
 *     lines/s until every line is delivered, and `grep -c opCount` over the same files for
 *     comparison (page cache warm for both).
 * (b) steady: a child process writes 20,000 lines/s spread over 16 files, one write() per line
 *     (NCCL's debug file is line-buffered), for 10 s; prints what arrived and this process's CPU
 *     time (process.cpuUsage, all threads) as % of one core.
 * (c) idle: 10,000 small files that nobody writes: time for start() (every head read) and the
 *     CPU of watching them for 10 s with the default 5 s safety sweep.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, openSync, renameSync, rmSync, writeSync, closeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Follower } from "../collectors/follow/follower.js";

const FILES = 16;
const mbPerFile = Number(process.argv[2] ?? "64");
const seconds = Number(process.argv[3] ?? "10");
const LINE = (host: string, op: number): string =>
  `${host}:12345:12399 [3] NCCL INFO AllReduce: opCount ${op.toString(16)} sendbuff 0x7f1234000000 ` +
  `recvbuff 0x7f1234000000 count 262144 datatype 7 op 0 root 0 comm 0x55d1c0a3b2c0 [nranks=16] stream 0x55d1c0a3c000\n`;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function writeBigFile(path: string, bytes: number, host: string): number {
  const fd = openSync(path, "w");
  let lines = 0;
  let chunk = "";
  let written = 0;
  while (written < bytes) {
    chunk += LINE(host, lines++);
    if (chunk.length >= 1 << 20) {
      written += writeSync(fd, chunk);
      chunk = "";
    }
  }
  if (chunk !== "") writeSync(fd, chunk);
  closeSync(fd);
  return lines;
}

async function catchUp(base: string): Promise<void> {
  const staging = join(base, "staging");
  const watched = join(base, "watched");
  mkdirSync(staging);
  mkdirSync(watched);
  let expected = Infinity;
  let lines = 0;
  let chars = 0;
  let first = 0n;
  let done: () => void = () => undefined;
  const all = new Promise<void>((r) => (done = r));
  const f = new Follower(
    { paths: [watched] },
    {
      onLines: (_file, batch) => {
        if (lines === 0) first = process.hrtime.bigint();
        lines += batch.length;
        for (const l of batch) chars += l.length;
        if (lines >= expected) done();
      },
    },
  );
  await f.start();
  // Born after start(): when they appear they are new files, read from their start.
  let total = 0;
  for (let i = 0; i < FILES; i++) total += writeBigFile(join(staging, `nccl-h-${i}.log`), mbPerFile * 1024 * 1024, `h${i}`);
  expected = total;
  const t0 = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < FILES; i++) renameSync(join(staging, `nccl-h-${i}.log`), join(watched, `nccl-h-${i}.log`));
  await all;
  const end = process.hrtime.bigint();
  const secs = Number(end - t0) / 1e9;
  const reading = Number(end - first) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const mb = f.stats().bytesRead / 1048576;
  await f.stop();
  const files = Array.from({ length: FILES }, (_, i) => join(watched, `nccl-h-${i}.log`));
  execFileSync("grep", ["-c", "opCount", ...files]); // warm-up
  const g0 = process.hrtime.bigint();
  execFileSync("grep", ["-c", "opCount", ...files]);
  const gsecs = Number(process.hrtime.bigint() - g0) / 1e9;
  console.log(`(a) catch-up ${FILES} x ${mbPerFile} MB: ${mb.toFixed(0)} MB, ${lines} lines (${chars} chars) in ${secs.toFixed(2)} s`);
  console.log(
    `    follower: ${(mb / secs).toFixed(0)} MB/s, ${(lines / secs / 1e6).toFixed(2)} M lines/s, CPU ${(((cpu.user + cpu.system) / 1e6 / secs) * 100).toFixed(0)}% of a core`,
  );
  console.log(`    (first line after ${((secs - reading) * 1000).toFixed(0)} ms of discovery; reading alone ${(mb / reading).toFixed(0)} MB/s)`);
  console.log(`    grep -c opCount: ${(mb / gsecs).toFixed(0)} MB/s (${gsecs.toFixed(2)} s); follower/grep = ${(gsecs / secs).toFixed(2)}x`);
}

const WRITER = `
const fs = require("node:fs");
const [dir, files, rate, secs] = process.argv.slice(1);
const fds = Array.from({ length: +files }, (_, i) => fs.openSync(dir + "/nccl-w-" + i + ".log", "a"));
const line = (i, op) => "w" + i + ":12345:12399 [3] NCCL INFO AllReduce: opCount " + op.toString(16) + " sendbuff 0x7f1234000000 recvbuff 0x7f1234000000 count 262144 datatype 7 op 0 root 0 comm 0x55d1c0a3b2c0 [nranks=16] stream 0x55d1c0a3c000\\n";
const t0 = Date.now(); let sent = 0;
const tick = () => {
  const due = Math.min(+rate * +secs, Math.floor(((Date.now() - t0) / 1000) * +rate));
  while (sent < due) { const i = sent % fds.length; fs.writeSync(fds[i], line(i, sent)); sent++; }
  if (sent >= +rate * +secs) { process.stdout.write(String(sent)); process.exit(0); }
  setTimeout(tick, 5);
};
tick();`;

async function steady(base: string): Promise<void> {
  const dir = join(base, "steady");
  mkdirSync(dir);
  for (let i = 0; i < FILES; i++) closeSync(openSync(join(dir, `nccl-w-${i}.log`), "w"));
  let lines = 0;
  const f = new Follower({ paths: [dir] }, { onLines: (_f, batch) => (lines += batch.length) });
  await f.start();
  const rate = 20_000;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const child = spawn(process.execPath, ["-e", WRITER, dir, String(FILES), String(rate), String(seconds)], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (b: Buffer) => (out += b.toString()));
  await new Promise<void>((r) => child.on("exit", () => r()));
  const sent = Number(out);
  while (lines < sent) await sleep(10);
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  await f.stop();
  const pct = ((cpu.user + cpu.system) / 1e6 / secs) * 100;
  console.log(`(b) steady ${rate} lines/s over ${FILES} files for ${seconds} s: ${lines}/${sent} lines in ${secs.toFixed(2)} s`);
  console.log(`    follower CPU: ${pct.toFixed(2)}% of one core (user ${(cpu.user / 1e3).toFixed(0)} ms, system ${(cpu.system / 1e3).toFixed(0)} ms)`);
}

async function idle(base: string): Promise<void> {
  const dir = join(base, "idle");
  const n = 10_000;
  for (let d = 0; d < 100; d++) {
    mkdirSync(join(dir, `job${d}`), { recursive: true });
    for (let i = 0; i < n / 100; i++) {
      const fd = openSync(join(dir, `job${d}`, `nccl-${i}.log`), "w");
      writeSync(fd, LINE(`h${d}`, i));
      closeSync(fd);
    }
  }
  let lines = 0;
  const f = new Follower({ paths: [dir] }, { onLines: (_f, batch) => (lines += batch.length) });
  const t0 = process.hrtime.bigint();
  await f.start();
  const startSecs = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu0 = process.cpuUsage();
  const t1 = process.hrtime.bigint();
  await sleep(seconds * 1000);
  const secs = Number(process.hrtime.bigint() - t1) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const polling = f.stats().polling;
  await f.stop();
  console.log(`(c) idle ${n} files: start() read ${lines} head lines in ${startSecs.toFixed(2)} s (polling: ${polling})`);
  console.log(`    idle CPU: ${(((cpu.user + cpu.system) / 1e6 / secs) * 100).toFixed(2)}% of one core over ${secs.toFixed(0)} s`);
}

const base = mkdtempSync(join(tmpdir(), "rw-follow-bench-"));
try {
  await catchUp(base);
  await steady(base);
  await idle(base);
} finally {
  rmSync(base, { recursive: true, force: true });
}
