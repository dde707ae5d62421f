/**
 * The agent's public surface, printed as text so that two builds can be diffed: `--help`, the
 * one-line errors of bad settings, every metric family (HELP, TYPE) and every series (name and
 * labels; values only where they do not depend on time) that `--once` and a running agent expose
 * on the bench node, and `ringwatch analyze` (text and --json) on every NCCL capture, one by one
 * and all together. It runs the built binary (dist/agent/main.js), the way users do.
 *
 *   npm run build && npm run build:bench && node .bench/bench/surface.js > surface.txt
 * (RINGWATCH_SHARED: the shared/ folder whose device captures it also analyzes; default ../shared)
 *
 * Used to show that a restructuring changed no behaviour: run it on both builds and diff.
 */
import { copyFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeBenchNode, type BenchNode } from "./node-fixture.js";
import { startBenchAgent } from "./agent-proc.js";
import { runProcess, type ProcessResult } from "../test/helpers/run-process.js";
import { agentMain, fakesDir, fixturesDir, repoRoot } from "./paths.js";

type Run = ProcessResult;

function run(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000): Promise<Run> {
  return runProcess(process.execPath, [agentMain, ...args], { env: { ...process.env, ...env }, timeoutMs, what: `ringwatch ${args.join(" ")}` });
}

/** Values of these series depend on the time of the run or the machine, not on the code. */
const TIME_DEPENDENT = /(timestamp|seconds|_bytes|^process_|^nodejs_|_age|_lag|duration|silent)/;

function series(exposition: string, root: string, keepValues: boolean): string[] {
  const out = new Set<string>();
  for (const raw of exposition.split("\n")) {
    if (raw === "") continue;
    const line = raw.split(root).join("<root>").split(repoRoot).join("<repo>");
    if (line.startsWith("#")) {
      out.add(line);
      continue;
    }
    const sp = line.lastIndexOf(" ");
    const name = line.slice(0, sp);
    const metric = name.split("{")[0] ?? "";
    // Which kinds of garbage collection ran, and which requests were in flight at the scrape, depend on the run.
    if (metric.startsWith("nodejs_gc_duration_seconds") || metric.startsWith("nodejs_active_")) continue;
    out.add(keepValues && !TIME_DEPENDENT.test(metric) ? line : `${name} <v>`);
  }
  return [...out].sort();
}

function section(title: string, body: string): void {
  process.stdout.write(`\n===== ${title}\n${body}${body.endsWith("\n") ? "" : "\n"}`);
}

function showRun(r: Run, root?: string): string {
  const norm = (s: string): string =>
    (root ? s.split(root).join("<root>") : s)
      .split(repoRoot)
      .join("<repo>")
      .replace(/"time":"[^"]*"/g, '"time":"<t>"');
  const stdout = r.stdout.startsWith("# HELP") ? series(r.stdout, root ?? "\0", true).join("\n") : norm(r.stdout);
  return `exit ${r.code}\n--- stdout\n${stdout}\n--- stderr\n${norm(r.stderr)}`;
}

async function settings(node: BenchNode): Promise<void> {
  section("--help", showRun(await run(["--help"])));
  const bad: string[][] = [
    ["--nope"],
    ["stray"],
    ["--collector.gpu.interval=1500ms"],
    ["--collector.gpu.dmon-groups=xyz"],
    ["--collector.mtu.interval=7s"],
    ["--collector.interval=7s"],
    ["--collector.nccl.ras-addr=nohost"],
    [
      "--no-collector.nccl.ras",
      "--collector.nccl.ras-addr=nohost",
      "--once",
      "--no-collector.gpu",
      "--no-collector.infiniband",
      "--no-collector.gdr",
      "--no-collector.mtu",
      `--collector.nccl.path=${node.ncclDir}`,
    ],
    ["--collector.nccl.max-communicators=0"],
    ["--collector.nccl.path="],
    ["--collector.nccl.polling=sometimes"],
    ["--collector.infiniband.source=foo"],
    ["--collector.mtu.device-include=("],
    ["--collector.timeout=-1s"],
    ["--log.level=loud"],
    ["--web.listen-address=nowhere"],
    ["--web.listen-address=:70000"],
    ["--web.telemetry-path=metrics"],
    ["--once=maybe"],
    ["--no-once=true"],
    ["--collector.gpu.nvidia-smi"],
    ["--config.file=/nonexistent/ringwatch.yml"],
  ];
  // Each after --once with every collector off, so that a value taken as valid ends at once.
  const quiet = ["--once", "--no-collector.gpu", "--no-collector.infiniband", "--no-collector.gdr", "--no-collector.mtu", "--no-collector.nccl"];
  for (const args of bad) section(`ringwatch ${args.join(" ").split(node.root).join("<root>")}`, showRun(await run([...quiet, ...args]), node.root));
  const envBad: NodeJS.ProcessEnv[] = [
    { RINGWATCH_COLLECTOR_GPU_INTERVAL: "2.5s" },
    { RINGWATCH_COLLECTOR_NCCL_RAS_INTERVAL: "0s" },
    { RINGWATCH_LOG_LEVEL: "trace" },
  ];
  for (const env of envBad)
    section(
      `env ${JSON.stringify(env)} ringwatch --once (all off)`,
      showRun(await run(["--once", "--no-collector.gpu", "--no-collector.infiniband", "--no-collector.gdr", "--no-collector.mtu", "--no-collector.nccl"], env)),
    );
  const yamls: Record<string, string> = {
    "unknown-key": "collector:\n  nope: 1\n",
    "not-a-mapping": "- a\n- b\n",
    "bad-yaml": "a: [\n",
    "list-value": "collector.mtu.ip: [a, b]\n",
    "nested-ok":
      "collector:\n  gpu:\n    enabled: false\n  infiniband: {enabled: false}\n  gdr: {enabled: false}\n  mtu: {enabled: false}\n  nccl:\n    enabled: true\n    path: [a, b]\n    hang-threshold: 5m\nonce: true\n",
  };
  for (const [name, text] of Object.entries(yamls)) {
    const file = join(node.root, `${name}.yml`);
    writeFileSync(file, text);
    section(`ringwatch --config.file=${name}.yml`, showRun(await run(["--once", `--config.file=${file}`], {}, 20_000), node.root));
  }
}

async function once(node: BenchNode, title: string, extra: string[], env: NodeJS.ProcessEnv = {}): Promise<void> {
  const r = await run(["--once", ...node.agentFlags({ pollInterval: "15s" }), ...extra], { ...node.env, ...env });
  section(`--once ${title}: exit ${r.code}`, series(r.stdout, node.root, true).join("\n"));
}

async function daemon(node: BenchNode): Promise<void> {
  const agent = await startBenchAgent(node.agentFlags({ pollInterval: "1s" }), node.env);
  try {
    // Two poll rounds and a few dmon samples.
    await new Promise((r) => setTimeout(r, 3500));
    const text = await (await fetch(`${agent.url}/metrics`)).text();
    section("running agent: /metrics families and series", series(text, node.root, false).join("\n"));
    const root = await fetch(`${agent.url}/`);
    section("running agent: GET /", `${root.status}\n${(await root.text()).split(node.root).join("<root>")}`);
  } finally {
    await agent.stop();
  }
}

/** SIGHUP after the YAML file changed: which settings the agent applies at once, which collectors it reconfigures, which wait for a restart. */
async function reload(node: BenchNode): Promise<void> {
  const file = join(node.root, "reload.yml");
  const first = ["collector.gdr.lsmod: /bin/lsmod-a", "collector.nccl.hang-threshold: 2m", "collector.nccl.ras-interval: 1m"];
  writeFileSync(file, first.join("\n") + "\n");
  const agent = await startBenchAgent([...node.agentFlags({ pollInterval: "15s" }), `--config.file=${file}`], node.env);
  const logsAfter = async (from: number, changes: string[]): Promise<string> => {
    writeFileSync(file, changes.join("\n") + "\n");
    agent.child.kill("SIGHUP");
    const deadline = Date.now() + 10_000;
    while (
      Date.now() < deadline &&
      !agent
        .logs()
        .slice(from)
        .some((l) => l.includes('"configuration reloaded"') || l.includes("reload failed"))
    )
      await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    return agent
      .logs()
      .slice(from)
      .filter((l) => /reload|restart|settings|needs/.test(l))
      .map((l) =>
        l
          .split(node.root)
          .join("<root>")
          .split(repoRoot)
          .join("<repo>")
          .replace(/"time":"[^"]*"/g, '"time":"<t>"'),
      )
      .join("\n");
  };
  try {
    await new Promise((r) => setTimeout(r, 1000));
    const steps: string[][] = [
      [
        "log.level: debug",
        "collector.gdr.lsmod: /bin/lsmod-b",
        "collector.timeout: 20s",
        "collector.gpu.dmon-groups: pu",
        "collector.gpu.interval: 2s",
        "collector.infiniband.source: tools",
        "collector.infiniband.interval: 30s",
        "collector.mtu.device-exclude: '^veth'",
        "collector.mtu.interval: 1m",
        "collector.nccl.hang-threshold: 3m",
        "collector.nccl.max-communicators: 64",
        "collector.nccl.ras-interval: 90s",
        "collector.nccl.polling: 'true'",
        "path.procfs: /proc",
        "web.telemetry-path: /m",
        "collector.gdr: false",
      ],
      ["collector.gdr.lsmod: /bin/lsmod-a", "collector.nccl.hang-threshold: 120s", "collector.nccl.ras: false", "collector.mtu.interval: 1m"],
      ["collector.nccl.max-communicators: 0"],
      ["collector.nope: 1"],
      ["collector.nccl.ras-addr: '[::1]:28028'", "collector.infiniband.device-include: '^mlx5_[0-3]$'"],
    ];
    for (const [i, step] of steps.entries()) section(`SIGHUP ${i + 1}: ${step.join("; ")}`, await logsAfter(agent.logs().length, step));
  } finally {
    await agent.stop();
  }
}

async function analyze(): Promise<void> {
  const shared = process.env.RINGWATCH_SHARED ?? join(repoRoot, "../shared");
  const dirs = [join(fixturesDir, "nccl"), join(shared, "fixtures/device/h100-2026-11-24/nccl")];
  const files: string[] = [];
  for (const d of dirs) {
    let names: string[];
    try {
      names = readdirSync(d).sort();
    } catch {
      continue;
    }
    for (const n of names) if (n.endsWith(".log")) files.push(join(d, n));
  }
  for (const f of files) {
    const rel = f.split(repoRoot).join("<repo>");
    section(`analyze ${rel}`, showRun(await run(["analyze", f])));
    section(`analyze --json ${rel}`, showRun(await run(["analyze", "--json", f])));
  }
  section("analyze --json (every capture at once)", showRun(await run(["analyze", "--json", ...files])));
  section("analyze (no input)", showRun(await run(["analyze"])));
  section("analyze --bogus", showRun(await run(["analyze", "--bogus", files[0] ?? ""])));
}

async function main(): Promise<void> {
  const node = makeBenchNode();
  try {
    for (const name of readdirSync(join(fixturesDir, "nccl"))) {
      if (name.endsWith(".log")) copyFileSync(join(fixturesDir, "nccl", name), join(node.ncclDir, name));
    }
    await settings(node);
    await once(node, "bench node, NCCL captures followed", []);
    await once(
      node,
      "bench node, InfiniBand from ibstat/perfquery",
      [
        "--collector.infiniband.source=tools",
        `--collector.infiniband.ibstat=${join(fakesDir, "ibstat")}`,
        `--collector.infiniband.perfquery=${join(fakesDir, "perfquery")}`,
      ],
      {
        FAKE_IBSTAT: join(fixturesDir, "tools/ibstat/04-gpud-h100-9ca-8ib400-1eth200-spaces.txt"),
        FAKE_PERFQUERY: join(fixturesDir, "tools/perfquery/01-infiniband_exporter-perfquery-lx-0x506b4b03005c2740.txt"),
      },
    );
    await daemon(node);
    await reload(node);
    await analyze();
  } finally {
    node.remove();
  }
}

await main();
