/**
 * The NCCL RAS defect table: version forms, each row's edges (the release before `from`, `from`, the last
 * affected release and the first fixed one, by the NCCL release list 2.24.3 ... 2.30.7), and the
 * rows' links.
 */
import { describe, expect, it } from "vitest";
import { RAS_DEFECTS, compareNcclVersions, defectsOf } from "../../../../collectors/nccl/ras/defects.js";

const ids = (version: string | undefined): string[] => defectsOf(version).map((d) => d.id);

describe("compareNcclVersions", () => {
  it("compares each part as a number, not as text", () => {
    expect(compareNcclVersions("2.27.10", "2.27.9")).toBe(1);
    expect(compareNcclVersions("2.9.0", "2.24.3")).toBe(-1);
    expect(compareNcclVersions("3.0.0", "2.99.99")).toBe(1);
  });

  it("counts missing parts as 0", () => {
    expect(compareNcclVersions("2.28", "2.28.0")).toBe(0);
    expect(compareNcclVersions("2", "2.0.0")).toBe(0);
    expect(compareNcclVersions("2.28", "2.28.1")).toBe(-1);
  });

  it("drops a +cuda or -build suffix and a leading v", () => {
    expect(compareNcclVersions("2.27.3+cuda12.9", "2.27.3")).toBe(0);
    expect(compareNcclVersions("2.28.9-1", "2.28.9")).toBe(0);
    expect(compareNcclVersions("v2.29.2-1", "2.29.2")).toBe(0);
    expect(compareNcclVersions("2.27.3+cuda12.9", "2.27.4")).toBe(-1);
  });
});

describe("defectsOf: version forms", () => {
  it("reads the plain, +cuda, -build and tag forms alike", () => {
    const plain = ids("2.27.3");
    expect(plain).toEqual(["nccl#1762", "nccl#2346"]);
    expect(ids("2.27.3+cuda12.9")).toEqual(plain);
    expect(ids("2.27.3-1")).toEqual(plain);
    expect(ids("v2.27.3-1")).toEqual(plain);
  });

  it("gives [] for an unknown or unparsable version", () => {
    for (const v of [undefined, "", " ", "unknown", "2.x", "2.27.3.1", "cuda12.9", "2..3", ".27.3", "-1"]) expect(ids(v)).toEqual([]);
  });

  it("gives [] for versions before RAS (2.24)", () => {
    expect(ids("2.23.4")).toEqual([]);
    expect(ids("2.24.0")).toEqual([]);
  });
});

describe("defectsOf: the edges of each row", () => {
  // [id, the release before `from`, from, the last affected release, the first fixed release (or none)]
  const edges: [string, string, string, string, string | undefined][] = [
    ["nccl-v2.27.3-1", "2.23.4", "2.24.3", "2.26.6", "2.27.3"],
    ["nccl#1669", "2.25.1", "2.26.2", "2.26.6", "2.27.3"],
    ["nccl#1718", "2.25.1", "2.26.2", "2.26.6", "2.27.3"],
    ["nccl#1762", "2.25.1", "2.26.2", "2.28.9", "2.29.2"],
    ["nccl#2346", "2.26.6", "2.27.3", "2.30.7", undefined],
  ];

  it("has exactly these rows", () => {
    expect(RAS_DEFECTS.map((d) => d.id)).toEqual(edges.map((e) => e[0]));
  });

  for (const [id, before, from, lastAffected, fixed] of edges) {
    it(`${id}: not ${before}, from ${from} to ${lastAffected}, ${fixed === undefined ? "no fix read" : `fixed in ${fixed}`}`, () => {
      expect(ids(before)).not.toContain(id);
      expect(ids(from)).toContain(id);
      expect(ids(lastAffected)).toContain(id);
      if (fixed !== undefined) expect(ids(fixed)).not.toContain(id);
    });
  }

  it("keeps an unfixed row for releases newer than the newest one read", () => {
    expect(ids("2.32.7")).toEqual(["nccl#2346"]);
    expect(RAS_DEFECTS.find((d) => d.id === "nccl#2346")?.unfixedAsOf).toBe("2.30.7");
  });

  it("lists every defect of a release, in table order", () => {
    expect(ids("2.24.3")).toEqual(["nccl-v2.27.3-1"]);
    expect(ids("2.25.1")).toEqual(["nccl-v2.27.3-1"]);
    expect(ids("2.26.5+cuda12.9")).toEqual(["nccl-v2.27.3-1", "nccl#1669", "nccl#1718", "nccl#1762"]);
    expect(ids("2.28.9-1")).toEqual(["nccl#1762", "nccl#2346"]);
    expect(ids("2.29.2")).toEqual(["nccl#2346"]);
  });
});

describe("RAS_DEFECTS rows", () => {
  it("link into github.com/NVIDIA/nccl, at the issue, pull request or release their id names", () => {
    for (const d of RAS_DEFECTS) {
      const url = new URL(d.url);
      expect(url.protocol).toBe("https:");
      expect(url.host).toBe("github.com");
      const issue = /^nccl#(\d+)$/.exec(d.id);
      const pr = /^nccl-pr#(\d+)$/.exec(d.id);
      const release = /^nccl-(v\d+\.\d+\.\d+-\d+)$/.exec(d.id);
      if (issue) expect(url.pathname).toBe(`/NVIDIA/nccl/issues/${issue[1]}`);
      else if (pr) expect(url.pathname).toBe(`/NVIDIA/nccl/pull/${pr[1]}`);
      else if (release) expect(url.pathname).toBe(`/NVIDIA/nccl/releases/tag/${release[1]}`);
      else expect.fail(`unexpected id ${d.id}`);
    }
  });

  it("start at or after 2.24.3 (the first release with RAS) and end after they start", () => {
    for (const d of RAS_DEFECTS) {
      expect(compareNcclVersions(d.from, "2.24.3")).toBeGreaterThanOrEqual(0);
      if (d.fixedIn !== undefined) {
        expect(compareNcclVersions(d.from, d.fixedIn)).toBe(-1);
        expect(d.unfixedAsOf).toBeUndefined();
      } else {
        expect(d.unfixedAsOf).toBeDefined();
        expect(compareNcclVersions(d.from, d.unfixedAsOf ?? "0")).toBeLessThanOrEqual(0);
      }
      expect(d.trigger.length).toBeGreaterThan(0);
    }
  });
});
