// Preloaded into the agent by test/security/basic-auth.test.ts (NODE_OPTIONS=--import=<this file>):
// every bcrypt.compare the agent makes writes one line to its stderr, with the cost of the hash it
// checks against, so the test counts bcrypt runs instead of timing requests. The agent imports the
// same module instance (bcryptjs from this checkout's node_modules), whose default export is a
// plain object: replacing its compare is seen by the agent's `bcrypt.compare(...)`.
import bcrypt from "bcryptjs";

const compare = bcrypt.compare;
bcrypt.compare = function countedCompare(password, hash, ...rest) {
  process.stderr.write(`bcrypt.compare cost=${String(hash).slice(4, 6)}\n`);
  return compare.call(this, password, hash, ...rest);
};
