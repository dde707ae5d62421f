/**
 * The worker thread of isolated.ts: reads each dump it is sent with readFrDump (read.ts, bounded
 * by its budget) and posts the result back. Its heap and stack are the limits isolated.ts starts
 * it with; what it cannot finish within them ends the thread, not the agent.
 */
import { parentPort } from "node:worker_threads";
import { readFrDump, type ReadOptions } from "./read.js";
import type { FrRead } from "./types.js";

/** One dump to read: its bytes, the name it is read under, the options of readFrDump. */
export interface ReadRequest {
  bytes: Uint8Array;
  name: string;
  opts: ReadOptions;
}

/** What the worker posts: that it is ready (once, first), then one result per request. */
export type WorkerMessage = { ready: true } | FrRead;

parentPort?.on("message", (m: ReadRequest) => {
  parentPort?.postMessage(readFrDump(m.bytes, m.name, m.opts) satisfies WorkerMessage);
});
parentPort?.postMessage({ ready: true } satisfies WorkerMessage);
