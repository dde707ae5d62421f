/** `ringwatch analyze` as a command: simulated jobs written to real files, real capture files, exit codes. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Report } from "../../collectors/nccl/verdict/report.js";
import { fixturesDir } from "../helpers/fixtures.js";
import { runAgent } from "../helpers/agent-process.js";
import { rasJson } from "../helpers/ras-json.js";
import { Scenario, rankStopsBeforeCollective, socketFallback, writeScenario } from "../sim/index.js";
import { ncclBusIdToPci } from "../../collectors/nccl/logs/parse/bus-id.js";
import { tempDir } from "./env.js";

const TWO_NODES = { nodes: ["node-a", "node-b"], ranksPerNode: 8, ncclVersion: "2.21.5+cuda12.4" };

describe("ringwatch analyze", () => {
  it("names the rank that never entered collective #N from a file per rank (16 ranks, 2 nodes)", async () => {
    const dir = tempDir();
    const sim = new Scenario(TWO_NODES, { faults: [rankStopsBeforeCollective({ rank: 11, atStep: 4, beforeCollIndex: 2 })] });
    await writeScenario(sim, dir, { durationMs: 30_000, stderr: false });
    const r = await runAgent(["analyze", "--json", dir]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.processes).toHaveLength(16);
    const behind = report.findings.filter((f) => f.kind === "rank_behind");
    expect(behind.length).toBeGreaterThanOrEqual(1);
    expect(behind.every((f) => f.ranks.length === 1 && f.ranks[0] === 11)).toBe(true);
    expect(behind[0]?.processes[0]).toMatch(/^node-b:\d+$/);
    expect(behind[0]?.evidence[0]).toMatch(/nccl-node-b-\d+\.log:\d+$/);
    expect(report.findings[0]?.kind).toBe("rank_behind"); // the verdict comes first
    const text = await runAgent(["analyze", dir]);
    // The headline first: the rank behind, then the finding it rests on.
    expect(text.stdout.split("\n")[2]).toMatch(/^VERDICT: Rank 11 \(node-b:\d+\) never entered collective #\d+ /);
    expect(text.stdout.split("\n")[4]).toMatch(
      /^ {2}CRITICAL rank_behind: Rank 11 \(node-b:\d+\) never entered collective #\d+ \((AllReduce|AllGather|ReduceScatter|Broadcast)\)/,
    );
  });

  it("after PyTorch's watchdog aborted every waiting rank, still names the silent rank first", async () => {
    const dir = tempDir();
    const sim = new Scenario(TWO_NODES, { faults: [rankStopsBeforeCollective({ rank: 11, atStep: 4, beforeCollIndex: 2 })], watchdog: { timeoutMs: 20_000 } });
    await writeScenario(sim, dir, { durationMs: 40_000 });
    const report = JSON.parse((await runAgent(["analyze", "--json", dir])).stdout) as Report;
    expect(report.findings[0]).toMatchObject({ kind: "rank_behind", ranks: [11] });
    const wd = report.findings.find((f) => f.kind === "watchdog_timeout");
    expect(wd?.ranks).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14, 15]);
    expect(report.findings.filter((f) => f.kind === "rank_behind").every((f) => f.ranks.join() === "11")).toBe(true);
    expect(report.findings.some((f) => f.summary.includes("points at the network"))).toBe(false);
  });

  it("reads one combined launcher stdout with all ranks interleaved the same way", async () => {
    const dir = tempDir();
    const sim = new Scenario(TWO_NODES, { faults: [rankStopsBeforeCollective({ rank: 11, atStep: 4, beforeCollIndex: 2 })] });
    await writeScenario(sim, dir, { durationMs: 30_000, perRank: false, stderr: false, combined: { file: "job.out", style: "openmpi" } });
    const r = await runAgent(["analyze", "--json", join(dir, "job.out")]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.processes).toHaveLength(16);
    expect(report.findings.find((f) => f.kind === "rank_behind")?.ranks).toEqual([11]);
  });

  it("says when NCCL fell back to sockets", async () => {
    const dir = tempDir();
    await writeScenario(new Scenario(TWO_NODES, { faults: [socketFallback()] }), dir, { durationMs: 10_000, stderr: false });
    const report = JSON.parse((await runAgent(["analyze", "--json", dir])).stdout) as Report;
    const f = report.findings.find((x) => x.kind === "socket_transport");
    expect(f?.processes).toHaveLength(16);
    expect(report.processes.every((p) => p.net === "Socket")).toBe(true);
  });

  it("ties an Xid in the node's kernel log to the rank that stopped: the hang and its cause", async () => {
    const dir = tempDir();
    const sim = new Scenario(TWO_NODES, { faults: [rankStopsBeforeCollective({ rank: 11, atStep: 4, beforeCollIndex: 2 })] });
    await writeScenario(sim, dir, { durationMs: 30_000, stderr: false });
    const r11 = sim.topo.ranks[11];
    // NCCL's busId `2a000` is 0:2a:00.0; the driver prints the slot as 0000:2a:00.
    const [domain = "", bus = "", devfn = ""] = (ncclBusIdToPci(r11?.dev.busId ?? "") ?? "").split(":");
    const slot = `${domain.padStart(4, "0")}:${bus}:${devfn.slice(0, 2)}`;
    // journalctl -k of node-b, as `journalctl -k > dmesg-node-b.txt` saves it (the line's form: kmsg/13 and 08).
    writeFileSync(
      join(dir, "dmesg-node-b.txt"),
      [
        "Nov 24 02:47:01 node-b kernel: nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping further processing",
        `Nov 24 02:47:03 node-b kernel: NVRM: Xid (PCI:${slot}): 79, pid=${r11?.pid ?? 0}, name=python, GPU has fallen off the bus.`,
      ].join("\n") + "\n",
    );
    const report = JSON.parse((await runAgent(["analyze", "--json", dir])).stdout) as Report;
    expect(report.findings.filter((f) => f.kind === "rank_behind").map((f) => f.ranks)).toContainEqual([11]);
    const xid = report.findings.find((f) => f.kind === "gpu_xid");
    expect(xid).toMatchObject({
      severity: "critical",
      code: 79,
      action: "reboot_node",
      host: "node-b",
      ranks: [11],
      processes: [`node-b:${r11?.pid ?? 0}`],
      evidence: [expect.stringMatching(/dmesg-node-b\.txt:2$/)],
    });
    // The verdict first (the rank that stopped), its cause second.
    expect(report.findings.slice(0, 2).map((f) => f.kind)).toEqual(["rank_behind", "gpu_xid"]);
    const text = (await runAgent(["analyze", dir])).stdout;
    expect(text).toMatch(
      /CRITICAL gpu_xid: GPU 0000:[0-9a-f]{2}:00 on node-b reported Xid 79 \(GPU has fallen off the bus; cause: hardware\).* Rank 11 \(node-b:\d+\) runs on this GPU/,
    );
  });

  it("reads a real capture file as given (line numbers count its provenance line)", async () => {
    const r = await runAgent(["analyze", "--json", join(fixturesDir, "nccl/91-hang-coll-rank2-allgather-while-others-allreduce.log")]);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.findings[0]).toMatchObject({ kind: "collective_mismatch", op_count: "28c" });
    expect(report.findings[0]?.evidence[0]).toMatch(/91-hang-coll-rank2-allgather-while-others-allreduce\.log:2$/);
  });

  it("reads NCCL RAS diagnostics pasted into a log (synthetic, from NCCL 2.32.3's format strings): text and --json", async () => {
    const file = join(fixturesDir, "nccl-pasted/57-ras-diag-2.32.3-synthetic-ecc-rank11-env-mismatch-xid94-sxid12028.log");
    const r = await runAgent(["analyze", "--json", file]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    const C = "0x7f3a9c2e5d1b4a60";
    expect(report.findings.map((f) => [f.kind, f.severity, f.event ?? f.code ?? null, f.ranks, f.comm_id])).toEqual([
      ["nccl_diagnostic", "critical", "ecc", [11], C],
      ["gpu_xid", "warning", 94, [], null],
      ["nvswitch_sxid", "warning", 12028, [], null],
      ["nccl_diagnostic", "warning", "nccl_env", [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], C],
      ["nccl_diagnostic", "warning", "incomplete", [], C],
    ]);
    // Line numbers count the file's provenance line.
    expect(report.findings[0]?.evidence).toEqual([`${file}:12`]);
    expect(report.findings[1]).toMatchObject({ host: "gpu-node-04", code: 94, count: 1, action: "restart_job" });
    expect(report.findings[2]).toMatchObject({ host: "gpu-node-04", code: 12028, count: 4 });
    expect(report.findings[4]).toMatchObject({ count: 1, evidence: [`${file}:32`, `${file}:33`] });
    const text = (await runAgent(["analyze", file])).stdout.split("\n");
    expect(text[2]).toBe(
      `VERDICT: NCCL RAS diagnostics: the GPU memory of rank 11 of communicator ${C} has uncorrected ECC errors (worst count 1). Also: warning gpu_xid (below).`,
    );
    expect(text[4]).toBe(
      `  CRITICAL nccl_diagnostic: NCCL RAS diagnostics: the GPU memory of rank 11 of communicator ${C} has uncorrected ECC errors (worst count 1). ` +
        "Such a GPU can return wrong data or crash the job: drain the node, reset the GPU and check nvidia-smi -q -d ECC.",
    );
    expect(text).toContain(`      evidence: ${file}:12`);
    // The diagnostics' other findings below it; the kernel's Xid and SXid an incident of their own.
    expect(text[6]).toBe("      with it (2):");
    expect(text[7]).toMatch(/^ {8}WARNING nccl_diagnostic: NCCL RAS diagnostics: NCCL_IB_HCA is not the same on all 16 ranks/);
    expect(text[12]).toMatch(/^ {2}WARNING gpu_xid: NCCL RAS diagnostics: the kernel log of gpu-node-04 reported Xid 94 once\. /);
    expect(text[15]).toMatch(
      /^ {8}WARNING nvswitch_sxid: NCCL RAS diagnostics: the kernel log of gpu-node-04 reported NVSwitch SXid 12028 \(Non-fatal, link\(s\) \{32,33\}\) 4 times\. /,
    );
    expect(text[7]).toContain(
      `WARNING nccl_diagnostic: NCCL RAS diagnostics: NCCL_IB_HCA is not the same on all 16 ranks of communicator ${C}: NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 on ranks 0-7, unset on ranks 8-15.`,
    );
    expect(text[9]).toContain(`WARNING nccl_diagnostic: NCCL RAS diagnostics gathered only 15 of 16 ranks of communicator ${C} (GPU inventory, ECC)`);
  });

  it("reads the logs of this node with a RAS JSON report (ncclras -f json) naming a rank on another node", async () => {
    const dir = tempDir();
    const sim = new Scenario(TWO_NODES, {});
    await writeScenario(sim, dir, { durationMs: 10_000, stderr: false });
    const ranks = Array.from({ length: 16 }, (_, r) => ({
      rank: r,
      host: r < 8 ? "10.0.0.7" : "10.0.0.8",
      pid: 5100 + r,
      cuda: r % 8,
      counts: { AllReduce: r === 13 ? 9 : 10 },
    }));
    // Saved by an editor that adds a byte-order mark.
    writeFileSync(join(dir, "ras.json"), `\ufeff${rasJson([{ hash: 0x77aa00bb11cc22ddn, size: 16, ranks }])}`);
    writeFileSync(join(dir, "other.json"), '{"job": "llm-64", "step": 1200}\n'); // JSON, but no RAS report: skipped with a word
    const r = await runAgent(["analyze", "--json", dir]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`ringwatch: analyze: skipped ${join(dir, "other.json")}: JSON, not a RAS report\n`);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.processes).toHaveLength(16);
    const ras = report.findings.filter((f) => f.evidence.some((e) => e.includes("ras.json:")));
    expect(ras.map((f) => [f.kind, f.ranks, f.processes, f.comm_id, f.seq])).toEqual([["rank_behind", [13], ["10.0.0.8:5113"], "0x77aa00bb11cc22dd", 10]]);
  });

  it("exit 2 with one line when nothing can be read; 0 with a warning when some can", async () => {
    const none = await runAgent(["analyze", "/nonexistent/a.log"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toBe("ringwatch: analyze: cannot read /nonexistent/a.log: ENOENT\nringwatch: analyze: none of the inputs could be read\n");
    const empty = await runAgent(["analyze"]);
    expect(empty.code).toBe(2);
    const bad = await runAgent(["analyze", "--bogus", "x"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    const dir = tempDir();
    writeFileSync(join(dir, "binary.log"), Buffer.from([0, 255, 10, 1, 2, 3, 0xc3, 0x28, 10]));
    const some = await runAgent(["analyze", join(dir, "binary.log"), "/nonexistent/b.log"]);
    expect(some.code).toBe(0);
    expect(some.stdout).toContain("VERDICT: nothing wrong found");
    expect(some.stderr).toContain("cannot read /nonexistent/b.log");
  });
});
