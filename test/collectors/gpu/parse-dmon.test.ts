import { describe, expect, it } from "vitest";
import { DmonParser, lastRowPerGpu, parseDmonText, tokenize } from "../../../collectors/gpu/parse-dmon.js";
import { listFixtures, readCapture } from "../../helpers/fixtures.js";

const DIR = "tools/nvidia_smi_dmon";

const DEFAULT_COLS = ["gpu", "pwr", "gtemp", "mtemp", "sm", "mem", "enc", "dec", "jpg", "ofa", "mclk", "pclk"];
const UTIL = ["sm", "mem", "enc", "dec", "jpg", "ofa"];

interface Golden {
  rows: number;
  /** Distinct GPU indexes, first-seen order. */
  gpus: string[];
  columns: string[];
  /** Columns never present in any row's values (`-` everywhere). */
  absent: string[];
  /** [row number, gpu, values that row must have]. */
  checks: [number, string, Record<string, number>][];
}

/** Expected values read by eye from each capture. */
const GOLDEN: Record<string, Golden> = {
  "01-slurm-on-aws-s-pcut-8gpu-g7e.txt": {
    rows: 25,
    gpus: ["0", "1", "2", "3", "4", "5", "6", "7"],
    columns: ["gpu", "pwr", "gtemp", "mtemp", "mclk", "pclk", "sm", "mem", "enc", "dec", "jpg", "ofa", "rxpci", "txpci"],
    absent: ["mtemp"],
    checks: [
      [0, "0", { pwr: 365, gtemp: 55, mclk: 12481, pclk: 2415, sm: 99, mem: 58, enc: 0, ofa: 0, rxpci: 21846, txpci: 6849 }],
      [5, "5", { pwr: 372, txpci: 2 }],
      [20, "4", { pwr: 390, gtemp: 58 }],
      [24, "0", { pwr: 364, gtemp: 52, mem: 58, rxpci: 11368, txpci: 20400 }],
    ],
  },
  "02-slurm-on-aws-s-pt-2gpu.txt": {
    rows: 12,
    gpus: ["0", "1"],
    columns: ["gpu", "pwr", "gtemp", "mtemp", "rxpci", "txpci"],
    absent: ["mtemp", "sm"],
    checks: [
      [0, "0", { pwr: 30, gtemp: 25, rxpci: 0, txpci: 0 }],
      [7, "1", { pwr: 27 }],
      [11, "1", { pwr: 27, rxpci: 1, txpci: 0 }],
    ],
  },
  "03-xuesongtap-s-mutc-oTD-A10.txt": {
    rows: 6,
    gpus: ["0"],
    columns: ["date", "time", "gpu", "fb", "bar1", "ccpm", "sm", "mem", "enc", "dec", "jpg", "ofa", "rxpci", "txpci", "mclk", "pclk"],
    absent: ["date", "time", "pwr"],
    checks: [
      [0, "0", { fb: 239, bar1: 3, ccpm: 0, sm: 6, mem: 1, rxpci: 5, txpci: 10, mclk: 6250, pclk: 1695 }],
      [1, "0", { fb: 74, bar1: 10, rxpci: 217, txpci: 677 }],
      [3, "0", { fb: 478, sm: 13, rxpci: 44 }],
      [5, "0", { fb: 7, sm: 3, txpci: 0 }],
    ],
  },
  "04-xuesongtap-s-m-8gpu-fb-bar1-ccpm.txt": {
    rows: 16,
    gpus: ["0", "1", "2", "3", "4", "5", "6", "7"],
    columns: ["gpu", "fb", "bar1", "ccpm"],
    absent: ["pwr", "sm"],
    checks: [
      [0, "0", { fb: 4, bar1: 1, ccpm: 0 }],
      [15, "7", { fb: 4, bar1: 1, ccpm: 0 }], // last line has no trailing space
    ],
  },
  "05-nvgpuexp-h100-80gb-590.48.01-idle.txt": {
    rows: 5,
    gpus: ["0"],
    columns: DEFAULT_COLS,
    absent: [],
    checks: [
      [0, "0", { pwr: 69, gtemp: 41, mtemp: 47, sm: 0, mem: 0, mclk: 2619, pclk: 345 }],
      [3, "0", { mtemp: 48 }],
    ],
  },
  "06-nvgpuexp-h100-80gb-590.48.01-load.txt": {
    rows: 5,
    gpus: ["0"],
    columns: DEFAULT_COLS,
    absent: [],
    checks: [
      [0, "0", { pwr: 631, gtemp: 63, mtemp: 57, sm: 100, mem: 10, pclk: 1980 }],
      [4, "0", { pwr: 636, gtemp: 65, mtemp: 59, sm: 100, mem: 9, mclk: 2619, pclk: 1980 }], // no final newline
    ],
  },
  "07-nvgpuexp-h100-MIG-590.48.01-idle.txt": {
    rows: 5,
    gpus: ["0"],
    columns: DEFAULT_COLS,
    absent: UTIL,
    checks: [[0, "0", { pwr: 70, gtemp: 42, mtemp: 48, mclk: 2619, pclk: 345 }]],
  },
  "08-nvgpuexp-h100-MIG-590.48.01-load.txt": {
    rows: 5,
    gpus: ["0"],
    columns: DEFAULT_COLS,
    absent: UTIL,
    checks: [
      [0, "0", { pwr: 438, gtemp: 55, mtemp: 61, pclk: 1980 }],
      [4, "0", { pwr: 439, gtemp: 56, mtemp: 62 }],
    ],
  },
  "09-nvgpuexp-h200-590.48.01-load.txt": {
    rows: 5,
    gpus: ["0"],
    columns: DEFAULT_COLS,
    absent: [],
    checks: [
      [0, "0", { pwr: 630, gtemp: 53, mtemp: 41, sm: 100, mem: 8, mclk: 3201, pclk: 1980 }],
      [3, "0", { pwr: 632, gtemp: 54, mtemp: 42 }],
    ],
  },
  "10-nvgpuexp-h200-MIG-590.48.01-load.txt": {
    rows: 5,
    gpus: ["0"],
    columns: DEFAULT_COLS,
    absent: UTIL,
    checks: [
      [0, "0", { pwr: 295, gtemp: 37, mtemp: 39, mclk: 3201 }],
      [4, "0", { pwr: 294, mtemp: 40 }],
    ],
  },
  "11-nvgpuexp-l40s-595.80-load-nvenc.txt": {
    rows: 5,
    gpus: ["0"],
    columns: DEFAULT_COLS,
    absent: ["mtemp"],
    checks: [
      [0, "0", { pwr: 109, gtemp: 53, sm: 10, mem: 2, enc: 67, dec: 0, mclk: 9001, pclk: 2520 }],
      [1, "0", { pwr: 108, sm: 9, enc: 59 }],
      [3, "0", { gtemp: 52, enc: 59 }],
    ],
  },
  "12-nvgpuexp-rtx4080s-595.71.05-load.txt": {
    rows: 5,
    gpus: ["0"],
    columns: DEFAULT_COLS,
    absent: ["mtemp"],
    checks: [
      [0, "0", { pwr: 83, gtemp: 46, sm: 7, enc: 69, mclk: 11251, pclk: 2805 }],
      [4, "0", { pwr: 84, sm: 6, enc: 70 }],
    ],
  },
  "13-nvgpuexp-rtx2080s-610.57.04-load.txt": {
    rows: 5,
    gpus: ["0"],
    columns: DEFAULT_COLS,
    absent: ["mtemp"],
    checks: [[2, "0", { pwr: 97, gtemp: 38, sm: 8, mem: 3, enc: 100, jpg: 0, ofa: 0, mclk: 7500, pclk: 2070 }]],
  },
  "15-felixfu-microway-k40m-old-narrow-2gpu.txt": {
    rows: 2,
    gpus: ["0", "1"],
    columns: ["gpu", "pwr", "gtemp", "mtemp", "sm", "mem", "enc", "dec", "mclk", "pclk"],
    absent: ["mtemp", "jpg", "ofa"],
    checks: [
      [0, "0", { pwr: 43, gtemp: 35, sm: 0, mem: 0, mclk: 2505, pclk: 1075 }],
      [1, "1", { pwr: 42, gtemp: 31, sm: 97, mem: 9, enc: 0, dec: 0, mclk: 2505, pclk: 1075 }],
    ],
  },
};

describe("parse-dmon on every real capture", () => {
  it("has a golden entry for every capture in the directory", () => {
    expect(listFixtures(DIR, ".txt")).toEqual(Object.keys(GOLDEN).sort());
  });

  for (const [file, g] of Object.entries(GOLDEN)) {
    it(file, () => {
      const r = parseDmonText(readCapture(`${DIR}/${file}`));
      expect(r.rows).toHaveLength(g.rows);
      expect(r.stats).toMatchObject({ rows: g.rows, skipped: 0, errors: 0, headers: 1 });
      expect(r.skipped).toEqual([]);
      expect(r.columns).toEqual(g.columns);
      expect([...new Set(r.rows.map((x) => x.gpu))]).toEqual(g.gpus);
      for (const col of g.absent) {
        expect(
          r.rows.every((x) => !(col in x.values)),
          `${col} absent`,
        ).toBe(true);
      }
      // Every value column that is not absent is present (and numeric) in every row.
      const present = g.columns.filter((c) => c !== "gpu" && !g.absent.includes(c));
      for (const row of r.rows) {
        expect(Object.keys(row.values).sort()).toEqual([...present].sort());
        for (const v of Object.values(row.values)) expect(Number.isFinite(v)).toBe(true);
      }
      for (const [i, gpu, values] of g.checks) {
        expect(r.rows[i]?.gpu).toBe(gpu);
        expect(r.rows[i]?.values).toMatchObject(values);
      }
    });
  }

  it("lastRowPerGpu keeps the last row printed for each GPU", () => {
    const last = lastRowPerGpu(parseDmonText(readCapture(`${DIR}/01-slurm-on-aws-s-pcut-8gpu-g7e.txt`)).rows);
    expect([...last.keys()]).toEqual(["0", "1", "2", "3", "4", "5", "6", "7"]);
    expect(last.get("0")?.values.pwr).toBe(364);
    expect(last.get("5")?.values.pwr).toBe(379);
    expect(last.get("7")?.values.txpci).toBe(11682);
  });
});

// Synthetic lines below: shapes the guide documents (old `temp` layout, `^C`, misalignment,
// repeated headers, failure messages) that no stored capture shows.
describe("parse-dmon tolerance (synthetic lines)", () => {
  it("reads the oldest single `temp` column", () => {
    const r = parseDmonText(
      [
        "# gpu   pwr  temp    sm   mem   enc   dec  mclk  pclk",
        "# Idx     W     C     %     %     %     %   MHz   MHz",
        "    0    43    35     0     0     0     0  2505  1075",
      ].join("\n"),
    );
    expect(r.rows[0]?.values).toEqual({ pwr: 43, temp: 35, sm: 0, mem: 0, enc: 0, dec: 0, mclk: 2505, pclk: 1075 });
  });

  it("splits misaligned rows on whitespace, never by column position", () => {
    const r = parseDmonText("# gpu    pwr  gtemp     sm\n# Idx      W      C      %\n    0   365    55   99\n0 1 2 3\n");
    expect(r.rows.map((x) => x.values)).toEqual([
      { pwr: 365, gtemp: 55, sm: 99 },
      { pwr: 1, gtemp: 2, sm: 3 },
    ]);
  });

  it("tolerates ^C, trailing spaces, tabs and blank lines", () => {
    const p = new DmonParser();
    p.feed("# gpu    pwr  gtemp");
    p.feed("# Idx      W      C   ");
    expect(p.feed("")).toBeUndefined();
    expect(p.feed("   \t ")).toBeUndefined();
    expect(p.feed("^C    0     30     25   ")).toEqual({ type: "row", row: { gpu: "0", values: { pwr: 30, gtemp: 25 } } });
    expect(p.feed("    1\t28^C 24")).toEqual({ type: "row", row: { gpu: "1", values: { pwr: 28, gtemp: 24 } } });
    expect(p.feed("    0     30 ^C")).toMatchObject({ type: "skip", reason: "field_count" });
    expect(p.stats).toEqual({ rows: 2, skipped: 1, errors: 0, headers: 1 });
  });

  it("follows a header that repeats or changes mid-stream", () => {
    const text = [
      "# gpu    pwr     sm",
      "# Idx      W      %",
      "    0    100     50",
      "# gpu    pwr     sm",
      "# Idx      W      %",
      "    0    101     51",
      "#Date       Time        gpu     sm   pwr",
      "#YYYYMMDD   HH:MM:SS    Idx      %     W",
      " 20240104   13:54:35      3     7   200",
    ].join("\n");
    const r = parseDmonText(text);
    expect(r.stats.headers).toBe(3);
    expect(r.rows).toEqual([
      { gpu: "0", values: { pwr: 100, sm: 50 } },
      { gpu: "0", values: { pwr: 101, sm: 51 } },
      { gpu: "3", values: { sm: 7, pwr: 200 } },
    ]);
  });

  it("skips and counts rows before a header, with a wrong field count or a bad index", () => {
    const r = parseDmonText(["    0  1  2", "# gpu pwr sm", "# Idx W %", "0 1", "0 1 2 3", "x 1 2", "0.5 1 2", "00 7 8", "junk line", "#"].join("\n"));
    expect(r.skipped.map((s) => s.reason)).toEqual(["no_header", "field_count", "field_count", "unrecognised", "bad_index", "unrecognised"]);
    expect(r.rows).toEqual([{ gpu: "00", values: { pwr: 7, sm: 8 } }]);
  });

  it("keeps `-` and non-numeric values out of the row (absent, never 0)", () => {
    const r = parseDmonText("# gpu pwr sm mem\n# Idx W % %\n0 - N/A 5\n");
    expect(r.rows[0]?.values).toEqual({ mem: 5 });
    expect("pwr" in (r.rows[0]?.values ?? {})).toBe(false);
  });

  it("returns failure messages as error events with the bus id", () => {
    const r = parseDmonText(
      [
        "# gpu pwr",
        "# Idx W",
        "0 300",
        "Unable to determine the device handle for GPU0000:07:00.0: GPU is lost.  Reboot the system to recover this GPU",
        "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error",
        "No devices were found",
        "1 280",
      ].join("\n"),
    );
    expect(r.errors).toEqual([
      { kind: "gpu_lost", pciBusId: "0000:07:00.0", message: expect.stringContaining("GPU is lost") as unknown },
      { kind: "device_handle", pciBusId: "0000:3B:00.0", message: "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error" },
      { kind: "no_devices", message: "No devices were found" },
    ]);
    expect(r.rows.map((x) => x.gpu)).toEqual(["0", "1"]);
  });

  it("tokenizes without regular expressions", () => {
    expect(tokenize("  a\tb  ^Cc^C ")).toEqual(["a", "b", "c"]);
    expect(tokenize("")).toEqual([]);
  });
});

describe("parse-dmon on real nvidia-smi failure captures", () => {
  const cases: [string, { kind: string; pciBusId?: string }[], number][] = [
    ["01-nvsmi-failed-communicate-shine-cluster-50.txt", [{ kind: "driver_unreachable" }], 0],
    ["02-nvsmi-failed-communicate-gcp-compute-gpu-installation-33.txt", [{ kind: "driver_unreachable" }], 0],
    ["04-nvsmi-device-handle-unknown-error-xxd3vin-workspace-19.txt", [{ kind: "device_handle", pciBusId: "0000:0B:00.0" }], 0],
    ["06-nvsmi-a-i0-device-handle-unknown-error-nvidia-docker-1553.txt", [{ kind: "device_handle", pciBusId: "0000:09:00.0" }], 0],
    ["08-dmon-not-supported-nvidia-patch-89.txt", [{ kind: "not_supported" }, { kind: "command_failed" }], 0],
    // The second line, `NVML library version: 535.161`, is a detail: skipped, not an error.
    ["16-nvml-version-mismatch-with-library-version-gputil-55.txt", [{ kind: "nvml_init" }], 1],
  ];
  for (const [file, errors, skipped] of cases) {
    it(file, () => {
      const text = readCapture(`tools/errors/${file}`);
      const r = parseDmonText(text);
      expect(r.rows).toEqual([]);
      expect(r.errors.map((e) => ({ kind: e.kind, ...(e.pciBusId ? { pciBusId: e.pciBusId } : {}) }))).toEqual(errors);
      expect(r.errors[0]?.message).toBe(text.split("\n")[0]?.trim());
      expect(r.skipped).toHaveLength(skipped);
    });
  }
});
