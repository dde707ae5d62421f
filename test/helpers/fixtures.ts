import { readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Root of test/fixtures. */
export const fixturesDir = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures");

/** Full text of a fixture, provenance line included. */
export function readFixtureRaw(relPath: string): string {
  return readFileSync(join(fixturesDir, relPath), "utf8");
}

/**
 * Text of a real capture without its line 1 (the `# source: ...` provenance line),
 * i.e. exactly what the tool printed.
 */
export function readCapture(relPath: string): string {
  const raw = readFixtureRaw(relPath);
  const nl = raw.indexOf("\n");
  return nl < 0 ? "" : raw.slice(nl + 1);
}

/** Sorted file names (not paths) in a fixture directory, optionally filtered by suffix. */
export function listFixtures(relDir: string, suffix = ""): string[] {
  return readdirSync(join(fixturesDir, relDir))
    .filter((f) => f.endsWith(suffix) && !f.startsWith("SOURCES"))
    .sort();
}
