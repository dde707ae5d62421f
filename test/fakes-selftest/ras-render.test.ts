/**
 * test/fakes/ras/render.mjs against real RAS captures and against what NCCL's writers
 * (src/ras/client_support.cc of 2.24.3, 2.26.2, 2.28.9, 2.29.7, 2.30.7) print for a given job.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { rasFeatures, renderEvent, renderJson, renderText, uniformJob, withMissing, type RasJob } from "../fakes/ras/render.mjs";

const fixtures = resolve(import.meta.dirname, "../fixtures/nccl");
/** A capture without its line 1 (the `# source:` comment). */
const capture = (name: string): string => readFileSync(resolve(fixtures, name), "utf8").split("\n").slice(1).join("\n");

describe("real captures", () => {
  it("97: NCCL 2.26.2, 4 nodes x 8, AllGather 640 vs 641, ranks 12 and 13 listed", () => {
    // Node 1 (ranks 8-15) is 10.137.190.124 as captured; the other nodes' addresses never appear in it.
    const hosts = ["10.137.190.123", "10.137.190.124", "10.137.190.125", "10.137.190.126"];
    const job = uniformJob({
      version: "2.26.2",
      nodes: 4,
      ranksPerNode: 8,
      hash: "0xfa93daea854b060b",
      hostOf: (n) => hosts[n] ?? "",
      pidBase: 323020,
      countsOf: (r) => ({ AllGather: r === 12 || r === 13 ? 641 : 640 }),
    });
    const cap = capture("97-hang-ras-mismatch-allgather-640-vs-641.log");
    expect(cap).toContain("Job summary\n");
    // The capture stops after the last rank line; NCCL then writes the blank line that ends the AllGather block.
    expect(renderText(job)).toBe(`${cap}\n`);
  });

  it("98: NCCL 2.26.2, 32 nodes x 8, all RUNNING and OK, (0.01s); PyTorch output follows in the capture", () => {
    const job = uniformJob({ version: "2.26.2", nodes: 32, ranksPerNode: 8, cudaRuntime: 12040, gatherSeconds: 0.01, counts: { AllReduce: 2398578 } });
    const out = renderText(job);
    const cap = capture("98-hang-ras-ok-vs-pytorch-watchdog-timeout-256rank.log");
    expect(out.endsWith("Warnings\n========\n\n")).toBe(true);
    expect(cap.slice(0, out.length)).toBe(out);
    expect(cap.slice(out.length)).toMatch(/^\[rank118\]/);
  });
});

describe("op-count mismatches", () => {
  it("2.28.9, two ranks off by one in both AllReduce and AllGather (seen on an H100): one block per type, in ncclFunc_t order", () => {
    const job = uniformJob({
      version: "2.28.9",
      nodes: 1,
      ranksPerNode: 2,
      pidBase: 52110,
      countsOf: (r) => (r === 0 ? { AllReduce: 61, AllGather: 13 } : { AllReduce: 60, AllGather: 12 }),
    });
    const out = renderText(job);
    expect(out).toContain("Communicators... (0.000s)\n");
    expect(out).toContain("    0         1         1         2         2         2   RUNNING  MISMATCH\n");
    expect(out.slice(out.indexOf("Warnings\n"))).toBe(
      "Warnings\n========\n\n" +
        "#0-0 (49bbd7790311d5eb) MISMATCH\n" +
        "  Communicator ranks have different AllGather operation counts\n" +
        "  Rank 0 has launched up to operation 13 -- GPU 0 managed by process 52110 on node 10.0.0.1\n" +
        "  Rank 1 has launched up to operation 12 -- GPU 1 managed by process 52111 on node 10.0.0.1\n" +
        "\n" +
        "  Communicator ranks have different AllReduce operation counts\n" +
        "  Rank 0 has launched up to operation 61 -- GPU 0 managed by process 52110 on node 10.0.0.1\n" +
        "  Rank 1 has launched up to operation 60 -- GPU 1 managed by process 52111 on node 10.0.0.1\n" +
        "\n",
    );
  });

  it("2.24.3 keeps one collective operation count per rank, a blank line per communicator, and no 'not launched' wording", () => {
    const job = uniformJob({ version: "2.24.3", nodes: 1, ranksPerNode: 4, countsOf: (r) => (r === 3 ? { AllReduce: 0 } : { AllReduce: 7, Broadcast: 1 }) });
    const out = renderText(job);
    expect(out).toContain("Communicators... (0.00s)\n");
    expect(out.slice(out.indexOf("Warnings\n"))).toBe(
      "Warnings\n========\n\n" +
        "#0-0 (49bbd7790311d5eb) MISMATCH\n" +
        "  Communicator ranks have different collective operation counts\n" +
        "  3 ranks have launched up to operation 8\n" +
        "  Rank 3 has launched up to operation 0 -- GPU 3 managed by process 4003 on node 10.0.0.1\n" +
        "\n",
    );
    // The same job on 2.26.2: per type, and NCCL's wording for a rank that launched nothing.
    const newer = renderText({ ...job, version: "2.26.2" });
    expect(newer).not.toContain("collective operation counts");
    expect(newer).toContain(
      "  Communicator ranks have different Broadcast operation counts\n  3 ranks have launched up to operation 1\n" +
        "  Rank 3 has not launched any operations -- GPU 3 managed by process 4003 on node 10.0.0.1\n\n" +
        "  Communicator ranks have different AllReduce operation counts\n  3 ranks have launched up to operation 7\n" +
        "  Rank 3 has not launched any operations -- GPU 3 managed by process 4003 on node 10.0.0.1\n\n",
    );
  });

  it("lists a group's ranks only when NCCL's outlier rule says so (10 ranks and 1/4 of the comm; verbose: under half)", () => {
    const job = uniformJob({ version: "2.26.2", nodes: 4, ranksPerNode: 8, countsOf: (r) => ({ AllReduce: r < 20 ? 100 : 99 }) });
    const plain = renderText(job);
    expect(plain).toContain("  20 ranks have launched up to operation 100\n  12 ranks have launched up to operation 99\n\n");
    const verbose = renderText(job, { verbose: true });
    expect(verbose).toContain("  12 ranks have launched up to operation 99\n  Rank 20 -- GPU 4 managed by process 4020 on node 10.0.0.3\n");
    expect(verbose).toContain("  Rank 31 -- GPU 7 managed by process 4031 on node 10.0.0.4\n\n");
    expect(verbose).not.toContain("  Rank 19 --");
    // 11 of 64 is under a quarter, but over RAS_CLIENT_DETAIL_THRESHOLD (10): listed only when verbose.
    const big = uniformJob({ version: "2.26.2", nodes: 8, ranksPerNode: 8, countsOf: (r) => ({ AllReduce: r < 53 ? 100 : 99 }) });
    expect(renderText(big)).toContain("  11 ranks have launched up to operation 99\n\n");
    expect(renderText(big, { verbose: true })).toContain(
      "  11 ranks have launched up to operation 99\n  Rank 53 -- GPU 5 managed by process 4053 on node 10.0.0.7\n",
    );
    // Ten are listed either way.
    const ten = uniformJob({ version: "2.26.2", nodes: 8, ranksPerNode: 8, countsOf: (r) => ({ AllReduce: r < 54 ? 100 : 99 }) });
    expect(renderText(ten)).toContain("  10 ranks have launched up to operation 99\n  Rank 54 -- GPU 6 managed by process 4054 on node 10.0.0.7\n");
  });
});

describe("missing and dead processes, errors, status", () => {
  const base = uniformJob({ version: "2.28.9", nodes: 2, ranksPerNode: 2, counts: { AllReduce: 5 } });

  it("a dead process: DEAD in Errors, the communicator INCOMPLETE with the rank's GPU, process and node", () => {
    const out = renderText(withMissing(base, 0, [3], { dead: true }));
    expect(out).toContain("    0         1         2       1-2         4         3   RUNNING  INCOMPLETE\n");
    expect(out.slice(out.indexOf("Errors\n======"))).toBe(
      "Errors\n======\n\n" +
        "DEAD\n  1 job process is considered dead (unreachable via the RAS network)\n  Process 4003 on node 10.0.0.2 managing GPU 1\n\n" +
        "#0-0 (49bbd7790311d5eb) INCOMPLETE\n  Missing communicator data from 1 rank\n  Rank 3 -- GPU 1 managed by process 4003 on node 10.0.0.2\n\n" +
        "Warnings\n========\n\n",
    );
  });

  it("2.24.3 without missing-rank records: INCOMPLETE names the absent ranks only", () => {
    const out = renderText(withMissing({ ...base, version: "2.24.3" }, 0, [1, 2]));
    expect(out).toContain(
      "INCOMPLETE\n  Missing communicator data from 2 job processes\n  Process 4001 on node 10.0.0.1 managing GPU 1\n  Process 4002 on node 10.0.0.2 managing GPU 0\n\n",
    );
    expect(out).toContain("#0-0 (49bbd7790311d5eb) INCOMPLETE\n  Missing communicator data from 2 ranks\n  The missing ranks: 1,2\n\n");
  });

  it("an asynchronous error and an aborted rank: ERROR in Errors, the status mismatch in Warnings (no blank line after it)", () => {
    const job: RasJob = JSON.parse(JSON.stringify(base)) as RasJob;
    const ranks = job.comms[0]?.ranks ?? [];
    ranks[2] = { ...ranks[2]!, status: { asyncError: 6 } };
    ranks[3] = { ...ranks[3]!, status: { abortFlag: true } };
    const out = renderText(job);
    expect(out).toContain("    0         1         2         2         4         4     ABORT  ERROR,MISMATCH\n");
    expect(out).toContain(
      "#0-0 (49bbd7790311d5eb) ERROR\n  Asynchronous error on 1 rank\n  Rank 2 reported Remote process error -- GPU 0 managed by process 4002 on node 10.0.0.2\n\n",
    );
    expect(
      out.endsWith(
        "#0-0 (49bbd7790311d5eb) MISMATCH\n  Communicator ranks have different status\n  3 ranks have status RUNNING\n  Rank 3 has status ABORT -- GPU 1 managed by process 4003 on node 10.0.0.2\n",
      ),
    ).toBe(true);
  });
});

describe("JSON", () => {
  const job = withMissing(uniformJob({ version: "2.28.9", nodes: 1, ranksPerNode: 2, counts: { AllGather: 3 } }), 0, [1]);

  it("2.28.9 writes a missing rank's nvml_dev without its comma: JSON.parse fails exactly there, and parses once it is inserted", () => {
    const text = renderJson(job);
    const line = '          "nvml_dev": 1\n';
    const at = text.indexOf(line);
    expect(at).toBeGreaterThan(0);
    const next = text.indexOf('"status"', at); // the token after the missing comma
    expect(() => {
      JSON.parse(text);
    }).toThrow(new RegExp(`position ${next}\\b`));
    const fixed = `${text.slice(0, at)}          "nvml_dev": 1,\n${text.slice(at + line.length)}`;
    const parsed = JSON.parse(fixed) as { communicators: { missing_ranks: { rank: number; status: { unresponsive: boolean; considered_dead: boolean } }[] }[] };
    expect(parsed.communicators[0]?.missing_ranks).toEqual([
      { rank: 1, host: "10.0.0.1", pid: 4001, cuda_dev: 1, nvml_dev: 1, status: { unresponsive: true, considered_dead: false } },
    ]);
    // Ranks that answered have their comma in every version.
    expect(text).toContain('          "nvml_dev": 0,\n          "status": {\n            "init_state": 0,');
  });

  it("2.29.7 and 2.30.7 have the comma: the same report parses, and differs from 2.28.9's only there and in the version", () => {
    const t289 = renderJson(job);
    for (const version of ["2.29.7", "2.30.7"]) {
      const t = renderJson({ ...job, version });
      expect((JSON.parse(t) as { communicators_count: number }).communicators_count).toBe(1);
      expect(t).toBe(t289.replace('"nccl_version": "2.28.9"', `"nccl_version": "${version}"`).replace('"nvml_dev": 1\n', '"nvml_dev": 1,\n'));
    }
  });

  it("is NCCL 2.28.7+ only", () => {
    expect(() => renderJson({ ...job, version: "2.26.2" })).toThrow(/2\.28\.7/);
    expect(rasFeatures("2.28.3").json).toBe(false);
    expect(rasFeatures("2.28.7")).toMatchObject({ json: true, jsonMissingCommaBug: true, monitor: false, timeDecimals: 3 });
    expect(rasFeatures("2.29.2")).toMatchObject({ json: true, jsonMissingCommaBug: false, monitor: true });
  });
});

describe("MONITOR events (2.29+)", () => {
  const peer = { host: "10.0.0.2", pid: 4003, cudaDevs: [1] };
  it("text: [time] TYPE: <peer> <details> — with the space NCCL leaves before empty details", () => {
    expect(renderEvent({ type: "PEER_DEAD", peer }, { time: "2026-01-02 03:04:05" })).toBe(
      "[2026-01-02 03:04:05] PEER_DEAD: Process 4003 on node 10.0.0.2 managing GPU 1 \n",
    );
    expect(renderEvent({ type: "PEER_DEAD", addr: { host: "10.0.0.9", port: 28028 } }, { time: "2026-01-02 03:04:05" })).toBe(
      "[2026-01-02 03:04:05] PEER_DEAD: 10.0.0.9<28028> \n",
    );
    expect(renderEvent({ type: "PEER_NEW", peer: { host: "10.0.0.3", pid: 7, cudaDevs: [2, 0], nvmlDevs: [5, 4] } }, { time: "t" })).toBe(
      "[t] PEER_NEW: Process 7 on node 10.0.0.3 managing GPUs 0,2 (NVML 4,5) \n",
    );
  });
  it("json: one multi-line object per event", () => {
    expect(renderEvent({ type: "PEER_NEW", peer: { ...peer, cudaDevs: [0, 1] } }, { format: "json", time: "2026-01-02 03:04:05" })).toBe(
      '{\n  "timestamp": "2026-01-02 03:04:05",\n  "group": "LIFECYCLE",\n  "event": "PEER_NEW",\n  "peer": {\n    "host": "10.0.0.2",\n    "pid": 4003,\n    "cuda_devs": [0,1],\n    "nvml_devs": [0,1]\n  },\n  "details": ""\n}\n',
    );
    expect(renderEvent({ type: "PEER_DEAD", addr: { host: "10.0.0.9", port: 28028 } }, { format: "json", time: "x" })).toBe(
      '{\n  "timestamp": "x",\n  "group": "LIFECYCLE",\n  "event": "PEER_DEAD",\n  "peer": {\n    "addr": "10.0.0.9<28028>"\n  },\n  "details": ""\n}\n',
    );
  });
});
