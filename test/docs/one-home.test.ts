/**
 * Documentation with one home per fact: no paragraph, list item or table row stands in two
 * Markdown files of the repository, and no relative link points to a file or heading that is not
 * there. Fixtures (test/fixtures/) are captures, not documentation, and are left out.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { anchors, brokenLinks, duplicates, markdownFiles, onDisk, slug, units } from "./markdown.js";

const root = resolve(import.meta.dirname, "../..");
const files = markdownFiles(root);
const docs = new Map(files.map((f) => [f, readFileSync(join(root, f), "utf8")]));

describe("one home per fact", () => {
  it("reads the project's Markdown files", () => {
    expect(files).toContain("README.md");
    expect(files).toContain("deploy/prometheus/README.md");
    expect(files.some((f) => f.startsWith("test/fixtures/"))).toBe(false);
  });

  it("no paragraph, list item or table row stands in two files", () => {
    const found = duplicates(docs).map((d) => `${d.places.join(" and ")}: ${d.key}`);
    expect(found).toEqual([]);
  });

  it("finds a paragraph that two documents share, whatever their links, emphasis and line breaks", () => {
    const shared = "The gpu collector keeps one `nvidia-smi dmon` child running and restarts it when it exits.";
    const a = `# A\n\nIntro of a.\n\n${shared}\n\n- an item long enough to count as a unit of its own, said only once\n`;
    const b = `# B\n\n**The gpu collector** keeps one nvidia-smi dmon\nchild running and restarts it when it exits.\n\n\`\`\`\n${shared}\n\`\`\`\n`;
    const c = `# C\n\n| a | b |\n|---|---|\n| an item long enough to count as a unit of its own, said only once | x |\n\n- an item long enough to count as a unit of its own, said only once\n`;
    const found = duplicates(
      new Map([
        ["a.md", a],
        ["b.md", b],
        ["c.md", c],
      ]),
    );
    expect(found).toHaveLength(2);
    expect(found[0]?.places).toEqual(["a.md:5", "b.md:3"]);
    expect(found[1]?.places).toEqual(["a.md:7", "c.md:7"]);
    // a fenced copy, a table header and a short line are not units that count
    expect(units("| the header row of a table that is long enough to count | b |\n|---|---|\n")).toEqual([]);
    expect(
      duplicates(
        new Map([
          ["a.md", "Short line.\n"],
          ["b.md", "Short line.\n"],
        ]),
      ),
    ).toEqual([]);
  });

  it("no relative link points to a missing file or heading", () => {
    const { exists, read } = onDisk(root);
    const broken = files.flatMap((f) => brokenLinks(f, docs.get(f) ?? "", exists, read));
    expect(broken).toEqual([]);
  });

  it("finds links to missing files, missing headings and out of the repository", () => {
    const tree = new Map([
      [
        "README.md",
        "# ringwatch\n\n## Flags\n\n## Flags\n\nSee [flags](#flags-1), [docs](docs/a.md#tls-client-certificates-and-basic-auth---webconfigfile), [img](docs/x.png), [web](https://example.com/x#y).\n",
      ],
      [
        "docs/a.md",
        "# A\n\n### TLS, client certificates and basic auth (`--web.config.file`)\n\n[up](../README.md#flags) [gone](../README.md#flagz) [none](b.md) [out](../../x.md) `[code](nowhere.md)`\n\n```\n[fenced](nowhere.md)\n```\n",
      ],
    ]);
    const exists = (p: string): boolean => tree.has(p) || p === "docs" || p === "docs/x.png";
    const read = (p: string): string | undefined => tree.get(p);
    expect(brokenLinks("README.md", tree.get("README.md") ?? "", exists, read)).toEqual([]);
    expect(brokenLinks("docs/a.md", tree.get("docs/a.md") ?? "", exists, read)).toEqual([
      "docs/a.md:5: (../README.md#flagz) README.md has no heading #flagz",
      "docs/a.md:5: (b.md) docs/b.md does not exist",
      "docs/a.md:5: (../../x.md) leaves the repository",
    ]);
  });

  it("makes anchors as GitHub does", () => {
    expect(slug("Reloading the configuration (SIGHUP)")).toBe("reloading-the-configuration-sighup");
    expect(slug("NCCL: which communicator is stuck, and which rank is behind")).toBe("nccl-which-communicator-is-stuck-and-which-rank-is-behind");
    expect(slug("Offline: `ringwatch analyze`")).toBe("offline-ringwatch-analyze");
    expect([...anchors("# A\n## Settings\n```\n# not a heading\n```\n## Settings\n### Settings\n")]).toEqual(["a", "settings", "settings-1", "settings-2"]);
  });
});
