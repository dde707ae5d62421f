/**
 * journalProblem: journalctl's stderr when it cannot read the journal. The texts are what systemd
 * 252's journalctl printed on a Debian 12 machine for `-k -f -o json --no-tail --no-pager -D <dir>`
 * (journal.integration.test.ts checks the live journalctl where there is one), and newer systemd's
 * text for an empty directory (src/journal/journalctl-util.c).
 */
import { describe, expect, it } from "vitest";
import { journalArgs, journalProblem } from "../../../collectors/kmsg/journal.js";

describe("journalProblem", () => {
  it("names the problem by journalctl's own line", () => {
    expect(journalProblem("No journal files were opened due to insufficient permissions.\n")).toEqual({
      kind: "unreadable",
      line: "No journal files were opened due to insufficient permissions.",
    });
    expect(journalProblem("Failed to open /host/var/log/journal: No such file or directory\n")).toEqual({
      kind: "no_directory",
      line: "Failed to open /host/var/log/journal: No such file or directory",
    });
    expect(journalProblem("Failed to open /host/var/log/journal: Permission denied\n")?.kind).toBe("directory_denied");
    expect(journalProblem("Data from the specified boot (+0) is not available: No such boot ID in journal\n")?.kind).toBe("no_boot");
    expect(journalProblem("No journal boot entry found from the specified boot (+0).\n")?.kind).toBe("no_boot");
  });

  it("finds the line among the others journalctl prints (a skipped file; the hint, without -o json)", () => {
    // nobody; -D holds an unreadable system.journal and an empty (truncated) user journal.
    const skipped = "Journal file /tmp/j/0123456789abcdef0123456789abcdef/user-1000.journal is truncated, ignoring file.";
    const refusal = "No journal files were opened due to insufficient permissions.";
    const json = [refusal, skipped, ""].join("\n");
    const short = [
      "Hint: You are currently not seeing messages from other users and the system.",
      "      Users in the 'systemd-journal' group can see all messages. Pass -q to",
      "      turn off this notice.",
      refusal,
      skipped,
      "",
    ].join("\n");
    expect(journalProblem(json)).toEqual({ kind: "unreadable", line: refusal });
    expect(journalProblem(short)).toEqual({ kind: "unreadable", line: refusal });
  });

  it("says nothing about other failures, or a truncated file alone", () => {
    expect(journalProblem("Failed to iterate through journal: Bad message\n")).toBeUndefined();
    expect(journalProblem("Journal file /j/system.journal is truncated, ignoring file.\n")).toBeUndefined();
    expect(journalProblem("")).toBeUndefined();
  });

  it("asks for JSON (which makes journalctl quiet: no hint ever comes) and -D only when given", () => {
    expect(journalArgs({ journalctl: "journalctl" })).toEqual(["-k", "-f", "-o", "json", "--no-tail", "--no-pager"]);
    expect(journalArgs({ journalctl: "journalctl", directory: "/host/var/log/journal", afterCursor: "s=1" })).toEqual([
      "-k",
      "-f",
      "-o",
      "json",
      "--no-tail",
      "--no-pager",
      "-D",
      "/host/var/log/journal",
      "--after-cursor=s=1",
    ]);
  });
});
