// Shared by the fault scripts: compiles test/faults/lib (and what it imports: test/sim,
// test/helpers) with tsc into node_modules/.cache/ringwatch-faults and imports a module from it.
// The agent under test is the built one (dist/agent/main.js): run `npm run build` first.
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, symlinkSync, unlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const outDir = join(repoRoot, "node_modules/.cache/ringwatch-faults");

/** Compiles once per run, then imports test/faults/lib/<name>.js. */
export async function importLib(name) {
  if (!existsSync(join(repoRoot, "dist/agent/main.js"))) {
    console.error("dist/agent/main.js is missing: run `npm run build` first");
    process.exit(2);
  }
  if (!globalThis.__ringwatchFaultsCompiled) {
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
    // Without the NODE_OPTIONS given for the agent (the DaemonSet's heap cap is too small for tsc).
    execFileSync(process.execPath, [tsc, "-p", join(repoRoot, "scripts/faults/tsconfig.json")], {
      stdio: "inherit",
      env: { ...process.env, NODE_OPTIONS: "" },
    });
    // The helpers find the agent, the fakes and the fixtures relative to themselves: link them in.
    for (const rel of ["dist", "test/fakes", "test/fixtures"]) {
      const link = join(outDir, rel);
      const st = lstatSync(link, { throwIfNoEntry: false });
      if (st?.isSymbolicLink()) unlinkSync(link);
      else if (st) throw new Error(`${link} exists and is not a link`);
      mkdirSync(dirname(link), { recursive: true });
      symlinkSync(join(repoRoot, rel), link);
    }
    globalThis.__ringwatchFaultsCompiled = true;
  }
  return import(pathToFileURL(join(outDir, "test/faults/lib", `${name}.js`)).href);
}

/** `--name=value` options of the command line, as strings. */
export function options(argv = process.argv.slice(2)) {
  const out = {};
  for (const a of argv) {
    const m = /^--([\w-]+)=(.*)$/.exec(a);
    if (!m) {
      console.error(`unknown argument ${a}`);
      process.exit(2);
    }
    out[m[1]] = m[2];
  }
  return out;
}

/**
 * Prints each goal ([goal, ok, measured]) as a table, then PASS or FAIL with the missed ones, and
 * exits 1 when one was missed.
 */
export function reportGoals(goals) {
  const w = Math.max(...goals.map(([g]) => g.length));
  console.log(`\n${"goal".padEnd(w)}  ok    measured`);
  for (const [goal, ok, measured] of goals) console.log(`${goal.padEnd(w)}  ${ok ? "PASS" : "MISS"}  ${measured}`);
  const missed = goals.filter(([, ok]) => !ok).map(([goal]) => goal);
  console.log(missed.length ? `FAIL: ${missed.join("; ")}` : "PASS");
  process.exit(missed.length ? 1 : 0);
}
