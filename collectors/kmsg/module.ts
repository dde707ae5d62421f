/** The kmsg collector's declaration: its flags, its settings, how it is built (collectors/module.ts). */
import type { CollectorModule } from "../module.js";
import { createKmsgCollector, type KmsgSourceChoice } from "./collector.js";
import { isGpuIndexReadings } from "./device-names.js";

export interface KmsgSettings {
  source: KmsgSourceChoice;
  device: string;
  journalctl: string;
  journalDirectory: string;
  stateFile: string;
}

/** --collector.kmsg.state-file's default; systemd's StateDirectory= and the image create its directory. */
const DEFAULT_STATE_FILE = "/var/lib/ringwatch/kmsg-position.json";

export const kmsgModule: CollectorModule<"kmsg", KmsgSettings> = {
  name: "kmsg",
  enabledByDefault: true,
  switchHelp: "Enable the kmsg collector (GPU Xid, NVSwitch SXid and HCA driver events from the kernel log).",
  flags: [
    {
      name: "collector.kmsg.source",
      kind: "enum",
      choices: ["auto", "kmsg", "journal"],
      default: "auto",
      help: "Where to read the kernel log: kmsg (the device), journal (journalctl -k -f), or auto (the device, else the journal).",
    },
    { name: "collector.kmsg.device", kind: "string", default: "/dev/kmsg", help: "Path of the kernel log device." },
    { name: "collector.kmsg.journalctl", kind: "string", default: "journalctl", help: "Path of journalctl, used when the device cannot be read." },
    {
      name: "collector.kmsg.journal-directory",
      kind: "string",
      default: "",
      help: "Journal directory for journalctl -D (a container reading the host's /var/log/journal); empty: the system journal.",
    },
    {
      name: "collector.kmsg.state-file",
      kind: "string",
      default: DEFAULT_STATE_FILE,
      help: "File that keeps the read position, so a restart reads no kernel record twice; empty: none.",
    },
  ],
  uses: ["path.sysfs", "path.procfs"],
  poll: false,
  reloadable: [],
  read: (r) => ({
    source: r.choice<KmsgSourceChoice>("collector.kmsg.source"),
    device: r.text("collector.kmsg.device"),
    journalctl: r.text("collector.kmsg.journalctl"),
    journalDirectory: r.text("collector.kmsg.journal-directory"),
    stateFile: r.text("collector.kmsg.state-file"),
  }),
  create({ deps, settings: s, common, peer }) {
    const gpu = peer("gpu");
    return createKmsgCollector(deps, {
      source: s.source,
      device: s.device,
      journalctl: s.journalctl,
      ...(s.journalDirectory !== "" ? { journalDirectory: s.journalDirectory } : {}),
      ...(s.stateFile !== "" ? { stateFile: s.stateFile, stateDirMayBeAbsent: s.stateFile === DEFAULT_STATE_FILE } : {}),
      procfsRoot: common.procfsRoot,
      sysfsRoot: common.sysfsRoot,
      ...(isGpuIndexReadings(gpu) ? { gpu } : {}),
    });
  },
};
