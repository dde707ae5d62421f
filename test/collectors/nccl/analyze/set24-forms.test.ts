/**
 * Forms the twenty-fourth blind set brought, from its real captures (test/fixtures/nccl-pasted 659,
 * 662): the watchdog's words laid out over indented rows by a reporter, and an NCCL RAS report
 * indented as a whole (NCCL's user guide prints it so).
 */
import { describe, expect, it } from "vitest";
import { LineUnwrapper } from "../../../../collectors/nccl/logs/parse/unwrap.js";
import { brief, pastedText, seriousFindings } from "../../../helpers/pasted.js";

const unwrap = (rows: readonly string[]): string[] => {
  const out: string[] = [];
  const u = new LineUnwrapper((t) => out.push(t));
  rows.forEach((r, i) => u.push(r, i + 1));
  u.end();
  return out;
};

describe("the watchdog's words over indented rows (659)", () => {
  it("`[Rank 4] Watchdog caught ...:` / `WorkNCCL(SeqNum=27732, ...` / indented rows to `timing out.`: one timeout with its numbers", () => {
    const fs = seriousFindings(pastedText("659-"));
    expect(brief(fs)).toEqual([["watchdog_timeout", "critical", [4]]]);
    expect(fs[0]?.seq).toBe(27732);
    expect(fs[0]?.summary).toContain("after 1800003 ms (timeout 1800000 ms)");
  });

  it("rows join only while the watchdog's sentence is open; an indented row after other words, or after the sentence's end, stays its own", () => {
    expect(
      unwrap([
        "[Rank 4] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE) ran for 600100 milliseconds before timing out.",
        "         dist.barrier()",
      ]),
    ).toHaveLength(2);
    expect(unwrap(["Loss went up at step 7:", "         dist.barrier()"])).toEqual(["Loss went up at step 7:", "         dist.barrier()"]);
    expect(unwrap(["[Rank 2] failure detected by watchdog at work sequence id: 9", "    PG status: last enqueued work: 10, last completed work: 8"])).toEqual([
      "[Rank 2] failure detected by watchdog at work sequence id: 9 PG status: last enqueued work: 10, last completed work: 8",
    ]);
  });
});

describe("an NCCL RAS report indented as a whole (662)", () => {
  it("the user guide's report, two blanks before every line: its INCOMPLETE entries are read", () => {
    const fs = seriousFindings(pastedText("662-"));
    // The guide's `The missing rank: 21` is its own words: NCCL's client prints `Rank 21 -- GPU 5 managed by ...` (ras/client_support.cc).
    expect(brief(fs)).toEqual([
      ["nccl_error", "warning", []],
      ["nccl_error", "warning", []],
    ]);
    expect(fs[0]?.summary).toMatch(/^NCCL RAS has no data for communicator 0xcf264af53edbe986 from 1 rank\(s\)/);
  });
});
