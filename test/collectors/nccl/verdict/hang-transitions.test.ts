/** A hang that begins is logged once, one that ends once, whatever the number of evaluations between (verdict/hang-transitions.ts). */
import { describe, expect, it } from "vitest";
import { HangTransitions } from "../../../../collectors/nccl/verdict/hang-transitions.js";
import { memoryLogger } from "../../../helpers/memory-logger.js";

interface V {
  id: string;
  behind: number[];
}

describe("HangTransitions", () => {
  it("logs each start (warn, with the verdict's fields) and each end (info) once", () => {
    const { logger, lines } = memoryLogger("info");
    const t = new HangTransitions<V>(
      logger,
      (v) => ({ fields: { comm_id: v.id, ranks_behind: v.behind }, message: `hung ${v.id}` }),
      (k) => ({ fields: { comm_id: k }, message: `ended ${k}` }),
    );
    const a: V = { id: "a", behind: [3] };
    const b: V = { id: "b", behind: [] };
    expect(t.any).toBe(false);
    t.update(new Map([["a", a]]));
    t.update(new Map([["a", a]]));
    expect(t.any).toBe(true);
    t.update(
      new Map([
        ["a", a],
        ["b", b],
      ]),
    );
    t.update(new Map([["b", b]]));
    t.update(new Map());
    expect(t.any).toBe(false);
    expect(lines().map((l) => [l.level, l.msg, l.comm_id])).toEqual([
      [40, "hung a", "a"],
      [40, "hung b", "b"],
      [30, "ended a", "a"],
      [30, "ended b", "b"],
    ]);
    expect(lines()[0]?.ranks_behind).toEqual([3]);
  });
});
