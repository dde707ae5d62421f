/**
 * The import rules of ringwatch, checked by `npm run lint:deps` (part of `npm test`) with
 * dependency-cruiser. docs/development.md explains the layout they protect.
 *
 *   agent/ ──> collectors/          the binary may use collectors; collectors never use the binary
 *   collectors/<name>/ -/-> collectors/<other>/   a collector uses only its own folder and the
 *                                   shared parts (collector.ts, module.ts, exec.ts, publish.ts,
 *                                   pci.ts, settings/, follow/)
 *   collectors/nccl/: parse <- state <- detect <- findings, ras <- findings, flight-recorder <-
 *                     findings, ingest over parse/state, inspector on its own; the top-level
 *                     files (collector, metrics,
 *                     ras-watch, ...) use them
 *   no import cycles anywhere; only collectors/exec.ts spawns processes
 */
const NCCL = "^collectors/nccl/";

/** nccl sub-folders and the other nccl sub-folders each may import. */
const NCCL_LAYERS = {
  parse: [],
  ras: [],
  "flight-recorder": [],
  state: ["parse"],
  detect: ["state", "parse"],
  ingest: ["parse", "state"],
  findings: ["parse", "state", "detect", "ras", "flight-recorder"],
  inspector: [],
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
      comment: "A collector's folder imports only itself and the shared parts of collectors/; what one collector needs of another comes in through an interface it declares.",
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
    ...Object.entries(NCCL_LAYERS).map(([layer, allowed]) => ({
      name: `nccl-${layer}-layer`,
      comment: `collectors/nccl/${layer}/ may import only ${allowed.length ? allowed.map((a) => `${a}/`).join(", ") : "itself"} of the nccl collector, never its top-level files.`,
      severity: "error",
      from: { path: `${NCCL}${layer}/` },
      to: { path: NCCL, pathNot: [`${NCCL}(${[layer, ...allowed].join("|")})/`] },
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
    exclude: { path: "^(dist|\\.bench|node_modules|collectors/nccl/ingest/wasm)/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"], extensions: [".ts", ".js", ".mjs", ".cjs", ".json"] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
