/**
 * test/helpers/staged-build.ts copies the build and the production dependencies for tests that run
 * the agent as nobody. Its list of dependencies is its own walk of package.json files: it must be
 * exactly what npm's lock file records as production packages, and the copy must run as the user the tests run it as.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/agent-process.js";
import { deniedUser, productionPackages, runScriptAs, stageBuild, type StagedBuild } from "../helpers/staged-build.js";

let staged: StagedBuild;
beforeAll(() => {
  staged = stageBuild("rw-staged-test-");
});
afterAll(() => staged.remove());

describe("the staged build (test/helpers/staged-build.ts)", () => {
  it("copies exactly the production packages of package-lock.json (those not marked dev)", () => {
    const lock = JSON.parse(readFileSync(join(repoRoot, "package-lock.json"), "utf8")) as {
      packages: Record<string, { dev?: boolean; devOptional?: boolean }>;
    };
    const production = Object.entries(lock.packages)
      .filter(([path, p]) => path !== "" && p.dev !== true && p.devOptional !== true)
      .map(([path]) => path)
      .sort();
    expect(production.length).toBeGreaterThan(6); // the six direct dependencies and theirs
    expect(productionPackages()).toEqual(production);
    expect(staged.packages).toEqual(production);
  });

  it(`runs as ${deniedUser ? "nobody" : "this user"}: the agent prints its version from the copy`, async () => {
    const r = await runScriptAs(
      staged,
      `
      import { execFileSync } from "node:child_process";
      console.log(execFileSync(process.execPath, [process.argv[1], "--version"], { encoding: "utf8" }).split("\\n")[0]);
      console.log(process.getuid());
    `,
      [staged.agentMain],
      deniedUser,
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const [version, uid] = r.stdout.trim().split("\n");
    expect(version).toMatch(/^ringwatch 0\.1\.0 \(node /);
    expect(Number(uid)).toBe(deniedUser?.uid ?? process.getuid?.());
  });
});
