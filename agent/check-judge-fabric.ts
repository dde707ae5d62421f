/**
 * The fabric checks: InfiniBand/RoCE ports (ib.port.state, ib.port.rate, ib.port.count), GPUDirect
 * RDMA's kernel module (gdr.peermem), interface MTUs (net.mtu), and NCCL RAS diagnostics (nccl.ras).
 */
import type { Expectations } from "./check-expect.js";
import { count, error, fail, globMatcher, ok, skip, some, unusable, type NodeView, type Verdict } from "./check-result.js";

/** sysfs `state` and `phys_state` numbers (collectors/infiniband/README.md). */
const STATE: Readonly<Record<number, string>> = { 1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE", 5: "ACTIVE_DEFER" };
const PHYS: Readonly<Record<number, string>> = {
  1: "Sleep",
  2: "Polling",
  3: "Disabled",
  4: "PortConfigurationTraining",
  5: "LinkUp",
  6: "LinkErrorRecovery",
  7: "Phy Test",
};
const ACTIVE = 4;
const LINK_UP = 5;
/** ringwatch_infiniband_rate_bytes_per_second per Gb/s. */
const BYTES_PER_GBPS = 125_000_000;

interface Port {
  /** `mlx5_0/1`. */
  name: string;
  device: string;
  state?: number;
  phys?: number;
  gbps?: number;
}

function ports(v: NodeView): Map<string, Port> {
  const out = new Map<string, Port>();
  const port = (labels: Readonly<Record<string, string>>): Port => {
    const device = labels.device ?? "?";
    const name = `${device}/${labels.port ?? "?"}`;
    let p = out.get(name);
    if (p === undefined) out.set(name, (p = { name, device }));
    return p;
  };
  for (const s of v.samples.of("ringwatch_infiniband_state_id")) port(s.labels).state = s.value;
  for (const s of v.samples.of("ringwatch_infiniband_physical_state_id")) port(s.labels).phys = s.value;
  for (const s of v.samples.of("ringwatch_infiniband_rate_bytes_per_second")) port(s.labels).gbps = s.value / BYTES_PER_GBPS;
  return out;
}

/** The ports --check.ib.devices selects (every port without it), and the patterns that matched none. */
function judged(v: NodeView, e: Expectations): { ports: Port[]; unmatched: string[] } {
  const all = [...ports(v).values()].sort((a, b) => a.name.localeCompare(b.name, "en", { numeric: true }));
  if (e.ibDevices.length === 0) return { ports: all, unmatched: [] };
  const patterns = e.ibDevices.map((p) => ({ p, match: globMatcher(p) }));
  const unmatched = patterns.filter(({ match }) => !all.some((x) => match(x.device) || match(x.name))).map(({ p }) => `${p}: no such port`);
  return { ports: all.filter((x) => patterns.some(({ match }) => match(x.device) || match(x.name))), unmatched };
}

const ibRequired = (e: Expectations): boolean => e.ibPorts !== undefined || e.ibRateGbps !== undefined || e.ibDevices.length > 0;

function describePort(p: Port): string {
  const state = p.state === undefined ? "state unknown" : (STATE[p.state] ?? `state ${p.state}`);
  return `${p.name} ${state} (${p.phys === undefined ? "physical state unknown" : (PHYS[p.phys] ?? `physical state ${p.phys}`)})`;
}

export function ibPortState(v: NodeView, e: Expectations): Verdict {
  const no = unusable(v, "infiniband", ibRequired(e));
  if (no) return no;
  const { ports: list, unmatched } = judged(v, e);
  const bad = [...unmatched, ...list.filter((p) => p.state !== ACTIVE || p.phys !== LINK_UP).map(describePort)];
  if (bad.length > 0) return fail(some(bad), bad);
  if (list.length === 0) return ibRequired(e) ? fail("no InfiniBand/RoCE port") : skip("no InfiniBand/RoCE port on this node");
  return ok(`${count(list.length, "port")} ACTIVE, LinkUp`);
}

export function ibPortRate(v: NodeView, e: Expectations): Verdict {
  if (e.ibRateGbps === undefined) return skip("no rate expected (--check.ib.rate)");
  const no = unusable(v, "infiniband", true);
  if (no) return no;
  const want = e.ibRateGbps;
  const active = judged(v, e).ports.filter((p) => p.state === ACTIVE);
  if (active.length === 0) return fail(`no ACTIVE port, expected ${want} Gb/s`);
  const off = active.filter((p) => p.gbps !== want).map((p) => `${p.name} at ${p.gbps === undefined ? "an unknown rate" : `${p.gbps} Gb/s`}`);
  if (off.length > 0) return fail(`${some(off)}, expected ${want}`, off);
  return ok(`${count(active.length, "ACTIVE port")} at ${want} Gb/s`);
}

export function ibPortCount(v: NodeView, e: Expectations): Verdict {
  if (e.ibPorts === undefined) return skip("no port count expected (--check.ib.ports)");
  const no = unusable(v, "infiniband", true);
  if (no) return no;
  const list = judged(v, e).ports;
  const text = `${count(list.length, "port")}${e.ibDevices.length > 0 ? ` matching ${e.ibDevices.join(",")}` : ""}`;
  return list.length === e.ibPorts
    ? ok(`${text} (expected ${e.ibPorts})`)
    : fail(
        `${text}, expected ${e.ibPorts}`,
        list.map((p) => p.name),
      );
}

export function gdrPeermem(v: NodeView, e: Expectations): Verdict {
  if (!e.gdrPeermem) return skip("GPUDirect RDMA not expected (--check.gdr.peermem)");
  const no = unusable(v, "gdr", true);
  if (no) return no;
  const loaded = ["nvidia_peermem", "nv_peer_mem"].filter((module) => v.samples.value("ringwatch_gdr_module_loaded", { module }) === 1);
  if (v.samples.value("ringwatch_gdr_peermem_loaded", {}) === 1) return ok(`${loaded.join(", ") || "peermem"} loaded`);
  return fail("nvidia_peermem is not loaded (nor nv_peer_mem): no GPUDirect RDMA, NCCL stages through host memory");
}

export function netMtu(v: NodeView, e: Expectations): Verdict {
  if (e.mtu.length === 0) return skip("no MTU expected (--check.mtu)");
  const no = unusable(v, "mtu", true);
  if (no) return no;
  const mtus = v.samples.of("ringwatch_network_mtu_bytes").map((s) => ({ device: s.labels.device ?? "?", bytes: s.value }));
  const bad: string[] = [];
  const good: string[] = [];
  for (const want of e.mtu) {
    const match = globMatcher(want.pattern);
    const found = mtus.filter((m) => match(m.device));
    if (found.length === 0) bad.push(`${want.pattern}: no such interface`);
    for (const m of found)
      (m.bytes === want.bytes ? good : bad).push(m.bytes === want.bytes ? `${m.device} ${m.bytes}` : `${m.device} ${m.bytes}, expected ${want.bytes}`);
  }
  return bad.length > 0 ? fail(some(bad), bad) : ok(some(good, 4), good);
}

/** The running agent's series nccl.ras reads (collectors/nccl/README.md). */
export const AGENT_SERIES = ["ringwatch_nccl_ras_diagnostic"] as const;

export function ncclRas(v: NodeView, e: Expectations): Verdict {
  if (e.agentUrl === undefined) return skip("no running agent asked (--check.agent-url): a check never asks NCCL RAS itself");
  const answer = v.agent ?? { error: "the agent was not asked" };
  if ("error" in answer) return error(`could not check: ${answer.error}`);
  const problems = (answer.samples.get("ringwatch_nccl_ras_diagnostic") ?? [])
    .filter((s) => s.value === 1)
    .map(({ labels: l }) => `${l.check ?? "?"}${l.detail ? ` ${l.detail}` : ""}${l.host ? ` on ${l.host}` : ""} (comm ${l.comm_id ?? "?"})`);
  if (problems.length > 0) return fail(some(problems), problems);
  return ok("the agent holds no NCCL RAS diagnostics problem (it asks NCCL for them during a hang)");
}
