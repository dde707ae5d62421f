import { describe, expect, it } from "vitest";
import { SeqWindow } from "../../../../../collectors/nccl/logs/state/seq-window.js";

describe("SeqWindow", () => {
  it("keeps the last `size` sequence indexes like a map, forgetting n - size when n is set", () => {
    const w = new SeqWindow<string>(4);
    for (let n = 1; n <= 6; n++) w.set(n, `op${n}`);
    expect([1, 2, 3, 4, 5, 6].map((n) => w.get(n))).toEqual([undefined, undefined, "op3", "op4", "op5", "op6"]);
    w.delete(5);
    w.delete(2); // long gone: deleting it must not touch op6 in the same slot
    expect([3, 4, 5, 6].map((n) => w.get(n))).toEqual(["op3", "op4", undefined, "op6"]);
    w.clear();
    expect(w.get(6)).toBeUndefined();
    expect(w.get(0)).toBeUndefined();
  });
});
