// The .deb, built with dpkg-deb in Debian's layout: /usr/bin/ringwatch, the unit, the system user
// (sysusers.d), /etc/default/ringwatch as a conffile, the manual page, the documentation and the
// example rules, with maintainer scripts from packaging/deb/. Its dependencies are the shared
// libraries node links (dpkg-shlibdeps).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { gzipSync } from "node:zlib";

/** Debian's name of this machine's architecture. */
export function debianArch(arch = process.arch) {
  const names = { x64: "amd64", arm64: "arm64", ppc64: "ppc64el" };
  if (!(arch in names)) throw new Error(`no Debian architecture known for ${arch}`);
  return names[arch];
}

/** Copies `from` to `<tree>/<to>` with `mode`, making its folders. */
function put(tree, to, from, mode = 0o644) {
  const dest = join(tree, to);
  mkdirSync(dirname(dest), { recursive: true, mode: 0o755 });
  copyFileSync(from, dest);
  chmodSync(dest, mode);
}

/** Writes `text` (gzip-compressed, reproducibly, when `gz`) to `<tree>/<to>`. */
function write(tree, to, text, { gz = false, mode = 0o644 } = {}) {
  const dest = join(tree, to);
  mkdirSync(dirname(dest), { recursive: true, mode: 0o755 });
  writeFileSync(dest, gz ? gzipSync(Buffer.from(text), { level: 9 }) : text);
  chmodSync(dest, mode);
}

/** Every file under `dir`, relative to it. */
function filesUnder(dir) {
  return readdirSync(dir, { recursive: true }).filter((f) => statSync(join(dir, f)).isFile());
}

/** The native package's changelog, one entry for `version`, dated `epoch` (seconds). */
function changelog(version, maintainer, epoch) {
  const date = new Date(epoch * 1000).toUTCString().replace(/GMT$/, "+0000");
  return `ringwatch (${version}) unstable; urgency=medium\n\n  * Release ${version}: see /usr/share/doc/ringwatch/README.md.\n\n -- ${maintainer}  ${date}\n`;
}

/** shlibs:Depends of the executable installed in `tree` (dpkg-shlibdeps, from a throw-away debian/ folder). */
function sharedLibraryDepends(work, exeInTree) {
  mkdirSync(join(work, "debian"), { recursive: true });
  writeFileSync(join(work, "debian/control"), "Source: ringwatch\n\nPackage: ringwatch\nArchitecture: any\n");
  const out = execFileSync("dpkg-shlibdeps", ["-O", "-e", relative(work, exeInTree)], { cwd: work, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  const line = out.split("\n").find((l) => l.startsWith("shlibs:Depends="));
  if (line === undefined) throw new Error("dpkg-shlibdeps printed no shlibs:Depends");
  return line.slice("shlibs:Depends=".length);
}

/**
 * Builds `<outDir>/ringwatch_<version>_<arch>.deb` from the executable `exe`, the files of the
 * checkout `root`, the copyright text and the manual page. Returns the .deb's path.
 */
export function buildDeb({ root, outDir, work, exe, version, copyright, manPage, epoch }) {
  const arch = debianArch();
  rmSync(work, { recursive: true, force: true });
  const tree = join(work, "debian/ringwatch");
  mkdirSync(tree, { recursive: true, mode: 0o755 });
  const src = (rel) => join(root, rel);
  const control = readFileSync(src("packaging/deb/control"), "utf8");
  const maintainer = /^Maintainer: (.*)$/m.exec(control)[1];

  put(tree, "usr/bin/ringwatch", exe, 0o755);
  put(tree, "usr/lib/systemd/system/ringwatch.service", src("systemd/ringwatch.service"));
  put(tree, "usr/lib/sysusers.d/ringwatch.conf", src("packaging/deb/ringwatch.sysusers"));
  put(tree, "etc/default/ringwatch", src("systemd/ringwatch.env"));
  put(tree, "usr/share/lintian/overrides/ringwatch", src("packaging/deb/lintian-overrides"));
  write(tree, "usr/share/man/man1/ringwatch.1.gz", manPage, { gz: true });
  const doc = "usr/share/doc/ringwatch";
  write(tree, `${doc}/copyright`, copyright);
  write(tree, `${doc}/changelog.gz`, changelog(version, maintainer, epoch), { gz: true });
  for (const rel of ["README.md", ...docFiles(root)]) write(tree, `${doc}/${rel}.gz`, readFileSync(src(rel)), { gz: true });
  for (const [to, from] of EXAMPLES) put(tree, `${doc}/examples/${to}`, src(from));

  const size = filesUnder(tree).reduce((n, f) => n + statSync(join(tree, f)).size, 0);
  const fields = {
    "@VERSION@": version,
    "@ARCH@": arch,
    "@SIZE@": String(Math.ceil(size / 1024)),
    "@DEPENDS@": sharedLibraryDepends(work, join(tree, "usr/bin/ringwatch")),
  };
  const meta = join(tree, "DEBIAN");
  mkdirSync(meta, { mode: 0o755 });
  write(
    tree,
    "DEBIAN/control",
    control.replace(/@[A-Z]+@/g, (k) => fields[k]),
  );
  write(tree, "DEBIAN/conffiles", "/etc/default/ringwatch\n");
  for (const script of ["postinst", "prerm", "postrm"]) put(tree, `DEBIAN/${script}`, src(`packaging/deb/${script}`), 0o755);
  const sums = filesUnder(tree)
    .filter((f) => !f.startsWith("DEBIAN/"))
    .sort()
    .map((f) => `${md5(join(tree, f))}  ${f}`);
  write(tree, "DEBIAN/md5sums", sums.join("\n") + "\n");

  mkdirSync(outDir, { recursive: true });
  const deb = join(outDir, `ringwatch_${version}_${arch}.deb`);
  execFileSync("dpkg-deb", ["--root-owner-group", "-Zxz", "--build", tree, deb], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, SOURCE_DATE_EPOCH: String(epoch) },
  });
  return deb;
}

/** The operator's documentation the package ships (docs/, less what is for ringwatch's developers). */
export function docFiles(root) {
  const skip = new Set(["development.md", "performance-history.md"]);
  return readdirSync(join(root, "docs"))
    .filter((f) => f.endsWith(".md") && !skip.has(f))
    .sort()
    .map((f) => `docs/${f}`);
}

/** Example configuration shipped under /usr/share/doc/ringwatch/examples (to, from). */
export const EXAMPLES = [
  ["prometheus/ringwatch-rules.yml", "deploy/prometheus/ringwatch-rules.yml"],
  ["alertmanager/alertmanager.yml", "deploy/alertmanager/alertmanager.yml"],
  ["grafana/ringwatch-dashboard.json", "deploy/grafana/ringwatch-dashboard.json"],
  ["systemd/ringwatch-stacks.conf", "systemd/ringwatch-stacks.conf"],
];

function md5(path) {
  return createHash("md5").update(readFileSync(path)).digest("hex");
}
