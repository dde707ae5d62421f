/** ringwatch_nccl_log_path_state: one series per configured log path and state, 1 on the current state. */
import type { Gauge, Registry } from "prom-client";
import { gauge, publishGauge } from "../../publish.js";
import { LOG_PATH_STATES, type LogPathState } from "./path-state.js";

export class LogPathMetrics {
  private readonly state: Gauge<"path" | "state">;

  constructor(registry: Registry) {
    this.state = gauge(
      registry,
      "ringwatch_nccl_log_path_state",
      "1 for the state of each configured --collector.nccl.path (a glob by the directory it starts at), 0 for the others: present, missing, unreadable, not_a_directory.",
      ["path", "state"],
    );
  }

  /** The states of the paths configured now (the series of paths no longer configured go). */
  publish(states: ReadonlyMap<string, LogPathState>): void {
    publishGauge(
      this.state,
      [...states].flatMap(([path, current]) => LOG_PATH_STATES.map((state) => ({ labels: { path, state }, value: state === current ? 1 : 0 }))),
    );
  }
}
