/**
 * Line forms of the second blind set (test/fixtures/nccl-pasted 107, 110, 111), each parsed from
 * its real line: NCCL 2.4's `Destroyed comm 0x.. rank N` (the process's rank), a host name a poster
 * redacted (`<cluster_name>:919:1150 [0] NCCL INFO ...`), and PyTorch's async exception that names
 * its work (`Collective WorkNCCL(SeqNum=2, OpType=ALLREDUCE, ...) raised the following async exception`).
 */
import { describe, expect, it } from "vitest";
import { parseLine } from "../../../../../collectors/nccl/logs/parse/line.js";
import { listFixtures, readCapture } from "../../../../helpers/fixtures.js";

const lineOf = (prefix: string, has: string): string => {
  const name = listFixtures("nccl-pasted", ".log").find((f) => f.startsWith(prefix)) ?? "";
  return (
    readCapture(`nccl-pasted/${name}`)
      .split("\n")
      .find((l) => l.includes(has)) ?? ""
  );
};

describe("line forms of pasted logs", () => {
  it("`Destroyed comm 0x7f24c4001af0 rank 4` is a destroy of that comm by rank 4", () => {
    expect(parseLine(lineOf("107-", "Destroyed comm 0x7f24c4001af0"))).toMatchObject({
      kind: "teardown",
      what: "destroy",
      phase: "complete",
      comm: "0x7f24c4001af0",
      rank: 4,
      host: "gpu5",
      pid: 35917,
    });
  });

  it("a redacted host `<cluster_name>` is still a header: host, pid and the channel line", () => {
    expect(parseLine(lineOf("111-", "via NET/Socket"))).toMatchObject({ kind: "channel", host: "<cluster_name>", transport: "NET" });
    expect(parseLine("<cluster_name:919:1150 [0] NCCL INFO x")).toBeUndefined();
  });

  it("an async exception names the work it was raised in", () => {
    expect(parseLine(lineOf("110-", "raised the following async exception"))).toMatchObject({
      kind: "pt_error",
      what: "nccl_error",
      seq: 2,
      op: "ALLREDUCE",
      ncclVersion: "2.25.1",
    });
  });
});
