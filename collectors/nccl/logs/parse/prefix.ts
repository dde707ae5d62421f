/**
 * Line prefixes: what launchers and log collectors put in front of a log line (OpenMPI
 * `[1,0]<stdout>:`, PyTorch `[rank7]:`, torchrun `[default3]:`, Ray `(RayTrainWorker pid=.., ip=..) `,
 * a torchrun template's `[trainer0|0]:`, pdsh `host: `, srun `12: `, `[155] ` tags, a runner's `name [stderr] `, markdown `> `, log-viewer
 * `│` and `|`, ANSI colour codes), a log collector's wall clock (`2025-02-18 12:54 `, Docker and
 * Kubernetes RFC 3339 `2025-05-16T16:39:55.216-07:00 `) and NCCL's own `[YYYY-MM-DD HH:MM:SS] `
 * timestamp (2.26+; NCCL_DEBUG_TIMESTAMP_FORMAT may add sub-seconds). Only the text before the
 * host name is decoded, and only when there is some. OpenMPI's `--timestamp-output` puts C's ctime
 * before its tag (`Fri Aug 11 12:31:45 2023[1,0]<stdout>:`), and so does horovodrun's Gloo launcher
 * before its own (`Thu Aug 29 16:41:02 2019[3]<stderr>:`).
 */
import type { LauncherPrefix } from "./types.js";
import { find, isDigit, isSpace, pos, readInt, skipSpaces } from "./scan.js";

const MAX_HOST = 255;

/** A rank, job, local rank or pid: digits only (`[rank-1]:`, `[1,-2]` and `pid=-5` are not prefixes). */
function natAt(s: string, i: number, end: number): number | undefined {
  return isDigit(s.charCodeAt(i)) ? readInt(s, i, end) : undefined;
}

/** Result of decoding the prefix region of a line. */
export interface PrefixInfo {
  ts?: string;
  launcher?: LauncherPrefix;
  /** Index where decoding stopped. */
  end: number;
}

/** How much a prefix kind says about the global rank (higher wins when several are present). */
const RANK_WEIGHT: Record<LauncherPrefix["kind"], number> = { rank: 4, mpi: 3, tag: 2, srun: 2, torchrun: 1, pdsh: 0, ray: 0 };

/**
 * Merges one decoded prefix into p. Several prefixes can stack (`(RayTrainWorker pid=1) [rank1]:`,
 * `[80746] [rank0]:`): fields are united, and kind/rank come from the most rank-specific one.
 */
function launcherRank(p: PrefixInfo, l: LauncherPrefix): void {
  const old = p.launcher;
  if (old === undefined) {
    p.launcher = l;
    return;
  }
  const winner = RANK_WEIGHT[l.kind] > RANK_WEIGHT[old.kind] ? l : old;
  const merged: LauncherPrefix = { ...old, ...l, kind: winner.kind };
  if (winner.rank !== undefined) merged.rank = winner.rank;
  else delete merged.rank;
  p.launcher = merged;
}

/** `[...]` starting at i: NCCL timestamp, [rankN]:, [defaultN]:, [job,rank]<stdout>:, [N], ANSI remnant. */
function bracket(s: string, i: number, end: number, p: PrefixInfo): number {
  // "[0m" / "[0;32m": an ANSI colour code whose ESC byte was lost
  let a = i + 1;
  while (a < end && a - i < 12 && (isDigit(s.charCodeAt(a)) || s.charCodeAt(a) === 59)) a++;
  if (a > i + 1 && a < end && s.charCodeAt(a) === 109 /* m */) return a + 1;
  const close = s.indexOf("]", i + 1);
  if (close < 0 || close >= end || close - i > 64) return -1;
  const c1 = s.charCodeAt(i + 1);
  if (isDigit(c1)) {
    const v = readInt(s, i + 1, close);
    if (v !== undefined && pos === close) {
      // horovodrun's Gloo launcher tags as mpirun does, without the job: `[3]<stderr>:` (its timestamp, C's ctime, before it).
      const k = close + 1;
      if (k + 9 <= end && (s.startsWith("<stdout>:", k) || s.startsWith("<stderr>:", k))) {
        launcherRank(p, { kind: "mpi", rank: v, stream: s.charCodeAt(k + 4) === 111 ? "stdout" : "stderr" });
        return k + 9;
      }
      if (close + 1 < end && s.charCodeAt(close + 1) === 58) return (launcherRank(p, { kind: "tag", rank: v }), close + 2);
      launcherRank(p, { kind: "tag", rank: v });
      return close + 1;
    }
    if (v !== undefined && s.charCodeAt(pos) === 44) {
      const job = v;
      const r = natAt(s, pos + 1, close);
      if (r !== undefined && pos === close) {
        let k = close + 1;
        const l: LauncherPrefix = { kind: "mpi", job, rank: r };
        if (k + 8 <= end && (s.startsWith("<stdout>", k) || s.startsWith("<stderr>", k))) {
          l.stream = s.charCodeAt(k + 4) === 111 ? "stdout" : "stderr";
          k += 8;
        }
        if (k < end && s.charCodeAt(k) === 58) k++;
        launcherRank(p, l);
        return k;
      }
    }
    // Timestamp: [2026-03-18 11:13:09] (any NCCL_DEBUG_TIMESTAMP_FORMAT that starts with a digit).
    p.ts = s.slice(i + 1, close);
    return close + 1;
  }
  if (s.startsWith("rank", i + 1) && isDigit(s.charCodeAt(i + 5))) {
    const v = readInt(s, i + 5, close);
    if (v !== undefined && pos === close) {
      launcherRank(p, { kind: "rank", rank: v });
      return close + 1 < end && s.charCodeAt(close + 1) === 58 ? close + 2 : close + 1;
    }
  }
  let k = i + 1;
  while (k < close && isAlpha2(s.charCodeAt(k))) k++;
  if (k > i + 1 && k < close && close + 1 < end && s.charCodeAt(close + 1) === 58) {
    const v = natAt(s, k, close);
    if (v !== undefined && pos === close) {
      launcherRank(p, { kind: "torchrun", localRank: v });
      return close + 2;
    }
    // A template of its own (`--log-line-prefix-template`, `[trainer0|0]:`, nccl-pasted 429): which number is
    // the rank the template alone says, so none is taken.
    if (v !== undefined && s.charCodeAt(pos) === 124 /* | */ && natAt(s, pos + 1, close) !== undefined && pos === close) {
      launcherRank(p, { kind: "torchrun" });
      return close + 2;
    }
  }
  return -1;
}

function isAlpha2(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
}

/** `(RayTrainWorker pid=615, ip=10.72.7.6) ` */
function rayPrefix(s: string, i: number, end: number, p: PrefixInfo): number {
  const close = s.indexOf(")", i);
  if (close < 0 || close >= end || close - i > 200) return -1;
  const pk = s.indexOf("pid=", i);
  if (pk < 0 || pk > close) return -1;
  const l: LauncherPrefix = { kind: "ray" };
  const pid = natAt(s, pk + 4, close);
  if (pid !== undefined) l.pid = pid;
  if (pk > i + 1) l.actor = s.slice(i + 1, pk).trim();
  // An actor that names its rank: `(MegatronPolicyWorker[rank=107] pid=3340050, ip=...)` (NeMo RL).
  const rk = s.lastIndexOf("[rank=", pk);
  if (rk >= i) {
    const r = natAt(s, rk + 6, pk);
    if (r !== undefined && s.charCodeAt(pos) === 93 /* ] */) l.rank = r;
  } else {
    // vLLM's multiproc worker: `(VllmWorker rank=1 pid=2699412) `, the word before pid=.
    const word = Math.max(s.lastIndexOf(" ", pk - 2) + 1, i + 1);
    if (s.startsWith("rank=", word)) {
      const r = natAt(s, word + 5, pk - 1);
      if (r !== undefined && pos === pk - 1) l.rank = r;
    }
  }
  const ik = s.indexOf("ip=", pk);
  if (ik >= 0 && ik < close) l.ip = s.slice(ik + 3, close).trim();
  launcherRank(p, l);
  return close + 1;
}

/**
 * Decodes launcher prefixes and the NCCL timestamp in [start, end); never looks at or past end
 * (the returned end is at most `end`). Never throws.
 * `strict`: accept a pdsh/srun `word: ` prefix only when a `[`, a `(` or `Last error:` follows it
 * (used on lines without a NCCL header, where `socketProgressOpt: ...` or `torch.distributed.X: ...` are text).
 */
export function parsePrefix(s: string, start: number, end: number, strict = false): PrefixInfo {
  const p: PrefixInfo = { end: start };
  let i = start;
  for (let guard = 0; guard < 8 && i < end; guard++) {
    i = skipSpaces(s, i, end);
    if (i >= end) break;
    const c = s.charCodeAt(i);
    let next = -1;
    if (c === 27)
      next = find(s, "m", i, end) + 1 || -1; // ESC[...m
    else if (c === 0x2502 || c === 0x2503 || c === 62 /* > */ || c === 124 /* | */) next = i + 1;
    else if (c === 91 /* [ */) next = bracket(s, i, end, p);
    else if (c === 40 /* ( */) next = rayPrefix(s, i, end, p);
    else if (isDigit(c) && (next = wallClock(s, i, end)) > i) {
      // a collector's date and time
    } else if (c >= 65 && c <= 90 && (next = ctimeClock(s, i, end)) > i) {
      // OpenMPI --timestamp-output's ctime
    } else next = wordColon(s, i, end, p, strict);
    if (next <= i) break;
    i = next;
  }
  p.end = i;
  return p;
}

/** `YYYY-MM-DD` at i: the index after it, else -1. */
function date(s: string, i: number, end: number): number {
  if (i + 10 > end || s.charCodeAt(i + 4) !== 45 || s.charCodeAt(i + 7) !== 45) return -1;
  for (const k of [0, 1, 2, 3, 5, 6, 8, 9]) if (!isDigit(s.charCodeAt(i + k))) return -1;
  return i + 10;
}

/**
 * A log collector's timestamp before the line: `2025-02-18 12:54`, `2025-02-18 12:54:22,080`,
 * `2025-05-16T16:39:55.216-07:00`, `2024-01-02T03:04:05.123456789Z`, followed by a blank. Returns
 * the index after it, or -1 (a date alone, or digits that are not a date, are not a prefix).
 */
function wallClock(s: string, i: number, end: number): number {
  let k = date(s, i, end);
  if (k < 0 || k + 6 > end) return -1;
  const sep = s.charCodeAt(k);
  if (sep !== 84 /* T */ && sep !== 32) return -1;
  k++;
  if (!isDigit(s.charCodeAt(k)) || !isDigit(s.charCodeAt(k + 1)) || s.charCodeAt(k + 2) !== 58) return -1;
  // hh:mm[:ss][.,fraction][Z|+hh:mm|-hh:mm]: digits and these signs up to the blank
  let e = k + 3;
  while (e < end && e - k < 40) {
    const c = s.charCodeAt(e);
    if (isDigit(c) || c === 58 || c === 46 || c === 44 || c === 43 || c === 45 || c === 90) e++;
    else break;
  }
  return e < end && isSpace(s.charCodeAt(e)) ? e + 1 : -1;
}

/**
 * C's ctime at i, as OpenMPI's `--timestamp-output` puts it before its tag: `Fri Aug 11 12:31:45 2023`
 * (`Www Mmm dd hh:mm:ss yyyy`, the day padded with a blank). Returns the index after the year, else -1.
 */
function ctimeClock(s: string, i: number, end: number): number {
  if (i + 24 > end || s.charCodeAt(i + 3) !== 32 || s.charCodeAt(i + 7) !== 32 || s.charCodeAt(i + 10) !== 32) return -1;
  for (const k of [1, 2, 4, 5, 6]) if (!isAlpha2(s.charCodeAt(i + k))) return -1;
  const day = s.charCodeAt(i + 8);
  if ((day !== 32 && !isDigit(day)) || !isDigit(s.charCodeAt(i + 9))) return -1;
  if (s.charCodeAt(i + 13) !== 58 || s.charCodeAt(i + 16) !== 58 || s.charCodeAt(i + 19) !== 32) return -1;
  for (const k of [11, 12, 14, 15, 17, 18, 20, 21, 22, 23]) if (!isDigit(s.charCodeAt(i + k))) return -1;
  return i + 24;
}

/** pdsh `host: `, srun `12: `, or a runner's `name [stderr] ` / `name [stdout] ` */
function wordColon(s: string, i: number, end: number, p: PrefixInfo, strict: boolean): number {
  let k = i;
  while (k < end && k - i < MAX_HOST && hostChar(s.charCodeAt(k))) k++;
  if (k > i && (s.startsWith(" [stderr] ", k) || s.startsWith(" [stdout] ", k))) {
    launcherRank(p, { kind: "pdsh", host: s.slice(i, k), stream: s.charCodeAt(k + 5) === 101 ? "stderr" : "stdout" });
    return k + 10;
  }
  if (k === i || k + 1 >= end || s.charCodeAt(k) !== 58 || !isSpace(s.charCodeAt(k + 1))) return -1;
  if (strict) {
    // A launcher's tag before a bracket, or before PyTorch's `Last error:` row (pdsh `node2: Last error:`).
    const t = skipSpaces(s, k + 1, end);
    const c = s.charCodeAt(t);
    if (c !== 91 && c !== 40 && !(s.startsWith("Last error:", t) && isHostWord(s.slice(i, k)))) return -1;
  }
  const v = natAt(s, i, k);
  if (v !== undefined && pos === k) launcherRank(p, { kind: "srun", rank: v });
  else launcherRank(p, { kind: "pdsh", host: s.slice(i, k) });
  return k + 2;
}

/** A pdsh host, not an exception's or a logger's name before `Last error:` (`ncclSystemError:`, `RuntimeError:`, `WARNING:`, `torch.x:`). */
function isHostWord(w: string): boolean {
  return w.indexOf(".") < 0 && !w.endsWith("Error") && !w.endsWith("Exception") && w !== "WARNING" && w !== "ERROR" && w !== "INFO";
}

/** [A-Za-z0-9._-] */
function hostChar(c: number): boolean {
  const l = c | 32;
  return (l >= 97 && l <= 122) || (c >= 48 && c <= 57) || c === 45 || c === 95 || c === 46;
}
