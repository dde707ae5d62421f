/**
 * Forms the twenty-sixth blind set brought, from its real captures (test/fixtures/nccl-pasted
 * 693-699): PyTorch 2.0's store-client timeout with a `host:port` address, Gloo's pair that fails
 * its connect itself, Gloo's size check, the launcher's rank on a store line that names no process,
 * and PyTorch RPC's TensorPipe agents named by rank.
 */
import { describe, expect, it } from "vitest";
import { storeConnectTimeout } from "../../../../collectors/nccl/logs/pytorch/store-connect.js";
import { glooConnectFailure } from "../../../../collectors/nccl/logs/pytorch/gloo-connect.js";
import { glooSizeMismatch } from "../../../../collectors/nccl/logs/pytorch/gloo-mismatch.js";
import { brief, pastedText, seriousFindings } from "../../../helpers/pasted.js";

describe("PyTorch 2.0's store client that gave up, its address as host:port (693)", () => {
  it("the capture: one critical network_error naming the rendezvous address", () => {
    const fs = seriousFindings(pastedText("693-"));
    expect(brief(fs)).toEqual([["network_error", "critical", []]]);
    expect(fs[0]?.summary).toContain("timed out after 60 s connecting to 192.0.0.1:1234");
  });

  it("reads `host:port.`, `[::1]:29500` and `(host, port)` alike; a line without c10d's context stays prose", () => {
    const at = (s: string): string | undefined => storeConnectTimeout(s, "l:1")?.peer;
    expect(at("[E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to connect to 192.0.0.1:1234.")).toBe("192.0.0.1:1234");
    expect(at("[E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to connect to [::1]:29500.")).toBe("[::1]:29500");
    expect(at("[E socket.cpp:922] [c10d] The client socket has timed out after 600s while trying to connect to (10.1.2.3, 29500).")).toBe("10.1.2.3:29500");
    expect(at("If it says The client socket has timed out after 60s while trying to connect to 10.0.0.1:29500, open the port")).toBeUndefined();
    expect(at("[E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to connect to ")).toBeUndefined();
    expect(at("[c10d] The client socket has timed out after 60s while trying to connect to the server.")).toBeUndefined();
  });
});

describe("Gloo's pair that fails its connect itself (694, 698)", () => {
  it("new_group's RuntimeError (694): a critical network_error with Gloo's words", () => {
    const fs = seriousFindings(pastedText("694-"));
    expect(brief(fs)).toEqual([["network_error", "critical", []]]);
    expect(fs[0]?.summary).toContain('"connect [172.31.71.170]:13195: Connection refused"');
    expect(fs[0]?.summary).not.toContain("loopback");
  });

  it("PyTorch 1.0's gloo::IoException to 127.0.1.1 (698): the loopback address's advice", () => {
    const fs = seriousFindings(pastedText("698-"));
    expect(brief(fs)).toEqual([["network_error", "critical", []]]);
    expect(fs[0]?.summary).toContain("its host name resolves to 127.0.x.x");
  });

  it("only Gloo's pair says it: its source before the words, the launcher's rank kept", () => {
    const f = glooConnectFailure(
      "[rank3]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] connect [10.0.0.2]:5000: Connection timed out",
      "l:1",
    );
    expect(f).toEqual({ rank: 3, words: "connect [10.0.0.2]:5000: Connection timed out", where: "l:1" });
    expect(glooConnectFailure("[db.cc:12] connect [db01]:5432: Connection refused", "l:1")).toBeUndefined();
    expect(glooConnectFailure("[/x/gloo/transport/uv/pair.cc:333] connect [::1]:4000: Connection refused", "l:1")?.words).toBe(
      "connect [::1]:4000: Connection refused",
    );
    expect(glooConnectFailure("[/x/gloo/common/pair.cc:333] connect [10.0.0.2]:4000: Connection refused", "l:1")).toBeUndefined();
    expect(seriousFindings("RuntimeError: [/x/gloo/transport/uv/pair.cc:333] connect [::1]:4000: Connection refused")[0]?.summary).toContain(
      "127.0.x.x or ::1",
    );
    expect(seriousFindings("2024-01-01 INFO [pool] connect [redis]:6379: ok")).toEqual([]);
  });
});

describe("Gloo's size check (695)", () => {
  it("the capture (three processes' aborts interleaved): one critical collective_mismatch with the sizes", () => {
    const fs = seriousFindings(pastedText("695-"));
    expect(brief(fs)).toEqual([["collective_mismatch", "critical", []]]);
    expect(fs[0]?.summary).toContain("(128 bytes sent, 8 expected)");
  });

  it("the sizes where the line has them, the launcher's rank, and nothing from other words", () => {
    expect(glooSizeMismatch("[rank2]:  what():  [enforce fail at pair.cc:446] op.preamble.length <= op.nbytes. 4096 vs 1024", "l:1")).toEqual({
      rank: 2,
      sent: 4096,
      expected: 1024,
      where: "l:1",
    });
    expect(glooSizeMismatch("[enforce fail at pair.cc:446] op.preamble.length <= op.nbytes.", "l:1")).toEqual({ where: "l:1" });
    expect(glooSizeMismatch("[enforce fail at pair.cc:446] op.nbytes >= 0", "l:1")).toBeUndefined();
    expect(seriousFindings("# workaround for 'op.preamble.length <= op.nbytes' errors seen in issue 1234")).toEqual([]);
    expect(seriousFindings("Gloo error op.preamble.length <= op.nbytes when using broadcast_object_list #77777")).toEqual([]);
  });
});

describe("ranks of lines that name no process", () => {
  it("the launcher's `[rank6]:` before a store line reset by its peer (697)", () => {
    expect(brief(seriousFindings(pastedText("697-")))).toEqual([["network_error", "critical", [6]]]);
  });

  it("PyTorch RPC's TensorPipe agents and the worker they lost (699); workers named by words give no ranks", () => {
    const fs = seriousFindings(pastedText("699-"));
    expect(brief(fs)).toEqual([["network_error", "critical", [0, 3, 7, 10, 16, 36]]]);
    const named = seriousFindings(
      "[W tensorpipe_agent.cpp:916] RPC agent for trainer1 encountered error when sending outgoing request #0 to ps0: async error on socket: Connection reset by peer",
    );
    expect(brief(named)).toEqual([["network_error", "critical", []]]);
  });
});
