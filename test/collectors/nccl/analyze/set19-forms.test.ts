/**
 * Forms the sixteenth to nineteenth blind sets brought, from their real captures (test/fixtures/
 * nccl-pasted 553-564): pdsh's prefix before PyTorch's `Last error:` row and the error after it, NCCL's
 * connect retries the excerpt ends in, Gloo's failed connection setup, `Invalid rank requested`,
 * NCCL 2.4's `Socket NIC distance` naming the network, and HCAs NCCL could not open.
 */
import { describe, expect, it } from "vitest";
import { parseLine } from "../../../../collectors/nccl/logs/parse/line.js";
import { brief, pastedText, seriousFindings } from "../../../helpers/pasted.js";

describe("pdsh's prefix on PyTorch's `Last error:` rows (553)", () => {
  it("`node2: Last error:` and `node2: Net : Call to recv ... failed : Connection refused` are one network error at that peer", () => {
    const fs = seriousFindings(pastedText("553-"));
    expect(brief(fs)).toEqual([["network_error", "critical", []]]);
    expect(fs[0]?.summary).toContain("Net : Call to recv from NODE2_IP<56843> failed : Connection refused");
  });

  it("a `Last error:` row that ends the excerpt says its words are cut off, not an empty text", () => {
    expect(seriousFindings("[rank3]: Last error:")[0]?.summary).toBe(
      "PyTorch reported an NCCL failure on rank 3: its `Last error:` row is the last of the excerpt, so the error's own words are not in it.",
    );
  });

  it("prose after a word and a colon is still no prefix: `socketProgressOpt: Call to recv ...` keeps its words", () => {
    const fs = seriousFindings("node2: socketProgressOpt: Call to recv from 10.0.0.2<5000> failed : Connection reset by peer");
    expect(fs.map((f) => f.kind)).toEqual(["network_error"]);
    expect(fs[0]?.summary).toContain("Connection reset by peer");
  });

  it("an exception's name before `Last error:` is no pdsh host: the error row after it still joins", () => {
    const fs = seriousFindings(["ncclSystemError: Last error:", "socketStartConnect: Connect to 10.0.0.2<41234> failed : Connection refused"].join("\n"));
    expect(brief(fs)).toEqual([["network_error", "critical", []]]);
    expect(fs[0]?.summary).toContain("10.0.0.2");
  });

  it("a row of the same host that starts a line of its own (a bracket, a date, a NCCL line) is not the error of `Last error:`", () => {
    const fs = seriousFindings(
      ["node2: Last error:", "node2: [2024-01-02 03:04:05,678] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1)"].join("\n"),
    );
    expect(fs.map((f) => f.summary).join(" ")).not.toContain("exitcode");
  });
});

describe("NCCL's connect retries (556)", () => {
  it("retries the excerpt ends in: a network_error warning naming the processes and what connect returned", () => {
    const fs = seriousFindings(pastedText("556-"));
    expect(brief(fs)).toEqual([["network_error", "warning", []]]);
    expect(fs[0]?.processes).toEqual(["pytorch-fairseq-worker-0:16", "pytorch-fairseq-worker-0:18"]);
    expect(fs[0]?.summary).toMatch(/kept retrying a connection \(Connection refused; 12 retries in these lines\)/);
  });

  it("a healthy start of 24 ranks that each retried once and went on: nothing", () => {
    const lines = Array.from({ length: 24 }, (_, r) => [
      `n${r}:${100 + r}:${200 + r} [0] NCCL INFO Call to connect returned Connection refused, retrying`,
      `n${r}:${100 + r}:${200 + r} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.${r}<0>`,
    ]).flat();
    expect(seriousFindings(lines.join("\n"))).toEqual([]);
  });

  it("retries the process got past, or that its WARN tells: nothing of their own", () => {
    const retry = "n1:16:63 [0] NCCL INFO Call to connect returned Connection refused, retrying";
    expect(seriousFindings([retry, retry, "n1:16:63 [0] NCCL INFO Connected all rings"].join("\n"))).toEqual([]);
    const warned = [retry, retry, "n1:16:63 [0] misc/socket.cc:456 NCCL WARN Net : Connect to 10.0.0.9<41234> failed : Connection refused"].join("\n");
    expect(brief(seriousFindings(warned))).toEqual([["network_error", "critical", []]]);
    expect(seriousFindings(warned)[0]?.summary).not.toContain("kept retrying");
  });
});

describe("Gloo's failed connection setup (559, 560)", () => {
  it("`Gloo connectFullMesh failed with [...pair.cc:144] no error` on two ranks: one network_error naming them", () => {
    const fs = seriousFindings(pastedText("559-"));
    expect(brief(fs)).toEqual([["network_error", "critical", [4, 6]]]);
    expect(fs[0]?.summary).toMatch(/^Gloo could not connect its process group's full mesh on ranks 4,6 \("no error"\)/);
  });

  it("the logged line and the raised RuntimeError of one process are one failure, with Gloo's words", () => {
    const fs = seriousFindings(pastedText("560-"));
    expect(brief(fs)).toEqual([["network_error", "critical", []]]);
    expect(fs[0]?.summary).toContain('("Connect timeout [none]")');
    expect(fs[0]?.evidence).toHaveLength(1);
  });
});

describe("NCCL's own words on its rank and network", () => {
  it("`Invalid rank requested : 2/2` is an invalid-usage nccl_error of rank 2 (561)", () => {
    const fs = seriousFindings(pastedText("561-")).filter((f) => f.kind === "nccl_error");
    expect(brief(fs)).toEqual([["nccl_error", "critical", [2]]]);
  });

  it("NCCL 2.4's `CUDA Dev 0[0], Socket NIC distance :  SYS` is the network it selected (562: four pods on sockets)", () => {
    expect(parseLine("host1:22:30 [0] NCCL INFO CUDA Dev 0[3], Socket NIC distance :  SYS")).toMatchObject({ kind: "net", net: "Socket", what: "selected" });
    expect(parseLine("host1:22:30 [0] NCCL INFO CUDA Dev 1[1], AWS Libfabric NIC distance :  SYS")).toMatchObject({ net: "AWS Libfabric", what: "selected" });
    expect(parseLine("host1:22:30 [0] NCCL INFO CUDA Dev 0[0], IB NIC distance :  PHB")).toMatchObject({ net: "IB", what: "selected" });
    const fs = seriousFindings(pastedText("562-"));
    expect(brief(fs)).toEqual([["socket_transport", "warning", []]]);
    // The fourth pod's lines in the excerpt name no network.
    expect(fs[0]?.processes).toEqual(["plx-somenumberid-master-0:22", "plx-somenumberid-worker-0:28", "plx-somenumberid-worker-1:25"]);
  });

  it("an HCA that could not open, with no other HCA shown opened: an hca_error that does not claim others served", () => {
    const t = [
      "n1:5:5 [1] misc/ibvwrap.cc:212 NCCL WARN Call to ibv_open_device failed",
      "n1:5:5 [1] transport/net_ib.cc:149 NCCL WARN NET/IB : Unable to open device mlx5_0",
    ].join("\n");
    const fs = seriousFindings(t);
    expect(fs.map((f) => [f.kind, f.severity])).toEqual([["hca_error", "warning"]]);
    expect(fs[0]?.summary).toContain("No line shows NET/IB going on with another HCA");
    expect(fs[0]?.summary).not.toContain("goes on without");
  });

  it("HCAs NCCL could not open while others served (564): one hca_error warning, no critical nccl_error; none opened (391): nothing of its own", () => {
    const fs = seriousFindings(pastedText("564-"));
    expect(brief(fs)).toEqual([["hca_error", "warning", []]]);
    expect(fs[0]?.summary).toMatch(/^NCCL could not open HCA mlx5_58, mlx5_59 on 65826-86bd789679-2dxbs \(ibv_open_device failed, 3 times\)/);
    expect(seriousFindings(pastedText("391-"))).toEqual([]);
  });
});

describe("libmlx5's own print of a failed completion (577)", () => {
  it("behind a Ray actor's prefix, with no host name known: a critical network_error", () => {
    const fs = seriousFindings(pastedText("577-"));
    expect(brief(fs)).toEqual([["network_error", "critical", []]]);
    expect(fs[0]?.summary).toMatch(/^An RDMA operation failed on a host libmlx5 did not name: the ConnectX provider \(libmlx5\)/);
  });

  it("with its host and CQE rows (JBlaschke/diffBragg-Reproducer's README, NERSC Perlmutter); not beside NCCL's own completion error", () => {
    const cqe = [
      "mlx5: nid003244: got completion with error:",
      "00000000 00000000 00000000 00000000",
      "00000000 00000000 00000000 00000000",
      "00000000 20009232 00000000 00000300",
      "00003c40 92083204 000180b8 0085a0e0",
    ];
    const fs = seriousFindings(cqe.join("\n"));
    expect(brief(fs)).toEqual([["network_error", "critical", []]]);
    expect(fs[0]?.summary).toContain("An RDMA operation failed on nid003244");
    const nccl =
      "nid003244:1:2 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<5000> with error 10, opcode 0, len 0, vendor err 136 (Recv)";
    const both = seriousFindings([nccl, ...cqe].join("\n"));
    expect(both.map((f) => f.summary).filter((s) => s.includes("libmlx5"))).toEqual([]);
  });
});
