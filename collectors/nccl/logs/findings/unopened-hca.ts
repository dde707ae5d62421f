/**
 * HCAs NCCL could not open: `NET/IB : Unable to open device mlx5_58` (net_ib init), after libibverbs'
 * `Call to ibv_open_device failed` (misc/ibvwrap.cc). NCCL skips the device and goes on with the
 * others (`NET/IB : Using [0]mlx5_1:1/RoCE ...`), so it is no failure of the job: one hca_error
 * warning per host, naming the devices and the processes that could not open them (nccl-pasted
 * 564, a Kubernetes pod that sees HCAs in sysfs whose /dev/infiniband nodes it was not given).
 * Where no device opens, NET/IB finds none (`No device found`) and the socket fallback's finding
 * says so, or nothing does on one host (nccl-pasted 391).
 */
import type { ProcessState, WarningRecord } from "../state/model.js";
import type { TrackedState } from "../detect/verdict.js";
import { ranksOf } from "./procs.js";
import { hardwareEvent } from "../../verdict/finding.js";
import { type Finding, uniq } from "../../verdict/report.js";
import { hardwareWords } from "../../verdict/words.js";

const UNABLE = "NET/IB : Unable to open device ";
const OPEN_FAILED = "Call to ibv_open_device failed";
const MAX_EVIDENCE = 5;

/** The WARNs of a device NCCL could not open: `Unable to open device X` gives X, libibverbs' own failed call gives "". */
export function unopenedDevice(message: string): string | undefined {
  if (message.startsWith(OPEN_FAILED)) return "";
  if (!message.startsWith(UNABLE)) return undefined;
  const name = message.slice(UNABLE.length).trim();
  return name.indexOf(" ") < 0 ? name : name.slice(0, name.indexOf(" "));
}

export function unopenedHcaFindings(state: TrackedState, items: readonly { w: WarningRecord; p?: ProcessState }[]): Finding[] {
  const byHost = new Map<string, { devices: string[]; procs: ProcessState[]; where: string[]; count: number }>();
  for (const x of items) {
    const dev = unopenedDevice(x.w.message);
    // No device opened: NET/IB found none, and the socket fallback's finding (or, on one host, nothing) says so (nccl-pasted 391).
    if (dev === undefined || x.p?.noIbDevice === true) continue;
    const host = x.p?.host ?? "";
    let g = byHost.get(host);
    if (g === undefined) byHost.set(host, (g = { devices: [], procs: [], where: [], count: 0 }));
    if (dev !== "" && !g.devices.includes(dev) && g.devices.length < 16) g.devices.push(dev);
    if (x.p !== undefined && !g.procs.includes(x.p)) g.procs.push(x.p);
    if (g.where.length < MAX_EVIDENCE) g.where.push(x.w.where);
    if (dev !== "") g.count++;
  }
  const out: Finding[] = [];
  for (const [host, g] of byHost) {
    const ranks = ranksOf(state, g.procs);
    const processes = g.procs.map((p) => p.key);
    out.push(
      hardwareEvent("hca_error", {
        severity: "warning",
        summary: hardwareWords.unopenedHca({ devices: g.devices, ...(host !== "" ? { host } : {}), processes, ranks, count: g.count }),
        ranks,
        processes,
        comm_id: null,
        evidence: uniq(g.where),
        count: Math.max(g.count, 1),
        ...(g.devices.length === 1 ? { device: g.devices[0] } : {}),
        ...(host !== "" ? { host } : {}),
        event: "open_failed",
      }),
    );
  }
  return out;
}
