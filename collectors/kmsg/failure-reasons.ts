/**
 * What each failure to read the kernel log means, in the one line the kmsg collector logs for it
 * (its health reason), with the fix: a /dev/kmsg that cannot be opened, journalctl's refusals
 * (journal.ts), system journal files of a -D directory that journalctl would skip
 * (journal-files.ts), and neither source being there.
 */
import type { UnreadableJournals } from "./journal-files.js";
import type { JournalProblem } from "./journal.js";

/** The journal files' group, for the fix in a log line. */
const JOURNAL_GROUP = "the journal files' group (adm on Debian and Ubuntu, systemd-journal elsewhere)";

/** journalctl's complaint, with the fix, for the one log line. */
export function journalProblemReason(p: JournalProblem, dir: string | undefined): string {
  const cmd = dir !== undefined ? `journalctl -D ${dir}` : "journalctl";
  switch (p.kind) {
    case "unreadable":
      return dir !== undefined
        ? `${cmd} may read none of the journal files there (${p.line}): run ringwatch with ${JOURNAL_GROUP} as a supplemental group`
        : `${cmd} may read none of the journal's files (${p.line}): add ringwatch's user to ${JOURNAL_GROUP}`;
    case "no_directory":
      return `the journal directory ${dir ?? "?"} does not exist (${p.line}): mount the host's /var/log/journal there, or /run/log/journal where the host keeps its journal in memory`;
    case "directory_denied":
      return `the journal directory ${dir ?? "?"} may not be read (${p.line}): run ringwatch with ${JOURNAL_GROUP} as a supplemental group`;
    case "no_boot":
      return dir !== undefined
        ? `${cmd} finds no journal of a boot there (${p.line}): the directory holds no journal files; mount the host's persistent journal (/var/log/journal) there, or /run/log/journal where the host keeps its journal in memory`
        : `${cmd} finds no journal of this boot (${p.line}): journald keeps none`;
  }
}

/** What an errno from opening /dev/kmsg means, for the one log line. */
export function deviceProblem(path: string, code: string): string {
  if (code === "EPERM" || code === "EACCES") return `cannot open ${path}: ${code} (reading the kernel log needs CAP_SYSLOG where kernel.dmesg_restrict=1)`;
  return `cannot open ${path}: ${code}`;
}

/**
 * The system journal files of `dir` that journalctl -D would skip, with the fix; undefined when it
 * may read them all. `and` ends the line (`; and <why the device was not read>`, or "").
 */
export function skippedJournalsReason(dir: string, files: UnreadableJournals | undefined, and: string): string | undefined {
  const first = files?.unreadable[0];
  if (files === undefined || first === undefined) return undefined;
  return `journalctl -D ${dir} skips ${files.unreadable.length} of the ${files.total} system journal files there, which hold the kernel's messages (${first.path}: ${first.code}): run ringwatch with ${JOURNAL_GROUP} as a supplemental group${and}`;
}

/**
 * Neither source: the device could not be opened (`deviceReason`) and journalctl is not there.
 * Absent, unless the device is there but may not be read (EPERM, EACCES: a missing privilege).
 */
export function noSourceReason(deviceReason: string, journalctl: string): { absent: boolean; reason: string } {
  return { absent: !deviceReason.includes("EPERM") && !deviceReason.includes("EACCES"), reason: `${deviceReason}; and ${journalctl} is not available` };
}
