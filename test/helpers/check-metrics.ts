/**
 * `promtool check metrics` on a scrape: the exposition goes to its standard input, the only way it
 * reads one; exit 0 when it parses and passes every lint (3 on a lint problem, 1 on a parse error).
 */
import { runProcess, type ProcessResult } from "./run-process.js";

export function promtoolCheckMetrics(promtool: string, exposition: string, timeoutMs = 30_000): Promise<ProcessResult> {
  return runProcess(promtool, ["check", "metrics"], { stdin: exposition, timeoutMs, what: "promtool check metrics" });
}
