/**
 * Repository paths for the compiled bench (.bench/bench/*.js). The test helpers' own path
 * constants resolve relative to their compiled location (.bench/test/...), so the bench does not
 * use them.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const repoRoot = resolve(import.meta.dirname, "../..");
export const agentMain = join(repoRoot, "dist/agent/main.js");
export const fakesDir = join(repoRoot, "test/fakes");
export const fixturesDir = join(repoRoot, "test/fixtures");
export const outDir = join(repoRoot, "bench/out");

/** A capture without its line 1 (the `# source:` provenance line): what the tool printed. */
export function readCapture(rel: string): string {
  const raw = readFileSync(join(fixturesDir, rel), "utf8");
  const nl = raw.indexOf("\n");
  return nl < 0 ? "" : raw.slice(nl + 1);
}
