/**
 * Follows the kernel's messages in the systemd journal with one long-lived
 * `journalctl -k -f -o json --no-tail` child (through the one spawn module), resuming after the
 * last cursor handled. Used where /dev/kmsg cannot be opened (no CAP_SYSLOG under
 * kernel.dmesg_restrict, or a container without the device) and the journal is readable.
 *
 * What journalctl says when it cannot read the journal (systemd's src/journal/journalctl*.c and
 * src/shared/journal-util.c; checked against journalctl 252 in
 * test/collectors/kmsg/journal.integration.test.ts):
 * `-o json` makes it quiet, so its "Hint: You are currently not seeing messages from other users
 * and the system" never comes. What does come, on stderr, each time with exit status 1:
 * - every journal file unreadable (EACCES): `No journal files were opened due to insufficient
 *   permissions.`;
 * - the -D directory missing or unreadable: `Failed to open <dir>: No such file or directory` /
 *   `...: Permission denied`;
 * - no readable journal of a boot (an empty -D directory: -k means this boot, and with -D the
 *   newest boot there): `Data from the specified boot (+0) is not available: No such boot ID in
 *   journal` (252), `No journal boot entry found from the specified boot (+0).` (newer).
 * Some files unreadable and others not: journalctl reads the others and says nothing
 * (journal-files.ts looks for that case).
 */
import type { Exec, StreamExit, StreamHandle } from "../exec.js";
import { parseJournalLine, type JournalRecord } from "./parse/journal-record.js";

export interface JournalEvents {
  onRecord(r: JournalRecord): void;
  onExit(exit: StreamExit): void;
}

export interface JournalOptions {
  journalctl: string;
  /** journalctl -D: a journal directory (a container reading the host's /var/log/journal). */
  directory?: string;
  /** Resume after this cursor. */
  afterCursor?: string;
}

/** Why journalctl could not read the journal: its own line, and what it means. */
export interface JournalProblem {
  kind: "unreadable" | "no_directory" | "directory_denied" | "no_boot";
  /** journalctl's line, as it printed it. */
  line: string;
}

const PROBLEMS: ReadonlyArray<[JournalProblem["kind"], (line: string) => boolean]> = [
  ["unreadable", (l) => l.startsWith("No journal files were opened due to insufficient permissions")],
  ["no_directory", (l) => l.startsWith("Failed to open ") && l.endsWith(": No such file or directory")],
  ["directory_denied", (l) => l.startsWith("Failed to open ") && l.endsWith(": Permission denied")],
  ["no_boot", (l) => l.includes("from the specified boot")],
];

/** The first line of journalctl's stderr that says why it could not read the journal, if one does. */
export function journalProblem(stderr: string): JournalProblem | undefined {
  for (const raw of stderr.split("\n")) {
    const line = raw.trim();
    const hit = PROBLEMS.find(([, test]) => test(line));
    if (hit !== undefined) return { kind: hit[0], line };
  }
  return undefined;
}

export function journalArgs(o: JournalOptions): string[] {
  const args = ["-k", "-f", "-o", "json", "--no-tail", "--no-pager"];
  if (o.directory !== undefined) args.push("-D", o.directory);
  if (o.afterCursor !== undefined) args.push(`--after-cursor=${o.afterCursor}`);
  return args;
}

export function followJournal(exec: Exec, o: JournalOptions, events: JournalEvents): { handle: StreamHandle; garbage: () => number } {
  let garbage = 0;
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
    { maxLineBytes: 256 * 1024, onOverlong: () => garbage++ },
  );
  return { handle, garbage: () => garbage };
}
