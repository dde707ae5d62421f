/**
 * What the RAS watch logs of the service's answers, one line per outcome and written again only
 * after another outcome was logged: a service that stays away, or keeps answering, is logged once,
 * not at every query. The outcomes: it answers (info: the report's format, the NCCL version, the
 * communicators, who held the socket), no service listens (info), an answer with no report
 * (warning); a refused answer (ras/who-may-answer.ts) takes its turn among them.
 */
import type { Logger } from "pino";
import type { RasQueryOutcome } from "./client.js";

/** What the log line of an answer with a report says. */
export interface AnswerFields {
  ms: number;
  format: "json" | "text";
  nccl_version: string | null;
  communicators: number;
  /** How the socket's owner was believed (ras/who-may-answer.ts); null without a check. */
  socket_owner: string | null;
}

export class AnswerLog {
  /** The last outcome logged, so a repeated one is not logged again. */
  private last: string | undefined;

  /** `where`: the service's `host:port` now. */
  constructor(
    readonly logger: () => Logger,
    readonly where: () => string,
  ) {}

  /** Writes a line unless its key is the outcome logged last. */
  once(key: string, write: () => void): void {
    if (key === this.last) return;
    this.last = key;
    write();
  }

  /** No service listens at the address. */
  noService(reason: string): void {
    const where = this.where();
    this.once("fail:unreachable", () =>
      this.logger().info(
        { ras_addr: where, reason },
        `nccl: no NCCL RAS service at ${where} (no NCCL 2.24+ job on this node, NCCL_RAS_ENABLE=0, or NCCL_RAS_ADDR set elsewhere)`,
      ),
    );
  }

  /** The service at `where` gave no report (a timeout, a garbled answer). */
  noReport(where: string, outcome: RasQueryOutcome, reason: string): void {
    this.once(`fail:${outcome}`, () => this.logger().warn({ ras_addr: where, reason, outcome }, `nccl: NCCL RAS at ${where} gave no report: ${reason}`));
  }

  /** The service at `where` answers with a report. */
  answers(where: string, f: AnswerFields): void {
    this.once(`ok:${f.format}`, () =>
      this.logger().info(
        { ras_addr: where, ...f },
        `nccl: NCCL RAS at ${where} answers (${f.format === "json" ? "every rank's counts" : "text: counts only where they differ"})`,
      ),
    );
  }
}
