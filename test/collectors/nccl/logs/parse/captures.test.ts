import { describe, expect, it } from "vitest";
import { parseLine, parseText } from "../../../../../collectors/nccl/logs/parse/line.js";
import { readCapture } from "../../../../helpers/fixtures.js";
import { CAPTURES, captureEvents, captureFile } from "./capture.js";
import { COLL_WARN_CASES } from "./cases-coll-warn.js";
import { INIT_CASES } from "./cases-init.js";
import { PYTORCH_CASES } from "./cases-pytorch.js";

const CASES = { ...INIT_CASES, ...COLL_WARN_CASES, ...PYTORCH_CASES };

describe("real NCCL / PyTorch captures", () => {
  it("has the 66 captures, each with its own facts", () => {
    expect(CAPTURES).toHaveLength(66);
    expect(CAPTURES.map((f) => f.slice(0, 2)).sort()).toEqual(Object.keys(CASES).sort());
  });

  it("parses every line of every capture (cut last lines included) without throwing", () => {
    for (const f of CAPTURES) {
      const text = readCapture(`nccl/${f}`);
      expect(() => parseText(text)).not.toThrow();
      for (const line of text.split("\n")) expect(() => parseLine(line)).not.toThrow();
    }
  });

  for (const [num, check] of Object.entries(CASES)) {
    it(`capture ${num}`, () => {
      check(captureEvents(captureFile(num)));
    });
  }
});
