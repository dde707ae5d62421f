// The tarball: ringwatch-<version>-linux-<arch>/ with the executable, the unit, the defaults file,
// the licenses, the documentation and the example rules, for machines without dpkg.
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { docFiles, EXAMPLES } from "./deb.mjs";

/** Builds `<outDir>/ringwatch-<version>-linux-<arch>.tar.gz`; returns its path. */
export function buildTarball({ root, outDir, work, exe, version, arch, licenses, epoch }) {
  const name = `ringwatch-${version}-linux-${arch}`;
  const top = join(work, name);
  rmSync(work, { recursive: true, force: true });
  const put = (to, from, mode = 0o644) => {
    mkdirSync(dirname(join(top, to)), { recursive: true });
    copyFileSync(from, join(top, to));
    chmodSync(join(top, to), mode);
  };
  put("ringwatch", exe, 0o755);
  put("systemd/ringwatch.service", join(root, "systemd/ringwatch.service"));
  put("systemd/ringwatch.env", join(root, "systemd/ringwatch.env"));
  put("systemd/README.md", join(root, "systemd/README.md"));
  put("README.md", join(root, "README.md"));
  for (const rel of docFiles(root)) put(rel, join(root, rel));
  for (const [to, from] of EXAMPLES) put(`examples/${to}`, join(root, from));
  writeFileSync(join(top, "LICENSES"), licenses);
  mkdirSync(outDir, { recursive: true });
  const tgz = join(outDir, `${name}.tar.gz`);
  // Reproducible: sorted names, one owner, every time clamped to the release's.
  execFileSync(
    "tar",
    ["--sort=name", "--owner=0", "--group=0", "--numeric-owner", `--mtime=@${epoch}`, "--use-compress-program=gzip -9n", "-cf", tgz, "-C", work, name],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  return tgz;
}
