/**
 * Teardown, WARN and PyTorch watchdog lines.
 * - `comm 0x.. rank 3 nranks 8 cudaDev 1 busId cb000 - Destroy COMPLETE` (fixture 02) and the
 *   `- Abort COMPLETE` form (fixture 44); logged under INIT up to 2.27, DESTROY from 2.28.
 * - WARN: `socketProgressOpt: Call to recv from 10.0.0.2<33759> failed : Connection reset by peer`
 *   (fixture 73), `NET/IB : Got completion from peer ... with status=12 opcode=0 len=0 vendor err 129 (Recv)`
 *   (fixtures 70, 71) with its retcode trail, and `Mismatched collective detected, please check your
 *   collective calls at and around rank N. ...` (NCCL init.cc, GUIDE section 5).
 * - PyTorch 2.6/2.7 ProcessGroupNCCL watchdog timeout + exception lines (fixture 82).
 */
import { c10Time, infoText, retcodeText, warnLines } from "./format.js";
import type { Out } from "./init.js";
import type { ResolvedSpec } from "./spec.js";
import { Topology, type Comm, type RankInfo } from "./topology.js";

export type WarnKind = "connReset" | "ibCompletion" | "mismatch";

/** Thread PyTorch's watchdog runs on (it calls ncclCommGetAsyncError / ncclCommAbort). */
export function watchdogTid(r: RankInfo): number {
  return r.pid + 90;
}

export function teardownLogged(spec: ResolvedSpec): boolean {
  return spec.subsystems.has(spec.traits.destroySubsys);
}

/** Destroy (clean exit, main thread) or Abort (watchdog) COMPLETE for each comm, children first. */
export function teardownLines(spec: ResolvedSpec, r: RankInfo, comms: Comm[], abort: boolean): Out[] {
  if (!teardownLogged(spec)) return [];
  const tid = abort ? watchdogTid(r) : r.tids.main;
  return [...comms].reverse().map((c) => ({
    kind: abort ? "abort" : "destroy",
    comm: c.name,
    text: infoText(
      r,
      tid,
      `comm ${Topology.ptrOf(c, r.rank)} rank ${Topology.commRank(c, r.rank)} nranks ${c.members.length} ` +
        `cudaDev ${r.dev.cudaDev} busId ${r.dev.busId} - ${abort ? "Abort" : "Destroy"} COMPLETE`,
    ),
  }));
}

/** A peer's bootstrap/IB address as NCCL prints sockets: `10.0.0.2<33759>`. */
export function peerAddr(peer: RankInfo, port: number): string {
  return `${peer.ip}<${port}>`;
}

export interface WarnArgs {
  kind: WarnKind;
  r: RankInfo;
  peer: RankInfo;
  /** Rank number to name in the mismatch message (comm rank). */
  commRank: number;
  port: number;
  /** Epoch ms for the 2.26+ timestamp prefix. */
  epochMs: number;
}

export function warnBlock(spec: ResolvedSpec, a: WarnArgs): Out[] {
  const stamp = spec.traits.warnTimestamp ? a.epochMs : undefined;
  const out: Out[] = [];
  const warn = (tid: number, where: string, msg: string): void => {
    const [blank, text] = warnLines(a.r, tid, where, msg, stamp);
    out.push({ kind: "blank", text: blank ?? "" }, { kind: "warn", text: text ?? "" });
  };
  const ret = (tid: number, where: string, thread?: string): void => {
    out.push({ kind: "retcode", text: retcodeText(a.r, tid, where, 6, thread) });
  };
  switch (a.kind) {
    case "connReset": {
      const tid = a.r.tids.proxyService;
      warn(tid, "misc/socket.cc:50", `socketProgressOpt: Call to recv from ${peerAddr(a.peer, a.port)} failed : Connection reset by peer`);
      ret(tid, "misc/socket.cc:752");
      break;
    }
    case "ibCompletion": {
      if (spec.transport.kind === "socket") throw new Error("ibCompletion WARN needs an ib or roce transport");
      const tid = a.r.tids.proxyProgress;
      const gids = spec.transport.kind === "roce" ? ` localGid ::ffff:${a.r.ip} remoteGids::ffff:${a.peer.ip}` : "";
      warn(
        tid,
        "transport/net_ib.cc:1696",
        `NET/IB : Got completion from peer ${peerAddr(a.peer, a.port)} with status=12 opcode=0 len=0 vendor err 129 (Recv)${gids}`,
      );
      ret(tid, "transport/net.cc:1298");
      ret(tid, "proxy.cc:694");
      ret(tid, "proxy.cc:874", "Progress Thread");
      break;
    }
    case "mismatch":
      warn(
        watchdogTid(a.r),
        "init.cc:2177",
        `Mismatched collective detected, please check your collective calls at and around rank ${a.commRank}. ` +
          "You can use NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS=COLL to see the collective logs",
      );
      break;
  }
  return out;
}

export interface WatchdogArgs {
  r: RankInfo;
  comm: Comm;
  seq: number;
  opType: string;
  numelIn: number;
  numelOut: number;
  timeoutMs: number;
  ranForMs: number;
  epochMs: number;
  nanos: number;
}

/** The two stderr lines of a PyTorch (2.6/2.7 style) watchdog timeout. */
export function watchdogLines(a: WatchdogArgs): string[] {
  const cr = Topology.commRank(a.comm, a.r.rank);
  const p = `[rank${a.r.rank}]:`;
  return [
    `${p}[E${c10Time(a.epochMs, a.nanos)} ProcessGroupNCCL.cpp:616] [Rank ${cr}] Watchdog caught collective operation timeout: ` +
      `WorkNCCL(SeqNum=${a.seq}, OpType=${a.opType}, NumelIn=${a.numelIn}, NumelOut=${a.numelOut}, Timeout(ms)=${a.timeoutMs}) ` +
      `ran for ${a.ranForMs} milliseconds before timing out.`,
    `${p}[E${c10Time(a.epochMs + 2, a.nanos + 517)} ProcessGroupNCCL.cpp:1785] [PG ID ${a.comm.pgId} PG GUID ${a.comm.pgId}(${a.comm.pgDesc}) ` +
      `Rank ${cr}] Exception (either an error or timeout) detected by watchdog at work: ${a.seq}, last enqueued NCCL work: ${a.seq}, ` +
      `last completed NCCL work: ${a.seq - 1}.`,
  ];
}
