/**
 * The findings' builders (verdict/finding.ts) and the choices their words make (verdict/words.ts).
 * A builder puts kind, severity and summary first and keeps the order the source gave the rest in:
 * `ringwatch analyze --json` prints the keys in that order, and other tools read it. The exact
 * words of every kind are asserted where each source is tested; here, the word choices that
 * depend on the facts: one rank or several, far behind or not, how many ranks a list names.
 */
import { describe, expect, it } from "vitest";
import { collectiveMismatch, hardwareEvent, kernelLogTruncated, rankBehind } from "../../../../collectors/nccl/verdict/finding.js";
import { fingerprintText, rankBehindWords, ranksAt, theRanks } from "../../../../collectors/nccl/verdict/words.js";

describe("finding builders", () => {
  it("give the kind and its usual severity, the summary first, then the fields in the order given", () => {
    const f = rankBehind({ summary: "s", ranks: [3], processes: [], comm_id: null, process_group: "PG 1", evidence: ["a:1"], seq: 7 });
    expect(f).toEqual({
      kind: "rank_behind",
      severity: "critical",
      summary: "s",
      ranks: [3],
      processes: [],
      comm_id: null,
      process_group: "PG 1",
      evidence: ["a:1"],
      seq: 7,
    });
    expect(Object.keys(f)).toEqual(["kind", "severity", "summary", "ranks", "processes", "comm_id", "process_group", "evidence", "seq"]);
    expect(kernelLogTruncated({ summary: "s", ranks: [], processes: [], comm_id: null, evidence: [] }).severity).toBe("info");
  });

  it("take another severity where the facts say so, and keep it second", () => {
    const f = collectiveMismatch({ summary: "s", severity: "warning", ranks: [], processes: [], comm_id: null, evidence: [] });
    expect(Object.keys(f).slice(0, 3)).toEqual(["kind", "severity", "summary"]);
    expect(f.severity).toBe("warning");
    const x = hardwareEvent("gpu_xid", { summary: "s", severity: "info", ranks: [], processes: [], comm_id: null, evidence: [], device: "0000:3b:00" });
    expect([x.kind, x.severity]).toEqual(["gpu_xid", "info"]);
  });
});

describe("finding words", () => {
  it("name one rank or several", () => {
    expect(theRanks([3])).toBe("rank 3");
    expect(theRanks([0, 1, 2, 5])).toBe("ranks 0-2,5");
  });

  it("say that ranks 1,000 collectives behind are in another phase of the job, and not before", () => {
    const f = { group: "PG 1", behind: [2], seq: 11, waiting: [0, 1], waits: [11] };
    expect(rankBehindWords.pytorchNotEnqueued({ ...f, reached: 1008 })).not.toContain("another phase");
    expect(rankBehindWords.pytorchNotEnqueued({ ...f, reached: 1010 })).toContain(
      " That is 1000 collectives: it stopped long before the others, or is in another phase of the job.",
    );
    expect(rankBehindWords.pytorchNotEnqueued({ ...f, behind: [2, 3], reached: 1010 })).toContain("they stopped long before the others, or are in");
  });

  it("name at most 10 ranks of a RAS report, then how many more", () => {
    const ranks = Array.from({ length: 12 }, (_, i) => ({ rank: i, pid: 100 + i, node: "10.0.0.7", gpu: String(i % 8) }));
    const text = ranksAt(ranks);
    expect(text.startsWith("rank 0 (process 100 on 10.0.0.7, GPU 0), rank 1 (")).toBe(true);
    expect(text.endsWith("rank 9 (process 109 on 10.0.0.7, GPU 1), and 2 more")).toBe(true);
    expect(ranksAt([{ rank: 4 }])).toBe("rank 4");
  });

  it("print a DETAIL fingerprint with what it has", () => {
    expect(fingerprintText({ seq: 12, op: "ALLREDUCE", shape: "1024", dtype: "Float" })).toBe("#12 ALLREDUCE shape [1024] Float");
    expect(fingerprintText({ op: "BROADCAST" })).toBe("BROADCAST");
    expect(fingerprintText(undefined)).toBe("?");
  });
});
