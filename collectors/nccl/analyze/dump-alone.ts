/**
 * Stack dumps with nothing else beside them: a py-spy, faulthandler or gdb dump of a process whose
 * job stopped making progress, handed to `ringwatch analyze` alone (nccl-pasted 771, 784, 806, 820,
 * 850: a main thread in autograd's backward, in a synchronize, in a kernel call; 596, 625: gdb's
 * threads of NCCL's proxy). Nobody dumps the stacks of a job that runs well: the dump is the user's
 * own sign that the job seemed stuck, and one dump cannot say more than where each thread stood at
 * that moment. So where the other findings say nothing of a hang or a failure (no finding at warning
 * or above of a hang's or a failure's kind), the dumps are a hang_suspected at warning that says
 * where their threads stand and how to tell a hang from a busy step: a note the dumps' waits already
 * gave (a CUDA wait, a sample of a running thread: gdb-backtrace.ts, stacks.ts) is raised to a
 * warning; else a finding of its own names the threads. A dump written for a crash (faulthandler's
 * `Fatal Python error`, gdb after a crash signal) is no hang.
 */
import { frameText, isAddressFrame, isLibraryFrame } from "../stacks/frames.js";
import { keyThread, type RankStack } from "../stacks/group.js";
import type { StackDump } from "../stacks/types.js";
import type { GdbStop } from "../logs/native/gdb-backtrace.js";
import { hangSuspected } from "../verdict/finding.js";
import { FINDING_KINDS } from "../verdict/finding-kinds.js";
import type { Finding } from "../verdict/report.js";
import { hangSuspectedWords } from "../verdict/words.js";

/** Kinds whose finding at warning or above already says the job hangs or failed (finding-kinds.ts's hang and failure facts): the dumps add their frames, not a verdict. */
const SAID: ReadonlySet<string> = new Set(FINDING_KINDS.filter((r) => r.fact === "hang" || r.fact === "failure").map((r) => r.kind));

/** Threads a finding describes, and frames of each. */
const SHOWN_THREADS = 3;
const SHOWN_FRAMES = 3;

/** NCCL's own threads (its proxy, its IB async-event thread), which wait in the same place in a healthy job. */
const NCCL_OWN = ["ncclProxy", "persistentThread", "ncclIbAsyncThreadMain"];

/** faulthandler's dump of a crash (`Fatal Python error: Segmentation fault`, `Windows fatal exception: ...`), not of a stuck process. */
function crashDump(d: StackDump): boolean {
  return d.reason !== undefined && (d.reason.startsWith("Fatal Python error") || d.reason.startsWith("Windows fatal exception"));
}

/** `py-spy at log:2 of pid 39: MainThread (idle) in torch/autograd/__init__.py:266 backward <- ... <- train.py:88 train_step`: the innermost frames, and the job's own one further out. */
function pythonThreadWords(d: StackDump, rank: number | undefined): string | undefined {
  const t = keyThread(d);
  if (t === undefined) return undefined;
  // py-spy --native's C library frames (`pthread_cond_timedwait (libc.so.6)`) say little of where it waits.
  const named = t.frames.filter((f) => !isAddressFrame(f));
  const told = named.filter((f) => f.file.endsWith(".py") || !isLibc(f.function));
  const fs = told.length > 0 ? told : named;
  const inner = fs.slice(0, SHOWN_FRAMES).map(frameText);
  const job = fs.findIndex((f) => !isLibraryFrame(f));
  if (job >= SHOWN_FRAMES) inner.push(frameText(fs[job] as (typeof fs)[number]));
  const who = rank !== undefined ? ` of rank ${rank}` : d.pid !== undefined ? ` of pid ${d.pid}` : "";
  const label = t.name ?? (t.current === true ? "the current thread" : "a thread");
  return `${d.tool} at ${d.where}${who}: ${label}${t.status !== undefined ? ` (${t.status})` : ""} in ${inner.join(" <- ")}`;
}

function isNcclOwn(s: GdbStop): boolean {
  return s.frames.some((f) => NCCL_OWN.some((n) => f.startsWith(n)));
}

/** Only NCCL's own threads, and threads with no frame past the C library's (`ppoll` then `??`), which tell of no application's wait. */
function ncclOwnOnly(gdb: readonly GdbStop[]): boolean {
  return gdb.some(isNcclOwn) && gdb.every((s) => isNcclOwn(s) || toldFrames(s).every(isLibc));
}

/** The C library's and the threads library's own functions (a poll, a futex, a thread's start), which say little of where a thread waits. */
const LIBC = new Set([
  "read",
  "poll",
  "ppoll",
  "select",
  "epoll_wait",
  "epoll_pwait",
  "syscall",
  "sched_yield",
  "nanosleep",
  "usleep",
  "clone",
  "clone3",
  "start_thread",
]);

function isLibc(fn: string): boolean {
  return LIBC.has(fn) || fn.startsWith("__") || fn.startsWith("_pthread") || fn.startsWith("pthread_") || fn.startsWith("futex_");
}

/** The named frames past the C library's, innermost first; the C library's alone where there are no others. */
function toldFrames(s: GdbStop): string[] {
  const named = s.frames.filter((f) => f !== "??");
  const told = named.filter((f) => !isLibc(f));
  return told.length > 0 ? told : named;
}

/** `gdb at log:12 (Thread 10): ncclProxyGetPostedOps <- ncclProxyProgress`: the innermost frames past the C library's, and the outermost of them. */
function gdbWords(s: GdbStop): string {
  const told = toldFrames(s);
  const shown = told.slice(0, SHOWN_FRAMES - 1);
  const outer = told[told.length - 1];
  if (outer !== undefined && !shown.includes(outer)) shown.push(...(told.length > SHOWN_FRAMES ? ["...", outer] : [outer]));
  return `${s.tool} at ${s.where}${s.thread !== undefined ? ` (${s.thread})` : ""}: ${shown.length > 0 ? shown.join(" <- ") : "frames without symbols"}`;
}

/**
 * The findings, with the dumps' hang_suspected where nothing else says the job hangs or failed (see
 * the top of this file); the same findings where there is no dump or another finding says it.
 */
export function withDumpsAlone(findings: readonly Finding[], dumps: readonly StackDump[], placed: readonly RankStack[], gdb: readonly GdbStop[]): Finding[] {
  // A dump split by a line between its threads (a progress bar) is still the crash's: every dump of a log with a crash's dump.
  const crashed = new Set(dumps.filter(crashDump).map((d) => d.source));
  const python = dumps.filter((d) => !crashed.has(d.source) && d.threads.some((t) => t.frames.length > 0));
  if (python.length === 0 && gdb.length === 0) return [...findings];
  if (findings.some((f) => f.severity !== "info" && SAID.has(f.kind))) return [...findings];
  const wheres = new Set([...python.map((d) => d.where), ...gdb.map((s) => s.where)]);
  const notes = findings.filter((f) => f.kind === "hang_suspected" && f.evidence.some((e) => wheres.has(e)));
  if (notes.length > 0)
    return findings.map((f) => (notes.includes(f) ? { ...f, severity: "warning", summary: `${f.summary} ${hangSuspectedWords.dumpsAloneRaised}` } : f));
  const rankOf = new Map<StackDump, number>();
  for (const p of placed) rankOf.set(p.dump, p.rank);
  const shown = [...python.flatMap((d) => pythonThreadWords(d, d.rank ?? rankOf.get(d)) ?? []), ...gdb.map(gdbWords)];
  const ranks = [...new Set(python.flatMap((d) => d.rank ?? rankOf.get(d) ?? []))].sort((a, b) => a - b);
  return [
    ...findings,
    hangSuspected({
      severity: "warning",
      summary: hangSuspectedWords.dumpsAlone({
        threads: shown.length,
        shown: shown.slice(0, SHOWN_THREADS),
        ncclOwnOnly: python.length === 0 && ncclOwnOnly(gdb),
      }),
      ranks,
      processes: [],
      comm_id: null,
      evidence: [...wheres].slice(0, 5),
    }),
  ];
}
