// Preloaded into the agent by the basic-auth tests (NODE_OPTIONS=--import=<this file>): every
// bcrypt comparison the agent makes writes one line to its stderr, with the cost of the hash it
// checks against, so the tests count bcrypt runs instead of timing requests. The agent imports the
// same module instance (bcryptjs from this checkout's node_modules), whose default export is a
// plain object: replacing its functions is seen by the agent's `bcrypt.compare(...)`.
//
// The agent compares in a worker thread (agent/web/bcrypt-thread.ts), and worker threads do not
// run NODE_OPTIONS' --import: this file also wraps the code of every eval'd worker so that it
// imports this file first; there it writes with writeSync, before the comparison's result can
// reach the main thread.
import { writeSync } from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { isMainThread } from "node:worker_threads";
import bcrypt from "bcryptjs";

function counted(name) {
  const original = bcrypt[name];
  bcrypt[name] = function countedCompare(password, hash, ...rest) {
    writeSync(2, `bcrypt.compare cost=${String(hash).slice(4, 6)}\n`);
    return original.call(this, password, hash, ...rest);
  };
}
counted("compare");
counted("compareSync");

if (isMainThread) {
  const threads = createRequire(import.meta.url)("node:worker_threads");
  const Worker = threads.Worker;
  threads.Worker = class CountedWorker extends Worker {
    constructor(code, options) {
      super(options?.eval ? `import(${JSON.stringify(import.meta.url)}).then(() => {\n${code}\n});` : code, options);
    }
  };
  syncBuiltinESMExports();
}
