// Writes the generated parts of the documentation from the built code (run `npm run build` first,
// or `npm run gen:docs`, which does): the flag tables of docs/configuration.md.
// `node scripts/gen-docs.mjs --check` exits 1 when the file is not what it would write.
import { readFileSync, writeFileSync } from "node:fs";

const { withFlagTables } = await import(new URL("../dist/agent/config/flag-table.js", import.meta.url).href);
const file = new URL("../docs/configuration.md", import.meta.url);
const current = readFileSync(file, "utf8");
const next = withFlagTables(current);
if (next === undefined) {
  console.error("docs/configuration.md: the flag table markers are missing");
  process.exit(1);
}
if (process.argv.includes("--check")) {
  if (next !== current) {
    console.error("docs/configuration.md is not up to date: run npm run gen:docs");
    process.exit(1);
  }
} else if (next !== current) writeFileSync(file, next);
