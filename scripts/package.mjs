// `npm run package`: the release artifacts of this checkout, in release/ (docs/packaging.md):
//   release/ringwatch-<version>-linux-<arch>/ringwatch   the single executable
//   release/ringwatch-<version>-linux-<arch>.tar.gz       it, the unit, the defaults, docs, licenses
//   release/ringwatch_<version>_<debian-arch>.deb         Debian's layout (dpkg-deb)
// Flags: --node=PATH (the node binary to embed; default: the one running this script),
//        --out=DIR (default: release), --no-deb (only the executable and the tarball).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildDeb, debianArch } from "./package/deb.mjs";
import { copyrightFile, findNodeLicense } from "./package/licenses.mjs";
import { manPage } from "./package/manpage.mjs";
import { buildSea } from "./package/sea.mjs";
import { buildTarball } from "./package/tarball.mjs";

function usage(message) {
  process.stderr.write(`package: ${message}\nusage: node scripts/package.mjs [--node=PATH] [--out=DIR] [--no-deb]\n`);
  process.exit(2);
}

const root = fileURLToPath(new URL("..", import.meta.url));
const opts = { node: process.execPath, out: join(root, "release"), deb: true };
for (const arg of process.argv.slice(2)) {
  if (arg.startsWith("--node=")) opts.node = resolve(arg.slice(7));
  else if (arg.startsWith("--out=")) opts.out = resolve(arg.slice(6));
  else if (arg === "--no-deb") opts.deb = false;
  else usage(`unknown argument ${arg}`);
}

/** The release's time: the last commit's (reproducible builds), else now. */
function releaseEpoch() {
  if (process.env.SOURCE_DATE_EPOCH) return Number(process.env.SOURCE_DATE_EPOCH);
  try {
    return Number(execFileSync("git", ["-C", root, "log", "-1", "--format=%ct"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim());
  } catch {
    return Math.floor(Date.now() / 1000);
  }
}

const t0 = Date.now();
const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version;
const arch = process.arch === "x64" ? "amd64" : process.arch;
const epoch = releaseEpoch();
const nodeLicense = findNodeLicense(opts.node);
if (nodeLicense === undefined) usage(`no LICENSE found for ${opts.node} (looked beside it and in /usr/share/doc/nodejs)`);
const nodeVersion = execFileSync(opts.node, ["--version"], { encoding: "utf8" }).trim();

const work = join(opts.out, ".work");
const dir = join(opts.out, `ringwatch-${version}-linux-${arch}`);
const { exe, packages } = await buildSea({ root, outDir: dir, node: opts.node, version, work: join(work, "sea") });
const licenses = copyrightFile({ root, packages, nodeLicense });
const report = [`executable  ${exe} (node ${nodeVersion}, ${packages.length} npm packages bundled)`];
report.push(`tarball     ${buildTarball({ root, outDir: opts.out, work: join(work, "tar"), exe, version, arch, licenses, epoch })}`);
if (opts.deb) {
  const date = new Date(epoch * 1000).toISOString().slice(0, 10);
  const deb = buildDeb({ root, outDir: opts.out, work: join(work, "deb"), exe, version, copyright: licenses, manPage: manPage(exe, version, date), epoch });
  report.push(`deb         ${deb} (${debianArch()})`);
}
process.stdout.write(`${report.join("\n")}\n${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
