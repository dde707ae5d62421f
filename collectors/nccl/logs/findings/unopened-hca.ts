/**
 * HCAs NCCL could not open: `NET/IB : Unable to open device mlx5_58` (net_ib init), after libibverbs'
 * `Call to ibv_open_device failed` (misc/ibvwrap.cc). NCCL skips the device and goes on with the
 * others (`NET/IB : Using [0]mlx5_1:1/RoCE ...`), so it is no failure of the job: one hca_error
 * warning per host, naming the devices and the processes that could not open them (nccl-pasted
 * 564, a Kubernetes pod that sees HCAs in sysfs whose /dev/infiniband nodes it was not given).
 * Where no line shows NET/IB going on with another HCA, the words say so (if none opened, NCCL falls
 * back to sockets); where NET/IB then found no device at all, the WARNs stay what they were.
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

/**
 * A WARN of a device NCCL could not open, told by the hca_error here rather than as an NCCL error:
 * all but those of a process whose NET/IB then found no device at all (`No device found`) and showed
 * none opened, whose WARNs stay what they were (nccl-pasted 391: one host, sockets between its ranks).
 */
export function skippedDevice(x: { w: WarningRecord; p?: ProcessState }): boolean {
  return unopenedDevice(x.w.message) !== undefined && !(x.p !== undefined && x.p.noIbDevice && !servedByOthers(x.p));
}

/** The process's NET/IB went on with other HCAs (`NET/IB : Using [0]mlx5_1:1/RoCE ...`). */
function servedByOthers(p: ProcessState): boolean {
  return p.ibDevices.length > 0 || p.nets.has("IB") || p.nets.has("RoCE");
}

export function unopenedHcaFindings(state: TrackedState, items: readonly { w: WarningRecord; p?: ProcessState }[]): Finding[] {
  const byHost = new Map<string, { devices: string[]; procs: ProcessState[]; where: string[]; count: number; served: boolean }>();
  for (const x of items) {
    const dev = unopenedDevice(x.w.message);
    if (dev === undefined || !skippedDevice(x)) continue;
    const host = x.p?.host ?? "";
    let g = byHost.get(host);
    if (g === undefined) byHost.set(host, (g = { devices: [], procs: [], where: [], count: 0, served: false }));
    if (x.p !== undefined && servedByOthers(x.p)) g.served = true;
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
        summary: hardwareWords.unopenedHca({ devices: g.devices, ...(host !== "" ? { host } : {}), processes, ranks, count: g.count, served: g.served }),
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
