/** A temp directory for one test: made by temp-dir.ts, removed when the test finishes (pass or fail). */
import { onTestFinished } from "vitest";
import { removeTempDir, tempDir } from "./temp-dir.js";

export function testTempDir(base?: string, prefix = "rw-test-"): string {
  const d = tempDir(prefix, base);
  onTestFinished(() => removeTempDir(d));
  return d;
}
