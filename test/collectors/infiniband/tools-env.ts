/** Paths and environment for running the fake ibstat / perfquery (real child processes). */
import { existsSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fixturesDir } from "../../helpers/fixtures.js";

export const FAKE_IBSTAT = join(fixturesDir, "..", "fakes", "ibstat");
export const FAKE_PERFQUERY = join(fixturesDir, "..", "fakes", "perfquery");

export const fixture = (rel: string): string => join(fixturesDir, "tools", rel);

export const IBSTAT_H100_9CA = fixture("ibstat/04-gpud-h100-9ca-8ib400-1eth200-spaces.txt");
export const IBSTAT_A100_PANIC = fixture("ibstat/01-gpud-a100-8x-ib200-ibpanic-spaces.txt");
export const IBSTAT_H100_12CA_DOWN = fixture("ibstat/05-gpud-h100-12ca-some-down-ib-eth-mixed.txt");
export const PQ_01 = fixture("perfquery/01-infiniband_exporter-perfquery-lx-0x506b4b03005c2740.txt");
export const PQ_02 = fixture("perfquery/02-infiniband_exporter-perfquery-lx-0x7cfe9003003b4b96.txt");
export const PQ_03 = fixture("perfquery/03-infiniband_exporter-perfquery-lx-0x7cfe9003009ce5b0.txt");
export const PQ_E_01 = fixture("perfquery/04-infiniband_exporter-perfquery-E-0x506b4b03005c2740-1.txt");
export const ERR_IBSTAT_PANIC = fixture("errors/09-ibstat-ibpanic-mlx5_an0-azhpc-images-213.txt");
export const ERR_UMAD = fixture("errors/12-nvlsm-umad-init-no-ib_umad-siderolabs-docs-581.txt");

const KEYS = ["FAKE_IBSTAT", "FAKE_IB_MODE", "FAKE_IBSTAT_MODE", "FAKE_PERFQUERY", "FAKE_PERFQUERY_DIR", "FAKE_PERFQUERY_MODE", "FAKE_IB_ARGS_LOG"] as const;
type Key = (typeof KEYS)[number];

/** Sets the FAKE_* variables for this test (the fakes inherit process.env); unset ones are cleared. */
export function setFakeEnv(vars: Partial<Record<Key, string>>): void {
  for (const k of KEYS) {
    const v = vars[k];
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
}

/** Fills `dir` with `<name>` → capture symlinks for FAKE_PERFQUERY_DIR. */
export function linkCaptures(dir: string, links: Record<string, string>): string {
  for (const [name, target] of Object.entries(links)) symlinkSync(target, join(dir, name));
  return dir;
}

/** The runs the fakes logged through FAKE_IB_ARGS_LOG. */
export function loggedRuns(file: string): { tool: string; args: string[] }[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { tool: string; args: string[] });
}
