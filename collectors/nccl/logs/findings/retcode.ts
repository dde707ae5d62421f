/**
 * NCCL's error-return chains in words: what ncclResult_t code a chain carried (src/nccl.h.in,
 * the same numbers in 2.3-2.30; 6 and 7 from 2.13) and whether a chain is evidence of a failure.
 */
import type { RetcodeChain } from "../state/model.js";

const RESULTS: Record<number, [string, string]> = {
  1: ["ncclUnhandledCudaError", "a CUDA call failed"],
  2: ["ncclSystemError", "a system call or the system's setup failed (sockets, files, /sys, IB verbs)"],
  3: ["ncclInternalError", "NCCL found an inconsistency (often a peer that sent something unexpected)"],
  4: ["ncclInvalidArgument", "an invalid argument"],
  5: ["ncclInvalidUsage", "invalid usage: the ranks' calls do not match"],
  6: ["ncclRemoteError", "a remote process exited or the network failed"],
  7: ["ncclInProgress", "still in progress"],
};

/**
 * ncclGetErrorString's words for each result (src/init.cc, 2.3-2.30), as PyTorch quotes them in
 * `NCCL error in: .../ProcessGroupNCCL.cpp:784, unhandled cuda error, NCCL version 2.7.8`.
 */
const RESULT_WORDS: readonly (readonly [string, number])[] = [
  ["unhandled cuda error", 1],
  ["unhandled system error", 2],
  ["internal error", 3],
  ["invalid argument", 4],
  ["invalid usage", 5],
  ["remote process exited or there was a network error", 6],
];

/** The result a text names in ncclGetErrorString's words; undefined when it names none. */
export function resultOfWords(text: string): number | undefined {
  const t = text.toLowerCase();
  for (const [words, code] of RESULT_WORDS) if (t.includes(words)) return code;
  return undefined;
}

/** `ncclInternalError (3: NCCL found an inconsistency ...)`. */
export function resultText(code: number): string {
  const r = RESULTS[code];
  return r ? `${r[0]} (${code}: ${r[1]})` : `NCCL result ${code}`;
}

/** The frames that mean the error reached NCCL's API: the call itself failed, not a step NCCL may retry or fall back from. */
function topLevel(frame: string): boolean {
  const f = frame.slice(frame.lastIndexOf("/") + 1);
  return f.startsWith("init.c") || f.startsWith("group.cc") || f.startsWith("enqueue.c");
}

/**
 * A chain that shows NCCL failed: the process did not go on afterwards, and the error climbed at
 * least two frames or reached NCCL's API. One frame deep in a transport (`include/net.h:24 -> 2`
 * after `Could not find real path`, `net.cc:79 -> 3` for a disabled plugin) is a handled probe.
 */
export function isFailure(c: RetcodeChain): boolean {
  return !c.recovered && c.code !== 0 && c.code !== 7 && (c.frameCount >= 2 || c.frames.some(topLevel));
}

/** `ncclSystemError (2: ...), passed up graph/xml.cc:469 → init.cc:916 (7 frames) [Proxy Thread]`. */
export function chainText(c: RetcodeChain): string {
  const first = c.frames[0] ?? "";
  const last = c.frames[c.frames.length - 1] ?? "";
  const path = c.frameCount > 1 ? `${first} → ${last} (${c.frameCount} frames)` : first;
  return `${resultText(c.code)}, passed up ${path}${c.context !== undefined ? ` [${c.context}]` : ""}`;
}
