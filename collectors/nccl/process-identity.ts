/**
 * Is the process that wrote a log still running? NCCL prints its pid as its own PID namespace sees
 * it. On bare metal that is this node's pid; in a container (docker --net=host keeps the node's host
 * name, a pod has its own) it is not, and <procfs>/<pid> may be another process or none.
 *
 * A process is found as the one whose innermost `NSpid` (<procfs>/<pid>/status) is the logged pid:
 *  - the node's own pid when its NSpid ends with that pid (a process of this namespace) and it has
 *    the rank's log file open, or no other process has that pid inside its namespace;
 *  - else, from one scan of <procfs> (at most every SCAN_EVERY_MS, only while a process is
 *    unresolved), the process whose innermost NSpid is the pid and that has one of the rank's log
 *    files open (same dev:ino through <procfs>/<pid>/fd, readable with CAP_SYS_PTRACE or as the
 *    same user), or for a pid of this node's host name the only such process.
 * Once found, its start time (field 22 of <procfs>/<pid>/stat) pins it: the same pid with another
 * start time is a new process, and the old one is gone.
 *
 * Answers: true (running), false (gone: it was seen running, or the pid belongs to this node and
 * no such process exists), undefined (cannot tell: another node's log on a shared file system, or
 * processes this agent cannot see).
 */
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from "node:fs";
import { join } from "node:path";
import { jobFsGate } from "../job-fs-gate.js";

const SCAN_EVERY_MS = 30_000;
/** A pid missing from the last scan is looked for again once that scan is this old. */
const RESCAN_MS = 5_000;

export interface ProcessRef {
  key: string;
  host: string;
  pid: number;
  /** Paths of its log files (their dev:ino identify it through /proc/<pid>/fd). */
  sources: ReadonlyMap<string, unknown> | ReadonlySet<string>;
}

interface Found {
  hostPid: number;
  startTime: string;
}

/** The innermost pid of NSpid in a status file's text, or undefined. */
export function innermostNsPid(status: string): number | undefined {
  const at = status.indexOf("\nNSpid:");
  if (at < 0) return undefined;
  const end = status.indexOf("\n", at + 1);
  const fields = status
    .slice(at + 7, end < 0 ? undefined : end)
    .trim()
    .split(/\s+/);
  const last = Number(fields[fields.length - 1]);
  return Number.isSafeInteger(last) && last > 0 ? last : undefined;
}

/** Field 22 (starttime) of a stat file's text: after the last ')' the fields start at 3. */
export function startTimeOf(stat: string): string | undefined {
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return f[19];
}

export class ProcessIdentity {
  private readonly found = new Map<string, Found>();
  private lastScanMs = -Infinity;
  private byInnermost: Map<number, number[]> | undefined;
  /** Processes not found in the scan of lastScanMs, and the answer given then. */
  private readonly misses = new Map<string, { scan: number; answer: false | undefined }>();

  constructor(
    private readonly procfsRoot: string,
    private readonly nodeHost: string,
    private readonly now: () => number = Date.now,
  ) {}

  alive(p: ProcessRef): boolean | undefined {
    const known = this.found.get(p.key);
    if (known !== undefined) {
      if (this.startTime(known.hostPid) === known.startTime) return true;
      this.found.delete(p.key);
      return false;
    }
    const own = p.host === this.nodeHost;
    // The pid as this namespace sees it (the bare-metal case): taken when it has the rank's log
    // open, or when no other process of the node has that pid inside its namespace (else it may be
    // the wrong one: docker --net=host, the node's pid 45 and a container's 45).
    const native = own && this.innermost(p.pid) === p.pid;
    if (native && this.hasOpen(p.pid, p) === true && this.remember(p, p.pid)) return true;
    // The scan may be up to a cache period old: a candidate that has exited since is none.
    const candidates = this.candidates(p.pid)?.filter((pid) => this.startTime(pid) !== undefined);
    if (candidates === undefined) return own ? this.ownFallback(p) : undefined;
    if (native && candidates.length <= 1 && this.remember(p, p.pid)) return true;
    const miss = this.misses.get(p.key);
    if (miss !== undefined && miss.scan === this.lastScanMs) return miss.answer;
    const hits = candidates.filter((pid) => this.hasOpen(pid, p) === true);
    // Else the only candidate of a pid of this node's host name.
    const pick = hits.length === 1 ? hits[0] : own && candidates.length === 1 ? candidates[0] : undefined;
    if (pick !== undefined && this.remember(p, pick)) return true;
    // None: gone if the pid is this node's, else unknown; several and none provably it: unknown.
    const answer = candidates.length === 0 && own ? false : undefined;
    if (this.misses.size > 4096) this.misses.clear();
    this.misses.set(p.key, { scan: this.lastScanMs, answer });
    return answer;
  }

  /** The node's pid (in <procfs>) of a process alive() has found, else undefined. */
  nodePid(key: string): number | undefined {
    return this.found.get(key)?.hostPid;
  }

  /** Forgets a process (retired). */
  forget(key: string): void {
    this.found.delete(key);
    this.misses.delete(key);
  }

  /** No NSpid anywhere (kernel < 4.1, or procfs unreadable): the plain <procfs>/<pid> check. */
  private ownFallback(p: ProcessRef): boolean {
    return existsSync(join(this.procfsRoot, String(p.pid)));
  }

  private remember(p: ProcessRef, hostPid: number): boolean {
    const startTime = this.startTime(hostPid);
    if (startTime === undefined) return false;
    this.found.set(p.key, { hostPid, startTime });
    return true;
  }

  /** The start time of node process pid; "?" when it exists but its stat cannot be read; undefined: no such process. */
  private startTime(pid: number): string | undefined {
    const dir = join(this.procfsRoot, String(pid));
    try {
      return startTimeOf(readFileSync(join(dir, "stat"), "latin1")) ?? "?";
    } catch {
      return existsSync(dir) ? "?" : undefined;
    }
  }

  private innermost(pid: number): number | undefined {
    try {
      return innermostNsPid(readFileSync(join(this.procfsRoot, String(pid), "status"), "latin1"));
    } catch {
      return undefined;
    }
  }

  /**
   * Node pids whose innermost NSpid is pid, from a scan at most SCAN_EVERY_MS old, or RESCAN_MS old
   * when the pid is not in it (a process started since); undefined: no NSpid seen at all.
   */
  private candidates(pid: number): number[] | undefined {
    const t = this.now();
    const age = t - this.lastScanMs;
    if (this.byInnermost === undefined || age >= SCAN_EVERY_MS || (age >= RESCAN_MS && !this.byInnermost.has(pid))) {
      this.lastScanMs = t;
      this.byInnermost = this.scan();
    }
    if (this.byInnermost.size === 0) return undefined;
    return this.byInnermost.get(pid) ?? [];
  }

  private scan(): Map<number, number[]> {
    const out = new Map<number, number[]>();
    let names: string[];
    try {
      names = readdirSync(this.procfsRoot);
    } catch {
      return out;
    }
    for (const name of names) {
      const c = name.charCodeAt(0);
      if (c < 48 || c > 57) continue;
      const hostPid = Number(name);
      const inner = this.innermost(hostPid);
      if (inner === undefined) continue;
      const list = out.get(inner);
      if (list) list.push(hostPid);
      else out.set(inner, [hostPid]);
    }
    return out;
  }

  /**
   * Whether node process pid has one of p's log files open: true, false, or undefined when that
   * cannot be told (its fds cannot be read, or none of the files can be found).
   */
  private hasOpen(pid: number, p: ProcessRef): boolean | undefined {
    const want = new Set<string>();
    for (const path of p.sources.keys()) {
      // A synchronous stat on a mount that does not answer would stop the event loop.
      if (jobFsGate.notAnswering(path) !== undefined) continue;
      try {
        const st = statSync(path);
        want.add(`${st.dev}:${st.ino}`);
      } catch {
        // rotated away: the other sources may still tell
      }
    }
    if (want.size === 0) return undefined;
    const dir = join(this.procfsRoot, String(pid), "fd");
    let fds: string[];
    try {
      fds = readdirSync(dir);
    } catch {
      return undefined;
    }
    for (const fd of fds) {
      try {
        // Sockets, pipes and anon inodes are not files: skip them before stat.
        const target = readlinkSync(join(dir, fd));
        if (!target.startsWith("/") || jobFsGate.notAnswering(target) !== undefined) continue;
        const st = statSync(join(dir, fd));
        if (want.has(`${st.dev}:${st.ino}`)) return true;
      } catch {
        // closed meanwhile
      }
    }
    return false;
  }
}
