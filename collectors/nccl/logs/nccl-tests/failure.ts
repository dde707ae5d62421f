/**
 * nccl-tests' own failure lines (src/common.h's NCCLCHECK and CUDACHECK, common.cu's TESTCHECK):
 *
 *   HCA-128: Test NCCL failure common.cu:1204 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '
 *    .. HCA-128 pid 757466: Test failure common.cu:915
 *   gpu5: Test CUDA failure common.cu:73 'out of memory'
 *
 * (before 2.13 the ` .. host: Test failure` rows name no pid). Where NCCL's own lines of that host
 * are in the logs they say more (their WARN, their error chain): these lines are a finding only for
 * hosts no other failure names, an nccl_error (a network_error for ncclRemoteError's words) with
 * the result and the processes.
 */
import { type Finding, uniq } from "../../verdict/report.js";
import { ncclError, networkError } from "../../verdict/finding.js";
import { ncclErrorWords } from "../../verdict/words.js";
import { resultOfWords } from "../findings/retcode.js";
import { intAfter } from "../parse/scan.js";

const NCCL_MARK = ": Test NCCL failure ";
const CUDA_MARK = ": Test CUDA failure ";
const PID_MARK = " pid ";
/** Failures kept per log. */
const MAX_FAILURES = 256;

export interface NcclTestsFailure {
  host: string;
  pids: number[];
  /** `NCCL` or `CUDA`: which check failed. */
  check: "NCCL" | "CUDA";
  /** `common.cu:1204`. */
  at: string;
  /** The words between the quotes (ncclGetErrorString's, or CUDA's). */
  words: string;
  /** `file:line` of the log. */
  where: string;
}

/** The failure a line states, or undefined. */
export function parseNcclTestsFailure(s: string, where: string): NcclTestsFailure | undefined {
  let k = s.indexOf(NCCL_MARK);
  const check = k >= 0 ? "NCCL" : "CUDA";
  if (k < 0) k = s.indexOf(CUDA_MARK);
  if (k <= 0) return undefined;
  const hs = s.lastIndexOf(" ", k - 1) + 1;
  // The host, after any launcher's tag glued to it (`[1,0]<stdout>:gpu5`).
  const token = s.slice(hs, k);
  const host = token.slice(Math.max(token.lastIndexOf(":"), token.lastIndexOf(">"), token.lastIndexOf("]")) + 1);
  if (host === "" || host.includes("\t")) return undefined;
  const rest = k + NCCL_MARK.length;
  const sp = s.indexOf(" ", rest);
  const at = s.slice(rest, sp < 0 ? s.length : sp);
  const q = s.indexOf("'", rest);
  if (q < 0) return undefined;
  const qe = s.indexOf("'", q + 1);
  // A line cut before the closing quote keeps what it has.
  const words = s.slice(q + 1, qe < 0 ? s.length : qe).trim();
  return { host, pids: [], check, at, words, where };
}

/** The pid of a ` .. host pid N: Test failure` row, with its host; undefined when it is none. */
export function parseNcclTestsPid(s: string): { host: string; pid: number } | undefined {
  const t = s.indexOf(": Test failure ");
  if (t < 0) return undefined;
  const dots = s.indexOf(".. ");
  if (dots < 0 || dots > t) return undefined;
  const p = s.indexOf(PID_MARK, dots);
  if (p < 0 || p > t) return undefined;
  const pid = Number(s.slice(p + PID_MARK.length, t));
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  return { host: s.slice(dots + 3, p), pid };
}

/** A row of nccl-tests' `Using devices` table: a rank, the process that runs it and its host. */
export interface NcclTestsDevice {
  rank: number;
  pid: number;
  host: string;
}

/** Rows kept per log: the ranks of a large test. */
const MAX_DEVICES = 16_384;

/**
 * `#  Rank  0 Group  0 Pid   8756 on     Meowth device  0 [0x01] NVIDIA GeForce GTX 1050 Ti`
 * (2.13+; before, no `Group`), the `#` sometimes lost in a paste, a launcher's tag before it: the
 * rank, pid and host.
 */
export function parseNcclTestsDevice(s: string): NcclTestsDevice | undefined {
  // After blanks and `#`, or a launcher's tag (`[1,0]<stdout>:#  Rank  0 ...`).
  const i = s.indexOf("Rank ");
  if (i < 0 || s.indexOf(" device ", i) < 0) return undefined;
  for (let b = i - 1; b >= 0 && s.charCodeAt(b) !== 58 /* : */ && s.charCodeAt(b) !== 62; b--)
    if (s.charCodeAt(b) !== 32 && s.charCodeAt(b) !== 35 /* # */) return undefined;
  const words = s
    .slice(i)
    .split(" ")
    .filter((w) => w !== "");
  const at = (k: number): string => words[k] ?? "";
  if (at(0) !== "Rank") return undefined;
  const group = at(2) === "Group" ? 2 : 0;
  if (at(2 + group) !== "Pid" || at(4 + group) !== "on" || at(6 + group) !== "device") return undefined;
  const rank = Number(at(1));
  const pid = Number(at(3 + group));
  const host = at(5 + group);
  if (!Number.isSafeInteger(rank) || rank < 0 || !Number.isSafeInteger(pid) || pid <= 0 || host === "") return undefined;
  return { rank, pid, host };
}

/**
 * The one host of every rank nccl-tests listed, where its table lists ranks 0 to N-1 (N at least 2)
 * and all on that host; undefined otherwise. The table lists every rank of the test, so such a
 * test runs on one host.
 */
export function ncclTestsOneHost(devices: readonly NcclTestsDevice[], perProcess?: number): string | undefined {
  const ranks = new Set(devices.map((d) => d.rank));
  const hosts = new Set(devices.map((d) => d.host));
  if (ranks.size < 2 || hosts.size !== 1) return undefined;
  // A table cut short: fewer rows for a process than the GPUs the header gives each.
  if (perProcess !== undefined) {
    const rows = new Map<number, number>();
    for (const d of devices) rows.set(d.pid, (rows.get(d.pid) ?? 0) + 1);
    for (const n of rows.values()) if (n < perProcess) return undefined;
  }
  for (let r = 0; r < ranks.size; r++) if (!ranks.has(r)) return undefined;
  return [...hosts][0];
}

/** The failures of one log, each with the pids its host's rows named after it (bounded). */
export class NcclTestsReader {
  readonly failures: NcclTestsFailure[] = [];
  /** The `Using devices` rows: every rank of the test, its process and host. */
  readonly devices: NcclTestsDevice[] = [];
  /** GPUs each process drives, from the header (`# nThread 1 nGpus 8 ...`: threads x GPUs), where the log has it. */
  perProcess: number | undefined;

  constructor(private readonly source: string) {}

  line(text: string, lineNo: number): void {
    if (text.indexOf(" nGpus ") >= 0) {
      const t = intAfter(text, " nThread ", 0, text.length);
      const g = intAfter(text, " nGpus ", 0, text.length);
      if (t !== undefined && g !== undefined) this.perProcess = t * g;
      return;
    }
    if (text.indexOf("Rank ") >= 0) {
      const d = parseNcclTestsDevice(text);
      if (d !== undefined) {
        if (this.devices.length < MAX_DEVICES) this.devices.push(d);
        return;
      }
    }
    if (text.indexOf("Test ") < 0 || text.indexOf(" failure ") < 0) return;
    const f = parseNcclTestsFailure(text, `${this.source}:${lineNo}`);
    if (f !== undefined) {
      if (this.failures.length < MAX_FAILURES) this.failures.push(f);
      return;
    }
    const p = parseNcclTestsPid(text);
    if (p === undefined) return;
    for (let i = this.failures.length - 1; i >= 0; i--) {
      const g = this.failures[i];
      if (g?.host !== p.host) continue;
      if (!g.pids.includes(p.pid)) g.pids.push(p.pid);
      return;
    }
  }
}

/**
 * One finding per result the failures of hosts no other finding names carry: nccl-tests' lines
 * alone say which call failed how, on which hosts.
 */
export function ncclTestsFindings(failures: readonly NcclTestsFailure[], hostsNamed: ReadonlySet<string>): Finding[] {
  const by = new Map<string, NcclTestsFailure[]>();
  for (const f of failures) {
    if (hostsNamed.has(f.host)) continue;
    const key = `${f.check}|${f.words}`;
    const list = by.get(key);
    if (list === undefined) by.set(key, [f]);
    else list.push(f);
  }
  const out: Finding[] = [];
  for (const list of by.values()) {
    const first = list[0] as NcclTestsFailure;
    const remote = first.check === "NCCL" && resultOfWords(first.words) === 6;
    const processes = uniq(list.flatMap((f) => (f.pids.length > 0 ? f.pids.map((p) => `${f.host}:${p}`) : [f.host])));
    const build = remote ? networkError : ncclError;
    out.push(
      build({
        summary: ncclErrorWords.ncclTests({ check: first.check, words: first.words, at: first.at, processes }),
        ranks: [],
        processes,
        comm_id: null,
        evidence: list.map((f) => f.where).slice(0, 5),
        ...(list.length > 1 ? { count: list.length } : {}),
      }),
    );
  }
  return out;
}
