/** The live stacks' series (watch.ts): the culprit of each suspect communicator or process group, and the collections counted. */
import type { Counter, Gauge, Registry } from "prom-client";
import { counter, gauge, publishCounter, publishGauge } from "../../../publish.js";
import type { LiveStacks } from "./watch.js";

export const CULPRIT_LABELS = ["comm_id", "process_group", "rank", "pid", "function", "file", "line", "innermost", "source", "why"] as const;

export class LiveStacksMetrics {
  private readonly culprit: Gauge<(typeof CULPRIT_LABELS)[number]>;
  private readonly collections: Counter<"source" | "result">;

  constructor(registry: Registry) {
    this.culprit = gauge(
      registry,
      "ringwatch_nccl_stack_culprit_info",
      "Always 1, while a communicator (comm_id; process_group empty) or a PyTorch process group its lines call hung (process_group; comm_id empty) is suspect: where the Python of its culprit rank on this node is, from the live stacks (the job's own innermost frame: function, file, line; the innermost frame of all: innermost); why: behind (the rank the verdict names behind) or outlier (not where most ranks wait).",
      CULPRIT_LABELS,
    );
    this.collections = counter(
      registry,
      "ringwatch_nccl_stack_collections_total",
      "Python stack collections of rank processes on suspicion of a hang, by source (worker, py-spy) and result: ok, no_stacks, absent, untrusted, refused, timeout, too_large, error, rate_limited (an episode held back by --collector.nccl.stacks.max-per-minute).",
      ["source", "result"],
    );
  }

  publish(s: LiveStacks | undefined): void {
    publishGauge(
      this.culprit,
      (s?.culprits() ?? []).map((c) => ({ labels: { comm_id: c.commId, process_group: c.processGroup, ...c.labels }, value: 1 })),
    );
    publishCounter(
      this.collections,
      [...(s?.counts ?? new Map<string, number>())].map(([k, n]) => {
        const [source = "", result = ""] = k.split("\u0000");
        return { labels: { source, result }, value: n };
      }),
    );
  }
}
