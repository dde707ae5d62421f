// The single executable: the agent bundled into one CommonJS file by esbuild, with what dist/ reads
// from files beside the code embedded (collectors/embedded.ts), turned into a Node.js single
// executable application (SEA) blob and injected into a copy of the node binary with postject.
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { build } from "esbuild";

/** The fuse postject flips so that node runs the blob (Node's documented sentinel). */
const SEA_FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";

/** Runs a build step; its chatter (postject warns about ELF note names) is shown only if it fails. */
function run(file, args) {
  try {
    execFileSync(file, args, { stdio: "pipe" });
  } catch (err) {
    process.stderr.write(String(err.stderr ?? ""));
    throw new Error(`${file} ${args.join(" ")} failed`);
  }
}

/** An ESM bundle of `entry` as a data: URL, for a worker thread to import. */
async function moduleUrl(root, entry) {
  const out = await build({
    entryPoints: [join(root, entry)],
    bundle: true,
    platform: "node",
    target: "node20",
    format: "esm",
    write: false,
    metafile: true,
    logLevel: "error",
    // The CommonJS packages in an ESM bundle call require() for node's own modules.
    banner: { js: 'import { createRequire as __rwRequire } from "node:module"; const require = __rwRequire("/");' },
  });
  return { url: `data:text/javascript;base64,${Buffer.from(out.outputFiles[0].contents).toString("base64")}`, inputs: Object.keys(out.metafile.inputs) };
}

/** The npm packages whose files a bundle holds, from esbuild's metafile inputs ("node_modules/<name>/..."). */
function packagesOf(inputs) {
  const names = new Set();
  for (const input of inputs) {
    const at = input.lastIndexOf("node_modules/");
    if (at < 0) continue;
    const parts = input.slice(at + "node_modules/".length).split("/");
    names.add(parts[0].startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]);
  }
  return [...names].sort();
}

/** podresources/api.proto as protobufjs JSON (what @grpc/proto-loader's fromJSON takes). */
function podResourcesApi(root) {
  const require = createRequire(createRequire(join(root, "package.json")).resolve("@grpc/proto-loader"));
  const protobuf = require("protobufjs");
  const text = readFileSync(join(root, "collectors/job/podresources/api.proto"), "utf8");
  return protobuf.parse(text, { keepCase: true }).root.toJSON();
}

/**
 * Builds `<outDir>/ringwatch` from the sources under `root` with the node binary `node` (stripped
 * first: Node's release binaries carry symbols a package does not ship). Returns the executable's
 * path and the npm packages bundled into it (for the licenses).
 */
export async function buildSea({ root, outDir, node, version, work }) {
  mkdirSync(work, { recursive: true });
  mkdirSync(outDir, { recursive: true });
  const readWorker = await moduleUrl(root, "collectors/nccl/flight-recorder/read-worker.ts");
  const bcryptjs = await moduleUrl(root, "node_modules/bcryptjs/index.js");
  const embedded = {
    version,
    podResourcesApi: podResourcesApi(root),
    modules: { "read-worker": readWorker.url, bcryptjs: bcryptjs.url },
  };
  const main = join(work, "ringwatch.cjs");
  const bundle = await build({
    entryPoints: [join(root, "agent/main.ts")],
    metafile: true,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    outfile: main,
    logLevel: "error",
    // The ESM builds of dependencies (node-cron) compute paths from import.meta.url at load time;
    // in the executable that is the executable's own path (ringwatch's own code reads EMBEDDED).
    banner: { js: 'var __rwImportMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
    define: { RINGWATCH_EMBEDDED: JSON.stringify(embedded), "import.meta.url": "__rwImportMetaUrl" },
    legalComments: "none",
  });
  const blob = join(work, "ringwatch.blob");
  const config = join(work, "sea-config.json");
  writeFileSync(config, JSON.stringify({ main, output: blob, disableExperimentalSEAWarning: true, useCodeCache: true }));
  run(node, ["--experimental-sea-config", config]);
  const exe = join(outDir, "ringwatch");
  copyFileSync(node, exe);
  chmodSync(exe, 0o755);
  run("strip", ["--strip-unneeded", exe]);
  const postject = createRequire(join(root, "package.json")).resolve("postject/dist/cli.js");
  run(process.execPath, [postject, exe, "NODE_SEA_BLOB", blob, "--sentinel-fuse", SEA_FUSE]);
  const inputs = [...Object.keys(bundle.metafile.inputs), ...readWorker.inputs, ...bcryptjs.inputs];
  return { exe, packages: packagesOf(inputs) };
}
