/**
 * docs/check.md is the one home of `ringwatch check`'s contract: every check name, every flag and
 * every field of --json is there, and its example file of expectations is one the check reads.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { CHECK_FLAGS } from "../../agent/check-args.js";
import { readExpectations } from "../../agent/check-expect.js";
import { CHECK_NAMES } from "../../agent/check-judge.js";
import { formatJson } from "../../agent/check-output.js";
import { tempDir } from "../helpers/temp-dir.js";
import { proseLines } from "./markdown.js";

const root = resolve(import.meta.dirname, "../..");
const doc = readFileSync(join(root, "docs/check.md"), "utf8");

/** The first cells of the table rows under a heading (up to the next heading of its level or above). */
function firstCells(heading: string): string[] {
  const lines = proseLines(doc).map((l) => l.text);
  const start = lines.indexOf(heading);
  if (start < 0) return [];
  const level = /^#+/.exec(heading)?.[0].length ?? 2;
  const end = lines.findIndex((l, i) => i > start && /^#+ /.test(l) && (/^#+/.exec(l)?.[0].length ?? 9) <= level);
  return lines
    .slice(start + 1, end < 0 ? undefined : end)
    .filter((l) => l.startsWith("| ") && !l.startsWith("|---"))
    .slice(1)
    .map((l) => l.split(" | ")[0]?.slice(2) ?? "");
}

describe("docs/check.md", () => {
  it("has a row for every check, in the order they are printed", () => {
    expect(firstCells("## Checks").map((c) => c.replace(/`/g, ""))).toEqual(CHECK_NAMES);
  });

  it("has a row for every flag of the check, with its default", () => {
    const rows = firstCells("## Flags");
    for (const f of CHECK_FLAGS) {
      const cell = f.kind === "bool" ? `\`--[no-]${f.name}\`` : `\`--${f.name}=${f.name === "check.mtu" ? "IFACE=BYTES" : ""}`;
      const row = rows.find((r) => r.startsWith(cell));
      expect(row, f.name).toBeDefined();
      if (f.default) expect(doc).toContain(`| \`${f.default}\` |`);
    }
    expect(rows).toHaveLength(CHECK_FLAGS.length + 2); // and --json, -h/--help
  });

  it("has a row for every field of --json", () => {
    const fields = Object.keys(JSON.parse(formatJson({ version: "0", nowMs: 0, results: [], sources: [], expectations: {} })) as object);
    expect(firstCells("## Output").map((c) => c.replace(/`/g, ""))).toEqual(fields);
  });

  it("its example file of expectations is read as it says", () => {
    const yaml = /```yaml\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(yaml).toBeDefined();
    const file = join(tempDir(), "check.yaml");
    writeFileSync(file, yaml ?? "");
    const e = readExpectations(new Map([["check.file", file]]));
    expect(e).toMatchObject({ gpuCount: 8, ibPorts: 8, ibRateGbps: 400, ibDevices: ["mlx5_?"], gdrPeermem: true, xidWindowMs: 86_400_000, timeoutMs: 60_000 });
    expect(e.mtu).toEqual([
      { pattern: "ib*", bytes: 4092 },
      { pattern: "bond0", bytes: 9000 },
    ]);
  });
});
