import { describe, expect, it } from "vitest";
import { IDENTITY_FIELDS, isNoValue, parseIdentity, parseQueryCsv, queryNumber, type QueryParseResult } from "../../../collectors/gpu/parse-query.js";
import { listFixtures, readCapture } from "../../helpers/fixtures.js";

const DIR = "tools/nvidia_smi_query_csv";

interface Golden {
  /** The --query-gpu list the capture was made with (undefined: read it from the header). */
  fields?: string[];
  hadHeader: boolean;
  rows: number;
  fieldCount: number;
  /** [row, field, expected value (undefined = nvidia-smi printed "no value")]. */
  values: [number, string, string | undefined][];
}

const ALLFIELDS_NO_VALUE: [number, string, undefined][] = [
  [0, "display_mode", undefined], // [Requested functionality has been deprecated]
  [0, "platform.chassis_serial_number", undefined], // empty cell
];

/** Values read by eye from each capture (file names: see SOURCES.md for the commands). */
const GOLDEN: Record<string, Golden> = {
  "01-slurm-on-aws-rtxpro6000-temp-power-ecc.txt": {
    hadHeader: true,
    rows: 2,
    fieldCount: 7,
    values: [
      [0, "index", "0"],
      [0, "name", "NVIDIA RTX PRO 6000 Blackwell Server Edition"],
      [0, "power.draw", "30.39 W"],
      [0, "power.limit", "600.00 W"],
      [1, "power.draw", "28.54 W"],
      [1, "ecc.errors.uncorrected.volatile.total", "0"],
    ],
  },
  "02-slurm-on-aws-rtxpro6000-throttle-reasons.txt": {
    // Asked for clocks_throttle_reasons.*; the header says clocks_event_reasons.*: keys are ours.
    fields: [
      "index",
      "name",
      "clocks_throttle_reasons.active",
      "clocks_throttle_reasons.gpu_idle",
      "clocks_throttle_reasons.hw_thermal_slowdown",
      "clocks_throttle_reasons.sw_thermal_slowdown",
      "clocks_throttle_reasons.sw_power_cap",
    ],
    hadHeader: true,
    rows: 2,
    fieldCount: 7,
    values: [
      [0, "clocks_throttle_reasons.active", "0x0000000000000004"],
      [0, "clocks_throttle_reasons.gpu_idle", "Not Active"],
      [1, "clocks_throttle_reasons.sw_power_cap", "Active"],
    ],
  },
  "03-xuesongtap-lms-timestamp-pstate-A10.txt": {
    hadHeader: true,
    rows: 5,
    fieldCount: 8,
    values: [
      [0, "timestamp", "2024/01/16 14:44:16.977"],
      [0, "pstate", "P8"],
      [0, "memory.used", "21 MiB"],
      [1, "memory.used", "7 MiB"],
      [3, "temperature.gpu", "26"],
      [4, "memory.total", "23028 MiB"],
    ],
  },
  "04-nvgpuexp-h100-80gb-590.48.01-allfields.txt": {
    hadHeader: true,
    rows: 1,
    fieldCount: 212,
    values: [
      [0, "driver_version", "590.48.01"],
      [0, "name", "NVIDIA H100 80GB HBM3"],
      [0, "pci.bus_id", "00000000:00:09.0"],
      [0, "power.limit", "700.00 W"],
      [0, "temperature.gpu", "41"],
      [0, "fan.speed", undefined], // [N/A]
      [0, "fabric.health.summary", undefined], // bare N/A
      [0, "mig.mode.current", "Disabled"],
      ...ALLFIELDS_NO_VALUE,
    ],
  },
  "05-nvgpuexp-h100-MIG-590.48.01-allfields.txt": {
    hadHeader: true,
    rows: 1,
    fieldCount: 212,
    values: [
      [0, "temperature.gpu", "53"],
      [0, "utilization.gpu", undefined], // [N/A] in MIG mode
      [0, "mig.mode.current", "Enabled"],
      [0, "power.limit", "700.00 W"],
      ...ALLFIELDS_NO_VALUE,
    ],
  },
  "06-nvgpuexp-l40s-595.80-allfields.txt": {
    hadHeader: true,
    rows: 1,
    fieldCount: 202,
    values: [
      [0, "name", "NVIDIA L40S"],
      [0, "driver_version", "595.80"],
      [0, "pci.bus_id", "00000000:01:00.0"],
      [0, "power.limit", "350.00 W"],
      [0, "utilization.gpu", "9 %"],
      [0, "temperature.memory", undefined], // bare N/A
      ...ALLFIELDS_NO_VALUE,
    ],
  },
  "07-nvgpuexp-rtx2080s-610.57.04-allfields.txt": {
    hadHeader: true,
    rows: 1,
    fieldCount: 241,
    values: [
      [0, "name", "NVIDIA GeForce RTX 2080 SUPER"],
      [0, "driver_version", "610.57.04"],
      [0, "pci.bus_id", "00000000:0C:00.0"],
      [0, "fan.speed", "38 %"],
      [0, "serial", undefined],
      [0, "pstate", "P8"],
      ...ALLFIELDS_NO_VALUE,
    ],
  },
  "08-nvgpuexp-win-rtx2080s-610.62-function-not-found.txt": {
    hadHeader: true,
    rows: 1,
    fieldCount: 239,
    values: [
      [0, "driver_version", "610.62"],
      [0, "driver_model.current", "WDDM"],
      [0, "temperature.gpu", "40"],
      [0, "bbx.time_run", undefined], // [Function Not Found]
      ...ALLFIELDS_NO_VALUE,
    ],
  },
  "10-i3pystatus-776-old-NotSupported-noheader-nounits.txt": {
    fields: ["memory.total", "memory.free", "memory.used", "temperature.gpu", "fan.speed", "utilization.gpu", "utilization.memory"],
    hadHeader: false,
    rows: 1,
    fieldCount: 7,
    values: [
      [0, "memory.total", "2004"],
      [0, "memory.used", "0"],
      [0, "temperature.gpu", "44"],
      [0, "fan.speed", undefined], // [Not Supported]
    ],
  },
  "11-megaminer-235-gtx770-windows-NotSupported-noheader.txt": {
    fields: [
      "gpu_name",
      "utilization.gpu",
      "utilization.memory",
      "temperature.gpu",
      "power.draw",
      "power.limit",
      "fan.speed",
      "pstate",
      "clocks.current.graphics",
      "clocks.current.memory",
      "power.max_limit",
      "power.default_limit",
    ],
    hadHeader: false,
    rows: 1,
    fieldCount: 12,
    values: [
      [0, "gpu_name", "GeForce GTX 770"],
      [0, "utilization.gpu", undefined],
      [0, "temperature.gpu", "52"],
      [0, "fan.speed", "52 %"],
      [0, "pstate", "P0"],
      [0, "power.limit", undefined],
    ],
  },
  "13-prmon-317-2x-rtx-a6000.txt": {
    fields: ["clocks.max.sm", "memory.total", "gpu_name"],
    hadHeader: false,
    rows: 2,
    fieldCount: 3,
    values: [
      [0, "clocks.max.sm", "2100"],
      [0, "memory.total", "49140"],
      [1, "gpu_name", "NVIDIA RTX A6000"],
    ],
  },
  "15-netdata-godplugin-tesla-p100.txt": {
    hadHeader: true,
    rows: 1,
    fieldCount: 15,
    values: [
      [0, "name", "Tesla P100-PCIE-16GB"],
      [0, "uuid", "GPU-ef1b2c9b-38d8-2090-2bd1-f567a3eb42a6"],
      [0, "fan.speed", undefined],
      [0, "power.draw", "28.16"],
      [0, "clocks.current.video", "835"], // last cell, no final newline
    ],
  },
  "16-felixfu-tesla-p40-name-busid-vbios.txt": {
    fields: ["gpu_name", "gpu_bus_id", "vbios_version"],
    hadHeader: true,
    rows: 1,
    fieldCount: 3,
    values: [
      [0, "gpu_name", "Tesla P40"],
      [0, "gpu_bus_id", "00000000:02:00.0"],
      [0, "vbios_version", "86.02.23.00.01"],
    ],
  },
  "18-UNATTRIB-candy-top-throttle-ecc-mig-bracketed-NA.txt": {
    fields: ["index", "power.draw.average", "power.draw.instant", "clocks_throttle_reasons.active", "memory.reserved", "ecc.mode.current", "mig.mode.current"],
    hadHeader: false,
    rows: 4,
    fieldCount: 7,
    values: [
      [1, "power.draw.average", "289.76"],
      [3, "power.draw.instant", "299.46"],
      [2, "ecc.mode.current", "Disabled"],
      [0, "mig.mode.current", undefined], // [N/A] even with nounits
    ],
  },
};

describe("parse-query on every real capture", () => {
  it("has a golden entry for every capture in the directory", () => {
    expect(listFixtures(DIR, ".txt")).toEqual(Object.keys(GOLDEN).sort());
  });

  for (const [file, g] of Object.entries(GOLDEN)) {
    it(file, () => {
      const r: QueryParseResult = parseQueryCsv(readCapture(`${DIR}/${file}`), g.fields);
      expect(r.hadHeader).toBe(g.hadHeader);
      expect(r.rows).toHaveLength(g.rows);
      expect(r.skipped).toEqual([]);
      expect(r.errors).toEqual([]);
      expect(r.fields).toHaveLength(g.fieldCount);
      for (const [i, field, want] of g.values) {
        expect(Object.keys(r.rows[i] ?? {})).toContain(field);
        expect(r.rows[i]?.[field], `${field} of row ${i}`).toBe(want);
      }
    });
  }

  it("identity: every all-fields capture projected onto the identity query", () => {
    const want: Record<string, [string, string, string, number]> = {
      "04-nvgpuexp-h100-80gb-590.48.01-allfields.txt": ["NVIDIA H100 80GB HBM3", "00000000:00:09.0", "590.48.01", 700],
      "05-nvgpuexp-h100-MIG-590.48.01-allfields.txt": ["NVIDIA H100 80GB HBM3", "00000000:00:09.0", "590.48.01", 700],
      "06-nvgpuexp-l40s-595.80-allfields.txt": ["NVIDIA L40S", "00000000:01:00.0", "595.80", 350],
      "07-nvgpuexp-rtx2080s-610.57.04-allfields.txt": ["NVIDIA GeForce RTX 2080 SUPER", "00000000:0C:00.0", "610.57.04", 250],
      "08-nvgpuexp-win-rtx2080s-610.62-function-not-found.txt": ["NVIDIA GeForce RTX 2080 SUPER", "00000000:0C:00.0", "610.62", 250],
    };
    for (const [file, [name, bus, driver, limit]] of Object.entries(want)) {
      const row = parseQueryCsv(readCapture(`${DIR}/${file}`)).rows[0] ?? {};
      // What `--query-gpu=index,uuid,... --format=csv,noheader,nounits` prints for this GPU.
      const line = IDENTITY_FIELDS.map((f) => (row[f] ?? "[N/A]").replace(/ W$/, "")).join(", ");
      const id = parseIdentity(line + "\n");
      expect(id.gpus, file).toEqual([
        { index: "0", uuid: "GPU-00000000-0000-0000-0000-000000000000", name, pciBusId: bus, driverVersion: driver, powerLimitWatts: limit },
      ]);
    }
  });
});

describe("parse-query edge cases", () => {
  it("maps every no-value spelling to undefined", () => {
    for (const v of ["[N/A]", "N/A", "[Not Supported]", "[Requested functionality has been deprecated]", "[Function Not Found]", "[Unknown Error]", ""]) {
      expect(isNoValue(v), v).toBe(true);
    }
    for (const v of ["0", "Disabled", "NVIDIA H100", "N/A1"]) expect(isNoValue(v), v).toBe(false);
  });

  it("identity rows: [N/A] fields are left out, a header line is skipped, bad rows are reported", () => {
    const text = [
      "index, uuid, name, pci.bus_id, driver_version, power.limit [W]",
      "0, GPU-a, NVIDIA H100 80GB HBM3, 00000000:07:00.0, 550.54.15, 700.00",
      "1, GPU-b, NVIDIA H100 80GB HBM3, 00000000:0F:00.0, 550.54.15, [N/A]",
      "2, GPU-c, only three",
      "Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost.  Reboot the system to recover this GPU",
    ].join("\n");
    const r = parseIdentity(text);
    expect(r.gpus).toEqual([
      { index: "0", uuid: "GPU-a", name: "NVIDIA H100 80GB HBM3", pciBusId: "00000000:07:00.0", driverVersion: "550.54.15", powerLimitWatts: 700 },
      { index: "1", uuid: "GPU-b", name: "NVIDIA H100 80GB HBM3", pciBusId: "00000000:0F:00.0", driverVersion: "550.54.15" },
    ]);
    expect(r.skipped).toEqual(["2, GPU-c, only three"]);
    expect(r.errors).toEqual([expect.objectContaining({ kind: "gpu_lost", pciBusId: "0000:3B:00.0" })]);
  });

  it("reports the invalid-field failure capture as an error, not as rows", () => {
    const r = parseQueryCsv(readCapture("tools/errors/14-UNATTRIB-query-gpu-invalid-field.txt"), ["bogus.field"]);
    expect(r.rows).toEqual([]);
    expect(r.errors).toEqual([{ kind: "invalid_field", message: 'Field "bogus.field" is not a valid field to query.' }]);
  });

  it("driver failures give no GPUs", () => {
    const r = parseIdentity(readCapture("tools/errors/01-nvsmi-failed-communicate-shine-cluster-50.txt"));
    expect(r.gpus).toEqual([]);
    expect(r.errors.map((e) => e.kind)).toEqual(["driver_unreachable"]);
  });

  it("queryNumber reads values with and without units", () => {
    expect(queryNumber("700.00 W")).toBe(700);
    expect(queryNumber("52 %")).toBe(52);
    expect(queryNumber("2100")).toBe(2100);
    expect(queryNumber("Disabled")).toBeUndefined();
    expect(queryNumber(undefined)).toBeUndefined();
  });
});
