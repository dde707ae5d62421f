/**
 * test/helpers/staged-build.ts copies the build and the production dependencies for tests that run
 * the agent as nobody. Its list of dependencies is its own walk of package.json files: it must be
 * exactly what npm itself lists, and the copy must run as the user the tests run it as.
 */
import { spawnSync } from "node:child_process";
import { relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/agent-process.js";
import { deniedUser, productionPackages, runScriptAs, stageBuild, type StagedBuild } from "../helpers/staged-build.js";

let staged: StagedBuild;
beforeAll(() => {
  staged = stageBuild("rw-staged-test-");
});
afterAll(() => staged.remove());

describe("the staged build (test/helpers/staged-build.ts)", () => {
  it("copies exactly the packages `npm ls --omit=dev --all` lists", () => {
    // npm ls exits 1 on problems elsewhere in node_modules (e.g. dev packages it calls extraneous
    // when node_modules is shared); the list it prints is still complete.
    const ls = spawnSync("npm", ["ls", "--omit=dev", "--parseable", "--all"], { cwd: repoRoot, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    const npm = ls.stdout
      .split("\n")
      .filter((l) => l !== "" && l !== repoRoot)
      .map((l) => relative(repoRoot, l))
      .sort();
    expect(npm.length).toBeGreaterThan(6); // the six direct dependencies and theirs
    expect(productionPackages()).toEqual(npm);
    expect(staged.packages).toEqual(npm);
  });

  it(`runs as ${deniedUser ? "nobody" : "this user"}: the agent prints its version from the copy`, async () => {
    const r = await runScriptAs(staged, `
      import { spawnSync } from "node:child_process";
      console.log(execFileSync(process.execPath, [process.argv[1], "--version"], { encoding: "utf8" }).split("\\n")[0]);
      console.log(process.getuid());
    `, [staged.agentMain], deniedUser);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const [version, uid] = r.stdout.trim().split("\n");
    expect(version).toMatch(/^ringwatch 0\.1\.0 \(node /);
    expect(Number(uid)).toBe(deniedUser?.uid ?? process.getuid?.());
  });
});
