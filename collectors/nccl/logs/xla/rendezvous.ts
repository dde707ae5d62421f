/**
 * XLA's rendezvous that waits for its participants (JAX, PyTorch/XLA): `E external/xla/xla/service/
 * rendezvous.cc:38] This thread has been waiting for `initialize clique for rank 6;
 * clique=devices=[0,1,...,15]; stream=0; run_id=724296073` for 10 seconds and may be stuck. Expected
 * 8 threads to join the rendezvous, but not all of them arrived on time.` (nccl-pasted 738). XLA warns
 * after 10 s, then at growing intervals, until the participants come or its termination timeout
 * ends the process. A participant that never came is behind or gone; where the rendezvous sets up a
 * clique (XLA's NCCL communicator), the waiting rank's init holds. A warning per log set: the ranks
 * the waits name, the longest wait. Cut at fixed words; bounded.
 */
import { find, readInt, pos } from "../parse/scan.js";
import { MarkedLines, knownRanks } from "../marked-lines.js";
import { hangSuspected } from "../../verdict/finding.js";
import type { Finding } from "../../verdict/report.js";
import { hangSuspectedWords } from "../../verdict/words.js";

const MARK = "This thread has been waiting for ";
/** A line without this is no rendezvous wait (evidence.ts gates the readers on it). */
export const RENDEZVOUS_MARKS: readonly string[] = [MARK];
const STUCK = " and may be stuck";
const MAX_WAITS = 1024;

export interface RendezvousWait {
  /** The rendezvous' name up to its first `;` or ` for rank` (`initialize clique`), where the line names it. */
  name?: string;
  /** The rank the name gives (`... for rank 6;`). */
  rank?: number;
  seconds: number;
  /** The threads it expects (`Expected 8 threads to join`). */
  expected?: number;
  where: string;
}

/** A rendezvous wait of one line; undefined for any other line. */
export function rendezvousWait(s: string, where: string): RendezvousWait | undefined {
  const k = s.indexOf(MARK);
  if (k < 0) return undefined;
  const stuck = s.indexOf(STUCK, k);
  if (stuck < 0) return undefined;
  const out: RendezvousWait = { seconds: 0, where };
  let i = k + MARK.length;
  if (s.charCodeAt(i) === 96 /* ` */) {
    const close = s.indexOf("`", i + 1);
    if (close < 0 || close > stuck) return undefined;
    const name = s.slice(i + 1, close);
    const cut = [name.indexOf(" for rank "), name.indexOf(";")].filter((x) => x >= 0);
    out.name = name.slice(0, cut.length > 0 ? Math.min(...cut) : Math.min(name.length, 80)).trim();
    const r = name.indexOf(" for rank ");
    const rank = r >= 0 ? readInt(name, r + 10, name.length) : undefined;
    if (rank !== undefined) out.rank = rank;
    i = close + 1;
    if (!s.startsWith(" for ", i)) return undefined;
    i += 5;
  }
  const seconds = readInt(s, i, stuck);
  if (seconds === undefined || !s.startsWith(" seconds", pos)) return undefined;
  out.seconds = seconds;
  const e = find(s, "Expected ", stuck, s.length);
  const expected = e >= 0 ? readInt(s, e + 9, s.length) : undefined;
  if (expected !== undefined && s.startsWith(" threads", pos)) out.expected = expected;
  return out;
}

/** Each rendezvous wait, in a log named `source`. */
export function rendezvousReader(source: string): MarkedLines<RendezvousWait> {
  return new MarkedLines(source, RENDEZVOUS_MARKS, rendezvousWait, MAX_WAITS);
}

/** One hang_suspected warning for all of them: the rendezvous, the ranks they name, the longest wait. */
export function rendezvousFindings(all: readonly RendezvousWait[]): Finding[] {
  if (all.length === 0) return [];
  const ranks = knownRanks(all);
  return [
    hangSuspected({
      severity: "warning",
      summary: hangSuspectedWords.xlaRendezvous({
        names: [...new Set(all.map((w) => w.name).filter((n): n is string => n !== undefined))],
        ranks,
        seconds: Math.max(...all.map((w) => w.seconds)),
        expected: all.find((w) => w.expected !== undefined)?.expected,
      }),
      ranks,
      processes: [],
      comm_id: null,
      evidence: all.slice(0, 5).map((w) => w.where),
    }),
  ];
}
