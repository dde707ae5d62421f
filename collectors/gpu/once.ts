/**
 * One dmon sample set for --once (`dmon -c 1`): with the groups fallback of dmon-command.ts,
 * nvidia-smi's failure lines counted, and a CollectorError where nvidia-smi is missing (absent) or
 * prints no sample. Returns the last row of each GPU.
 */
import { CollectorError } from "../collector.js";
import { trustedStdout } from "../exec.js";
import type { DmonCommand } from "./dmon-command.js";
import type { NvsmiFailureKind } from "./failures.js";
import type { OneShot } from "./one-shot.js";
import { lastRowPerGpu, parseDmonText, type DmonRow } from "./parse-dmon.js";

export async function dmonSnapshot(
  run: OneShot,
  file: string,
  command: DmonCommand,
  countError: (kind: NvsmiFailureKind) => void,
): Promise<Map<string, DmonRow>> {
  let r = await run(command.onceArgs());
  if (!r.ok && command.fallBackAfter(parseDmonText(r.stdout).errors[0]) !== undefined) r = await run(command.onceArgs());
  if (r.notFound) throw new CollectorError(`${file} not found or not executable`, { absent: true });
  const parsed = parseDmonText(trustedStdout(r));
  for (const f of parseDmonText(r.stdout).errors) countError(f.kind);
  if (parsed.rows.length === 0) {
    const why = parsed.errors[0]?.message ?? r.problem ?? "nvidia-smi dmon printed no samples";
    throw new CollectorError(`gpu: ${why}`);
  }
  return lastRowPerGpu(parsed.rows);
}
