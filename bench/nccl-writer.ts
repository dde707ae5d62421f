/**
 * Child process that writes the bench NCCL job (nccl-job.ts) at a steady rate, so that the
 * writing costs neither the agent nor the bench's HTTP client any CPU.
 *   node .bench/bench/nccl-writer.js <dir> <linesPerSecond> <seconds>
 * Stops early on SIGTERM; prints {"files","lines","bytes"} as JSON on stdout when done.
 */
import { writeAtRate } from "./nccl-job.js";

const [dir, rate, seconds] = process.argv.slice(2);
if (dir === undefined || rate === undefined || seconds === undefined) {
  process.stderr.write("usage: nccl-writer <dir> <linesPerSecond> <seconds>\n");
  process.exit(2);
}
const stop = new AbortController();
process.once("SIGTERM", () => stop.abort());
const written = await writeAtRate(dir, { linesPerSecond: Number(rate), seconds: Number(seconds), signal: stop.signal });
process.stdout.write(`${JSON.stringify(written)}\n`);
