/**
 * The import rules of .dependency-cruiser.cjs (run on the repository by `npm run lint:deps` in
 * `npm test`) catch what they are meant to: each rule is broken on purpose in a small copy of the
 * layout, and dependency-cruiser, run as `npm test` runs it, must name that rule for that file.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeTempDir, removeTree } from "../helpers/ttar.js";

const root = resolve(import.meta.dirname, "../..");
const DEPCRUISE = join(root, "node_modules/dependency-cruiser/bin/dependency-cruise.mjs");

interface Violation {
  rule: string;
  from: string;
}

/** dependency-cruiser with the reporter `npm run lint:deps` uses: its exit code and the `error <rule>: <from> → ...` lines. */
function cruise(cwd: string): { code: number | null; violations: Violation[] } {
  const r = spawnSync(process.execPath, [DEPCRUISE, "agent", "collectors", "--config", ".dependency-cruiser.cjs"], { cwd, encoding: "utf8", timeout: 60_000 });
  const violations = [...r.stdout.matchAll(/^\s*error (\S+): (\S+) →/gm)].map((m) => ({ rule: m[1] ?? "", from: m[2] ?? "" }));
  return { code: r.status, violations };
}

/** A tree with the repository's rules, tsconfig and package.json, and these files. */
function tree(files: Record<string, string>): string {
  const dir = makeTempDir("rw-import-rules-");
  cleanup.push(dir);
  for (const f of [".dependency-cruiser.cjs", "tsconfig.json", "package.json"]) copyFileSync(join(root, f), join(dir, f));
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) removeTree(d);
});

/** A small copy of the layout that keeps every rule. */
const CLEAN: Record<string, string> = {
  "agent/main.ts": 'import { COLLECTORS } from "../collectors/index.js";\nexport const main = COLLECTORS;\n',
  "collectors/index.ts": 'import { gpu } from "./gpu/module.js";\nimport { nccl } from "./nccl/module.js";\nexport const COLLECTORS = [gpu, nccl];\n',
  "collectors/exec.ts": 'import { spawn } from "node:child_process";\nexport const run = spawn;\n',
  "collectors/settings/reader.ts": "export const read = (s: string): string => s;\n",
  "collectors/gpu/module.ts": 'import { run } from "../exec.js";\nimport { read } from "../settings/reader.js";\nexport const gpu = { run, read };\n',
  "collectors/nccl/module.ts":
    'import { verdict } from "./logs/detect/verdict.js";\nimport { watch } from "./ras/watch.js";\nexport const nccl = { verdict, watch };\n',
  "collectors/nccl/collector.ts": 'import { nccl } from "./module.js";\nexport const collector = nccl;\n',
  "collectors/nccl/verdict/report.ts": "export interface Finding {\n  kind: string;\n}\n",
  "collectors/nccl/logs/parse/line.ts": "export const parse = (s: string): number => s.length;\n",
  "collectors/nccl/logs/state/tracker.ts": 'import { parse } from "../parse/line.js";\nexport const track = parse;\n',
  "collectors/nccl/logs/detect/verdict.ts":
    'import { track } from "../state/tracker.js";\nimport type { Finding } from "../../verdict/report.js";\nexport const verdict = (f: Finding): number => track(f.kind);\n',
  "collectors/nccl/ras/watch.ts": 'import type { Finding } from "../verdict/report.js";\nexport const watch = (f: Finding): string => f.kind;\n',
  "collectors/nccl/analyze/analyze.ts":
    'import { verdict } from "../logs/detect/verdict.js";\nimport { watch } from "../ras/watch.js";\nexport const analyze = { verdict, watch };\n',
};

describe("import rules (.dependency-cruiser.cjs)", () => {
  it("pass on the repository and on a clean copy of its layout", () => {
    expect(cruise(root)).toMatchObject({ code: 0, violations: [] });
    expect(cruise(tree(CLEAN))).toMatchObject({ code: 0, violations: [] });
  });

  it.each([
    ["collectors-not-to-agent", "collectors/gpu/module.ts", 'import { main } from "../../agent/main.js";\nexport const gpu = main;\n'],
    [
      "no-circular",
      "collectors/nccl/logs/parse/line.ts",
      'import { again } from "./again.js";\nexport const parse = again;\n',
      { "collectors/nccl/logs/parse/again.ts": 'import { parse } from "./line.js";\nexport const again = parse;\n' },
    ],
    [
      "collector-not-to-other-collector",
      "collectors/nccl/logs/detect/verdict.ts",
      'import { gpu } from "../../../gpu/module.js";\nexport const verdict = gpu;\n',
    ],
    ["shared-collector-parts-not-to-collectors", "collectors/settings/reader.ts", 'import { nccl } from "../nccl/module.js";\nexport const read = nccl;\n'],
    ["nccl-source-ras", "collectors/nccl/ras/watch.ts", 'import { track } from "../logs/state/tracker.js";\nexport const watch = track;\n'],
    ["nccl-source-logs", "collectors/nccl/logs/detect/verdict.ts", 'import { collector } from "../../collector.js";\nexport const verdict = collector;\n'],
    ["nccl-verdict-imports-no-source", "collectors/nccl/verdict/report.ts", 'import { watch } from "../ras/watch.js";\nexport const report = watch;\n'],
    [
      "nccl-analyze-not-to-live-wiring",
      "collectors/nccl/analyze/analyze.ts",
      'import { collector } from "../collector.js";\nexport const analyze = collector;\n',
    ],
    ["nccl-logs-parse-layer", "collectors/nccl/logs/parse/line.ts", 'import { track } from "../state/tracker.js";\nexport const parse = track;\n'],
    ["spawn-only-in-exec", "agent/main.ts", 'import { execFile } from "node:child_process";\nexport const main = execFile;\n'],
    [
      "production-not-to-tests",
      "agent/main.ts",
      'import { x } from "../test/helper.js";\nexport const main = x;\n',
      { "test/helper.ts": "export const x = 1;\n" },
    ],
    ["production-not-to-dev-deps", "collectors/gpu/module.ts", 'import fc from "fast-check";\nexport const gpu = fc;\n'],
    ["not-to-unresolvable", "agent/main.ts", 'import { gone } from "./gone.js";\nexport const main = gone;\n'],
  ] as Array<[string, string, string, Record<string, string>?]>)("%s: caught when %s breaks it", (rule, file, text, extra) => {
    const { code, violations } = cruise(tree({ ...CLEAN, ...extra, [file]: text }));
    expect(code).not.toBe(0);
    expect(violations.map((v) => v.rule)).toContain(rule);
    // Reported from the file that breaks it (a cycle: from one of its files).
    const planted = [file, ...Object.keys(extra ?? {})];
    expect(violations.filter((v) => v.rule === rule && planted.includes(v.from))).not.toEqual([]);
  });
});
