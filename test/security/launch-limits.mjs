// Run by launch-failure.test.ts: uses up a resource a launch needs, then starts a tool through the
// built collectors/exec.js, once with run() and once with stream(), gives the resource back and
// starts it once more, and prints one line of JSON with what each reported. The process must reach
// the end: before, the first launch ended it with an unhandled 'error' event.
//   node launch-limits.mjs <dist/collectors/exec.js> <tool> fds
//     under a small open-file limit (prlimit --nofile): every descriptor is used up (EMFILE);
//   prlimit --nproc=N: -- node launch-limits.mjs <dist/collectors/exec.js> <tool> procs
//     as a user of its own (RLIMIT_NPROC binds only users without CAP_SYS_RESOURCE). The script
//     prints "ready" and waits for a line on stdin: the caller has started that user's processes
//     up to N meanwhile (fork: EAGAIN). After its launches it prints "limited" and waits for another
//     line: the caller has ended them.
import { closeSync, openSync } from "node:fs";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const [execModule, tool, mode] = process.argv.slice(2);
const { createExec } = await import(pathToFileURL(execModule).href);
const exec = createExec();
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

async function useUp() {
  if (mode === "procs") {
    process.stdout.write("ready\n");
    await lines.next();
    return {
      held: 0,
      release: async () => {
        process.stdout.write("limited\n");
        await lines.next();
      },
    };
  }
  const fds = [];
  for (;;) {
    try {
      fds.push(openSync("/dev/null", "r"));
    } catch (err) {
      if (err.code !== "EMFILE") throw err;
      break;
    }
  }
  return { held: fds.length, release: async () => fds.forEach((fd) => closeSync(fd)) };
}

const { held, release } = await useUp();
const run = await exec.run(tool, ["--version"]);
const streamed = await new Promise((resolve) => {
  let n = 0;
  const handle = exec.stream(tool, ["--version"], { onLine: () => n++, onExit: (exit) => resolve({ ...exit, lines: n, pid: handle.pid }) });
});
await release();
// With the resource back, the same tool starts.
const again = await exec.run(tool, ["--version"]);
process.stdout.write(`${JSON.stringify({ held, run, streamed, again: { ok: again.ok, problem: again.problem } })}\n`);
process.exit(0);
