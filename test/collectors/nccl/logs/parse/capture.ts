import { parseLine } from "../../../../../collectors/nccl/logs/parse/line.js";
import type { NcclEvent, NcclEventKind } from "../../../../../collectors/nccl/logs/parse/types.js";
import { listFixtures, readCapture } from "../../../../helpers/fixtures.js";

/** Every real capture in test/fixtures/nccl (SOURCES.md excluded). */
export const CAPTURES = listFixtures("nccl", ".log");

/**
 * Captures whose last line is complete. All others are ~2,000-character excerpts cut mid-line
 * (see SOURCES.md), so their last line is left out before asserting anything.
 */
const COMPLETE = new Set(["01", "02", "04", "05", "49", "61", "67", "73", "76", "91", "96", "97"]);

/** Capture lines without the provenance line (and without the cut last line). */
export function captureLines(file: string): string[] {
  const lines = readCapture(`nccl/${file}`).split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  if (!COMPLETE.has(file.slice(0, 2))) lines.pop();
  return lines;
}

/** Events of a capture, parsed line by line (cut last line left out). */
export function captureEvents(file: string): NcclEvent[] {
  const out: NcclEvent[] = [];
  for (const line of captureLines(file)) {
    const ev = parseLine(line);
    if (ev !== undefined) out.push(ev);
  }
  return out;
}

/** Capture file name from its two-digit number. */
export function captureFile(num: string): string {
  const f = CAPTURES.find((c) => c.startsWith(`${num}-`));
  if (f === undefined) throw new Error(`no capture ${num}`);
  return f;
}

/** Events of one kind, typed. */
export function ofKind<K extends NcclEventKind>(evs: NcclEvent[], kind: K): Extract<NcclEvent, { kind: K }>[] {
  return evs.filter((e): e is Extract<NcclEvent, { kind: K }> => e.kind === kind);
}

/** Count of events per kind, for compact assertions. */
export function kindCounts(evs: NcclEvent[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of evs) out[e.kind] = (out[e.kind] ?? 0) + 1;
  return out;
}
