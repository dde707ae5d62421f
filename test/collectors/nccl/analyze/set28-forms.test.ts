/**
 * Forms the twenty-eighth blind set brought, from its real captures (test/fixtures/nccl-pasted
 * 732-740): gdb's backtrace of a thread waiting in PyTorch's store client, the store server that gave
 * up waiting for its clients, the Kubernetes device plugin's Xid, XLA's rendezvous that may be stuck,
 * and the watchdog's stack of a failed collective with its timeout line cut.
 */
import { describe, expect, it } from "vitest";
import { analyzeLogs } from "../../../../collectors/nccl/analyze/analyze.js";
import { nativeWait } from "../../../../collectors/nccl/logs/native/gdb-backtrace.js";
import { storeClientsTimeout } from "../../../../collectors/nccl/logs/pytorch/store-clients.js";
import { parseHealthAgentXid } from "../../../../collectors/kmsg/parse/xid.js";
import { rendezvousWait } from "../../../../collectors/nccl/logs/xla/rendezvous.js";
import { KernelLines } from "../../../../agent/analyze-kernel.js";
import { brief, pastedText, seriousFindings } from "../../../helpers/pasted.js";

describe("gdb's backtrace of a thread waiting in PyTorch's store client (732)", () => {
  it("the capture (recv under c10d::TCPStore::doGet): a hang_suspected warning naming the store's call", () => {
    const fs = seriousFindings(pastedText("732-"));
    expect(brief(fs)).toEqual([["hang_suspected", "warning", []]]);
    expect(fs[0]?.summary).toContain("PyTorch's store client's c10d::TCPStore::doGet");
  });

  it("an NCCL call outside it wins; a store's set, or no store frame, is no store wait", () => {
    expect(nativeWait(["__libc_recv", "c10d::tcputil::recvBytes<unsigned char>", "c10d::TCPStore::doGet", "c10d::TCPStore::get"])).toEqual({
      call: "c10d::TCPStore::get",
      wait: "store",
    });
    expect(
      nativeWait(["__libc_recv", "c10d::TCPStore::doGet", "c10d::TCPStore::get", "c10d::ProcessGroupNCCL::broadcastUniqueNCCLID", "ncclCommInitRankConfig"]),
    ).toMatchObject({
      call: "ncclCommInitRankConfig",
      wait: "init",
    });
    expect(nativeWait(["__libc_send", "c10d::TCPStore::set"])).toBeUndefined();
  });
});

describe("the store server that gave up waiting for its clients (733)", () => {
  it("the capture: a critical hang at init and a rank_behind warning naming no rank", () => {
    const fs = seriousFindings(pastedText("733-"));
    expect(brief(fs)).toEqual([
      ["hang_suspected", "critical", []],
      ["rank_behind", "warning", []],
    ]);
    expect(fs[0]?.summary).toContain("waited 601 s for its clients and only 1 of 2 connected");
  });

  it("the counts; all joined, or other words, are none", () => {
    expect(storeClientsTimeout("torch.distributed.DistStoreError: Timed out after 900 seconds waiting for clients. 3/8 clients joined.", "l:1")).toEqual({
      seconds: 900,
      joined: 3,
      expected: 8,
      where: "l:1",
    });
    expect(storeClientsTimeout("Timed out after 900 seconds waiting for clients. 8/8 clients joined.", "l:1")).toBeUndefined();
    expect(storeClientsTimeout("We waited 900 seconds waiting for clients. 3/8 clients joined.", "l:1")).toBeUndefined();
  });
});

describe("the Kubernetes device plugin's Xid (734)", () => {
  it("the capture: Xid 69 of the GPU the plugin names by its UUID, once", () => {
    const fs = analyzeLogs([{ name: "x.log", text: pastedText("734-") }], new KernelLines()).findings.filter((f) => f.severity !== "info");
    expect(brief(fs)).toEqual([["gpu_xid", "warning", []]]);
    expect(fs[0]).toMatchObject({ code: 69, device: "GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8", count: 1 });
    expect(fs[0]?.summary).toMatch(/^GPU-7540a9b3-eeb9-1214-1526-f93c9ea826a8 reported Xid 69/);
  });

  it("the plugin's words need its device; gpud's words still read", () => {
    expect(parseHealthAgentXid("XidCriticalError: Xid=79 on Device=GPU-0a1b, the device will go unhealthy.")).toMatchObject({ xid: 79, pci: "GPU-0a1b" });
    expect(parseHealthAgentXid("XidCriticalError: Xid=79 on Device=somewhere")).toBeUndefined();
    expect(parseHealthAgentXid("reason: XID 79(GPU has fallen off the bus) detected on PCI:0000:ae:00")).toMatchObject({ xid: 79, pci: "0000:ae:00" });
  });
});

describe("XLA's rendezvous that may be stuck (738)", () => {
  it("the capture: a hang_suspected warning on rank 6", () => {
    const fs = seriousFindings(pastedText("738-"));
    expect(brief(fs)).toEqual([["hang_suspected", "warning", [6]]]);
    expect(fs[0]?.summary).toContain('("initialize clique") waited 10 s on rank 6');
  });

  it("the older wording without a name; a line that only quotes the words is none", () => {
    expect(rendezvousWait("E rendezvous.cc:31] This thread has been waiting for 20 seconds and may be stuck:", "l:1")).toEqual({ seconds: 20, where: "l:1" });
    expect(rendezvousWait("This thread has been waiting for a long time", "l:1")).toBeUndefined();
  });
});

describe("the watchdog's stack of a failed collective, its timeout line cut (740)", () => {
  it("the capture (`[rank3[]:` as stored): a critical watchdog_timeout of rank 3 with its stack", () => {
    const fs = seriousFindings(pastedText("740-"));
    expect(brief(fs)).toEqual([["watchdog_timeout", "critical", [3]]]);
    expect(fs[0]?.summary).toContain("on rank 3: broadcast, called from _pp_receive_prev_sampled_token_ids_to_input_batch");
    expect(fs[0]?.stacks?.[0]?.frames[0]).toMatchObject({ function: "broadcast", line: 2968 });
  });

  it("beside a timeout line, the stack joins that timeout and makes no finding of its own", () => {
    const text = [
      "[rank3]:[E508 07:35:59.440 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600001 milliseconds before timing out.",
      "[rank3]:[E508 07:35:59.441 ProcessGroupNCCL.cpp:733] Stack trace of the failed collective: ",
      "#0 broadcast from /usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py:2968",
    ].join("\n");
    const fs = seriousFindings(text).filter((f) => f.kind === "watchdog_timeout");
    expect(brief(fs)).toEqual([["watchdog_timeout", "critical", [3]]]);
    expect(fs[0]?.seq).toBe(9);
    expect(fs[0]?.stacks).toHaveLength(1);
  });
});

describe("forms the twenty-ninth blind set brought (754, 760)", () => {
  it("Gloo's timeout as Ray's logger records it (754): a critical hang_suspected; prose that quotes the words is none", () => {
    expect(brief(seriousFindings(pastedText("754-")))).toEqual([["hang_suspected", "critical", []]]);
    expect(
      seriousFindings(
        "I keep seeing [/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:72] Timed out waiting 10000ms for recv operation to complete",
      ),
    ).toEqual([]);
  });

  it("a host name with another process's torn text before it is that process (760): one pod on sockets with IB disabled is healthy", () => {
    expect(seriousFindings(pastedText("760-"))).toEqual([]);
    const torn = pastedText("760-").replace("adp-uadp-us-llm", "other-host-us-llm");
    expect(brief(seriousFindings(torn))).toEqual([["socket_transport", "warning", []]]);
  });
});
