/** Test wiring for the gdr collector (shared with other collectors' tests) and its procfs fixtures. */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export { fakesDir, makeDeps, series, valueOf, type Series } from "../../helpers/collector-deps.js";
export const procfsFixtures = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "fixtures", "procfs");
