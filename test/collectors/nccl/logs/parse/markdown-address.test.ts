/**
 * An address pasted back with the Markdown a renderer made of it (`[10.0.0.2](http://10.0.0.2)`):
 * the finding names the address, never the link markup. The line is the real one of
 * test/fixtures/nccl/64 (NVIDIA/nccl-tests #166) with its address so linked.
 */
import { describe, expect, it } from "vitest";
import { parseLine } from "../../../../../collectors/nccl/logs/parse/line.js";
import { analyzeLogs } from "../../../../../collectors/nccl/analyze/analyze.js";
import { readCapture } from "../../../../helpers/fixtures.js";

const real = readCapture("nccl/64-error-socketStartConnect-abort-proxy-service-failed.log")
  .split("\n")
  .find((l) => l.includes("Connect to 10.0.0.2<45763>"));

describe("a Markdown link around an address", () => {
  it("the real line names peer 10.0.0.2, port 45763", () => {
    expect(real).toBeDefined();
    expect(parseLine(real ?? "")).toMatchObject({ kind: "warn", peer: "10.0.0.2", peerPort: 45763 });
  });

  it("pasted as [10.0.0.2](http://10.0.0.2)<45763>: the same peer, and no markup in the finding", () => {
    const linked = (real ?? "").replace("10.0.0.2<45763>", "[10.0.0.2](http://10.0.0.2)<45763>");
    expect(parseLine(linked)).toMatchObject({ kind: "warn", peer: "10.0.0.2", peerPort: 45763 });
    const f = analyzeLogs([{ name: "x.log", text: linked }]).findings.find((x) => x.kind === "network_error");
    expect(f?.peer).toBe("10.0.0.2");
    expect(f?.summary).toContain("10.0.0.2<45763>");
    expect(f?.summary).not.toContain("](");
  });
});
