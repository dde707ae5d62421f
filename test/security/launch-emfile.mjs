// Run by launch-failure.test.ts under a small open-file limit (prlimit --nofile): uses up every
// descriptor, then starts a tool through the built collectors/exec.js, once with run() and once
// with stream(), and prints one line of JSON with what each reported. The process must reach the
// end: before, the first launch ended it with an unhandled 'error' event (EMFILE).
//   node launch-emfile.mjs <dist/collectors/exec.js> <tool>
import { openSync, closeSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [execModule, tool] = process.argv.slice(2);
const { createExec } = await import(pathToFileURL(execModule).href);
const exec = createExec();

const held = [];
for (;;) {
  try {
    held.push(openSync("/dev/null", "r"));
  } catch (err) {
    if (err.code !== "EMFILE") throw err;
    break;
  }
}
const run = await exec.run(tool, ["--version"]);
const streamed = await new Promise((resolve) => {
  let lines = 0;
  const handle = exec.stream(tool, ["--version"], { onLine: () => lines++, onExit: (exit) => resolve({ ...exit, lines, pid: handle.pid }) });
});
for (const fd of held) closeSync(fd);
// With descriptors again, the same tool starts.
const again = await exec.run(tool, ["--version"]);
process.stdout.write(`${JSON.stringify({ held: held.length, run, streamed, again: { ok: again.ok, problem: again.problem } })}\n`);
