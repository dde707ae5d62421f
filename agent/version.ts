import { readFileSync } from "node:fs";

/** The package version, read once from package.json (works from agent/ and dist/agent/). */
export const VERSION: string = (() => {
  for (const rel of ["../package.json", "../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), "utf8")) as { name?: string; version?: string };
      if (pkg.name === "ringwatch" && pkg.version) return pkg.version;
    } catch {
      // try the next location
    }
  }
  return "unknown";
})();
