/**
 * torchfrtrace's text: the real capture (test/fixtures/nccl/96, the analyzer of late 2024) and, for
 * the versions and cases no public capture holds, lines built from the writer's format strings
 * (torch/distributed/flight_recorder/components/types.py EntryState.log and utils.py; 2.5's
 * tools/flight_recorder/components/builder.py; 2.4's fr_trace.py).
 */
import { describe, expect, it } from "vitest";
import { FrTextReader, culprits, parseFrTextLine } from "../../../../collectors/nccl/flight-recorder/text-report.js";
import { readCapture } from "../../../helpers/fixtures.js";

function read(text: string): FrTextReader {
  const r = new FrTextReader();
  text.split("\n").forEach((l, i) => r.line(l, i + 1));
  return r;
}

describe("parseFrTextLine", () => {
  it("the opening line of each version", () => {
    expect(parseFrTextLine("Not all ranks joining collective, sequence number: 4")).toEqual({ kind: "open", what: "not_joined", seq: 4 });
    expect(parseFrTextLine("Not all ranks joining collective: sequence number: 31117")).toEqual({ kind: "open", what: "not_joined", seq: 31117 });
    expect(parseFrTextLine("Not all ranks joining collective 5 at entry 4")).toEqual({ kind: "open", what: "not_joined", seq: 5, record: 4 });
    expect(parseFrTextLine("Not all ranks joining collective for group 0:default_pg collective nccl:all_reduce Missing ranks are {1}")).toEqual({
      kind: "open",
      what: "not_joined",
      group: "0:default_pg",
      op: "nccl:all_reduce",
      missing: [1],
    });
    expect(parseFrTextLine("Collective sequence number: 12 has errors")).toEqual({ kind: "open", what: "errors", seq: 12 });
    expect(parseFrTextLine("Collective 3 at entry 2 errors")).toEqual({ kind: "open", what: "errors", seq: 3, record: 2 });
    expect(parseFrTextLine("Input/output mismatch in the collective sequence number: 7")).toEqual({ kind: "open", what: "numel", seq: 7 });
    expect(parseFrTextLine("Input/output mismatch in the collective 7 at entry 6")).toEqual({ kind: "open", what: "numel", seq: 7, record: 6 });
  });

  it("the fields, the stack and its frames, the lines about dumps", () => {
    expect(parseFrTextLine("missing ranks: {3, 4, 5, 6, 7}")).toEqual({ kind: "missing", ranks: [3, 4, 5, 6, 7] });
    expect(parseFrTextLine("expected ranks: {0, 1}")).toEqual({ kind: "expected", ranks: [0, 1] });
    expect(parseFrTextLine("expected ranks: 2")).toEqual({ kind: "expected", count: 2 });
    expect(parseFrTextLine("group info: 0:default_pg")).toEqual({ kind: "group", group: "0:default_pg" });
    expect(parseFrTextLine("total input numel: 8")).toEqual({ kind: "numel", side: "input", value: 8 });
    expect(parseFrTextLine("collective stack trace: ")).toEqual({ kind: "stack" });
    expect(parseFrTextLine(" all_reduce at /x/torch/distributed/distributed_c10d.py:2707")).toEqual({
      kind: "frame",
      frame: { name: "all_reduce", file: "/x/torch/distributed/distributed_c10d.py", line: 2707 },
    });
    expect(parseFrTextLine("<module> at /home/u/test/crash.py:44")).toMatchObject({ kind: "frame", frame: { name: "<module>", line: 44 } });
    expect(
      parseFrTextLine(
        "We cannot decide what's wrong with this collective entry because we missed FR dumps from ranks ({3, 4}) so we don't have enough information. If you want to debug further use -j to dump all raw trace",
      ),
    ).toEqual({ kind: "no_dumps", ranks: [3, 4] });
    expect(parseFrTextLine("AssertionError: Missing dump files from ranks {7}")).toEqual({ kind: "no_dumps", ranks: [7] });
    expect(parseFrTextLine("Network: Up: 0B  Down: 0B")).toBeUndefined();
  });

  it("the culprits of an `error msg:` line, and their expected and found values", () => {
    expect(
      culprits(
        "Culprit rank 1; Error type: SIZE_OR_SYNTAX_MISMATCH, Expected input sizes: '[[3, 4]]' does not match found input sizes: '[[3, 5]]', " +
          "Culprit rank 2; Error type: COLLECTIVE_TYPE_MISMATCH, Expected collective type: 'all_reduce' does not match found collective type: 'broadcast'",
      ),
    ).toEqual([
      {
        rank: 1,
        mismatch: "size",
        expected: "[[3, 4]]",
        found: "[[3, 5]]",
        detail: "Error type: SIZE_OR_SYNTAX_MISMATCH, Expected input sizes: '[[3, 4]]' does not match found input sizes: '[[3, 5]]'",
      },
      {
        rank: 2,
        mismatch: "op",
        expected: "all_reduce",
        found: "broadcast",
        detail: "Error type: COLLECTIVE_TYPE_MISMATCH, Expected collective type: 'all_reduce' does not match found collective type: 'broadcast'",
      },
    ]);
    // 2.5: `Error type: <STATE>, Detail finding <culprit>`
    expect(
      culprits("Culprit rank 3; Error type: COLLECTIVE_STATE_MISMATCH, Detail finding Expected state: 'scheduled' does not match found state: 'started'"),
    ).toMatchObject([{ rank: 3, mismatch: "state", expected: "scheduled", found: "started" }]);
  });
});

describe("FrTextReader", () => {
  it("the real capture (nccl/96): one block, seq 31117, group 0:default_pg, ranks 3-7 missing of 0-7, three frames", () => {
    const r = read(readCapture("nccl/96-hang-flight-recorder-fr_trace-missing-ranks.log"));
    expect(r.blocks).toHaveLength(1);
    expect(r.blocks[0]).toMatchObject({
      what: "not_joined",
      seq: 31117,
      record: 31116,
      group: "0:default_pg",
      op: "nccl:all_reduce",
      missing: [3, 4, 5, 6, 7],
      expected: [0, 1, 2, 3, 4, 5, 6, 7],
      worldSize: 8,
      state: "scheduled",
      inputSizes: "[[1571911]]",
      lines: [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13],
    });
    expect(r.blocks[0]?.frames.map((f) => `${f.name}:${f.line}`)).toEqual(["all_reduce:2707", "wrapper:81", "sync_buffers:650"]);
  });

  it("2.7+: an errors block, then a line that is not the analyzer's ends it", () => {
    const r = read(
      [
        "Collective sequence number: 12 has errors",
        "internal record id: 11",
        "group info: 1:tp",
        "collective: nccl:all_gather",
        "input sizes: [[3, 4]]",
        "output sizes: [[6, 4]]",
        "world size: 2",
        "expected ranks: {0, 1}",
        "collective state: scheduled",
        "error msg: Culprit rank 1; Error type: SIZE_OR_SYNTAX_MISMATCH, Expected input sizes: '[[3, 4]]' does not match found input sizes: '[[3, 5]]'",
        "collective stack trace: ",
        " all_gather at /x/torch/distributed/distributed_c10d.py:3000",
        "step at /job/train.py:20",
        "done.",
        "step at /job/train.py:21",
      ].join("\n"),
    );
    expect(r.blocks).toHaveLength(1);
    expect(r.blocks[0]).toMatchObject({ what: "errors", seq: 12, group: "1:tp", errors: { culprits: [{ rank: 1, mismatch: "size" }] } });
    expect(r.blocks[0]?.frames).toHaveLength(2);
  });
});
