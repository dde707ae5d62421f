/** A pino logger whose JSON lines a test can read back. */
import { Writable } from "node:stream";
import { pino } from "pino";

export function memoryLogger(level: pino.Level = "debug"): { logger: pino.Logger; lines: () => Array<Record<string, unknown>> } {
  const out: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      out.push(...chunk.toString().split("\n").filter(Boolean));
      cb();
    },
  });
  return { logger: pino({ level }, stream), lines: () => out.map((l) => JSON.parse(l) as Record<string, unknown>) };
}
