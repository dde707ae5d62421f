import { pino, type Logger } from "pino";
import type { LogLevel } from "./config/config.js";

/** JSON logs to stdout (or stderr in --once mode, where stdout carries the exposition). */
export function createLogger(level: LogLevel, toStderr = false): Logger {
  return pino({ level, base: { app: "ringwatch" }, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination({ fd: toStderr ? 2 : 1, sync: true }));
}
