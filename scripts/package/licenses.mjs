// The licenses of what the single executable holds: ringwatch's own (Apache-2.0), Node.js's (its
// LICENSE file, which covers the libraries node itself bundles) and each npm package the bundle
// took code from (its package.json license and its LICENSE file), in Debian's machine-readable
// copyright format (DEP-5). The .deb installs it as /usr/share/doc/ringwatch/copyright; the
// tarball carries the same text as LICENSES.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** Where a Node.js installation keeps its LICENSE: beside a tarball's bin/, or the distribution's doc folder. */
export function findNodeLicense(node) {
  const prefix = dirname(dirname(node));
  const candidates = [join(prefix, "LICENSE"), join(prefix, "share/doc/node/LICENSE"), "/usr/share/doc/nodejs/LICENSE", "/usr/share/doc/nodejs/copyright"];
  return candidates.find((p) => existsSync(p));
}

/** A license text as a DEP-5 field continuation: each line indented one space, empty lines as " .". */
function indented(text) {
  return text
    .replace(/\r\n/g, "\n")
    .trimEnd()
    .split("\n")
    .map((l) => (l.trim() === "" ? " ." : ` ${l}`))
    .join("\n");
}

/** The package's LICENSE (or LICENCE, COPYING) file text, if it ships one. */
function licenseFile(dir) {
  const name = readdirSync(dir).find((n) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(n));
  return name === undefined ? undefined : readFileSync(join(dir, name), "utf8");
}

/** Debian's copy of the Apache License 2.0, pointed to instead of repeating it (Debian Policy 12.5). */
const APACHE_POINTER = [
  " On Debian systems, the complete text of the Apache License, Version 2.0 can be",
  " found in /usr/share/common-licenses/Apache-2.0.",
].join("\n");

/** Whether a license file is the Apache License 2.0's whole text. */
function isApache2(text) {
  return text.includes("Apache License") && text.includes("Version 2.0, January 2004") && text.includes("TERMS AND CONDITIONS");
}

/** The DEP-5 copyright file for ringwatch `version`, with Node.js's license file and the bundled `packages`. */
export function copyrightFile({ root, packages, nodeLicense }) {
  const out = [
    "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/",
    "Upstream-Name: ringwatch",
    "Source: https://github.com/ringwatch/ringwatch",
    "Comment: /usr/bin/ringwatch is a Node.js single executable application. It holds",
    " Node.js and the JavaScript of the npm packages listed below, each under its own license.",
    "",
    "Files: *",
    "Copyright: the ringwatch developers",
    "License: Apache-2.0",
    APACHE_POINTER,
    "",
    "Files: usr/bin/ringwatch",
    "Copyright: Node.js contributors and the authors of the libraries Node.js bundles",
    "License: Node.js",
    indented(readFileSync(nodeLicense, "utf8")),
  ];
  for (const name of packages) {
    const dir = join(root, "node_modules", name);
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    const license = typeof pkg.license === "string" ? pkg.license : "see its text";
    const text = licenseFile(dir);
    const author = typeof pkg.author === "string" ? pkg.author : (pkg.author?.name ?? `the ${name} authors`);
    out.push("", `Files: usr/bin/ringwatch`, `Copyright: ${author}`, `Comment: npm package ${name} ${pkg.version}`, `License: ${license}`);
    if (text !== undefined && isApache2(text)) out.push(APACHE_POINTER);
    else out.push(text === undefined ? ` The ${name} package states its license as ${license} and ships no license file.` : indented(text));
  }
  return out.join("\n") + "\n";
}
