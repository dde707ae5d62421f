/**
 * One verdict per incident (verdict/incidents.ts): the findings of one fact under the one that names
 * the most, the report's headline first. Findings as analyze builds them (verdict/finding.ts), in
 * sortFindings' order; then a real capture read whole.
 */
import { describe, expect, it } from "vitest";
import { firstSentence, headlineOf, incidentsOf } from "../../../../collectors/nccl/verdict/incidents.js";
import {
  gdrDisabled,
  hangSuspected,
  hardwareEvent,
  ncclError,
  networkError,
  rankBehind,
  socketTransport,
  watchdogTimeout,
} from "../../../../collectors/nccl/verdict/finding.js";
import { sortFindings, type Finding } from "../../../../collectors/nccl/verdict/report.js";
import { analyzeLogs } from "../../../../collectors/nccl/analyze/analyze.js";
import { readCapture } from "../../../helpers/fixtures.js";

const base = { ranks: [], processes: [], comm_id: null, evidence: [] };

describe("incidents", () => {
  it("a hang and the errors of its ranks are one incident led by the rank behind; the transport and a GPU's Xid are incidents of their own", () => {
    const findings: Finding[] = sortFindings([
      watchdogTimeout({ ...base, summary: "PyTorch watchdog timed out on ranks 0-6 of PG 1 in work SeqNum=9. More." }),
      socketTransport({ ...base, summary: "NCCL moves data over TCP sockets." }),
      networkError({ ...base, summary: "Network error at peer 10.0.0.7. Check it." }),
      rankBehind({
        ...base,
        ranks: [7],
        summary: "Rank 7 never entered collective #9 of communicator c1; rank 0-6 entered it and wait there. Look at rank 7.",
      }),
      hardwareEvent("gpu_xid", { ...base, severity: "critical", summary: "Xid 79 on gpu-3: the GPU fell off the bus. Drain the node." }),
      gdrDisabled({ ...base, summary: "GPUDirect RDMA is off." }),
    ]);
    const incidents = incidentsOf(findings);
    expect(incidents.map((i) => ({ severity: i.severity, kinds: i.findings.map((n) => findings[n]?.kind) }))).toEqual([
      { severity: "critical", kinds: ["rank_behind", "watchdog_timeout", "network_error"] },
      { severity: "critical", kinds: ["gpu_xid"] },
      { severity: "warning", kinds: ["socket_transport", "gdr_disabled"] },
    ]);
    expect(incidents[0]?.headline).toBe("Rank 7 never entered collective #9 of communicator c1; rank 0-6 entered it and wait there.");
    expect(headlineOf(findings, incidents)).toBe(
      "Rank 7 never entered collective #9 of communicator c1; rank 0-6 entered it and wait there. Also: critical gpu_xid, warning socket_transport (below).",
    );
  });

  it("errors without a hang are one incident of their own", () => {
    const findings = sortFindings([
      ncclError({ ...base, summary: "A CUDA call inside NCCL failed on a:1 [3]." }),
      networkError({ ...base, summary: "Network error on a:2." }),
    ]);
    expect(incidentsOf(findings).map((i) => i.findings)).toEqual([[0, 1]]);
  });

  it("a healthy job's report says so; notes at info stand alone and the headline says there are some", () => {
    expect(headlineOf([], incidentsOf([]))).toBe("nothing wrong found: no hang, no failure and no transport problem in these logs.");
    const notes = [
      hangSuspected({
        ...base,
        severity: "info",
        summary: "Communicator c1: rank 0 logged Init START and no Init COMPLETE: init had not finished. If the job stopped here, it hangs.",
      }),
    ];
    const inc = incidentsOf(notes);
    expect(inc).toEqual([
      { severity: "info", headline: "Communicator c1: rank 0 logged Init START and no Init COMPLETE: init had not finished.", findings: [0] },
    ]);
    expect(headlineOf(notes, inc)).toBe(
      "nothing wrong found at warning or above; a note below, the first: Communicator c1: rank 0 logged Init START and no Init COMPLETE: init had not finished.",
    );
  });

  it("a sentence ends before a capital letter, not inside a number or an address", () => {
    expect(firstSentence("Network error at peer 10.0.35.1<49189> on kolyoz2:25146 [0]: ib_completion_error (1 line). IB completion status 4.")).toBe(
      "Network error at peer 10.0.35.1<49189> on kolyoz2:25146 [0]: ib_completion_error (1 line).",
    );
    expect(firstSentence("no end here")).toBe("no end here");
  });

  it("a real watchdog timeout of five ranks: one incident, its headline the report's", () => {
    const r = analyzeLogs([{ name: "01.log", text: readCapture("nccl-pasted/01-watchdog-pt2.4-reduce-scatter-pg1-seq7753-five-ranks.log") }]);
    const serious = r.incidents.filter((i) => i.severity !== "info");
    expect(serious).toHaveLength(1);
    expect(serious[0]?.findings.slice().sort((a, b) => a - b)).toEqual(r.findings.flatMap((f, i) => (f.severity === "info" ? [] : [i])));
    expect(r.headline).toBe(serious[0]?.headline);
    expect(r.headline).toContain("SeqNum=7753");
  });
});
