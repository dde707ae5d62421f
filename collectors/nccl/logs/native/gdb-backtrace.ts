/**
 * gdb's (and cuda-gdb's) backtraces of a process stopped while it waited: `(gdb) bt` after
 * `Thread 1 "python" received signal SIGINT, Interrupt.`, or `thread apply all bt` of a process gdb
 * attached to, one row per frame:
 *   #6  0x00007f67471be402 in pncclCommInitRankConfig () from /lib/x86_64-linux-gnu/libnccl.so.2
 *   #0  ncclGroupEnd () at src/group.cc:123
 * (a long row wraps onto an indented next one). A thread stopped inside one of NCCL's calls
 * (ncclCommInitRankConfig, ncclGroupEnd, ncclAllReduce, ncclCommDestroy, ...; `pnccl` is the same
 * call under its profiling name) was waiting in NCCL when the user stopped it, which is why they
 * took the backtrace (nccl-pasted 443); so was one stopped in PyTorch's store client waiting for a key
 * (`c10d::TCPStore::doGet`, nccl-pasted 732), or in an MPI collective (`PMPI_Gather` in Horovod's
 * coordinator, nccl-pasted 773). A thread with no NCCL call, stopped in a CUDA launch or
 * synchronize (`cudaLaunchKernel`, spinning in libcuda's sched_yield; `cudaStreamSynchronize`), waited
 * for the GPU (nccl-pasted 601): a note, as the main thread of a healthy GPU-bound job waits there
 * most of the time too. A backtrace after a crash signal (SIGSEGV, SIGABRT, ...,
 * cuda-gdb's CUDA_EXCEPTION_N), or of a core file (`Program terminated with signal`), is a crash, not
 * a wait, and is left to the crash readers; so is one whose frames show the crash itself (`<signal
 * handler called>`, `raise`, `abort`, `std::terminate`: the line that named the signal was cut). A
 * sanitizer's rows (`#1 0x7f2 in cudaLaunchKernel (/usr/lib/libcudart.so.12+0x6bf5e)`) are not gdb's. Rows are cut at fixed words with indexOf;
 * no regular expression. Bounded: MAX_TRACES backtraces of MAX_FRAMES frames.
 */
import { isDigit } from "../parse/scan.js";
import { hangSuspected } from "../../verdict/finding.js";
import type { Finding } from "../../verdict/report.js";
import { hangSuspectedWords } from "../../verdict/words.js";

const MAX_TRACES = 256;
const MAX_FRAMES = 64;

/** NCCL's calls a thread can wait in, by what it waits for. */
const INIT_CALLS = new Set(["ncclCommInitRank", "ncclCommInitRankConfig", "ncclCommInitAll", "ncclCommInitRankScalable", "ncclCommSplit", "ncclCommShrink"]);
const TEARDOWN_CALLS = new Set(["ncclCommFinalize", "ncclCommDestroy", "ncclCommAbort"]);
const COLLECTIVE_CALLS = new Set([
  "ncclGroupEnd",
  "ncclAllReduce",
  "ncclBroadcast",
  "ncclBcast",
  "ncclReduce",
  "ncclAllGather",
  "ncclReduceScatter",
  "ncclSend",
  "ncclRecv",
  "ncclAlltoAll",
  "ncclGather",
  "ncclScatter",
  // A window's registration (2.27+) is collective: every rank of the communicator registers it.
  "ncclCommWindowRegister",
]);

/** CUDA's calls that wait for the GPU: a launch whose queue is full, a synchronize, a copy to the host (`.item()`). */
const CUDA_CALLS = new Set([
  "cudaLaunchKernel",
  "cuLaunchKernel",
  "cudaStreamSynchronize",
  "cuStreamSynchronize",
  "cudaDeviceSynchronize",
  "cuCtxSynchronize",
  "cudaEventSynchronize",
  "cuEventSynchronize",
  "cudaMemcpy",
  "cudaMemcpyAsync",
]);

/** Functions that show a thread crashing, not waiting: the signal handler's frame, raise and abort, C++'s terminate. */
const CRASH_FRAMES = new Set([
  "<signal handler called>",
  "raise",
  "__GI_raise",
  "gsignal",
  "abort",
  "__GI_abort",
  "__pthread_kill_implementation",
  "__pthread_kill_internal",
  "__pthread_kill",
  "pthread_kill",
  "std::terminate",
  "__cxa_throw",
  "__cxa_rethrow",
  "__assert_fail",
  "__GI___assert_fail",
]);
/** The innermost frames looked at for a crash. */
const CRASH_DEPTH = 12;

/** Signals gdb reports for a crash: the backtrace is where it crashed, not where it waited. */
const CRASH_SIGNALS = ["SIGSEGV", "SIGABRT", "SIGBUS", "SIGFPE", "SIGILL", "SIGTRAP", "CUDA_EXCEPTION"];

/**
 * PyTorch's store client's calls that wait for a key another rank sets (the ncclUniqueId, a
 * barrier's count, the rendezvous): a thread stopped in one (`c10d::TCPStore::doGet` under
 * `recvBytes`, nccl-pasted 732) waits for a rank that never set it, or for a store that never answers.
 */
const STORE_CALLS = new Set(["c10d::TCPStore::get", "c10d::TCPStore::doGet", "c10d::TCPStore::wait", "c10d::TCPStore::doWait"]);

/**
 * MPI's calls that wait for the other ranks of a communicator (`PMPI_Gather` is the same call under
 * its profiling name): Horovod's coordinator gathers the ranks' ready tensors with MPI_Gather
 * (nccl-pasted 773), a rank that stopped submitting holds it.
 */
const MPI_CALLS = new Set([
  "MPI_Gather",
  "MPI_Gatherv",
  "MPI_Allgather",
  "MPI_Allgatherv",
  "MPI_Allreduce",
  "MPI_Reduce",
  "MPI_Bcast",
  "MPI_Barrier",
  "MPI_Alltoall",
  "MPI_Alltoallv",
  "MPI_Scatter",
  "MPI_Wait",
  "MPI_Waitall",
  "MPI_Recv",
]);

/** `pytorch`: torch.distributed's Python call, where a py-spy dump has no native frames (analyze/stacks.ts). */
export type NativeWaitKind = "init" | "teardown" | "collective" | "store" | "mpi" | "cuda" | "pytorch";

export interface NativeWait {
  /** The tool that printed the backtrace. */
  tool: DebuggerTool | "py-spy";
  /** NCCL's call the thread is in (its outermost NCCL frame), without the `p` of its profiling name; else CUDA's. */
  call: string;
  wait: NativeWaitKind;
  /** The frame that called it (`c10d::NCCLComm::create`), when the backtrace has one. */
  caller?: string;
  /** The thread as gdb's header named it (`Thread 1 "python"`), when there was one. */
  thread?: string;
  /** The rank the dump is tied to (py-spy's, by a prefix or its file name), where known. */
  rank?: number;
  /** py-spy's sample saw the thread wait (idle, or in a sleep or poll); gdb's stop is a wait by itself. */
  waiting?: boolean;
  where: string;
}

/** The debuggers whose backtraces GdbBacktraceReader reads (cuda-gdb's are gdb's). */
export type DebuggerTool = "gdb" | "lldb";

/** A backtrace of a stopped process (GdbBacktraceReader.stopped). */
export interface GdbStop {
  tool: DebuggerTool;
  where: string;
  /** Function names, innermost first. */
  frames: readonly string[];
  /** gdb's thread header (`Thread 3`), where one came before it. */
  thread?: string;
}

interface Trace {
  tool: DebuggerTool;
  /** The stop it belongs to (an attach, a signal, a core file start a new one): one crashed thread makes its stop a crash. */
  stop: number;
  frames: string[];
  thread?: string;
  where: string;
  /** A crash signal came before it: no wait. */
  crash: boolean;
}

/**
 * A frame row → its function: `#3  0x00007f... in ?? () from /lib/libnccl.so.2` gives `??`,
 * `#0  ncclGroupEnd () at src/group.cc:123` gives `ncclGroupEnd`; with its number. Undefined for
 * any other row.
 */
export function gdbFrame(s: string): { n: number; fn: string } | undefined {
  let i = 0;
  while (i < s.length && (s.charCodeAt(i) === 32 || s.charCodeAt(i) === 9)) i++;
  if (s.charCodeAt(i) !== 35 /* # */ || !isDigit(s.charCodeAt(i + 1))) return undefined;
  let n = 0;
  i++;
  while (i < s.length && isDigit(s.charCodeAt(i))) n = n * 10 + (s.charCodeAt(i++) - 48);
  if (s.charCodeAt(i) !== 32) return undefined;
  while (i < s.length && s.charCodeAt(i) === 32) i++;
  if (s.startsWith("<signal handler called>", i)) return { n, fn: "<signal handler called>" };
  if (s.startsWith("0x", i)) {
    const inAt = s.indexOf(" in ", i);
    // gdb's function is followed by its arguments' parenthesis (`in ?? ()`): a note's `#3 0x1f in the dump` is none.
    if (inAt < 0 || inAt - i > 20 || s.indexOf("(", inAt) < 0) return undefined;
    i = inAt + 4;
  } else if (!sourceOrLibrary(s, i)) {
    // No address: only gdb's shape with its source or library (`ncclProxyProgress (...) at proxy.cc:868`), not a markdown list.
    return undefined;
  }
  // The name runs to ` (` (its arguments) or the row's end; a C++ name's own signature has no blank before its `(`.
  const args = s.indexOf(" (", i);
  // A sanitizer's row: `in f (/usr/lib/libcudart.so.12+0x6bf5e)`, the library and offset where gdb puts arguments,
  // or symbolized, `in f(...) /src/x.cc:50:3` (gdb gives no column).
  if (args >= 0 && s.charCodeAt(args + 2) === 47 /* / */ && s.indexOf("+0x", args) >= 0) return undefined;
  if (endsInLineAndColumn(s)) return undefined;
  const fn = s.slice(i, args < 0 ? s.length : args).trim();
  return fn.length > 0 ? { n, fn: signatureless(fn) } : undefined;
}

/**
 * An lldb frame row from after its `frame #` → its function: `3: 0x00007fb090db1068
 * libtorch_cuda.so\`c10d::ProcessGroupNCCL::abort() + 664` gives `c10d::ProcessGroupNCCL::abort`,
 * a frame with no symbol (`5: 0x00007f... libnccl.so.2`) `??`. Only with lldb's address after the
 * number: PyTorch's C++ exception frames (`frame #0: c10::Error::Error(...) + 0x..`) are none.
 */
export function lldbFrame(s: string, from: number): { n: number; fn: string } | undefined {
  let i = from;
  let n = 0;
  if (!isDigit(s.charCodeAt(i))) return undefined;
  while (i < s.length && isDigit(s.charCodeAt(i))) n = n * 10 + (s.charCodeAt(i++) - 48);
  if (!s.startsWith(": 0x", i)) return undefined;
  const space = s.indexOf(" ", i + 4);
  if (space < 0) return undefined;
  const tick = s.indexOf("`", space);
  if (tick < 0) return { n, fn: "??" };
  let end = s.length;
  for (const stop of [" + ", " at "]) {
    const e = s.indexOf(stop, tick);
    if (e >= 0 && e < end) end = e;
  }
  const fn = s.slice(tick + 1, end).trim();
  return fn.length > 0 ? { n, fn: signatureless(fn) } : undefined;
}

/**
 * A row without an address ends as gdb ends one: `) at proxy.cc:868` (a file and its line) or `)
 * from /lib/libnccl.so.2` (a library), or as PyTorch's symbolizer does (`) from ??:0`): not a
 * note's `#1 Reinstalled NCCL (2.21.5) from the repo`.
 */
function sourceOrLibrary(s: string, i: number): boolean {
  const at = s.indexOf(") at ", i);
  if (at >= 0 && endsInLine(s.slice(at + 5).trim())) return true;
  const from = s.indexOf(") from ", i);
  if (from < 0) return false;
  const lib = s.slice(from + 7).trim();
  // PyTorch's symbolizer ends its rows `from file:line`, `from ??:0` or `from :0` (nccl-pasted 824).
  return lib.startsWith("/") || lib.indexOf(".so") >= 0 || endsInLine(lib, true);
}

/** `proxy.cc:868`, `../sysdeps/x.h:183`, and (`unknown` true) the symbolizer's `??:0` and `:0`: a source file, a colon, then digits to the end; not a clock's `02:55`. */
function endsInLine(s: string, unknown = false): boolean {
  let k = s.length;
  while (k > 0 && isDigit(s.charCodeAt(k - 1))) k--;
  if (k === s.length || k === 0 || s.charCodeAt(k - 1) !== 58 /* : */) return false;
  const file = s.slice(0, k - 1);
  return file.indexOf(".") >= 0 || file.indexOf("/") >= 0 || (unknown && (file === "" || file === "??"));
}

/** The row ends in `file:line:column`, as a sanitizer's symbolized row does. */
function endsInLineAndColumn(s: string): boolean {
  let e = s.length;
  while (e > 0 && (s.charCodeAt(e - 1) === 32 || s.charCodeAt(e - 1) === 9)) e--;
  let k = e;
  for (let part = 0; part < 2; part++) {
    const stop = k;
    while (k > 0 && isDigit(s.charCodeAt(k - 1))) k--;
    if (k === stop || s.charCodeAt(k - 1) !== 58 /* : */) return false;
    k--;
  }
  return true;
}

const ANONYMOUS = "(anonymous namespace)";

/** `c10d::NCCLComm::create(int, int, ncclUniqueId)` → `c10d::NCCLComm::create`; `(anonymous namespace)` is part of a name. */
function signatureless(fn: string): string {
  let p = fn.indexOf("(");
  while (p >= 0 && fn.startsWith(ANONYMOUS, p)) p = fn.indexOf("(", p + ANONYMOUS.length);
  return p > 0 ? fn.slice(0, p) : fn;
}

/** NCCL's call a frame's function is, and what it waits for; undefined for any other function. */
export function ncclCall(fn: string): { call: string; wait: NativeWaitKind } | undefined {
  const name = fn.startsWith("pnccl") ? fn.slice(1) : fn;
  if (!name.startsWith("nccl")) return undefined;
  if (INIT_CALLS.has(name)) return { call: name, wait: "init" };
  if (TEARDOWN_CALLS.has(name)) return { call: name, wait: "teardown" };
  if (COLLECTIVE_CALLS.has(name)) return { call: name, wait: "collective" };
  return undefined;
}

export class GdbBacktraceReader {
  private readonly traces: Trace[] = [];
  private open: Trace | undefined;
  private thread: string | undefined;
  private crash = false;
  private last = -1;
  private stop = 0;
  /** An exception's or a sanitizer's report came just before: the frames that follow are where it failed. */
  private failedNext = false;

  constructor(private readonly source: string) {}

  line(text: string, lineNo: number): void {
    let i = 0;
    while (i < text.length && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9)) i++;
    const first = text.charCodeAt(i);
    if (first === 35 /* # */) {
      const f = gdbFrame(text);
      if (f !== undefined) return this.frame("gdb", f, lineNo);
    } else if (first === 102 /* f */ || first === 116 /* t */ || first === 42 /* * */) {
      if (this.lldbLine(text, i, lineNo)) return;
    }
    this.gdbLine(text, i);
  }

  /** A frame of the backtrace open, or the first of a new one (its number 0, or not above the last). */
  private frame(tool: DebuggerTool, f: { n: number; fn: string }, lineNo: number): void {
    if (f.n === 0 || this.open === undefined || f.n <= this.last) {
      if (this.traces.length >= MAX_TRACES) return;
      this.open = { tool, stop: this.stop, frames: [], where: `${this.source}:${lineNo}`, crash: this.crash || this.failedNext };
      if (this.thread !== undefined) this.open.thread = this.thread;
      this.traces.push(this.open);
      this.thread = undefined;
    }
    if (this.open.frames.length < MAX_FRAMES) this.open.frames.push(f.fn);
    this.last = f.n;
  }

  /**
   * lldb's rows (`bt all`, `thread backtrace all`, nccl-pasted 621): `frame #3: 0x00007fb0...
   * libtorch_cuda.so\`c10d::ProcessGroupNCCL::abort() + 664` (`* frame` for the selected one), and
   * its thread headers, `* thread #1, name = 'python', stop reason = signal SIGSTOP`: a crash
   * signal there makes the dump a crash's, as gdb's `received signal` does. True for such a row.
   */
  private lldbLine(text: string, at: number, lineNo: number): boolean {
    let k = at;
    if (text.charCodeAt(k) === 42 /* * */) {
      k++;
      while (text.charCodeAt(k) === 32) k++;
    }
    if (text.startsWith("frame #", k)) {
      const f = lldbFrame(text, k + 7);
      if (f === undefined) return false;
      this.frame("lldb", f, lineNo);
      return true;
    }
    if (!text.startsWith("thread #", k) || text.indexOf(", ", k) < 0) return false;
    const reason = text.indexOf("stop reason = ", k);
    if (reason >= 0 && CRASH_SIGNALS.some((sig) => text.indexOf(sig, reason) >= 0)) this.crash = true;
    const comma = text.indexOf(", ", k);
    this.thread = text.slice(k, comma);
    this.open = undefined;
    this.last = -1;
    return true;
  }

  /** gdb's own lines around its frames: the thread headers, the signal that stopped it, a core file, an attach. */
  private gdbLine(text: string, i: number): void {
    // A wrapped frame row's rest (`    () from /usr/lib/libtorch_cuda.so`), or a blank row, keeps the backtrace open.
    if (this.open !== undefined && i > 0) return;
    if (this.open !== undefined) this.failedNext = false;
    this.open = undefined;
    this.last = -1;
    // gdb's own lines open with `Thread`, `Program`, `Attaching` or `Core`; a crash report's with `C++`, `Exception` or `SUMMARY`: any other line costs one look.
    const c = text.charCodeAt(i);
    if (c !== 84 /* T */ && c !== 80 /* P */ && c !== 65 /* A */ && c !== 67 /* C */ && c !== 69 /* E */ && c !== 83 /* S */ && c !== 61 /* = */) return;
    // A core file's backtrace is where the process died; PyTorch's C++ traceback of an exception
    // (`C++ CapturedTraceback:`, `Exception raised from ...`, then `#5 c10::Error::Error(...) from ??:0`)
    // and a sanitizer's report (`SUMMARY: AddressSanitizer: ...`) show where it failed.
    if (text.indexOf("terminated with signal ") >= 0 || text.startsWith("Core was generated by ", i)) {
      this.crash = true;
      this.stop++;
      return;
    }
    // These name the frames right after them only (a gdb session later in the log is its own):
    // `==4242==ERROR: AddressSanitizer: ...` before a sanitizer's frames, and its `SUMMARY:` after them.
    if (c === 61 || text.startsWith("SUMMARY: ", i)) {
      if (text.indexOf("Sanitizer", i) < 0) return;
      const last = this.traces[this.traces.length - 1];
      if (c !== 61 && last !== undefined) last.crash = true;
      this.failedNext = c === 61;
      this.stop++;
      return;
    }
    if (text.startsWith("C++ CapturedTraceback:", i) || text.startsWith("Exception raised from ", i)) {
      this.failedNext = true;
      this.stop++;
      return;
    }
    // Stopped at a breakpoint or a catchpoint the user set: where it stopped, not where it waited.
    if (text.indexOf(" hit Breakpoint ") >= 0 || text.indexOf(" hit Catchpoint ") >= 0) {
      this.crash = true;
      this.stop++;
      return;
    }
    if (text.indexOf("received signal ") >= 0) {
      this.crash = CRASH_SIGNALS.some((sig) => text.indexOf(sig) >= 0);
      this.stop++;
      const t = text.indexOf("Thread ");
      const r = text.indexOf(" received signal ");
      if (t >= 0 && r > t) this.thread = text.slice(t, r);
      return;
    }
    if (text.indexOf("Attaching to process ") >= 0) {
      this.crash = false;
      this.stop++;
      return;
    }
    // `thread apply all bt`'s header: `Thread 3 (Thread 0x7f1e... (LWP 4242) "python"):`.
    const t = text.indexOf("Thread ");
    if (t < 0) return;
    const open = text.indexOf(" (", t);
    if (open > t && text.indexOf("(LWP ", open) > open) this.thread = text.slice(t, open);
  }

  /** The stops one of whose threads shows a crash's frames (the line that named the signal was cut): the other threads are where a crash found them, not waits. */
  private crashedStops(): Set<number> {
    const out = new Set<number>();
    for (const t of this.traces) if (crashed(t.frames)) out.add(t.stop);
    return out;
  }

  /** Every backtrace of a stopped process, not of a crash (a crash signal before it, or a crash's own frames), innermost frame first. */
  stopped(): GdbStop[] {
    const crashes = this.crashedStops();
    return this.traces
      .filter((t) => !t.crash && !crashes.has(t.stop))
      .map((t) => ({ tool: t.tool, where: t.where, frames: t.frames, ...(t.thread !== undefined ? { thread: t.thread } : {}) }));
  }

  /** The backtraces stopped inside one of NCCL's calls, or else in a CUDA launch or synchronize; not after a crash. */
  waits(): NativeWait[] {
    const out: NativeWait[] = [];
    const crashes = this.crashedStops();
    for (const t of this.traces) {
      if (t.crash || crashes.has(t.stop)) continue;
      const w = nativeWait(t.frames);
      if (w === undefined) continue;
      const x: NativeWait = { tool: t.tool, ...w, where: t.where };
      if (t.thread !== undefined) x.thread = t.thread;
      out.push(x);
    }
    return out;
  }
}

/** The store client's wait a frame's function is; undefined for any other function. */
function storeCall(fn: string): { call: string; wait: NativeWaitKind } | undefined {
  return STORE_CALLS.has(fn) ? { call: fn, wait: "store" } : undefined;
}

/** MPI's wait a frame's function is (its `PMPI_` name too); undefined for any other function. */
function mpiCall(fn: string): { call: string; wait: NativeWaitKind } | undefined {
  const name = fn.startsWith("PMPI_") ? fn.slice(1) : fn;
  return MPI_CALLS.has(name) ? { call: name, wait: "mpi" } : undefined;
}

/** CUDA's launch or synchronize a frame's function is; undefined for any other function. */
function cudaCall(fn: string): { call: string; wait: NativeWaitKind } | undefined {
  return CUDA_CALLS.has(fn) ? { call: fn, wait: "cuda" } : undefined;
}

/** PyTorch's functions that create a communicator: an NCCL call under them (a group around the init) waits in init. */
const COMM_CREATORS = ["c10d::ProcessGroupNCCL::getNCCLComm", "c10d::NCCLComm::create"];

/**
 * What a thread whose frames (innermost first, function names) are these waits in: the outermost
 * NCCL call, the one the application made; else the store client's wait; else MPI's; else the outermost CUDA launch or synchronize. With the
 * frame that called it.
 */
export function nativeWait(frames: readonly string[]): Pick<NativeWait, "call" | "wait" | "caller"> | undefined {
  if (crashed(frames)) return undefined;
  return outermost(frames, ncclCall) ?? outermost(frames, storeCall) ?? outermost(frames, mpiCall) ?? outermost(frames, cudaCall);
}

/** The innermost frames show the thread crashing (a signal handler, abort, terminate), not waiting. */
function crashed(frames: readonly string[]): boolean {
  for (let k = 0; k < frames.length && k < CRASH_DEPTH; k++) if (CRASH_FRAMES.has(frames[k] as string)) return true;
  return false;
}

function outermost(
  frames: readonly string[],
  call: (fn: string) => { call: string; wait: NativeWaitKind } | undefined,
): Pick<NativeWait, "call" | "wait" | "caller"> | undefined {
  for (let k = frames.length - 1; k >= 0; k--) {
    const c = call(frames[k] as string);
    if (c === undefined) continue;
    const caller = frames[k + 1];
    const w: Pick<NativeWait, "call" | "wait" | "caller"> = { ...c };
    if (caller !== undefined && caller !== "??") {
      w.caller = caller;
      if (c.wait === "collective" && COMM_CREATORS.some((f) => caller.startsWith(f))) w.wait = "init";
    }
    return w;
  }
  return undefined;
}

/**
 * One hang_suspected per kind of wait (init, a collective, teardown, the store, MPI, the GPU) that the backtraces show
 * (the GPU's only where no thread of the same tool waits in NCCL's, the store's or MPI's call; a note, as is a py-spy sample
 * that caught no thread waiting; the others warnings):
 * a warning, as a backtrace is one moment of one process; the logs' own findings say more where
 * they have them.
 */
export function nativeWaitFindings(waits: readonly NativeWait[]): Finding[] {
  const byWait = new Map<string, NativeWait[]>();
  // A CUDA wait is left out where a thread of the same tool waits in NCCL's, the store's or MPI's call (not py-spy's Python-level one).
  const inCall = new Set(waits.filter((x) => x.wait !== "cuda" && x.wait !== "pytorch").map((x) => x.tool));
  for (const w of waits) if (w.wait !== "cuda" || !inCall.has(w.tool)) byWait.set(`${w.tool} ${w.wait}`, [...(byWait.get(`${w.tool} ${w.wait}`) ?? []), w]);
  return [...byWait.values()].map((ws) => {
    const w = ws[0] as NativeWait;
    return hangSuspected({
      severity: w.wait === "cuda" || ws.every((x) => x.waiting === false) ? "info" : "warning",
      summary: hangSuspectedWords.nativeWait({
        tool: w.tool,
        threads: ws.length,
        calls: [...new Set(ws.map((x) => x.call))],
        wait: w.wait,
        waiting: ws.some((x) => x.waiting !== false),
        ...(w.caller !== undefined ? { caller: w.caller } : {}),
      }),
      ranks: [...new Set(ws.flatMap((x) => (x.rank !== undefined ? [x.rank] : [])))].sort((a, b) => a - b),
      processes: [],
      comm_id: null,
      evidence: ws.slice(0, 5).map((x) => x.where),
    });
  });
}
