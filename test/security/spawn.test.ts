/**
 * Processes are started in one module only (collectors/exec.ts), with argument arrays and never
 * through a shell. This reads every source file of the agent and fails on any other way in.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const EXEC = "collectors/exec.ts";

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (p.endsWith(".ts")) out.push(p);
  }
  return out;
}

/** Source without its comments: a comment that shows a regex like `(.*)$` is not code. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

const files = [...sources(join(root, "agent")), ...sources(join(root, "collectors"))].map((p) => ({
  path: relative(root, p),
  text: code(readFileSync(p, "utf8")),
}));

describe("process spawning", () => {
  it("reads the whole agent", () => {
    expect(files.length).toBeGreaterThan(50);
    expect(files.some((f) => f.path === EXEC)).toBe(true);
  });

  it("only collectors/exec.ts imports child_process or execa", () => {
    const offenders = files.filter(
      (f) => f.path !== EXEC && /from\s+["'](node:)?child_process["']|from\s+["']execa["']|require\(["'](node:)?child_process["']\)/.test(f.text),
    );
    expect(offenders.map((f) => f.path)).toEqual([]);
  });

  it("never asks for a shell", () => {
    const offenders = files.filter((f) => /shell\s*:\s*(true|["'`])/.test(f.text) || /execaCommand|\$\s*`|\bexecSync\(|\bexec\(\s*["'`]/.test(f.text));
    expect(offenders.map((f) => f.path)).toEqual([]);
    const exec = files.find((f) => f.path === EXEC)?.text ?? "";
    expect(exec.match(/shell:\s*false/g)?.length).toBe(2); // both ways of starting a process say so
  });
});
