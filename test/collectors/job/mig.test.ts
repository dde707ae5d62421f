/**
 * The MIG parsers on every real capture: `nvidia-smi -L` (test/fixtures/tools/nvidia_smi_list, new
 * `MIG-<uuid>` and old `MIG-GPU-<uuid>/<gi>/<ci>` forms, CRLF) and `nvidia-smi -q`
 * (test/fixtures/tools/nvidia_smi_q), and their join: a device's `Device N` is not its GPU instance.
 */
import { describe, expect, it } from "vitest";
import { joinMig, oldFormMig, parseMigList, parseMigQuery, type MigDevice } from "../../../collectors/job/mig.js";
import { listFixtures, readCapture } from "../../helpers/fixtures.js";

const LIST = "tools/nvidia_smi_list";
const Q = "tools/nvidia_smi_q";
const MASKED_GPU = "gpu-00000000-0000-0000-0000-000000000000";
const masked = (n: number): string => `mig-0000000${n}-0000-0000-0000-00000000000${n}`;

/** What each -L capture lists: [GPU UUID, Device N, profile, MIG UUID, GPU instance (old form only)] per device. */
const EXPECTED: Record<string, [string, number, string, string, string | undefined][]> = {
  "01-nvgpuexp-h100-MIG-590.48.01.txt": [
    [MASKED_GPU, 0, "3g.40gb", masked(0), undefined],
    [MASKED_GPU, 1, "2g.20gb", masked(1), undefined],
    [MASKED_GPU, 2, "1g.10gb", masked(2), undefined],
    [MASKED_GPU, 3, "1g.10gb", masked(3), undefined],
  ],
  "02-nvgpuexp-h200-MIG-590.48.01.txt": [
    [MASKED_GPU, 0, "1c.3g.71gb", masked(0), undefined],
    [MASKED_GPU, 1, "2c.3g.71gb", masked(1), undefined],
    [MASKED_GPU, 2, "2g.35gb", masked(2), undefined],
    [MASKED_GPU, 3, "1g.18gb", masked(3), undefined],
    [MASKED_GPU, 4, "1g.18gb", masked(4), undefined],
  ],
  "03-nvgpuexp-h200-MIG-610.43.02.txt": [[MASKED_GPU, 0, "3g.71gb", "mig-f165f0ad-bde2-5b72-acdf-73bbf48eeb2c", undefined]],
  "04-cloud-native-docs-h100-7x1g.10gb-CRLF-DOCS.txt": [
    "3f6f389f-b0cc-5e5c-8e32-eaa8fd067902",
    "35f93699-4b53-5a19-8289-80b8418eec60",
    "9d14fb21-4ae1-546f-a636-011582899c39",
    "0f709664-740c-52b0-ae79-3e4c9ede6d3b",
    "5d23f73a-d378-50ac-a6f5-3bf5184773bb",
    "6cea15c7-8a56-578c-b965-0e73cb6dfc10",
    "981c86e9-3607-57d7-9426-295347e4b925",
  ].map((u, i) => ["gpu-b4895dbf-9350-2524-a89b-98161ddd9fe4", i, "1g.10gb", `mig-${u}`, undefined]),
  "05-cloud-native-docs-h100-mixed-CRLF-DOCS.txt": [
    ["gpu-b4895dbf-9350-2524-a89b-98161ddd9fe4", 0, "3g.40gb", "mig-7089d0f3-293f-58c9-8f8c-5ea666eedbde", undefined],
    ["gpu-b4895dbf-9350-2524-a89b-98161ddd9fe4", 1, "2g.20gb", "mig-56c30729-347f-5dd6-8da0-c3cc59e969e0", undefined],
    ["gpu-b4895dbf-9350-2524-a89b-98161ddd9fe4", 2, "1g.10gb", "mig-9d14fb21-4ae1-546f-a636-011582899c39", undefined],
    ["gpu-b4895dbf-9350-2524-a89b-98161ddd9fe4", 3, "1g.10gb", "mig-0f709664-740c-52b0-ae79-3e4c9ede6d3b", undefined],
  ],
  // Old form: the GPU instance is in the UUID, and Device N is not it (Device 3 is GPU instance 10).
  "06-cloud-native-docs-a100-old-form-7x1g.5gb-DOCS.txt": [7, 8, 9, 10, 11, 12, 13].map((gi, i) => [
    "gpu-4200ccc0-2667-d4cb-9137-f932c716232a",
    i,
    "1g.5gb",
    `mig-gpu-4200ccc0-2667-d4cb-9137-f932c716232a/${gi}/0`,
    String(gi),
  ]),
  "07-cloud-native-docs-a100-old-form-mixed-DOCS.txt": [
    ["gpu-4200ccc0-2667-d4cb-9137-f932c716232a", 0, "3g.20gb", "mig-gpu-4200ccc0-2667-d4cb-9137-f932c716232a/2/0", "2"],
    ["gpu-4200ccc0-2667-d4cb-9137-f932c716232a", 1, "2g.10gb", "mig-gpu-4200ccc0-2667-d4cb-9137-f932c716232a/3/0", "3"],
    ["gpu-4200ccc0-2667-d4cb-9137-f932c716232a", 2, "1g.5gb", "mig-gpu-4200ccc0-2667-d4cb-9137-f932c716232a/9/0", "9"],
  ],
  "08-oh-my-tensorrt-a100-pcie-old-form-460.80.txt": [
    ["gpu-9de3d0e8-33f5-10dc-0c79-2c88a7ab0a23", 0, "4g.20gb", "mig-gpu-9de3d0e8-33f5-10dc-0c79-2c88a7ab0a23/2/0", "2"],
    ["gpu-9de3d0e8-33f5-10dc-0c79-2c88a7ab0a23", 1, "2g.10gb", "mig-gpu-9de3d0e8-33f5-10dc-0c79-2c88a7ab0a23/3/0", "3"],
    ["gpu-9de3d0e8-33f5-10dc-0c79-2c88a7ab0a23", 2, "1g.5gb", "mig-gpu-9de3d0e8-33f5-10dc-0c79-2c88a7ab0a23/9/0", "9"],
  ],
  "09-datadog-agent-33120-a100-7x1g.10gb-535.216.01.txt": [
    "feb88891-0321-5fef-9c87-d4af3b54259e",
    "a25704ba-3a06-5299-a795-fd7cf4d13973",
    "50f1c4c9-1508-5e8d-bb06-d08145b22e01",
    "36c795f2-5cf7-55d6-af30-e535e79b7bb6",
    "3f45d38c-8cee-503e-b806-a1f1bdceedeb",
    "96655de9-9525-58f9-a62b-0e4c1cc1c265",
    "1aae4990-b962-574e-8375-119d6d9b9687",
  ].map((u, i) => ["gpu-7fdaf0a5-179b-f636-d15d-daf243e3ff16", i, "1g.10gb", `mig-${u}`, undefined]),
  // GPUs 1-3 are whole: nothing listed for them.
  "10-telegraf-5812-4xa100-mig-on-gpu0-TRUNCATED.txt": [
    "ce861fb0-a248-58ce-a9a8-f9adbc22a66a",
    "a45882f0-9215-5733-a0c1-49286ab31cb5",
    "f00d722c-f4e1-52c9-aa31-750441ae1bfe",
    "930574a9-d43a-5d2b-95da-3e68384c8d6b",
  ].map((u, i) => ["gpu-513536b6-7d19-9063-b049-1e69664bb298", i, "1g.20gb", `mig-${u}`, undefined]),
  "11-nvidia-container-toolkit-203-a100-2x3g.40gb-530.30.02.txt": [
    ["gpu-932bfb2c-849a-2a22-1e84-9eff6bc02b39", 0, "3g.40gb", "mig-0929581a-2be6-5dec-bf34-0954c6c529a6", undefined],
    ["gpu-932bfb2c-849a-2a22-1e84-9eff6bc02b39", 1, "3g.40gb", "mig-3adbed3a-d03d-549f-a016-ba1fd7359f23", undefined],
  ],
  "12-go-dcgm-30-a100-pcie-2g.20gb.txt": [["gpu-41255406-c9af-f94b-4ebf-9d57ad1853da", 0, "2g.20gb", "mig-a65afc88-50b5-5ccf-b0a8-f93b3247ae9e", undefined]],
  // Five whole GPUs, then GPU 5's devices: each is under GPU 5, not GPU 0.
  "13-nomad-device-nvidia-53-6xa100-mig-on-gpu5-TRUNCATED.txt": [
    "8c4c5a27-e508-5556-b2ea-7e549465741e",
    "1d89abd8-d10a-5361-bd06-77a807048472",
    "c6b63f1b-a006-5803-b4f4-cc1b2867b34b",
    "0f03f623-f28d-5831-bc51-f450dad99b8c",
  ].map((u, i) => ["gpu-6109dd5c-d378-24ee-f344-79b537574ea6", i, "1g.5gb", `mig-${u}`, undefined]),
};

const rows = (ds: MigDevice[]): [string, number, string, string, string | undefined][] => ds.map((d) => [d.gpuUuid, d.index, d.profile, d.uuid, d.gpuInstance]);

describe("parseMigList (nvidia-smi -L)", () => {
  it("has an expectation for every capture", () => {
    expect(listFixtures(LIST).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  for (const [file, want] of Object.entries(EXPECTED)) {
    it(file, () => {
      expect(rows(parseMigList(readCapture(`${LIST}/${file}`)))).toEqual(want);
    });
  }

  it("reads CRLF captures as their LF form", () => {
    const crlf = readCapture(`${LIST}/04-cloud-native-docs-h100-7x1g.10gb-CRLF-DOCS.txt`);
    expect(crlf).toContain("\r\n");
    expect(parseMigList(crlf.replaceAll("\r\n", "\n"))).toEqual(parseMigList(crlf));
  });

  it("lists nothing for a node without MIG, a failure message, or a MIG line before any GPU line", () => {
    expect(parseMigList("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-5d5ba0d6-1111-2222-3333-444444444444)\n")).toEqual([]);
    expect(parseMigList(readCapture("tools/errors/01-nvsmi-failed-communicate-shine-cluster-50.txt"))).toEqual([]);
    expect(parseMigList("  MIG 1g.10gb     Device  0: (UUID: MIG-feb88891-0321-5fef-9c87-d4af3b54259e)\n")).toEqual([]);
  });
});

describe("parseMigQuery (nvidia-smi -q)", () => {
  it("H100: MIG Device Index 0-3 are GPU instances 2, 3, 9, 10", () => {
    const q = parseMigQuery(readCapture(`${Q}/01-nvgpuexp-h100-MIG-590.48.01-idle.txt`));
    expect([...q.keys()]).toEqual([MASKED_GPU]);
    expect([...(q.get(MASKED_GPU) ?? [])]).toEqual([
      [0, "2"],
      [1, "3"],
      [2, "9"],
      [3, "10"],
    ]);
  });

  it("H200 under load: two devices of GPU instance 2; the Processes section's 'GPU instance ID' lines are not devices", () => {
    const q = parseMigQuery(readCapture(`${Q}/02-nvgpuexp-h200-MIG-590.48.01-load.txt`));
    expect([...(q.get(MASKED_GPU) ?? [])]).toEqual([
      [0, "2"],
      [1, "2"],
      [2, "3"],
      [3, "9"],
      [4, "10"],
    ]);
  });

  it("keeps GPUs apart: each block's devices under its own GPU UUID", () => {
    const one = readCapture(`${Q}/01-nvgpuexp-h100-MIG-590.48.01-idle.txt`);
    const other = one
      .replace("GPU 00000000:00:09.0", "GPU 00000000:0A:00.0")
      .replaceAll("GPU-00000000-0000-0000-0000-000000000000", "GPU-11111111-0000-0000-0000-000000000000");
    const q = parseMigQuery(one + other.slice(other.indexOf("GPU 00000000:0A:00.0")));
    expect([...q.keys()]).toEqual([MASKED_GPU, "gpu-11111111-0000-0000-0000-000000000000"]);
    expect(q.get("gpu-11111111-0000-0000-0000-000000000000")?.get(3)).toBe("10");
  });

  it("nothing for a GPU without MIG devices", () => {
    expect(
      parseMigQuery("GPU 00000000:07:00.0\n    MIG Mode\n        Current : Disabled\n    GPU UUID : GPU-5d5ba0d6-1111-2222-3333-444444444444\n").size,
    ).toBe(0);
  });
});

describe("joinMig", () => {
  it("H100: -L's devices get -q's GPU instances by GPU UUID and index", () => {
    const d = joinMig(
      parseMigList(readCapture(`${LIST}/01-nvgpuexp-h100-MIG-590.48.01.txt`)),
      parseMigQuery(readCapture(`${Q}/01-nvgpuexp-h100-MIG-590.48.01-idle.txt`)),
    );
    expect(d.map((x) => [x.uuid, x.profile, x.gpuInstance])).toEqual([
      [masked(0), "3g.40gb", "2"],
      [masked(1), "2g.20gb", "3"],
      [masked(2), "1g.10gb", "9"],
      [masked(3), "1g.10gb", "10"],
    ]);
  });

  it("H200: two compute instances of one GPU instance", () => {
    const d = joinMig(
      parseMigList(readCapture(`${LIST}/02-nvgpuexp-h200-MIG-590.48.01.txt`)),
      parseMigQuery(readCapture(`${Q}/02-nvgpuexp-h200-MIG-590.48.01-load.txt`)),
    );
    expect(d.map((x) => [x.profile, x.gpuInstance])).toEqual([
      ["1c.3g.71gb", "2"],
      ["2c.3g.71gb", "2"],
      ["2g.35gb", "3"],
      ["1g.18gb", "9"],
      ["1g.18gb", "10"],
    ]);
  });

  it("an old-form id's own GPU instance wins; a device -q does not know stays unknown", () => {
    const old = parseMigList(readCapture(`${LIST}/07-cloud-native-docs-a100-old-form-mixed-DOCS.txt`));
    const q = new Map([["gpu-4200ccc0-2667-d4cb-9137-f932c716232a", new Map([[1, "99"]])]]);
    expect(joinMig(old, q).map((x) => x.gpuInstance)).toEqual(["2", "3", "9"]);
    const fresh = parseMigList(readCapture(`${LIST}/12-go-dcgm-30-a100-pcie-2g.20gb.txt`));
    expect(joinMig(fresh, new Map())[0]?.gpuInstance).toBeUndefined();
  });
});

describe("oldFormMig", () => {
  it("reads MIG-GPU-<uuid>/<gi>/<ci> in any case, and nothing else", () => {
    expect(oldFormMig("MIG-GPU-b8ea3855-276c-c9cb-b366-c6fa655957c5/1/5")).toEqual({ gpuUuid: "gpu-b8ea3855-276c-c9cb-b366-c6fa655957c5", gpuInstance: "1" });
    expect(oldFormMig("mig-gpu-4200ccc0-2667-d4cb-9137-f932c716232a/13/0")).toEqual({ gpuUuid: "gpu-4200ccc0-2667-d4cb-9137-f932c716232a", gpuInstance: "13" });
    expect(oldFormMig("MIG-feb88891-0321-5fef-9c87-d4af3b54259e")).toBeUndefined();
    expect(oldFormMig("MIG-b8ea3855-276c-c9cb-b366-c6fa655957c5/1/5")).toBeUndefined();
    expect(oldFormMig("GPU-b8ea3855-276c-c9cb-b366-c6fa655957c5/1/5")).toBeUndefined();
    expect(oldFormMig("MIG-GPU-b8ea3855-276c-c9cb-b366-c6fa655957c5/1")).toBeUndefined();
  });
});
