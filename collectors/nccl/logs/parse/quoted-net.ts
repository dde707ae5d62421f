/** A net plugin's WARN text quoted alone, behind a launcher prefix at most (net-plugin.ts has the forms). */
import type { WarnEvent } from "./types.js";
import { parsePrefix } from "./prefix.js";
import { classifyWarn } from "./warn.js";
import { skipSpaces, trimEnd } from "./scan.js";

/**
 * `NET/...` error text with no NCCL header nor `NCCL` in it (a launcher prefix may come first):
 * a net plugin's WARN quoted by PyTorch after `Last error:`. Only classified failures are taken.
 */
export function quotedNetError(s: string, end: number): WarnEvent | undefined {
  const k = s.indexOf("NET/");
  if (k < 0 || k >= end) return undefined;
  // Right at the start, or after a launcher prefix (`[rank3]: `), never inside prose.
  const p = parsePrefix(s, 0, k, true);
  if (skipSpaces(s, p.end, k) !== k) return undefined;
  const e = trimEnd(s, k, end);
  const ev: WarnEvent = { kind: "warn", warnKind: "other", message: s.slice(k, e), headerless: true };
  classifyWarn(s, k, e, ev);
  if (ev.warnKind === "other") return undefined;
  if (p.launcher !== undefined) {
    ev.launcher = p.launcher;
    if (p.launcher.rank !== undefined) ev.launcherRank = p.launcher.rank;
  }
  return ev;
}
