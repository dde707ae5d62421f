/** DiagnosticsEpisode: once per hang episode, BUSY and failures tried again an interval later, at most 3 times. */
import { describe, expect, it } from "vitest";
import { DiagnosticsEpisode, hasDiagnostics } from "../../../../collectors/nccl/ras/diagnostics.js";
import { parseDiagnostics } from "../../../../collectors/nccl/ras/parse-diag.js";

const I = 30_000;
const ANSWER = parseDiagnostics("h:1 NCCL DIAG [INFO] ECC: uncorrected volatile errors on rank(s) {1} (worst=1) across 8 ranks in comm 0xab\n");
const BUSY = parseDiagnostics("BUSY: diagnostics already in progress\n");

describe("DiagnosticsEpisode", () => {
  it("asks once per episode, only while a hang is suspected and the node may ask", () => {
    const e = new DiagnosticsEpisode();
    expect(e.due(0, true)).toBe(false);
    expect(e.setHang(true)).toBe(true);
    expect(e.setHang(true)).toBe(false);
    expect(e.due(0, false)).toBe(false);
    expect(e.due(0, true)).toBe(true);
    e.asked();
    e.answered(ANSWER, 1000, I);
    expect(e.report).toBe(ANSWER);
    expect(e.atMs).toBe(1000);
    expect(e.due(10 * I, true)).toBe(false);
    // The hang ends: the answer goes; the next hang is a new episode.
    e.setHang(false);
    expect(e.report).toBeUndefined();
    expect(e.setHang(true)).toBe(true);
    expect(e.due(11 * I, true)).toBe(true);
  });

  it("BUSY and failures: again one interval later, at most 3 tries", () => {
    const e = new DiagnosticsEpisode();
    e.setHang(true);
    e.asked();
    e.answered(BUSY, 0, I);
    expect(e.report).toBeUndefined();
    expect(e.due(I - 1, true)).toBe(false);
    expect(e.due(I, true)).toBe(true);
    e.asked();
    e.failed(I, I);
    expect(e.due(2 * I, true)).toBe(true);
    e.asked();
    e.failed(2 * I, I);
    expect(e.due(10 * I, true)).toBe(false);
  });

  it("hasDiagnostics: NCCL 2.31.2 and later", () => {
    expect([hasDiagnostics("2.30.7"), hasDiagnostics("2.31.2"), hasDiagnostics("2.32.3+cuda13.0"), hasDiagnostics("3.0.0"), hasDiagnostics(undefined)]).toEqual(
      [false, true, true, true, false],
    );
  });
});
