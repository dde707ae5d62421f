/**
 * The WARN kinds' table (collectors/nccl/logs/parse/warn-kinds.ts) against the real captures it
 * names and against the README's row of ringwatch_nccl_warnings_total: every capture is
 * classified as its row says, every kind has a capture of its own (the ones without are named
 * here), and the README names the same kinds with the same words.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseLine } from "../../../../../collectors/nccl/logs/parse/line.js";
import { GDR_MODULE_CAPTURE, GDR_OFF_CAPTURE, WARN_KINDS, type WarnCapture } from "../../../../../collectors/nccl/logs/parse/warn-kinds.js";
import { readFixtureRaw } from "../../../../helpers/fixtures.js";

const README = resolve(import.meta.dirname, "../../../../../collectors/nccl/README.md");

/** Kinds no real capture of test/fixtures/ is known for: each says so in its row. */
const UNCAPTURED = ["timeout"];

interface Case {
  capture: WarnCapture;
  /** The kind it must be classified as. */
  kind: string;
  /** Substrings the line must hold for its form to tell it (literal forms). */
  holds: { any: readonly string[]; all: readonly string[] };
}

const CASES: Case[] = WARN_KINDS.flatMap((row) =>
  row.forms.flatMap((f) =>
    f.captures.map((capture: WarnCapture) => ({
      capture,
      kind: capture.kind ?? row.kind,
      holds: "parser" in f ? { any: [], all: [] } : { any: "any" in f ? f.any : [], all: "all" in f ? f.all : [] },
    })),
  ),
);

function captureLine(c: WarnCapture): string {
  const line = readFixtureRaw(c.file).split("\n")[c.line - 1];
  if (line === undefined) throw new Error(`${c.file} has no line ${c.line}`);
  return line;
}

describe("WARN kinds: one table row each, with the real captures it classifies", () => {
  it("names each kind once; `other` (no form tells the message) is no row", () => {
    const kinds = WARN_KINDS.map((r) => r.kind);
    expect(new Set(kinds).size).toBe(kinds.length);
    expect(kinds).not.toContain("other");
  });

  it.each(CASES.map((c) => [`${c.capture.file}:${c.capture.line}`, c.kind, c] as const))("%s is %s", (_name, kind, c) => {
    const line = captureLine(c.capture);
    expect(parseLine(line)).toMatchObject({ kind: "warn", warnKind: kind });
    if (c.holds.any.length > 0) expect(c.holds.any.some((w) => line.includes(w))).toBe(true);
    for (const w of c.holds.all) expect(line).toContain(w);
  });

  it(`every kind classifies a real capture, but ${UNCAPTURED.join(", ")} (none known)`, () => {
    const captured = new Set(CASES.map((c) => c.kind));
    expect(WARN_KINDS.map((r) => r.kind).filter((k) => !captured.has(k))).toEqual(UNCAPTURED);
  });

  it("the special cases outside the table: a net plugin's `GDR disabled` WARN and NCCL 2.1's `No module present for GPU Direct RDMA` are `other`, with gdrDisabled", () => {
    expect(parseLine(captureLine(GDR_OFF_CAPTURE))).toMatchObject({ kind: "warn", warnKind: "other", gdrDisabled: true });
    expect(parseLine(captureLine(GDR_MODULE_CAPTURE))).toMatchObject({ kind: "warn", warnKind: "other", gdrDisabled: true });
  });
});

/** The kinds the README's row of ringwatch_nccl_warnings_total names, with the words in parentheses after each. */
function readmeKinds(): Map<string, string | undefined> {
  const row = readFileSync(README, "utf8")
    .split("\n")
    .find((l) => l.startsWith("| `ringwatch_nccl_warnings_total` |"));
  if (row === undefined) throw new Error("README.md has no row for ringwatch_nccl_warnings_total");
  const meaning = row.split(" | ")[3]?.replace(/ \|$/, "") ?? "";
  const colon = meaning.indexOf(": ");
  const items: string[] = [];
  let depth = 0;
  let from = colon + 2;
  for (let k = from; k < meaning.length; k++) {
    const c = meaning[k];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "," && depth === 0) {
      items.push(meaning.slice(from, k).trim());
      from = k + 1;
    }
  }
  items.push(meaning.slice(from).trim());
  const out = new Map<string, string | undefined>();
  for (const item of items) {
    const m = /^`([a-z_]+)`(?: \((.+)\))?$/.exec(item);
    if (m === null) throw new Error(`README: not a kind: ${item}`);
    out.set(m[1] ?? "", m[2]);
  }
  return out;
}

describe("README: the kind values of ringwatch_nccl_warnings_total", () => {
  it("are the table's kinds and `other`, with the table's words", () => {
    const readme = readmeKinds();
    expect([...readme.keys()].sort()).toEqual([...WARN_KINDS.map((r) => r.kind), "other"].sort());
    for (const row of WARN_KINDS) expect([row.kind, readme.get(row.kind)]).toEqual([row.kind, row.words]);
    expect(readme.get("other")).toBeUndefined();
  });
});
