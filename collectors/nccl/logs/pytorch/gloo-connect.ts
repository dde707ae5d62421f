/**
 * Gloo's failed connection setup at process-group init (`init_process_group(backend="gloo")`, or the
 * Gloo group PyTorch makes beside NCCL's): ProcessGroupGloo logs, and raises, `Gloo connectFullMesh
 * failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error` or `... pair.h:301]
 * Connect timeout [none]` (nccl-pasted 559, 560); or Gloo's pair raises its failed connect itself,
 * `[.../gloo/transport/tcp/pair.cc:799] connect [172.31.71.170]:13195: Connection refused` (a
 * RuntimeError of new_group, nccl-pasted 694; PyTorch 1.0's gloo::IoException, 698). A rank could
 * not reach a peer over TCP: a network error of the ranks that logged it. Each rank's first line is kept (first-per-rank.ts); cut at
 * fixed words, no regular expression.
 */
import { knownRanks } from "../marked-lines.js";
import { parsePrefix } from "../parse/prefix.js";
import { FirstPerRank } from "./first-per-rank.js";
import { networkError } from "../../verdict/finding.js";
import type { Finding } from "../../verdict/report.js";
import { networkErrorWords } from "../../verdict/words.js";

const MARK = "Gloo connectFullMesh failed with ";
/** Gloo's pair at its failed connect: `pair.cc:799] connect [host]:port: <the system's words>`. */
const PAIR_CONNECT = "] connect [";
const PAIR_SOURCE = "/pair.cc:";
/** A line without these is no connect failure (evidence.ts gates the readers on them). */
export const GLOO_CONNECT_MARKS: readonly string[] = [MARK, PAIR_CONNECT];
const PAIR_TRANSPORTS = ["/transport/tcp", "/transport/uv"];

export interface GlooConnectFailure {
  /** The launcher prefix's rank (`[rank4]:`), where the line has one. */
  rank?: number;
  /** Gloo's words after its source location: `no error`, `Connect timeout [none]`. */
  words: string;
  where: string;
}

/** `... Gloo connectFullMesh failed with [.../pair.cc:144] no error`, or `[.../pair.cc:799] connect [host]:port: ...` → the failure; undefined otherwise. */
export function glooConnectFailure(s: string, where: string): GlooConnectFailure | undefined {
  const k = s.indexOf(MARK);
  if (k < 0) return glooPairConnect(s, where);
  let i = k + MARK.length;
  if (s.charCodeAt(i) === 91 /* [ */) {
    const close = s.indexOf("] ", i);
    if (close > i && close - i < 200) i = close + 2;
  }
  const out: GlooConnectFailure = { words: s.slice(i).trim().slice(0, 120), where };
  const rank = parsePrefix(s, 0, k, true).launcher?.rank;
  if (rank !== undefined) out.rank = rank;
  return out;
}

/** `[.../gloo/transport/tcp/pair.cc:799] connect [172.31.71.170]:13195: Connection refused` → the failure. */
function glooPairConnect(s: string, where: string): GlooConnectFailure | undefined {
  const c = s.indexOf(PAIR_CONNECT);
  if (c < 0) return undefined;
  // `/transport/tcp/pair.cc:799] connect [` (also the uv transport's `/transport/uv/pair.cc:333]`).
  const src = s.lastIndexOf(PAIR_SOURCE, c);
  if (src < 0 || c - src > PAIR_SOURCE.length + 6 || !PAIR_TRANSPORTS.some((t) => s.startsWith(t, src - t.length))) return undefined;
  const out: GlooConnectFailure = {
    words: s
      .slice(c + 2)
      .trim()
      .slice(0, 120),
    where,
  };
  const rank = parsePrefix(s, 0, s.length, true).launcher?.rank;
  if (rank !== undefined) out.rank = rank;
  return out;
}

/** Each rank's first connect failure, in a log named `source`. */
export function glooConnectReader(source: string): FirstPerRank<GlooConnectFailure> {
  return new FirstPerRank(source, GLOO_CONNECT_MARKS, glooConnectFailure);
}

/** One critical network_error for all of them: the ranks that could not connect, and Gloo's words. */
export function glooConnectFindings(all: readonly GlooConnectFailure[]): Finding[] {
  if (all.length === 0) return [];
  const ranks = knownRanks(all);
  return [
    networkError({
      summary: networkErrorWords.glooConnect({ ranks, words: [...new Set(all.map((f) => f.words))] }),
      ranks,
      processes: [],
      comm_id: null,
      evidence: all.slice(0, 5).map((f) => f.where),
    }),
  ];
}
