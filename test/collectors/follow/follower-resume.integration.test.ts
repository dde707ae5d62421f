import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { eventually, follow, MODES, Recorder } from "./helpers.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";

describe.each(MODES)("Follower resume ($name)", ({ opts }) => {
  it("a follower of other paths goes on where the last one stood: no head read again, no partial line lost", async () => {
    const a = testTempDir();
    const b = testTempDir();
    const pa = join(a, "nccl-a.log");
    const pb = join(b, "nccl-b.log");
    writeFileSync(pa, "a1\na2\n");
    writeFileSync(pb, "b1\n");
    const first = await follow({ ...opts, paths: [a] });
    appendFileSync(pa, "a3\nhalf-");
    await eventually(() => expect(first.rec.lines()).toEqual(["a1", "a2", "a3"]));
    await first.f.stop();
    const resume = first.f.positions();
    expect([...resume.values()].map((r) => [r.offset, r.partial.toString()])).toEqual([[14, "half-"]]);

    appendFileSync(pa, "written\na4\n"); // while no follower runs
    const rec = new Recorder();
    const second = await follow({ ...opts, paths: [a, b], resume }, rec);
    // b's file is new to this follower: its head, as history; a's goes on at its offset, the half line made whole.
    await eventually(() => expect(rec.lines("nccl-a.log")).toEqual(["half-written", "a4"]));
    expect(rec.got.filter((g) => g.file === "nccl-b.log").map((g) => [g.line, g.historical])).toEqual([["b1", true]]);
    expect(rec.got.filter((g) => g.file === "nccl-a.log").every((g) => !g.historical && g.generation === 0)).toBe(true);
    appendFileSync(pa, "a5\n");
    await eventually(() => expect(rec.lines("nccl-a.log")).toEqual(["half-written", "a4", "a5"]));
    expect(second.f.stats().truncations).toBe(0);
  });
});
