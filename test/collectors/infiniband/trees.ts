/** The three real sysfs captures as real trees (sysfsRoot paths), and an oracle read from their text. */
import { join } from "node:path";
import { readCapture } from "../../helpers/fixtures.js";
import { expandPathDump, expandTtar, makeTempDir, removeTree } from "../../helpers/ttar.js";

export const NODE_EXPORTER_TTAR = "tools/ib_sysfs/01-node_exporter-sys-ttar-i40iw0-mlx4_0.txt";
export const PROCFS_TTAR = "tools/ib_sysfs/02-procfs-fixtures-ttar-hfi1_0-mlx4_0-mlx5_0.txt";
export const GPUD_DUMP = "tools/ib_sysfs/03-gpud-h100-8x-cx7-ndr400-plus-bond-eth.txt";
export const NODE_EXPORTER_GOLDEN = "tools/ib_sysfs/05-node_exporter-e2e-golden-infiniband-mtu.txt";

export interface Tree {
  /** sysfs root: it contains class/infiniband. */
  root: string;
  remove(): void;
}

/** One capture expanded into a temporary tree. */
export function makeTree(rel: typeof NODE_EXPORTER_TTAR | typeof PROCFS_TTAR | typeof GPUD_DUMP): Tree {
  const dir = makeTempDir("ringwatch-ib-");
  const text = readCapture(rel);
  const root =
    rel === NODE_EXPORTER_TTAR
      ? join(expandTtar(text, dir), "sys")
      : rel === PROCFS_TTAR
        ? join(expandTtar(text, dir), "fixtures/sys")
        : expandPathDump(text, dir, "class/infiniband");
  return { root, remove: () => removeTree(dir) };
}

export interface Trees {
  nodeExporter: string;
  procfs: string;
  gpud: string;
  remove(): void;
}

/** All three captures expanded. */
export function makeTrees(): Trees {
  const t = [makeTree(NODE_EXPORTER_TTAR), makeTree(PROCFS_TTAR), makeTree(GPUD_DUMP)] as const;
  return { nodeExporter: t[0].root, procfs: t[1].root, gpud: t[2].root, remove: () => t.forEach((x) => x.remove()) };
}

export interface OracleEntry {
  device: string;
  port: number;
  dir: "counters" | "counters_ext" | "hw_counters";
  name: string;
  /** The file's text (first line). */
  text: string;
}

/**
 * Every counter file of a capture, read straight from its text (not through the tree or the
 * reader): ttar `Path:` + `Lines: 1` entries, or `<path>:<content>` lines.
 */
export function counterOracle(rel: string): OracleEntry[] {
  const text = readCapture(rel);
  const out: OracleEntry[] = [];
  const ttar = /^Path: .*?infiniband\/([^/]+)\/ports\/(\d+)\/(counters|counters_ext|hw_counters)\/([^/\n]+)\nLines: 1\n(.*)$/gm;
  const dump = /^([^/\n]+)\/ports\/(\d+)\/(counters|counters_ext|hw_counters)\/([^/:\n]+):(.*)$/gm;
  for (const m of text.matchAll(text.includes("Path: ") ? ttar : dump)) {
    out.push({ device: m[1] ?? "", port: Number(m[2]), dir: m[3] as OracleEntry["dir"], name: m[4] ?? "", text: m[5] ?? "" });
  }
  return out;
}
