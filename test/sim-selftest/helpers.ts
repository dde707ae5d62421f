/** Shared helpers of the simulator self-tests: real fixture lines and parsing of simulated COLL lines. */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Scenario } from "../sim/scenario.js";
import type { SimLine } from "../sim/format.js";
import { Topology } from "../sim/topology.js";

const FIXTURES = resolve(import.meta.dirname, "../fixtures/nccl");

/** The captured lines of a fixture (its `# source:` line dropped). */
export function fixtureLines(name: string): string[] {
  return readFileSync(resolve(FIXTURES, name), "utf8").split("\n").slice(1);
}

/** First line of a fixture matching `re` (throws when none, so a renamed fixture fails loudly). */
export function fixtureLine(name: string, re: RegExp): string {
  const l = fixtureLines(name).find((x) => re.test(x));
  if (l === undefined) throw new Error(`no line of ${name} matches ${re}`);
  return l;
}

/** First simulated line matching `re` (optionally of one rank). */
export function simLine(lines: SimLine[], re: RegExp, rank?: number): string {
  const l = lines.find((x) => re.test(x.text) && (rank === undefined || x.rank === rank));
  if (l === undefined) throw new Error(`no simulated line matches ${re}`);
  return l.text;
}

/** The text after ` NCCL WARN ` (or the whole line). */
export function warnMessage(line: string): string {
  const i = line.indexOf(" NCCL WARN ");
  return i < 0 ? line : line.slice(i + 11);
}

export interface ParsedColl {
  rank: number;
  t: number;
  op: string;
  opCount: number;
  comm: string;
  ptr: string;
  nranks: number;
}

const COLL =
  /NCCL INFO (\w+): opCount ([0-9a-f]+) sendbuff \S+ recvbuff \S+ count \d+ datatype \d+ op \d+ root \d+ comm (0x[0-9a-f]+) \[nranks=(\d+)\] stream 0x[0-9a-f]+$/;

/** COLL lines parsed from their text; the comm is found from the rank's own pointer. */
export function parseColls(sim: Scenario, lines: SimLine[]): ParsedColl[] {
  const out: ParsedColl[] = [];
  for (const l of lines) {
    const m = COLL.exec(l.text);
    if (m === null) continue;
    const ptr = m[3] ?? "";
    const comm = sim.topo.commsOf(l.rank).find((c) => Topology.ptrOf(c, l.rank) === ptr);
    if (comm === undefined) throw new Error(`rank ${l.rank} wrote a COLL line for a pointer it does not own: ${l.text}`);
    out.push({ rank: l.rank, t: l.t, op: m[1] ?? "", opCount: parseInt(m[2] ?? "", 16), comm: comm.name, ptr, nranks: Number(m[4]) });
  }
  return out;
}

/** COLL line count per comm name for one rank. */
export function countsOf(colls: ParsedColl[], rank: number): Map<string, number> {
  const m = new Map<string, number>();
  for (const c of colls) if (c.rank === rank) m.set(c.comm, (m.get(c.comm) ?? 0) + 1);
  return m;
}
