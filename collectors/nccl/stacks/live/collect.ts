/**
 * One process's Python stacks, live, from the source the flag chose: its PyTorch worker server
 * (worker-socket.ts) or `py-spy dump --pid P --nonblocking` started through collectors/exec.ts.
 * The text is read by the same reader as `ringwatch analyze` (stacks/reader.ts). Never throws.
 */
import type { Exec } from "../../../exec.js";
import { StackReader } from "../reader.js";
import type { StackDump } from "../types.js";
import { askWorkerServer, socketThere, type WorkerAnswer } from "./worker-socket.js";

/** --collector.nccl.stacks.source. */
export type StackSource = "off" | "worker" | "py-spy" | "auto";

/** How one collection ended, as ringwatch_nccl_stack_collections_total's `result` says it. */
export type CollectResult = "ok" | "no_stacks" | "absent" | "untrusted" | "refused" | "timeout" | "too_large" | "error" | "rate_limited";

export interface Collected {
  source: "worker" | "py-spy";
  result: CollectResult;
  dump?: StackDump;
  problem?: string;
}

/** A process to take the stacks of. */
export interface StackTarget {
  /** Its pid in <path.procfs> (py-spy's --pid). */
  nodePid: number;
  /** Its pid as the job sees it (the logs' pid; `{pid}` of the socket pattern). */
  pid: number;
  /** Its global rank where the logs tell it (`{rank}` of the socket pattern). */
  globalRank: number | undefined;
  /** The user it runs as (whose worker socket is believed). */
  uid: number | undefined;
}

export interface CollectOptions {
  source: Exclude<StackSource, "off">;
  /** The worker server's socket path, with `{rank}` and `{pid}`; empty: none. */
  workerSocket: string;
  timeoutMs: number;
  exec: Exec;
}

/** What one answer may be: faulthandler prints at most 100 frames a thread; py-spy about as much. */
export const MAX_STACK_BYTES = 4 * 1024 * 1024;

/** The pattern filled in for a process; undefined when it names a rank the logs do not give. */
export function socketPath(pattern: string, t: Pick<StackTarget, "pid" | "globalRank">): string | undefined {
  if (pattern === "") return undefined;
  if (pattern.includes("{rank}") && t.globalRank === undefined) return undefined;
  return pattern.replaceAll("{rank}", String(t.globalRank ?? "")).replaceAll("{pid}", String(t.pid));
}

/** The dump in a tool's text (the first with a frame), named `source` in evidence. */
export function dumpOf(text: string, source: string, pid: number): StackDump | undefined {
  const reader = new StackReader(source);
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) reader.line(lines[i] as string, i + 1);
  const dump = reader.end()[0];
  if (dump !== undefined && dump.pid === undefined) dump.pid = pid;
  return dump;
}

async function fromWorker(path: string, t: StackTarget, o: CollectOptions): Promise<Collected> {
  const a: WorkerAnswer = await askWorkerServer(path, { timeoutMs: o.timeoutMs, maxBytes: MAX_STACK_BYTES, ownerUid: t.uid });
  if (a.result !== "ok") return { source: "worker", result: a.result, problem: a.problem };
  const dump = dumpOf(a.text, `worker server ${path}`, t.pid);
  return dump !== undefined ? { source: "worker", result: "ok", dump } : { source: "worker", result: "no_stacks", problem: `${path}: no thread in the answer` };
}

async function fromPyspy(t: StackTarget, o: CollectOptions): Promise<Collected> {
  // --nonblocking: the process is never paused (a stuck process's stack does not move anyway).
  const r = await o.exec.run("py-spy", ["dump", "--pid", String(t.nodePid), "--nonblocking"], { timeoutMs: o.timeoutMs, maxBytes: MAX_STACK_BYTES });
  if (r.notFound) return { source: "py-spy", result: "absent", problem: r.problem ?? "py-spy: not found" };
  if (r.timedOut) return { source: "py-spy", result: "timeout", problem: r.problem ?? "py-spy: timed out" };
  if (r.overflowed) return { source: "py-spy", result: "too_large", problem: r.problem ?? "py-spy: too much output" };
  if (!r.ok) return { source: "py-spy", result: "refused", problem: r.problem ?? "py-spy failed" };
  const dump = dumpOf(r.stdout, `py-spy dump --pid ${t.nodePid}`, t.nodePid);
  return dump !== undefined
    ? { source: "py-spy", result: "ok", dump }
    : { source: "py-spy", result: "no_stacks", problem: `py-spy dump --pid ${t.nodePid}: no thread` };
}

/** The stacks of one process by the chosen source (auto: its worker server where its socket is there, else py-spy). */
export async function collectStacks(t: StackTarget, o: CollectOptions): Promise<Collected> {
  const path = socketPath(o.workerSocket, t);
  if (o.source === "worker") {
    if (path === undefined) return { source: "worker", result: "absent", problem: "no socket path for this rank (--collector.nccl.stacks.worker-socket)" };
    return fromWorker(path, t, o);
  }
  if (o.source === "auto" && path !== undefined && (await socketThere(path))) return fromWorker(path, t, o);
  return fromPyspy(t, o);
}
