/**
 * The import rules of ringwatch, checked by `npm run lint:deps` (part of `npm test`) with
 * dependency-cruiser. docs/development.md explains the layout they protect.
 *
 *   agent/ ──> collectors/          the binary may use collectors; collectors never use the binary
 *   collectors/<name>/ -/-> collectors/<other>/   a collector uses only its own folder and the
 *                                   shared parts (collector.ts, module.ts, exec.ts, publish.ts,
 *                                   pci.ts, settings/, follow/)
 *   collectors/nccl/: one folder per evidence source (logs/, ras/, flight-recorder/, inspector/);
 *                     no source imports another. verdict/ (what every source's verdicts share)
 *                     imports no source; the top-level files (collector, metrics, module, ...) and
 *                     analyze/ wire the sources together. In logs/, parse <- state <- detect <- findings.
 *   no import cycles anywhere; only collectors/exec.ts spawns processes
 */
const NCCL = "^collectors/nccl/";

/** The nccl collector's evidence sources: each imports only itself and verdict/. */
const NCCL_SOURCES = ["logs", "ras", "flight-recorder", "inspector", "stacks"];

/** Layers inside logs/ and what else of logs/ each may import (logs/pytorch/ is PyTorch's dialect of the same lines). */
const LOGS_LAYERS = {
  parse: ["pytorch"],
  state: ["parse", "pytorch"],
  detect: ["state", "parse"],
  ingest: ["parse", "state"],
};

module.exports = {
  forbidden: [
    {
      name: "collectors-not-to-agent",
      comment: "collectors/ is the library the agent binary is built from: it never imports agent/.",
      severity: "error",
      from: { path: "^collectors/" },
      to: { path: "^agent/" },
    },
    {
      name: "no-circular",
      comment: "No import cycles, type-only imports included.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "collector-not-to-other-collector",
      comment:
        "A collector's folder imports only itself and the shared parts of collectors/; what one collector needs of another comes in through an interface it declares.",
      severity: "error",
      from: { path: "^collectors/([^/]+)/", pathNot: "^collectors/(settings|follow)/" },
      to: { path: "^collectors/[^/]+/", pathNot: ["^collectors/$1/", "^collectors/(settings|follow)/"] },
    },
    {
      name: "shared-collector-parts-not-to-collectors",
      comment: "The shared parts of collectors/ know no collector (collectors/index.ts, the list of them, excepted).",
      severity: "error",
      from: { path: "^collectors/(settings/|follow/|[^/]+\\.ts$)", pathNot: "^collectors/index\\.ts$" },
      to: { path: "^collectors/[^/]+/", pathNot: "^collectors/(settings|follow)/" },
    },
    ...NCCL_SOURCES.map((source) => ({
      name: `nccl-source-${source}`,
      comment: `collectors/nccl/${source}/ is one evidence source: it imports only itself and verdict/ of the nccl collector, never another source nor the top-level files.`,
      severity: "error",
      from: { path: `${NCCL}${source}/` },
      to: { path: NCCL, pathNot: `${NCCL}(${source}|verdict)/` },
    })),
    {
      name: "nccl-verdict-imports-no-source",
      comment: "collectors/nccl/verdict/ is what the sources share (the verdict shape, its words, GPU evidence): it imports no source.",
      severity: "error",
      from: { path: `${NCCL}verdict/` },
      to: { path: NCCL, pathNot: `${NCCL}verdict/` },
    },
    {
      name: "nccl-analyze-not-to-live-wiring",
      comment: "collectors/nccl/analyze/ (ringwatch analyze) feeds the same sources as the live collector, never the live collector's own files.",
      severity: "error",
      from: { path: `${NCCL}analyze/` },
      to: { path: `${NCCL}[^/]+\\.ts$` },
    },
    ...Object.entries(LOGS_LAYERS).map(([layer, allowed]) => ({
      name: `nccl-logs-${layer}-layer`,
      comment: `collectors/nccl/logs/${layer}/ may import only ${allowed.map((a) => `logs/${a}/`).join(", ")} and verdict/ of the nccl collector.`,
      severity: "error",
      from: { path: `${NCCL}logs/${layer}/` },
      to: { path: NCCL, pathNot: `${NCCL}(logs/(${[layer, ...allowed].join("|")})|verdict)/` },
    })),
    {
      name: "spawn-only-in-exec",
      comment: "Processes are started in collectors/exec.ts only (argument arrays, time limits, no shell).",
      severity: "error",
      from: { path: "^(agent|collectors)/", pathNot: "^collectors/exec\\.ts$" },
      to: { path: "^(child_process|execa)$", dependencyTypes: ["core", "npm"] },
    },
    {
      name: "production-not-to-tests",
      comment: "The shipped code never imports tests, benchmarks or scripts.",
      severity: "error",
      from: { path: "^(agent|collectors)/" },
      to: { path: "^(test|bench|scripts)/" },
    },
    {
      name: "production-not-to-dev-deps",
      comment: "The shipped code uses only dependencies the package installs (package.json dependencies).",
      severity: "error",
      from: { path: "^(agent|collectors)/" },
      to: { dependencyTypes: ["npm-dev"] },
    },
    {
      name: "not-to-unresolvable",
      comment: "Every import resolves.",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(dist|\\.bench|node_modules)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".json"],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
