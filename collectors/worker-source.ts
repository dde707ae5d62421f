/**
 * Where a worker thread's module comes from (the Flight Recorder reader's, isolated.ts). In the built agent (dist/), read-worker.js lies next
 * to the compiled isolated.js, and the worker runs it (tsc emits it: nothing to copy). Run from the
 * TypeScript sources (vitest), there is no .js beside this file: the worker then starts from a few
 * lines that register module hooks which transpile each .ts module it loads with the typescript
 * package (a devDependency, present wherever the sources are run) and resolve the sources' `.js`
 * imports to their `.ts` files, then import read-worker.ts. The single executable, which has no
 * files beside it, carries the worker's module bundled (embedded.ts) and starts it from there.
 */
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { EMBEDDED } from "./embedded.js";

/** new Worker(source.entry, { eval: source.eval, ... }). */
export interface WorkerSource {
  entry: URL | string;
  eval: boolean;
}

/** Module hooks for the sources: `./x.js` → `./x.ts` where that exists; a .ts module transpiled (types erased). */
const TS_HOOKS = `
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
let ts;
export async function initialize(data) { ts = (await import(data.typescript)).default; }
export async function resolve(specifier, context, next) {
  const parent = context.parentURL ?? "";
  if (parent.startsWith("file:") && parent.endsWith(".ts") && /^\\.\\.?\\//.test(specifier) && specifier.endsWith(".js")) {
    const url = new URL(specifier.slice(0, -3) + ".ts", parent);
    if (existsSync(url)) return { url: url.href, shortCircuit: true };
  }
  return next(specifier, context);
}
export async function load(url, context, next) {
  if (!url.startsWith("file:") || !url.endsWith(".ts")) return next(url, context);
  const text = await readFile(new URL(url), "utf8");
  const out = ts.transpileModule(text, { fileName: url, compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
  return { format: "module", source: out.outputText, shortCircuit: true };
}
`;

/** The worker module `name` (`read-worker`) beside `here` (the caller's import.meta.url). */
export function workerSource(here: string, name: string): WorkerSource {
  const bundled = EMBEDDED?.modules[name];
  if (bundled !== undefined) return { entry: `import(${JSON.stringify(bundled)});`, eval: true };
  if (here.endsWith(".js")) return { entry: new URL(`./${name}.js`, here), eval: false };
  const typescript = pathToFileURL(createRequire(here).resolve("typescript")).href;
  const hooks = `data:text/javascript,${encodeURIComponent(TS_HOOKS)}`;
  const entry = new URL(`./${name}.ts`, here).href;
  const boot = [
    `require("node:module").register(${JSON.stringify(hooks)}, { data: { typescript: ${JSON.stringify(typescript)} } });`,
    `import(${JSON.stringify(entry)});`, // a module that fails to load fails the worker: its "error" event
  ].join("\n");
  return { entry: boot, eval: true };
}
