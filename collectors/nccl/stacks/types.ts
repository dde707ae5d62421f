/**
 * Python stack dumps as `ringwatch analyze` reads them beside the logs: `py-spy dump --pid P`
 * output, faulthandler dumps (`Thread 0x... (most recent call first):`), and PyTorch's
 * torch.distributed.debug worker server's pages of them (docs/nccl.md#python-stacks-beside-the-logs).
 * Absent means "the dump did not say", never 0.
 */

/** One frame. `file` is a Python file as printed, or the native library of a `py-spy dump --native` frame. */
export interface StackFrame {
  function: string;
  file: string;
  /** The line, where the tool printed one (py-spy prints none for native frames, faulthandler `???` for an unknown line). */
  line?: number;
}

export type StackTool = "py-spy" | "faulthandler";

export interface StackThread {
  /** As printed: `0x00007f4ebf9d3740` (faulthandler), `88693` or `0x7FA6E7C01740` (py-spy); empty for faulthandler's `Stack (most recent call first):`. */
  id: string;
  /** py-spy's thread name (`MainThread`), or the name CPython 3.14+ faulthandler prints after the id. */
  name?: string;
  /** py-spy's activity: `idle`, `active`, `active+gil`, `gil`. */
  status?: string;
  /** faulthandler: the thread that wrote the dump (`Current thread 0x...`, `Stack (...)`). */
  current?: boolean;
  /** Innermost first, as both tools print them. */
  frames: StackFrame[];
  /** Frames not kept here (over MAX_FRAMES), or faulthandler's own `  ...` (it prints at most 100). */
  truncated: boolean;
}

export interface StackDump {
  tool: StackTool;
  /** The log's name, as in evidence. */
  source: string;
  /** `source:line` of its first thread header. */
  where: string;
  /** py-spy's `Process P:`, or a launcher prefix's pid (Ray's `(RayTrainWorker pid=615, ...)`). */
  pid?: number;
  /** The global rank the dump itself is tied to: the worker server's `=== Rank N: ...`, a `[rankN]:`, `[job,N]<stdout>:` or srun `N: ` prefix, or the file name (`rank5`). */
  rank?: number;
  rankFrom?: "worker_server" | "prefix" | "file_name";
  /** torchrun's `[default3]:` prefix: the local rank on its node. */
  localRank?: number;
  /** The host a prefix (pdsh `node3: `) or the worker server's address named. */
  host?: string;
  /** Why it was written: `Fatal Python error: Segmentation fault`, `Timeout (0:10:00)!`. */
  reason?: string;
  /** py-spy's command line of the process. */
  command?: string;
  threads: StackThread[];
  /** Threads not kept (over MAX_THREADS). */
  threadsLeftOut: number;
}

/**
 * What a launcher or log collector put before a line, as the caller decodes it (analyze passes the
 * log parser's prefix reader; stacks/ knows no prefix format of its own): where the text starts,
 * and what the prefix says of the writer.
 */
export interface LinePrefix {
  /** Index of the first character after the prefix and any blanks after it. */
  end: number;
  /** A global rank (`[rank3]:`, `[1,3]<stdout>:`, srun `3: `). */
  rank?: number;
  localRank?: number;
  pid?: number;
  host?: string;
}

export type PrefixDecoder = (line: string) => LinePrefix;

/** No prefix: the text starts at the first non-blank. */
export const noPrefix: PrefixDecoder = (line) => {
  let i = 0;
  while (i < line.length && (line.charCodeAt(i) === 32 || line.charCodeAt(i) === 9)) i++;
  return { end: i };
};

/** What reading one log's dumps may hold. */
export interface StackLimits {
  /** Lines longer than this are no stack line (py-spy's longest native C++ frames are a few KiB). */
  maxLine: number;
  /** Characters kept of a function or file name. */
  maxName: number;
  threadsPerDump: number;
  framesPerThread: number;
  dumpsPerLog: number;
  /** Streams (one per launcher prefix) with a dump open at once. */
  openStreams: number;
  /** A dump whose stream printed nothing for this many lines is finished. */
  staleLines: number;
}

export const STACK_LIMITS: Readonly<StackLimits> = {
  maxLine: 64 * 1024,
  maxName: 512,
  threadsPerDump: 256,
  framesPerThread: 128,
  dumpsPerLog: 16_384,
  openStreams: 256,
  staleLines: 512,
};

/** Frames all the readers of one analysis may keep, together (shared: thousands of ranks' dumps stay bounded). */
export class FrameBudget {
  constructor(public left = 2_000_000) {}
}
