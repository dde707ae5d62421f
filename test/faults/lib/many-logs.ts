/**
 * Thousands of NCCL log files laid out as NCCL_DEBUG_FILE=<root>/%h/nccl-%p.log produces them:
 * one directory per host, one file per process. Every file is a real rank's log from the
 * simulator (init block and a few collectives), with its own host, pid and commId.
 */
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Scenario } from "../../sim/index.js";

/** One rank's log as the simulator writes it, and the `host:pid:` / commId to substitute. */
function template(): { text: string; host: string; pid: number; commId: string } {
  const sim = new Scenario({ nodes: ["tpl-node"], ranksPerNode: 2, seed: 3, comms: [], stepMs: 500 });
  const res = sim.advance(6000);
  const rank = sim.topo.rank(0);
  const lines = res.byFile.get(rank.file) ?? [];
  const commId = /commId (0x[0-9a-f]+)/.exec(lines.join("\n"))?.[1] ?? "";
  return { text: `${lines.join("\n")}\n`, host: rank.host, pid: rank.pid, commId };
}

export interface ManyLogs {
  /** Paths written so far. */
  files: string[];
  /** Lines written so far. */
  lines: number;
  /** Writes files [from, to): file k is host `node-<k/100>`, pid 20000+k. */
  write(from: number, to: number): void;
  /** Appends `n` more copies of the template's last line (a COLL line) to file k. */
  append(k: number, n: number): void;
}

export function manyLogs(root: string): ManyLogs {
  const t = template();
  const tplLines = t.text.split("\n").length - 1;
  const last = t.text.trimEnd().split("\n").pop() ?? "";
  const hostOf = (k: number): string => `node-${String(Math.floor(k / 100)).padStart(3, "0")}`;
  const textOf = (k: number, text: string): string =>
    text
      .split(`${t.host}:${t.pid}:`)
      .join(`${hostOf(k)}:${20000 + k}:`)
      .split(t.commId)
      .join(`0x${(0x1000000000 + k).toString(16)}`);
  const out: ManyLogs = {
    files: [],
    lines: 0,
    write(from, to) {
      for (let k = from; k < to; k++) {
        const dir = join(root, hostOf(k));
        mkdirSync(dir, { recursive: true });
        const p = join(dir, `nccl-${20000 + k}.log`);
        writeFileSync(p, textOf(k, t.text));
        out.files.push(p);
        out.lines += tplLines;
      }
    },
    append(k, n) {
      const line = textOf(k, last);
      appendFileSync(join(root, hostOf(k), `nccl-${20000 + k}.log`), `${line}\n`.repeat(n));
      out.lines += n;
    },
  };
  return out;
}
