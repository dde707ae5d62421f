/**
 * The kernel log checks, from the kmsg collector's series: gpu.xid (an Xid whose action in
 * NVIDIA's catalogue is one of --check.xid.actions), nvswitch.sxid (a fatal SXid) and gpu.recovery
 * (the recovery action the driver last asked for, Xid 154). --check.xid.window leaves out what is
 * older; without it, everything since boot that the kernel's buffer still holds counts.
 */
import { formatDuration } from "../collectors/settings/duration.js";
import type { Expectations } from "./check-expect.js";
import { count, fail, isoSeconds, ok, some, unusable, type NodeView, type Verdict } from "./check-result.js";
import type { Sample } from "./check-samples.js";

/** ringwatch_gpu_recovery_action's values (collectors/kmsg/README.md). */
const RECOVERY: Readonly<Record<number, string>> = {
  1: "GPU reset required",
  2: "node reboot required",
  3: "drain P2P",
  4: "drain and reset",
};

/** `since boot`, `in the last 1h`. */
function since(e: Expectations): string {
  const ms = e.xidWindowMs;
  if (ms === undefined) return "since boot";
  return `in the last ${ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : formatDuration(ms)}`;
}

/** Whether an event last seen at `ts` (Unix s; unknown counts as recent) is within the window. */
function recent(v: NodeView, e: Expectations, ts: number | undefined): boolean {
  return e.xidWindowMs === undefined || ts === undefined || ts * 1000 >= v.nowMs - e.xidWindowMs;
}

function times(s: Sample): string {
  return s.value > 1 ? ` x${s.value}` : "";
}

export function gpuXid(v: NodeView, e: Expectations): Verdict {
  const no = unusable(v, "kmsg", e.xidGiven);
  if (no) return no;
  const info = new Map(v.samples.of("ringwatch_gpu_xid_info").map((s) => [s.labels.xid ?? "", s.labels]));
  const needs: string[] = [];
  const others: string[] = [];
  for (const s of v.samples.of("ringwatch_gpu_xid_errors_total")) {
    const { gpu = "?", xid = "?" } = s.labels;
    const ts = v.samples.value("ringwatch_gpu_xid_last_timestamp_seconds", { gpu, xid });
    if (s.value <= 0 || !recent(v, e, ts)) continue;
    const about = info.get(xid);
    const action = about?.action ?? "unknown";
    const line = `GPU ${gpu}: Xid ${xid} (${about?.meaning ?? "not in the catalogue"}; ${action})${times(s)}${ts !== undefined ? `, last at ${isoSeconds(ts)}` : ""}`;
    ((e.xidActions as ReadonlySet<string>).has(action) ? needs : others).push(line);
  }
  if (needs.length > 0) return fail(some(needs, 2), needs);
  const also = others.length > 0 ? `; ${count(others.length, "other Xid")}: ${some(others, 2)}` : "";
  return ok(`no Xid that needs action ${since(e)}${also}`, others);
}

export function nvswitchSxid(v: NodeView, e: Expectations): Verdict {
  const no = unusable(v, "kmsg", e.xidGiven);
  if (no) return no;
  const fatal: string[] = [];
  const nonFatal: string[] = [];
  for (const s of v.samples.of("ringwatch_nvswitch_sxid_errors_total")) {
    const { nvswitch = "?", sxid = "?", fatality = "?" } = s.labels;
    const ts = v.samples.value("ringwatch_nvswitch_sxid_last_timestamp_seconds", { nvswitch, sxid, fatality });
    if (s.value <= 0 || !recent(v, e, ts)) continue;
    const line = `NVSwitch ${nvswitch}: SXid ${sxid} (${fatality === "fatal" ? "fatal" : "non-fatal"})${times(s)}${ts !== undefined ? `, last at ${isoSeconds(ts)}` : ""}`;
    (fatality === "fatal" ? fatal : nonFatal).push(line);
  }
  if (fatal.length > 0) return fail(some(fatal, 2), fatal);
  const also = nonFatal.length > 0 ? `; ${count(nonFatal.length, "non-fatal SXid")}: ${some(nonFatal, 2)}` : "";
  return ok(`no fatal SXid ${since(e)}${also}`, nonFatal);
}

export function gpuRecovery(v: NodeView, e: Expectations): Verdict {
  const no = unusable(v, "kmsg", e.xidGiven);
  if (no) return no;
  const asked = v.samples
    .of("ringwatch_gpu_recovery_action")
    .filter((s) => s.value > 0)
    .map((s) => `GPU ${s.labels.gpu ?? "?"}: ${RECOVERY[s.value] ?? `action ${s.value}`} (Xid 154)`);
  return asked.length > 0 ? fail(some(asked), asked) : ok("the driver asks for no recovery action (Xid 154)");
}
