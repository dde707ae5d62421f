/**
 * Who may answer the RAS watch (docs/nccl.md, "Who may answer"). With an owner source, every
 * connection to the service (a query, an exchange, the monitor subscription) is checked before its
 * answer is read: the socket that answered must be held by a process of a rank the logs know, or by
 * root (ras/socket-owner.ts); the rank pid that held it last is looked at first the next time. A
 * refusal is logged as a warning, once per episode and socket owner: a local user listening on the
 * RAS port cannot forge a verdict. The believed socket's uid is what the live stacks trust.
 */
import type { AnswerLog } from "./answer-log.js";
import { belief, refusal, socketOwner, type RasConnection, type SocketOwner } from "./socket-owner.js";

/** Where the owner of a RAS socket is looked up, and which processes are the job's (ras/socket-owner.ts). */
export interface RasOwnerSource {
  /** <path.procfs>, read at each check (a reload may change it). */
  procfsRoot: () => string;
  /** Node pids (in procfsRoot) of the live processes of the ranks the followed logs know, now. */
  rankPids: () => readonly number[];
}

export class AnswerCheck {
  /** Who held the socket of the last answer checked; the rank pid that did, looked at first next time. */
  private owner: SocketOwner | undefined;
  private ownerPid: number | undefined;

  /** `source` undefined: any answer is believed; refusals take their turn in the watch's `log`. */
  constructor(
    private readonly source: () => RasOwnerSource | undefined,
    private readonly log: AnswerLog,
  ) {}

  /** Checks who holds the socket that answered: undefined when it is believed, else why not. */
  check(c: RasConnection): string | undefined {
    const src = this.source();
    if (src === undefined) return undefined;
    const root = src.procfsRoot();
    const owner = socketOwner(root, c, src.rankPids(), this.ownerPid);
    this.owner = owner;
    if (owner.trusted) {
      if (owner.by !== "root") this.ownerPid = owner.pid;
      return undefined;
    }
    return refusal(owner, root);
  }

  /** The uid of the socket checked last, when there is a check and it was believed. */
  trustedUid(): number | undefined {
    return this.source() !== undefined && this.owner?.trusted === true ? this.owner.uid : undefined;
  }

  /** Why the socket checked last was believed (`held by rank process 123`); null without a check or belief. */
  belief(): string | null {
    return this.source() !== undefined && this.owner?.trusted === true ? belief(this.owner) : null;
  }

  /** Logs a refused `what` (an answer, a monitor subscription): one warning per episode (until another outcome is logged) and owner. */
  refused(reason: string, what: string): void {
    const o = this.owner;
    const who = o === undefined || o.trusted ? "?" : o.why === "unseen" ? "unseen" : `${o.why}:${o.uid}`;
    const where = this.log.where();
    this.log.once(`untrusted:${who}`, () =>
      this.log.logger().warn(
        {
          ras_addr: where,
          reason,
          socket_uid: o !== undefined && !o.trusted && o.why !== "unseen" ? o.uid : null,
          rank_processes: o !== undefined && !o.trusted ? o.ranks : null,
        },
        `nccl: NCCL RAS ${what} at ${where} ignored, not this node's evidence: ${reason} (counted in ringwatch_nccl_ras_queries_total{result="untrusted"}; docs/nccl.md, "Who may answer")`,
      ),
    );
  }
}
