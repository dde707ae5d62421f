/**
 * The legitimate job of the attack and fault tests: 8 fake ranks (test/fakes/nccl-rank) in one
 * folder, on one communicator, one collective every 100 ms; rank 5 stops before collective #40
 * and the others stall after it, so rank 5 is behind.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { fakesDir } from "./agent-process.js";

/** The rank that stops before the others' last collective. */
export const BEHIND_RANK = 5;

/** Starts the 8 ranks, logging into logs; the caller kills them. */
export function startHungJob(logs: string, comm: string): ChildProcess[] {
  return Array.from({ length: 8 }, (_, r) =>
    spawn(process.execPath, [join(fakesDir, "nccl-rank"), logs, String(r), "8", comm], {
      env: { ...process.env, FAKE_RANK_PERIOD_MS: "100", ...(r === BEHIND_RANK ? { FAKE_RANK_STOP_BEFORE: "40" } : { FAKE_RANK_STALL_AFTER: "40" }) },
      stdio: "ignore",
    }),
  );
}
