/**
 * Follows the kernel's messages in the systemd journal with one long-lived
 * `journalctl -k -f -o json --no-tail` child (through the one spawn module), resuming after the
 * last cursor handled. Used where /dev/kmsg cannot be opened (no CAP_SYSLOG under
 * kernel.dmesg_restrict, or a container without the device) and the journal is readable.
 */
import type { Exec, StreamExit, StreamHandle } from "../exec.js";
import { parseJournalLine, type JournalRecord } from "./parse/journal-record.js";

export interface JournalEvents {
  onRecord(r: JournalRecord): void;
  /** journalctl runs but may not show the kernel's messages: it printed its "not seeing" hint. */
  onDenied(message: string): void;
  onExit(exit: StreamExit): void;
}

export interface JournalOptions {
  journalctl: string;
  /** journalctl -D: a journal directory (a container reading the host's /var/log/journal). */
  directory?: string;
  /** Resume after this cursor. */
  afterCursor?: string;
}

/** journalctl's words when the user may not read the system journal. */
const DENIED_HINT = "not seeing messages from other users and the system";

export function journalArgs(o: JournalOptions): string[] {
  const args = ["-k", "-f", "-o", "json", "--no-tail", "--no-pager"];
  if (o.directory !== undefined) args.push("-D", o.directory);
  if (o.afterCursor !== undefined) args.push(`--after-cursor=${o.afterCursor}`);
  return args;
}

export function followJournal(exec: Exec, o: JournalOptions, events: JournalEvents): { handle: StreamHandle; garbage: () => number } {
  let garbage = 0;
  let denied = false;
  const handle = exec.stream(
    o.journalctl,
    journalArgs(o),
    {
      onLine(line) {
        const r = parseJournalLine(line);
        if (r === undefined) garbage++;
        else events.onRecord(r);
      },
      onExit: (exit) => events.onExit(exit),
    },
    {
      maxLineBytes: 256 * 1024,
      onOverlong: () => garbage++,
      onStderr(chunk) {
        if (!denied && chunk.includes(DENIED_HINT)) {
          denied = true;
          events.onDenied(chunk.trim().split("\n")[0] ?? DENIED_HINT);
        }
      },
    },
  );
  return { handle, garbage: () => garbage };
}
