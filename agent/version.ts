import { readFileSync } from "node:fs";
import { EMBEDDED } from "../collectors/embedded.js";

/** The package version: embedded in the single executable, else read once from package.json (works from agent/ and dist/agent/). */
export const VERSION: string = (() => {
  if (EMBEDDED !== undefined) return EMBEDDED.version;
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
