/**
 * test/fakes/nccl-ras --job, NCCL 2.31.2+: DIAGNOSTICS (render.mjs renderDiagnostics, NCCL's exact lines from
 * src/ras/diagnostics*.cc of v2.31.2-1 and v2.32.3-1) and CONTROL PROFILER_MASK over a real socket, the
 * per-listener BUSY, the JSON refusal, the version gates, and TIMEOUT's strtod parsing from 2.31.2. The answers
 * are read back with ringwatch's parser (collectors/nccl/ras/parse-diag.ts): the problems it finds are the
 * ones the job model put in.
 */
import { describe, expect, it } from "vitest";
import { diagProblems, parseDiagnostics } from "../../collectors/nccl/ras/parse-diag.js";
import { diagRankSet, rasFeatures, renderDiagnostics, uniformJob, withMissing, type RasJob } from "../fakes/ras/render.mjs";
import { rasJobServices } from "../helpers/ras-service.js";
import { openRawRas, type RawRas } from "../helpers/ras-raw-client.js";

const startJob = rasJobServices();

const open = (port: number): Promise<RawRas> => openRawRas(port, "127.0.0.1", 5000);

const HASH = "0x7f3a9c2e5d1b4a60";
const HCA = "mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11";

/** Two nodes x 8 H100 (gpu-node-03 = 10.0.0.3, gpu-node-04 = 10.0.0.4), one 16-rank communicator; diag as given. */
function job(version: string, diag: RasJob["diag"] = {}): RasJob {
  const j = uniformJob({ version, nodes: 2, ranksPerNode: 8, hash: HASH, hostOf: (n) => `10.0.0.${n + 3}`, pidBase: 48200, cudaDriver: 12080 });
  const comm = j.comms[0];
  if (comm) Object.assign(comm, { hostHash: "0x5be1c0d2a3f49e87", pidHash: "0x1d7e44a09c3b2f15" });
  j.diag = { hostNames: { "10.0.0.3": "gpu-node-03", "10.0.0.4": "gpu-node-04" }, ...diag };
  return j;
}

/** ECC on rank 11, NCCL_IB_HCA set on node 03's ranks only, Xid 94 and 63 and an SXid on gpu-node-04. */
const faulty: RasJob["diag"] = {
  eccUncorrected: { 11: 1 },
  env: { NCCL_IB_HCA: Object.fromEntries([0, 1, 2, 3, 4, 5, 6, 7].map((r) => [r, HCA])), NCCL_DEBUG: { "*": "WARN" } },
  xids: [
    { host: "gpu-node-04", xid: 94, count: 1 },
    { host: "gpu-node-04", xid: 63, count: 1 },
  ],
  sxids: [{ host: "gpu-node-04", sxid: 12028, count: 4, classification: "Non-fatal", links: [33, 32] }],
};

const P = "gpu-node-03:48200 NCCL DIAG ";
const C = `comm ${HASH}`;

/** The answer NCCL 2.32.3 sends for `faulty` (format strings of diagnostics_gpu.cc, _env.cc, _pci.cc, _xid.cc, _paths.cc). */
const FAULTY_2323 = [
  "=== RAS Diagnostics ===",
  `[OK]   GPU inventory: 8x NVIDIA H100 80GB HBM3 per node consistent across 16 ranks in ${C}`,
  `[OK]   CUDA driver version: 12080 consistent across 16 ranks in ${C}`,
  `[INFO] ECC: uncorrected volatile errors on rank(s) {11} (worst=1) across 16 ranks in ${C}`,
  `[OK]   NVLink: 18 links per GPU, all active at consistent speed across 16 ranks in ${C}`,
  `[INFO] NCCL environment: mismatch across 16 ranks in ${C} for NCCL_IB_HCA`,
  `[INFO] NCCL environment: NCCL_IB_HCA=${HCA} on rank(s) {0,1,2,3,4,5,6,7}`,
  "[INFO] NCCL environment: NCCL_IB_HCA=(unset) on rank(s) {8,9,10,11,12,13,14,15}",
  `[INFO] NCCL environment: 1 NCCL_* env var(s) differ across ranks in ${C}`,
  `[INFO] rdma_topo check: not usable on 16/16 ranks in ${C} (unavailable)`,
  "[OK]   Xid 63 detected 1 time on host gpu-node-04. No user action or further investigation is required for this Xid.",
  "[INFO] Xid 94 detected 1 time on host gpu-node-04. Restart the affected application. For guidance, see the NVIDIA Xid documentation: https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
  "[INFO] SXid 12028 detected 4 times (NVSwitch driver reported Non-fatal, link(s) {32,33}) on host gpu-node-04. See the NVIDIA Fabric Manager documentation for the recommended response: https://docs.nvidia.com/hgx-platforms/fabric-manager-user-guide/index.html",
  `[OK]   NVIDIA graphics driver version: 570.133.20 consistent across 16 ranks in ${C}`,
  `[OK]   Paths: self+NVL+NET across 16 ranks in ${C}`,
];

const answer = (bodies: string[], ms: number, peers: number, prefix = P): string =>
  [...bodies, `RAS diagnostics completed in ${ms.toFixed(1)} ms across ${peers} RAS peers`].map((b) => `${prefix}${b}\n`).join("");

/** The problems parse-diag finds, as [check, detail, host, commId] (detail/host/commId "" when absent). */
const problems = (text: string): string[][] => diagProblems(parseDiagnostics(text)).map((p) => [p.check, p.detail ?? "", p.host ?? "", p.commId ?? ""]);

/** Sends DIAGNOSTICS on a fresh text connection (CLIENT PROTOCOL 2, TIMEOUT 10 first) and reads to EOF. */
async function diagnostics(port: number): Promise<{ text: string; conn: RawRas }> {
  const c = await open(port);
  expect(await c.ask("CLIENT PROTOCOL 2\n", "SERVER PROTOCOL 2\n")).toBe("SERVER PROTOCOL 2\n");
  expect(await c.ask("TIMEOUT 10\n", "OK\n")).toBe("OK\n");
  const before = c.text().length;
  c.sock.write("diagnostics\r\n");
  return { text: (await c.closed).slice(before), conn: c };
}

describe("render.mjs renderDiagnostics (NCCL's lines)", () => {
  it("version gates: DIAGNOSTICS and CONTROL from 2.31.2, Xid/rdma_topo from 2.32.3; older versions throw", () => {
    expect(rasFeatures("2.30.7")).toMatchObject({ diagnostics: false, diagXid: false, control: false, timeoutStrtod: false });
    expect(rasFeatures("2.31.0")).toMatchObject({ diagnostics: false, control: false });
    expect(rasFeatures("2.31.2")).toMatchObject({ diagnostics: true, diagXid: false, control: true, timeoutStrtod: true });
    expect(rasFeatures("2.32.3")).toMatchObject({ diagnostics: true, diagXid: true, control: true, timeoutStrtod: true });
    expect(() => renderDiagnostics(job("2.30.7"))).toThrow(/2\.31\.2/);
  });

  it("rank sets: at most 8 shown, then ,...} (N=total)", () => {
    expect(diagRankSet([11])).toBe("{11}");
    expect(diagRankSet([0, 1, 2, 3, 4, 5, 6, 7])).toBe("{0,1,2,3,4,5,6,7}");
    expect(diagRankSet([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])).toBe("{0,1,2,3,4,5,6,7,...} (N=10)");
  });

  it("2.31.2: the five checks only (no rdma_topo, IOMMU, ATS, Xid, NVIDIA driver, Paths), NVLink in 2.31's words", () => {
    const text = renderDiagnostics(job("2.31.2", faulty), { ms: 12.34 });
    expect(text).toBe(
      answer(
        [...FAULTY_2323.slice(0, 4), `[OK]   NVLink: found 18 link(s) per device, all active across 16 ranks in ${C}`, ...FAULTY_2323.slice(5, 9)],
        12.3,
        16,
      ),
    );
    expect(text).not.toMatch(/Xid|rdma_topo|IOMMU|ATS|NVIDIA graphics|Paths/);
    expect(problems(text)).toEqual([
      ["ecc", "", "", "0x7f3a9c2e5d1b4a60"],
      ["nccl_env", "NCCL_IB_HCA", "", "0x7f3a9c2e5d1b4a60"],
    ]);
  });

  it("healthy jobs give no problems, on 2.31.2 and 2.32.3, with NICs and rdma_topo passing too", () => {
    for (const diag of [{}, { nic: { iommu: "disabled" as const } }, { rdmaTopo: "passed" as const, nic: {} }, { nvlinkLinks: 0 }]) {
      for (const version of ["2.31.2", "2.32.3"]) {
        const text = renderDiagnostics(job(version, diag));
        const r = parseDiagnostics(text);
        expect(problems(text), `${version} ${JSON.stringify(diag)}`).toEqual([]);
        expect(r.results.every((x) => x.ok)).toBe(version === "2.31.2" || (diag as { rdmaTopo?: string }).rdmaTopo === "passed");
        expect(r.completed).toEqual({ ms: 0, peers: 16 });
      }
    }
    const healthy = renderDiagnostics(job("2.32.3"));
    expect(healthy).toContain(`${P}[OK]   Xid/SXid: no events requiring immediate attention across 2 hosts\n`);
    expect(renderDiagnostics(job("2.32.3", { rdmaTopo: "passed", nic: {} }))).toContain(`${P}[OK]   rdma_topo check: passed on 16/16 ranks in ${C}\n`);
    // PCIe only: no NVLink line at all; the intra-node paths are PHB.
    const pcie = renderDiagnostics(job("2.32.3", { nvlinkLinks: 0 }));
    expect(pcie).not.toContain("NVLink");
    expect(pcie).toContain(`[OK]   Paths: self+PHB+NET across 16 ranks in ${C}\n`);
  });

  it("2.32.3 NIC checks (rdma_topo not usable): IOMMU mode and groups, ATS needing root, one NIC per rank", () => {
    const text = renderDiagnostics(job("2.32.3", { nic: { iommu: "passthrough", ats: "needs root", gpuGroup: 38, nicGroup: 40 } }));
    const at = text.indexOf("rdma_topo check");
    expect(text.slice(at, text.indexOf("Xid/SXid")).split("\n").slice(0, 5)).toEqual([
      `rdma_topo check: not usable on 16/16 ranks in ${C} (unavailable)`,
      `${P}[OK]   IOMMU mode: passthrough for 32 relevant device(s) across 16/16 ranks in ${C}`,
      `${P}[INFO] IOMMU groups: GPU and NIC groups differ on 16 pair(s) in ${C}; first rank 0 GPU group 38 NIC 0000:0c:00.0 group 40`,
      `${P}[INFO] ATS state: PCIe capabilities require root access on 16 rank/NIC pair(s) across 16/16 ranks in ${C}`,
      `${P}[INFO] ATS state: PCIe capabilities inaccessible on 16 rank/NIC pair(s) in ${C}; first rank 0 NIC 0000:0c:00.0`,
    ]);
  });

  it("rank 11's process not answering: every per-communicator check says incomplete (comm/hostHash/pidHash), 15 RAS peers", () => {
    const text = renderDiagnostics(withMissing(job("2.32.3"), 0, [11]), { ms: 10004.9 });
    const inc = (label: string): string => `[INFO] ${label}: diagnostics incomplete, gathered 15/16 ranks in ${C}/0x5be1c0d2a3f49e87/0x1d7e44a09c3b2f15`;
    const labels = ["GPU inventory", "CUDA driver version", "ECC", "NVLink", "NCCL environment", "rdma_topo check", "IOMMU mode", "ATS state"];
    expect(text).toBe(
      answer(
        [
          "=== RAS Diagnostics ===",
          ...labels.map(inc),
          "[OK]   Xid/SXid: no events requiring immediate attention across 2 hosts",
          inc("NVIDIA graphics driver version"),
          inc("Paths"),
        ],
        10004.9,
        15,
      ),
    );
    expect(problems(text).map(([check, detail]) => `${check}:${detail}`)).toEqual(
      ["gpu_inventory", "cuda_driver", "ecc", "nvlink", "nccl_env", "rdma_topo", "iommu", "ats", "nvidia_driver", "paths"].map((c) => `${c}:incomplete`),
    );
    expect(parseDiagnostics(text).completed).toEqual({ ms: 10004.9, peers: 15 });
  });
});

describe("nccl-ras --job DIAGNOSTICS", () => {
  it("2.32.3: nothing until the gather ends, then the whole answer (ECC rank 11, NCCL_IB_HCA, Xid 94, SXid), then closed; parse-diag finds exactly those", async () => {
    const j = job("2.32.3", faulty);
    const ras = await startJob(j, { delayMs: 200 });
    const { text, conn } = await diagnostics(ras.port);
    expect(text).toBe(answer(FAULTY_2323, 200, 16));
    expect(text).toBe(renderDiagnostics(j, { ms: 200 }));
    // Sent only once the gather ended: the answer's first byte arrives after the delay.
    const first = conn.chunks.find((ch) => ch.text.includes("NCCL DIAG"));
    const sent = conn.chunks.find((ch) => ch.text === "OK\n");
    expect((first?.at ?? 0) - (sent?.at ?? 0)).toBeGreaterThanOrEqual(180);
    const report = parseDiagnostics(text);
    expect(report).toMatchObject({ from: "gpu-node-03:48200", completed: { ms: 200, peers: 16 }, busy: false, errors: [] });
    expect(problems(text)).toEqual([
      ["ecc", "", "", "0x7f3a9c2e5d1b4a60"],
      ["nccl_env", "NCCL_IB_HCA", "", "0x7f3a9c2e5d1b4a60"],
      ["xid", "94", "gpu-node-04", ""],
      ["sxid", "12028", "gpu-node-04", ""],
    ]);
    expect(ras.commands()).toEqual(["CLIENT PROTOCOL 2", "TIMEOUT 10", "diagnostics"]);
  });

  it("BUSY on a second run on the same listener (closed, not queued); free again once the first ends or its client leaves", async () => {
    const ras = await startJob(job("2.32.3"), { delayMs: 400 });
    const a = await open(ras.port);
    a.sock.write("DIAGNOSTICS\n");
    await new Promise((r) => setTimeout(r, 50));
    const b = await open(ras.port);
    const t0 = Date.now();
    b.sock.write("DIAGNOSTICS\n");
    expect(await b.closed).toBe("BUSY: diagnostics already in progress\n");
    expect(Date.now() - t0).toBeLessThan(300);
    expect(parseDiagnostics(b.text())).toMatchObject({ busy: true, results: [] });
    expect(await a.closed).toBe(renderDiagnostics(job("2.32.3"), { ms: 400 }));
    // The first run is over: a new one runs.
    const c = await open(ras.port);
    c.sock.write("DIAGNOSTICS\n");
    await new Promise((r) => setTimeout(r, 50));
    // Its client leaves mid-run: NCCL drops the run, so the next one is not BUSY.
    c.sock.destroy();
    await new Promise((r) => setTimeout(r, 100));
    const d = await open(ras.port);
    d.sock.write("DIAGNOSTICS\n");
    expect(await d.closed).toContain("NCCL DIAG RAS diagnostics completed in 400.0 ms across 16 RAS peers\n");
  });

  it("JSON format: refused and closed; lines received with it are still answered", async () => {
    const ras = await startJob(job("2.31.2"));
    const c = await open(ras.port);
    c.sock.write("SET FORMAT json\nDIAGNOSTICS\nCLIENT PROTOCOL 2\n");
    expect(await c.closed).toBe("OK\nERROR: diagnostics only supports text output\nSERVER PROTOCOL 2\n");
    expect(parseDiagnostics(c.text()).errors).toEqual(["diagnostics only supports text output"]);
    // SET FORMAT text makes it work again.
    const t = await open(ras.port);
    expect(await t.ask("SET FORMAT json\n", "OK\n")).toBe("OK\n");
    expect(await t.ask("SET FORMAT text\n", "OK\n")).toBe("OK\n");
    t.sock.write("DIAGNOSTICS\n");
    expect((await t.closed).slice(6)).toBe(renderDiagnostics(job("2.31.2")));
  });

  it("2.30.7: DIAGNOSTICS and CONTROL are unknown commands and the connection stays open; DIAG and DIAGNOSTICS x are unknown on 2.31.2", async () => {
    const old = await startJob(job("2.30.7"));
    const c = await open(old.port);
    expect(await c.ask("DIAGNOSTICS\n", "ERROR: Unknown command DIAGNOSTICS\n")).toBe("ERROR: Unknown command DIAGNOSTICS\n");
    expect(await c.ask("CONTROL PROFILER_MASK none\n", "ERROR: Unknown command CONTROL PROFILER_MASK none\n")).toBe(
      "ERROR: Unknown command CONTROL PROFILER_MASK none\n",
    );
    expect(await c.ask("CLIENT PROTOCOL 2\n", "SERVER PROTOCOL 2\n")).toBe("SERVER PROTOCOL 2\n");
    expect(c.isClosed()).toBe(false);
    expect(parseDiagnostics(c.text()).errors).toEqual(["Unknown command DIAGNOSTICS", "Unknown command CONTROL PROFILER_MASK none"]);
    const now = await startJob(job("2.31.2"));
    const d = await open(now.port);
    expect(await d.ask("DIAG\n", "ERROR: Unknown command DIAG\n")).toBe("ERROR: Unknown command DIAG\n");
    expect(await d.ask("DIAGNOSTICS x\n", "ERROR: Unknown command DIAGNOSTICS x\n")).toBe("ERROR: Unknown command DIAGNOSTICS x\n");
    expect(d.isClosed()).toBe(false);
  });
});

describe("nccl-ras --job CONTROL PROFILER_MASK and TIMEOUT (2.31.2+)", () => {
  it("replies per rasParseProfilerMask on one connection that stays open; the mask follows every OK", async () => {
    const ras = await startJob({ ...job("2.31.2"), inspector: true });
    let err = "";
    ras.child.stderr?.on("data", (d: string) => (err += d));
    const c = await open(ras.port);
    const cases: [string, string][] = [
      ["CONTROL PROFILER_MASK none", "OK"],
      ["control profiler_mask ALL", "OK"],
      ["CONTROL PROFILER_MASK 0x42", "OK"],
      ["CONTROL PROFILER_MASK 66", "OK"],
      ["CONTROL PROFILER_MASK 0106", "OK"],
      ["CONTROL   PROFILER_MASK    coll,KernelCh,p2p", "OK"],
      ["CONTROL PROFILER_MASK ,coll,,", "OK"],
      ["CONTROL PROFILER_MASK coll, kernelch", "ERROR: Invalid profiler mask value 'coll, kernelch'"],
      ["CONTROL PROFILER_MASK coll ", "ERROR: Invalid profiler mask value 'coll '"],
      ["CONTROL PROFILER_MASK 08", "ERROR: Invalid profiler mask value '08'"],
      ["CONTROL PROFILER_MASK 0x", "ERROR: Invalid profiler mask value '0x'"],
      ["CONTROL PROFILER_MASK -1", "ERROR: Invalid profiler mask value '-1'"],
      ["CONTROL PROFILER_MASK 0x46h", "ERROR: Invalid profiler mask value '0x46h'"],
      ["CONTROL PROFILER_MASK kernelphase", "ERROR: Invalid profiler mask value 'kernelphase'"],
      ["CONTROL PROFILER_MASK ", "ERROR: Invalid profiler mask value ''"],
      ["CONTROL PROFILER_MASK", "ERROR: Unknown CONTROL subcommand 'PROFILER_MASK'"],
      ["CONTROL  RESET all", "ERROR: Unknown CONTROL subcommand 'RESET all'"],
      ["CONTROL", "ERROR: Unknown command CONTROL"],
      ["CONTROL PROFILER_MASK 0x8000", "OK"],
      ["CONTROL PROFILER_MASK 0x46", "OK"],
    ];
    for (const [cmd, reply] of cases) expect(await c.ask(`${cmd}\n`, `${reply}\n`), cmd).toBe(`${reply}\n`);
    expect(c.isClosed()).toBe(false);
    const masks = (): string[] =>
      err
        .split("\n")
        .filter((l) => l.startsWith("mask "))
        .map((l) => l.slice(5));
    // One mask line per OK, in order (the start line "mask 0x46" may have come before this listener).
    const want = ["0x0", "0x7fff", "0x42", "0x42", "0x46", "0x46", "0x2", "0x8000", "0x46"];
    await expect.poll(() => masks().slice(-want.length), { timeout: 5000 }).toEqual(want);
    expect(masks().length - want.length).toBeLessThanOrEqual(1);
  });

  it("TIMEOUT: strtod from 2.31.2 (2.5, 1e1, 0x1p3, -0 accepted; negative, inf, nan, ERANGE, junk refused), strtol on 2.30.7", async () => {
    const ras = await startJob(job("2.31.2"));
    const c = await open(ras.port);
    const ok = ["2.5", "1e1", ".5", "5.", "0x1p3", "0X1.8P1", "-0", "  7", "+3", "", "1e-300"];
    const bad = ["-1", "-0.5", "inf", "INFINITY", "nan", "nan(1)", "1e999", "1e-400", "5s", "1e", "0x", " ", "2.5 "];
    for (const v of ok) expect(await c.ask(`TIMEOUT ${v}\n`, "OK\n"), v).toBe("OK\n");
    for (const v of bad) expect(await c.ask(`TIMEOUT ${v}\n`, `ERROR: Invalid timeout value ${v}\n`), v).toBe(`ERROR: Invalid timeout value ${v}\n`);
    const old = await startJob(job("2.30.7"));
    const o = await open(old.port);
    expect(await o.ask("TIMEOUT 2.5\n", "ERROR: Invalid timeout value 2.5\n")).toBe("ERROR: Invalid timeout value 2.5\n");
    expect(await o.ask("TIMEOUT 5\n", "OK\n")).toBe("OK\n");
  });
});
