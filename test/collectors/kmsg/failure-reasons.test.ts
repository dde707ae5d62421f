/**
 * The one line the kmsg collector logs for each way of not reading the kernel log: what it names
 * (the command, the directory, journalctl's own line, the file) and the fix it gives.
 */
import { describe, expect, it } from "vitest";
import { deviceProblem, journalProblemReason, noSourceReason, skippedJournalsReason } from "../../../collectors/kmsg/failure-reasons.js";

const GROUP = "the journal files' group (adm on Debian and Ubuntu, systemd-journal elsewhere)";
const DENIED = "No journal files were opened due to insufficient permissions.";

describe("failure reasons", () => {
  it("names the missing privilege for a kmsg device that may not be opened, and only the errno otherwise", () => {
    expect(deviceProblem("/dev/kmsg", "EPERM")).toBe("cannot open /dev/kmsg: EPERM (reading the kernel log needs CAP_SYSLOG where kernel.dmesg_restrict=1)");
    expect(deviceProblem("/dev/kmsg", "EACCES")).toContain("needs CAP_SYSLOG");
    expect(deviceProblem("/host/dev/kmsg", "ENOENT")).toBe("cannot open /host/dev/kmsg: ENOENT");
  });

  it("quotes journalctl and gives the fix for the system journal and for a -D directory", () => {
    expect(journalProblemReason({ kind: "unreadable", line: DENIED }, undefined)).toBe(
      `journalctl may read none of the journal's files (${DENIED}): add ringwatch's user to ${GROUP}`,
    );
    expect(journalProblemReason({ kind: "unreadable", line: DENIED }, "/host/journal")).toBe(
      `journalctl -D /host/journal may read none of the journal files there (${DENIED}): run ringwatch with ${GROUP} as a supplemental group`,
    );
    const missing = "Failed to open /host/journal: No such file or directory";
    expect(journalProblemReason({ kind: "no_directory", line: missing }, "/host/journal")).toBe(
      `the journal directory /host/journal does not exist (${missing}): mount the host's /var/log/journal there, or /run/log/journal where the host keeps its journal in memory`,
    );
    const denied = "Failed to open /host/journal: Permission denied";
    expect(journalProblemReason({ kind: "directory_denied", line: denied }, "/host/journal")).toBe(
      `the journal directory /host/journal may not be read (${denied}): run ringwatch with ${GROUP} as a supplemental group`,
    );
    const noBoot = "No journal boot entry found from the specified boot (+0).";
    expect(journalProblemReason({ kind: "no_boot", line: noBoot }, undefined)).toBe(
      `journalctl finds no journal of this boot (${noBoot}): journald keeps none`,
    );
    expect(journalProblemReason({ kind: "no_boot", line: noBoot }, "/host/journal")).toMatch(
      /^journalctl -D \/host\/journal finds no journal of a boot there \(.*\): the directory holds no journal files; mount the host's persistent journal/,
    );
  });

  it("counts the system journal files journalctl would skip and names the first; nothing when it may read them all", () => {
    const files = {
      total: 3,
      unreadable: [
        { path: "/j/m/system.journal", code: "EACCES" },
        { path: "/j/m/system@1.journal", code: "EACCES" },
      ],
    };
    expect(skippedJournalsReason("/j", files, "")).toBe(
      `journalctl -D /j skips 2 of the 3 system journal files there, which hold the kernel's messages (/j/m/system.journal: EACCES): run ringwatch with ${GROUP} as a supplemental group`,
    );
    expect(skippedJournalsReason("/j", files, "; and cannot open /dev/kmsg: ENOENT")).toMatch(/supplemental group; and cannot open \/dev\/kmsg: ENOENT$/);
    expect(skippedJournalsReason("/j", { total: 3, unreadable: [] }, "")).toBeUndefined();
    expect(skippedJournalsReason("/j", undefined, "")).toBeUndefined();
  });

  it("with neither source: absent unless the device is there but refused", () => {
    expect(noSourceReason("cannot open /dev/kmsg: ENOENT", "journalctl")).toEqual({
      absent: true,
      reason: "cannot open /dev/kmsg: ENOENT; and journalctl is not available",
    });
    expect(noSourceReason(deviceProblem("/dev/kmsg", "EPERM"), "/usr/bin/journalctl").absent).toBe(false);
    expect(noSourceReason(deviceProblem("/dev/kmsg", "EACCES"), "journalctl").absent).toBe(false);
  });
});
