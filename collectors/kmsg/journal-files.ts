/**
 * The journal files of a `journalctl -D` directory that this process may not read. journalctl skips
 * such a file without a word when it can read others (journal.ts), so the kernel's messages can be
 * missing while it runs. They are in the system journal: `system.journal` and its archives
 * (`system@<...>.journal`, `system@<...>.journal~`), in the directory or in its machine-id
 * subdirectories (journald's layout: `/var/log/journal/<machine-id>/system.journal`).
 * `user-<uid>.journal` files hold no kernel messages and are not looked at.
 */
import { constants } from "node:fs";
import { access, readdir } from "node:fs/promises";
import { join } from "node:path";

export interface UnreadableJournals {
  /** System journal files found (readable or not), and machine-id directories that cannot be listed. */
  total: number;
  /** Those this process may not read, each with its error code (EACCES). */
  unreadable: Array<{ path: string; code: string }>;
}

const SYSTEM_JOURNAL = /^system(@[^/]*)?\.journal~?$/;
const MACHINE_ID = /^[0-9a-f]{32}$/;

function codeOf(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? "EIO";
}

/** undefined when the directory itself cannot be listed (journalctl says so itself). */
export async function unreadableSystemJournals(dir: string): Promise<UnreadableJournals | undefined> {
  const top = await readdir(dir, { withFileTypes: true }).catch(() => undefined);
  if (top === undefined) return undefined;
  const out: UnreadableJournals = { total: 0, unreadable: [] };
  const check = async (path: string): Promise<void> => {
    out.total++;
    await access(path, constants.R_OK).catch((err: unknown) => out.unreadable.push({ path, code: codeOf(err) }));
  };
  for (const e of top) {
    const path = join(dir, e.name);
    if (e.isFile() && SYSTEM_JOURNAL.test(e.name)) await check(path);
    else if (e.isDirectory() && MACHINE_ID.test(e.name)) {
      const inner = await readdir(path, { withFileTypes: true }).catch((err: unknown) => codeOf(err));
      if (typeof inner === "string") {
        out.total++;
        out.unreadable.push({ path, code: inner });
        continue;
      }
      for (const f of inner) if (f.isFile() && SYSTEM_JOURNAL.test(f.name)) await check(join(path, f.name));
    }
  }
  out.unreadable.sort((a, b) => a.path.localeCompare(b.path));
  return out;
}
