/**
 * Micro-benchmark of parseLine over the real NCCL/PyTorch captures, replicated in memory to about
 * 200 MB. Prints MB/s and lines/s. Not a test: run it by hand.
 *
 *   npx tsc -p tsconfig.json --outDir /tmp/rwbench && node /tmp/rwbench/bench/parse-nccl.js [fixtureDir] [MB]
 *
 * Run from the repository root (the default fixture directory is test/fixtures/nccl). Three data
 * sets: all captures as they are, COLL lines only (the hot path), and a mix dominated by COLL
 * lines. Each is parsed 5 times; the best and the median pass are printed.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parseLine } from "../collectors/nccl/logs/parse/line.js";

const dir = process.argv[2] ?? join(process.cwd(), "test", "fixtures", "nccl");
const targetMb = Number(process.argv[3] ?? "200");

const all: string[] = [];
for (const f of readdirSync(dir).sort()) {
  if (!f.endsWith(".log")) continue;
  const text = readFileSync(join(dir, f), "utf8");
  all.push(...text.split("\n").slice(1));
}
const coll = all.filter((l) => l.includes(": opCount "));

function replicate(lines: string[], mb: number): string[] {
  const out: string[] = [];
  let bytes = 0;
  const limit = mb * 1024 * 1024;
  while (bytes < limit) {
    for (const l of lines) {
      // Vary the line a little so V8 cannot share one string for every copy.
      const s = l + (out.length % 7 === 0 ? " " : "");
      out.push(s);
      bytes += s.length + 1;
      if (bytes >= limit) break;
    }
  }
  return out;
}

/** Parses all lines REPEAT times; reports the best and the median pass (shared machines are noisy). */
const REPEAT = 5;

function run(name: string, lines: string[]): void {
  let bytes = 0;
  for (const l of lines) bytes += l.length + 1;
  let events = 0;
  const times: number[] = [];
  for (let r = 0; r < REPEAT; r++) {
    events = 0;
    const t0 = process.hrtime.bigint();
    for (const l of lines) if (parseLine(l) !== undefined) events++;
    times.push(Number(process.hrtime.bigint() - t0));
  }
  times.sort((a, b) => a - b);
  const fmt = (ns: number): string => {
    const sec = ns / 1e9;
    return `${(bytes / 1024 / 1024 / sec).toFixed(0)} MB/s, ${(lines.length / sec / 1e6).toFixed(2)} M lines/s, ${(ns / lines.length).toFixed(0)} ns/line`;
  };
  console.log(`${name.padEnd(9)} ${(bytes / 1024 / 1024).toFixed(0)} MB, ${lines.length} lines, ${events} events`);
  console.log(`          best   ${fmt(times[0] ?? 0)}`);
  console.log(`          median ${fmt(times[Math.floor(REPEAT / 2)] ?? 0)}`);
}

/**
 * Machine calibration: one charCodeAt pass over the same bytes, the floor of any character-level
 * parser in JS. Reported so numbers from different (and shared) machines can be compared.
 */
function floor(lines: string[]): void {
  let bytes = 0;
  for (const l of lines) bytes += l.length + 1;
  let best = Infinity;
  let sink = 0;
  for (let r = 0; r < REPEAT; r++) {
    const t0 = process.hrtime.bigint();
    for (const l of lines) for (let i = 0; i < l.length; i++) sink += l.charCodeAt(i);
    best = Math.min(best, Number(process.hrtime.bigint() - t0));
  }
  console.log(`floor     one charCodeAt pass: ${(bytes / 1024 / 1024 / (best / 1e9)).toFixed(0)} MB/s (${sink > 0 ? "ok" : "?"})`);
}

const mix = [...coll, ...coll, ...coll, ...coll, ...all];
const collLines = replicate(coll, targetMb);
floor(collLines);
run("captures", replicate(all, targetMb));
run("coll", collLines);
run("mix", replicate(mix, targetMb));
