/**
 * What each configured log path (--collector.nccl.path) names now, so that a path that is missing
 * or unreadable is said once (a log line) and always (ringwatch_nccl_log_path_state) instead of
 * following nothing in silence. One state per configured path, never per file: a glob is judged
 * by the directory it starts at (`/var/log/nccl/*.log` by `/var/log/nccl`), whatever it matches.
 *
 * A change is logged once: a path that is not present is a warning, one that comes back is info.
 * The paths given by `quietWhenMissing` (the default, /var/log/nccl) are info when missing from the
 * start: a node where no job has logged yet, or a developer's machine without NCCL.
 */
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { Logger } from "pino";
import type { SourceState } from "../../collector.js";
import { expandBraces, hasMagic } from "../../follow/glob.js";
import { isStalled, jobFsGate, type FsGate } from "../../job-fs-gate.js";

/** ringwatch_nccl_log_path_state's `state` values. */
export const LOG_PATH_STATES = ["present", "missing", "unreadable", "not_a_directory", "not_answering"] as const;
export type LogPathState = (typeof LOG_PATH_STATES)[number];

export interface PathLook {
  state: LogPathState;
  /** The error code or file type behind a state other than present. */
  reason?: string;
}

/** The directory a glob starts at: its segments before the first with a wildcard. */
function globRoot(abs: string): string {
  const parts = abs.split("/");
  return parts.slice(0, parts.findIndex(hasMagic)).join("/") || "/";
}

/** Where the follower starts from for one configured path: each `{a,b}` alternative, absolute; a glob's root directory. */
export function pathRoots(configured: string): { root: string; glob: boolean }[] {
  return expandBraces(configured).map((one) => {
    const abs = resolve(one);
    const glob = abs.split("/").some(hasMagic);
    return { root: glob ? globRoot(abs) : abs, glob };
  });
}

function failed(err: unknown): PathLook {
  if (isStalled(err)) return { state: "not_answering", reason: "ESTALLED" };
  const code = (err as NodeJS.ErrnoException | null)?.code ?? String(err);
  if (code === "ENOENT") return { state: "missing", reason: code };
  if (code === "ENOTDIR") return { state: "not_a_directory", reason: code };
  return { state: "unreadable", reason: code };
}

/**
 * One root: a directory the agent may list and enter is present; a glob's root must be a
 * directory; a literal path may also be a regular file (the follower follows that file).
 */
async function lookAt(root: string, glob: boolean, gate: FsGate): Promise<PathLook> {
  let st;
  try {
    st = await gate.run(root, () => stat(root));
  } catch (err) {
    return failed(err);
  }
  const isDir = st.isDirectory();
  if (!isDir && (glob || !st.isFile())) return { state: "not_a_directory", reason: st.isFile() ? "a file" : "a special file" };
  try {
    await gate.run(root, () => access(root, isDir ? constants.R_OK | constants.X_OK : constants.R_OK));
  } catch (err) {
    return failed(err);
  }
  return { state: "present" };
}

/** One configured path: present when every alternative is, else the first alternative's state that is not present. */
export async function lookAtPath(configured: string, gate: FsGate = jobFsGate): Promise<PathLook> {
  for (const { root, glob } of pathRoots(configured)) {
    // A mount that does not answer: said at once, whatever a stat of the root would say (its
    // attributes may still be cached while every read there waits).
    if (gate.notAnswering(root) !== undefined) return { state: "not_answering", reason: "ESTALLED" };
    const look = await lookAt(root, glob, gate);
    if (look.state !== "present") return look;
  }
  return { state: "present" };
}

/** A path whose state is not present: what the log line says. */
function problem(path: string, look: PathLook): string {
  const why = look.reason !== undefined ? ` (${look.reason})` : "";
  switch (look.state) {
    case "missing":
      return `nccl: log path ${path} does not exist: nothing is followed there until it appears`;
    case "unreadable":
      return `nccl: log path ${path} cannot be read by the agent's user${why}: nothing is followed there`;
    case "not_answering":
      return `nccl: log path ${path} is on a file system that does not answer (a file-system call waited over 10 s: a dead NFS server, a hung FUSE daemon): nothing is read there until it answers, and the other paths are followed meanwhile`;
    default:
      return `nccl: log path ${path} is not a directory${why}: nothing is followed there`;
  }
}

export interface LogPathsOptions {
  paths: readonly string[];
  log: Logger;
  /** Paths whose absence from the start is normal: logged at info, not warn. */
  quietWhenMissing: ReadonlySet<string>;
  /** Every look's result, by configured path. */
  onLook(states: ReadonlyMap<string, LogPathState>): void;
}

export class LogPaths {
  private paths: readonly string[];
  private looks = new Map<string, PathLook>();
  private roots = new Set<string>();
  /** The look in progress, and the paths it looks at. */
  private running: { paths: readonly string[]; done: Promise<void> } | undefined;

  constructor(private readonly o: LogPathsOptions) {
    this.paths = [...o.paths];
    this.setRoots();
  }

  /** Other configured paths (a reload): a path still configured keeps its state; a new one is judged, and logged, at the next look. */
  setPaths(paths: readonly string[]): void {
    this.paths = [...paths];
    this.looks = new Map([...this.looks].filter(([p]) => this.paths.includes(p)));
    this.setRoots();
  }

  /** Looks at every path now: one look at a time; a call meanwhile waits for the same one, or for the next where the paths changed. */
  look(): Promise<void> {
    const current = this.running;
    if (current !== undefined && current.paths === this.paths) return current.done;
    const paths = this.paths;
    const done: Promise<void> = (current?.done ?? Promise.resolve())
      .then(() => this.lookNow(paths))
      .catch((err: unknown) => this.o.log.error({ reason: err instanceof Error ? err.message : String(err) }, "nccl: looking at the log paths failed"))
      .finally(() => {
        if (this.running?.done === done) this.running = undefined;
      });
    this.running = { paths, done };
    return done;
  }

  /** Whether the follower lists abs for a configured path itself (its trouble is said by the path's state, not per read). */
  isRoot(abs: string): boolean {
    return this.roots.has(abs);
  }

  /** None looked at yet: undefined; at least one present: present; all missing: absent; else failing. */
  source(): SourceState | undefined {
    const states = [...this.looks.values()].map((l) => l.state);
    if (states.length === 0) return undefined;
    if (states.includes("present")) return "present";
    return states.every((s) => s === "missing") ? "absent" : "failing";
  }

  /** Where each path starts, and for a literal path its directory, which the follower lists while the path is not a directory. */
  private setRoots(): void {
    this.roots = new Set(this.paths.flatMap((p) => pathRoots(p).flatMap((r) => (r.glob ? [r.root] : [r.root, dirname(r.root)]))));
  }

  private async lookNow(paths: readonly string[]): Promise<void> {
    const next = new Map<string, PathLook>();
    for (const p of paths) next.set(p, await lookAtPath(p));
    if (paths !== this.paths) return; // replaced by a reload meanwhile
    for (const [p, look] of next) this.logChange(p, this.looks.get(p), look);
    this.looks = next;
    this.o.onLook(new Map([...next].map(([p, l]) => [p, l.state])));
  }

  private logChange(path: string, before: PathLook | undefined, now: PathLook): void {
    if (before?.state === now.state) return;
    const fields = { path, state: now.state, ...(now.reason !== undefined ? { reason: now.reason } : {}) };
    if (now.state === "present") {
      if (before !== undefined) this.o.log.info(fields, `nccl: log path ${path} is present now; following it`);
      return;
    }
    if (before === undefined && now.state === "missing" && this.o.quietWhenMissing.has(path)) {
      this.o.log.info(fields, `${problem(path, now)} (the default; point --collector.nccl.path at the jobs' NCCL_DEBUG_FILE directory)`);
      return;
    }
    this.o.log.warn(fields, problem(path, now));
  }
}
