/**
 * The merge of the sources' verdicts (verdict/merge.ts): what the node says of a communicator when
 * the logs, NCCL RAS and NCCL Inspector each say something of it. Each case is a situation the
 * sources really disagree in: RAS sees a hang the logs do not (no COLL lines), the logs know a
 * communicator RAS also reports (whose threshold?), Inspector names a straggler the logs do not.
 */
import { describe, expect, it } from "vitest";
import { mergeVerdicts, type Series } from "../../../../collectors/nccl/verdict/merge.js";
import { liveVerdict, type CommunicatorWatch } from "../../../../collectors/nccl/verdict/verdict.js";

const values = (s: Series): Record<string, number> => Object.fromEntries([...s.values()].map((x) => [Object.values(x.labels).join("/"), x.value]));

/** The logs judge every kind of 0xa: not hung, rank 1 a straggler. */
const logsQuiet: CommunicatorWatch = {
  comm_id: "0xa",
  judges: ["hang_suspected", "rank_behind", "straggler", "collective_mismatch"],
  ranks: [0, 1],
  thresholdMs: 120_000,
  verdicts: [liveVerdict("straggler", "0xa", [1], ["coll_log"])],
};

describe("mergeVerdicts", () => {
  it("a hang RAS sees and the logs do not is a hang, with RAS's evidence, its rank behind, and the GPU signature", () => {
    const ras: CommunicatorWatch = {
      comm_id: "0xa",
      judges: ["hang_suspected", "rank_behind"],
      ranks: [0, 1],
      thresholdMs: 60_000,
      verdicts: [
        liveVerdict(
          "hang_suspected",
          "0xa",
          [0, 1],
          ["ras", "gpu"],
          [
            { gpu: "0", rank: 0, signature: "idle" },
            { gpu: "1", rank: 1, signature: "spin" },
            { gpu: "2", rank: 2, signature: "busy" },
          ],
        ),
        liveVerdict("rank_behind", "0xa", [0], ["ras"]),
      ],
    };
    const m = mergeVerdicts([logsQuiet, ras]);
    expect(values(m.hang)).toEqual({ "0xa": 1 });
    expect(values(m.evidence)).toEqual({ "0xa/ras": 1, "0xa/gpu": 1 });
    expect(values(m.behind)).toEqual({ "0xa/0": 1, "0xa/1": 0 });
    // The first source that states a threshold (the logs, given first) is the one shown.
    expect(values(m.threshold)).toEqual({ "0xa": 120 });
    expect(values(m.mismatch)).toEqual({ "0xa": 0 });
    // Busy GPUs carry no signature.
    expect(values(m.signature)).toEqual({ "0/idle": 1, "1/spin": 1 });
  });

  it("a communicator only RAS knows gets RAS's threshold, and no mismatch series (RAS does not judge it here)", () => {
    const ras: CommunicatorWatch = { comm_id: "0xb", judges: ["hang_suspected", "rank_behind"], ranks: [3], thresholdMs: 90_000, verdicts: [] };
    const m = mergeVerdicts([logsQuiet, ras]);
    expect(values(m.threshold)).toEqual({ "0xa": 120, "0xb": 90 });
    expect(values(m.mismatch)).toEqual({ "0xa": 0 });
    // Not hung: no evidence, no GPU signature (a hang verdict carries the GPUs; this source states none).
    expect(values(m.evidence)).toEqual({});
    expect(values(m.signature)).toEqual({});
    expect(values(m.behind)).toEqual({ "0xa/0": 0, "0xa/1": 0, "0xb/3": 0 });
  });

  it("Inspector's straggler adds to the logs' and says nothing of hangs", () => {
    const inspector: CommunicatorWatch = {
      comm_id: "0xa",
      judges: ["straggler"],
      ranks: [0, 1],
      verdicts: [liveVerdict("straggler", "0xa", [0], ["inspector"])],
    };
    const alone: CommunicatorWatch = { comm_id: "0xc", judges: ["straggler"], ranks: [5], verdicts: [] };
    const m = mergeVerdicts([logsQuiet, inspector, alone]);
    expect(values(m.straggler)).toEqual({ "0xa/0": 1, "0xa/1": 1, "0xc/5": 0 });
    // A communicator only Inspector knows has no hang series.
    expect(values(m.hang)).toEqual({ "0xa": 0 });
    expect(values(m.behind)).toEqual({ "0xa/0": 0, "0xa/1": 0 });
  });

  it("the same GPU named by two hung communicators is one series", () => {
    const hung = (commId: string): CommunicatorWatch => ({
      comm_id: commId,
      judges: ["hang_suspected"],
      ranks: [0],
      verdicts: [liveVerdict("hang_suspected", commId, [0], ["coll_log"], [{ gpu: "0", rank: 0, signature: "spin" }])],
    });
    const [a, b] = [hung("0xa"), hung("0xb")];
    expect([...mergeVerdicts([a, b]).signature.values()]).toEqual([{ labels: { gpu: "0", signature: "spin" }, value: 1 }]);
  });
});
