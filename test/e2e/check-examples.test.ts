/**
 * The examples of docs/check.md, run: deploy/slurm/ringwatch-check.sh as Slurm's Prolog and Epilog
 * (SLURM_SCRIPT_CONTEXT) with a fake `scontrol`
 * on PATH that records its arguments, deploy/slurm/ringwatch.nhc in bash with a stand-in for NHC's
 * `die`, and the containers of deploy/kubernetes-check/ checked against Kubernetes' schemas and
 * their args run by the built binary. Every run is the real `ringwatch check` on the fake tools
 * and a sysfs tree (check-node.ts).
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, afterAll } from "vitest";
import { parse as parseYaml } from "yaml";
import { Job } from "kubernetes-models/batch/v1/Job";
import { Pod } from "kubernetes-models/v1/Pod";
import type { IContainer } from "kubernetes-models/v1/Container";
import type { IPodSpec } from "kubernetes-models/v1/PodSpec";
import { agentMain, repoRoot } from "../helpers/agent-process.js";
import { runProcess, type ProcessResult } from "../helpers/run-process.js";
import { check, lineOf, makeNode, removeNodes, type CheckNode } from "./check-node.js";
import { fakeEnv, tempDir } from "./env.js";

afterAll(removeNodes);

const slurm = (f: string): string => join(repoRoot, "deploy/slurm", f);

interface Bench {
  env: NodeJS.ProcessEnv;
  /** The argument lists scontrol was called with, one per call. */
  scontrolCalls(): string[][];
}

/** A PATH with `ringwatch` (the built binary) and a fake `scontrol`, a node, and a file of expectations. */
function bench(n: CheckNode, expectations: string, extra: NodeJS.ProcessEnv = {}): Bench {
  const dir = tempDir("rw-slurm-");
  const ringwatch = join(dir, "ringwatch");
  writeFileSync(ringwatch, `#!/bin/sh\nexec "${process.execPath}" "${agentMain}" "$@"\n`);
  const log = join(dir, "scontrol.log");
  writeFileSync(join(dir, "scontrol"), `#!/bin/sh\nprintf '%s\\n' "$@" >> "${log}"\necho '--' >> "${log}"\nexit "\${SCONTROL_EXIT:-0}"\n`);
  chmodSync(ringwatch, 0o755);
  chmodSync(join(dir, "scontrol"), 0o755);
  const file = join(dir, "check.yaml");
  writeFileSync(file, expectations);
  const env = fakeEnv({
    PATH: `${dir}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    RINGWATCH: ringwatch,
    RINGWATCH_CHECK_FILE: file,
    RINGWATCH_CHECK_ARGS: n.flags.join(" "),
    SLURMD_NODENAME: "gpu-node-07",
    ...extra,
  });
  return {
    env: { ...process.env, ...env },
    scontrolCalls: () =>
      existsSync(log)
        ? readFileSync(log, "utf8")
            .split("--\n")
            .filter((c) => c !== "")
            .map((c) => c.split("\n").filter((a) => a !== ""))
        : [],
  };
}

/** deploy/slurm/ringwatch-check.sh as slurmd runs it: its context in SLURM_SCRIPT_CONTEXT, no argument. */
const run = (stage: "prolog" | "epilog", b: Bench): Promise<ProcessResult> =>
  runProcess("/bin/sh", [slurm("ringwatch-check.sh")], { env: { ...b.env, SLURM_SCRIPT_CONTEXT: `${stage}_slurmd` }, timeoutMs: 60_000, what: stage });

const drain = (reason: string): string[] => ["update", "nodename=gpu-node-07", "state=drain", `reason=${reason}`];

describe("deploy/slurm/ringwatch-check.sh as the Epilog", () => {
  it("drains an unhealthy node with the failing check as the reason, and exits 0", async () => {
    const b = bench(makeNode(), "gpu:\n  count: 8\n");
    const r = await run("epilog", b);
    expect(r.code).toBe(0);
    expect(b.scontrolCalls()).toEqual([drain("ringwatch: gpu.count: 1 GPU, expected 8")]);
    // The check's lines go to the epilog's stderr, for slurmd's log.
    expect(r.stderr).toContain("FAIL  gpu.count      1 GPU, expected 8");
  });

  it("names how many more checks failed", async () => {
    const b = bench(makeNode("procfs/gdr-no-peermem"), "gpu.count: 8\ngdr.peermem: true\n");
    expect((await run("epilog", b)).code).toBe(0);
    expect(b.scontrolCalls()).toEqual([drain("ringwatch: gpu.count: 1 GPU, expected 8 (+1 more)")]);
  });

  it("leaves a healthy node alone", async () => {
    const b = bench(makeNode(), "gpu:\n  count: 1\nib.rate: 400\nib.devices: ['mlx5_?']\n");
    const r = await run("epilog", b);
    expect(r.code).toBe(0);
    expect(b.scontrolCalls()).toEqual([]);
    expect(r.stderr).toBe("");
  });

  it("drains a node that could not be checked, saying why", async () => {
    const n = makeNode();
    const missing = join(tempDir(), "nvidia-smi");
    const b = bench(n, "gpu.count: 8\n", { RINGWATCH_CHECK_ARGS: [...n.flags, `--collector.gpu.nvidia-smi=${missing}`].join(" ") });
    expect((await run("epilog", b)).code).toBe(0);
    expect(b.scontrolCalls()).toEqual([drain(`ringwatch: gpu.count: could not check: ${missing} not found or not executable`)]);
  });

  it("drains with the check's own line when the file of expectations is missing", async () => {
    const b = bench(makeNode(), "", { RINGWATCH_CHECK_FILE: "/nonexistent/check.yaml" });
    expect((await run("epilog", b)).code).toBe(0);
    expect(b.scontrolCalls()).toEqual([drain("ringwatch: check: cannot read check file /nonexistent/check.yaml: ENOENT")]);
  });

  it("exits 1 when scontrol cannot drain the node, so that Slurm drains it", async () => {
    const b = bench(makeNode(), "gpu.count: 8\n", { SCONTROL_EXIT: "1" });
    const r = await run("epilog", b);
    expect(r.code).toBe(1);
    expect(b.scontrolCalls()).toHaveLength(1);
    expect(r.stderr).toContain("ringwatch epilog: scontrol could not drain gpu-node-07 (ringwatch: gpu.count: 1 GPU, expected 8)");
  });
});

describe("deploy/slurm/ringwatch-check.sh as the Prolog", () => {
  it("fails an unhealthy node (exit 1: Slurm drains it and requeues the job) after setting the reason", async () => {
    const b = bench(makeNode(), "ib:\n  rate: 400\n");
    const r = await run("prolog", b);
    expect(r.code).toBe(1);
    expect(b.scontrolCalls()).toEqual([drain("ringwatch: ib.port.rate: mlx5_bond_0/1 at 200 Gb/s, expected 400")]);
  });

  it("lets the job start on a healthy node", async () => {
    const b = bench(makeNode(), "gpu.count: 1\n");
    const r = await run("prolog", b);
    expect(r.code).toBe(0);
    expect(b.scontrolCalls()).toEqual([]);
  });
});

describe("deploy/slurm/ringwatch-check.sh outside Slurm", () => {
  it("takes its stage from its first argument, and refuses to guess without one (exit 2, one line)", async () => {
    const b = bench(makeNode(), "gpu.count: 8\n");
    const asEpilog = await runProcess("/bin/sh", [slurm("ringwatch-check.sh"), "epilog"], { env: b.env, timeoutMs: 60_000, what: "epilog" });
    expect(asEpilog.code).toBe(0);
    expect(b.scontrolCalls()).toEqual([drain("ringwatch: gpu.count: 1 GPU, expected 8")]);
    const none = await runProcess("/bin/sh", [slurm("ringwatch-check.sh")], { env: b.env, timeoutMs: 60_000, what: "no stage" });
    expect(none.code).toBe(2);
    expect(none.stderr.trim().split("\n")).toEqual([
      "ringwatch-check.sh: run as a Slurm Prolog or Epilog (SLURM_SCRIPT_CONTEXT), or with prolog or epilog as argument",
    ]);
    expect(b.scontrolCalls().length).toBe(1);
  });
});

describe("deploy/slurm/ringwatch.nhc", () => {
  /** check_ringwatch in bash, as NHC runs it, with `die` recording its arguments. */
  async function nhc(n: CheckNode, args: string[]): Promise<{ code: number | null; die: string[] }> {
    const dir = tempDir("rw-nhc-");
    const log = join(dir, "die.log");
    const script = `die() { printf '%s\\n' "$@" > "${log}"; }\n. "${slurm("ringwatch.nhc")}"\ncheck_ringwatch "$@"\n`;
    const ringwatch = join(dir, "ringwatch");
    writeFileSync(ringwatch, `#!/bin/sh\nexec "${process.execPath}" "${agentMain}" "$@"\n`);
    chmodSync(ringwatch, 0o755);
    const r = await runProcess("bash", ["-c", script, "nhc", ...n.flags, ...args], {
      env: { ...process.env, ...fakeEnv({ RINGWATCH: ringwatch }) },
      timeoutMs: 60_000,
    });
    return {
      code: r.code,
      die: existsSync(log)
        ? readFileSync(log, "utf8")
            .split("\n")
            .filter((l) => l !== "")
        : [],
    };
  }

  it("calls die with the failing check, and returns 1", async () => {
    expect(await nhc(makeNode(), ["--check.gpu.count=8"])).toEqual({ code: 1, die: ["1", "ringwatch: gpu.count: 1 GPU, expected 8"] });
  });

  it("returns 0 without dying on a healthy node", async () => {
    expect(await nhc(makeNode(), ["--check.gpu.count=1"])).toEqual({ code: 0, die: [] });
  });
});

describe("deploy/kubernetes-check", () => {
  const dir = join(repoRoot, "deploy/kubernetes-check");
  const examples: Array<[string, (o: never) => { validate(): void }, (o: Record<string, unknown>) => IPodSpec]> = [
    ["preflight-job.yaml", (o) => new Job(o), (o) => (o as { spec: { template: { spec: IPodSpec } } }).spec.template.spec],
    ["init-container.yaml", (o) => new Pod(o), (o) => (o as { spec: IPodSpec }).spec],
  ];

  it.each(examples)("%s: valid against Kubernetes' schema; its check container's args, run on a node, reach every check", async (file, model, podSpec) => {
    const obj = parseYaml(readFileSync(join(dir, file), "utf8")) as Record<string, unknown>;
    expect(() => model(obj as never).validate()).not.toThrow();
    const spec = podSpec(obj);
    const container = [...(spec.initContainers ?? []), ...spec.containers].find((c: IContainer) => c.args?.[0] === "check");
    expect(container?.image).toBe("ringwatch");
    expect(container?.securityContext?.readOnlyRootFilesystem).toBe(true);
    // The host's sysfs and procfs where the args say.
    const mounts = new Map((container?.volumeMounts ?? []).map((m) => [m.mountPath, m.name]));
    expect(mounts.get("/host/sys")).toBe("sys");
    expect(mounts.get("/host/proc")).toBe("proc");
    expect(spec.volumes?.find((v) => v.name === "sys")?.hostPath?.path).toBe("/sys");
    // Its args as written, then this node's paths and tools (later flags win): the 8 GPUs expected fail on the fake's one.
    const args = container?.args ?? [];
    expect(args).toContain("--path.sysfs=/host/sys");
    const r = await check([...args.slice(1), ...makeNode().flags]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(1);
    expect(lineOf(r.stdout, "gpu.count")).toMatchObject({ status: "FAIL", message: "1 GPU, expected 8" });
    expect(lineOf(r.stdout, "ib.port.count")?.status).toBe("ok");
    expect(lineOf(r.stdout, "gdr.peermem")?.status).toBe("ok");
  });
});
