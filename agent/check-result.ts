/**
 * What every check returns, and the rules every check follows on its sources (docs/check.md,
 * "When a check cannot judge"): a collector that is off, or whose source is not on this machine,
 * skips a check judged by default and makes a check whose expectation was given `error`; a source
 * that failed makes any check that needs it `error`. A check never judges a failed source's series.
 */
import { compileSegment } from "../collectors/follow/glob.js";
import type { AgentAnswer } from "./check-agent.js";
import type { CollectedNode } from "./check-run.js";
import type { Samples } from "./check-samples.js";

/** ok: as expected; fail: unhealthy; skip: not judged (why is said); error: could not be checked. */
export type CheckStatus = "ok" | "fail" | "skip" | "error";

export interface CheckResult {
  /** One of CHECK_NAMES (check-judge.ts): a contract. */
  name: string;
  status: CheckStatus;
  /** One line. */
  message: string;
  /** One entry per thing judged wrong (fail, error) or worth naming (ok): ports, GPUs, Xids. */
  details: string[];
}

/** The run's series and sources, as the checks read them. */
export interface NodeView extends Omit<CollectedNode, "metrics"> {
  samples: Samples;
  /** The running agent's answer (--check.agent-url): the series asked for, or why there are none. */
  agent?: AgentAnswer;
}

export type Verdict = Omit<CheckResult, "name">;

export const ok = (message: string, details: string[] = []): Verdict => ({ status: "ok", message, details });
export const fail = (message: string, details: string[] = []): Verdict => ({ status: "fail", message, details });
export const skip = (message: string): Verdict => ({ status: "skip", message, details: [] });
export const error = (message: string): Verdict => ({ status: "error", message, details: [] });

/**
 * How a check stands when its collector's source did not run: undefined when it ran (judge its
 * series); else its skip or error. `required`: an expectation of this check was given.
 */
export function unusable(v: NodeView, collector: string, required: boolean): Verdict | undefined {
  const s = v.sources.get(collector);
  if (s === undefined || s.state === "ok") return undefined;
  if (s.state === "off") return required ? error(`could not check: the ${collector} collector is off`) : skip(`the ${collector} collector is off`);
  const reason = s.reason ?? s.state;
  if (s.state === "absent" && !required) return skip(`not on this node: ${reason}`);
  return error(`could not check: ${reason}`);
}

/** `a, b, c (+2 more)`: at most `max` items in a line; the details keep them all. */
export function some(items: readonly string[], max = 3): string {
  const shown = items.slice(0, max).join(", ");
  return items.length > max ? `${shown} (+${items.length - max} more)` : shown;
}

/** `1 GPU`, `8 GPUs`. */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/** A pattern with * and ? as wildcards (and [...] classes), matched against the whole name: the follower's glob segments (collectors/follow/glob.ts). */
export function globMatcher(pattern: string): (name: string) => boolean {
  const re = compileSegment(pattern);
  return (name) => re.test(name);
}

/** Unix seconds → `2025-10-01T12:00:00Z`. */
export function isoSeconds(s: number): string {
  return new Date(Math.round(s) * 1000).toISOString().replace(".000Z", "Z");
}
