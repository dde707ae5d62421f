/**
 * docs/configuration.md holds the flag tables rendered from the flag declarations (agent/config/
 * flag-table.ts, written by `npm run gen:docs`): the file must be what the code would write, and
 * every flag must be in it once, with its environment variable.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { flagTables, withFlagTables } from "../../agent/config/flag-table.js";
import { FLAGS } from "../../agent/config/flags.js";
import { envName } from "../../collectors/settings/flags.js";

const root = resolve(import.meta.dirname, "../..");
const doc = readFileSync(join(root, "docs/configuration.md"), "utf8");

describe("docs/configuration.md", () => {
  it("holds the flag tables as the declarations render them (npm run gen:docs)", () => {
    expect(withFlagTables(doc)).toBe(doc);
  });

  it("lists every flag once, with its environment variable and default", () => {
    const tables = flagTables();
    const rows = tables.split("\n").filter((l) => l.startsWith("| `--"));
    expect(rows).toHaveLength(FLAGS.length);
    for (const f of FLAGS) {
      const flag = f.kind === "bool" ? `--[no-]${f.name}\`` : `--${f.name}=`;
      const mine = rows.filter((r) => r.startsWith(`| \`${flag}`));
      expect(mine, f.name).toHaveLength(1);
      expect(mine[0]).toContain(`\`${envName(f.name)}\``);
      if (f.default) expect(mine[0]).toContain(`\`${f.default.replace(/\|/g, "\\|")}\``);
    }
  });

  it("a changed declaration makes the check fail", () => {
    const stale = doc.replace("`RINGWATCH_COLLECTOR_GPU_INTERVAL`", "`RINGWATCH_GPU_INTERVAL`");
    expect(stale).not.toBe(doc);
    expect(withFlagTables(stale)).not.toBe(stale);
  });
});
