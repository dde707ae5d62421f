/**
 * The one temp-directory maker of the tests (no vitest import, so bench/ can use it too): a fresh
 * directory under `base` (the system temp directory by default), by its real path (no symlinks in
 * it, as the follower reports paths), removed when the process exits unless removed before.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made = new Set<string>();
let hooked = false;

export function tempDir(prefix = "rw-test-", base = tmpdir()): string {
  const d = realpathSync(mkdtempSync(join(base, prefix)));
  made.add(d);
  if (!hooked) {
    hooked = true;
    process.once("exit", removeTempDirs);
  }
  return d;
}

/** Removes one directory made here (and forgets it). */
export function removeTempDir(d: string): void {
  made.delete(d);
  try {
    rmSync(d, { recursive: true, force: true });
  } catch {
    // a mode-000 directory of another user's test: the system cleans temp directories
  }
}

/** Removes every directory made here so far. */
export function removeTempDirs(): void {
  for (const d of [...made]) removeTempDir(d);
}
