/**
 * The RAS watch's queries counted (ringwatch_nccl_ras_queries_total): by result, and by result and
 * the reason asked (ras/schedule.ts; `diagnostics` for the exchange of a hang episode). A monitor
 * subscription refused as `untrusted` counts by result only.
 */
import { RAS_OUTCOMES, type RasQueryOutcome } from "./client.js";
import { ASK_REASONS, type AskReason } from "./schedule.js";

export class QueryCounts {
  readonly byResult = new Map<RasQueryOutcome, number>(RAS_OUTCOMES.map((o) => [o, 0]));
  readonly byReason = new Map<RasQueryOutcome, Map<AskReason, number>>(RAS_OUTCOMES.map((o) => [o, new Map(ASK_REASONS.map((r) => [r, 0]))]));

  /** One query (or exchange) more with this result, and this reason where it has one. */
  count(outcome: RasQueryOutcome, reason?: AskReason): void {
    this.byResult.set(outcome, (this.byResult.get(outcome) ?? 0) + 1);
    if (reason === undefined) return;
    const byReason = this.byReason.get(outcome);
    byReason?.set(reason, (byReason.get(reason) ?? 0) + 1);
  }
}
