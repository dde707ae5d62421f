import { defineConfig } from "vitest/config";

/**
 * The suites (docs/development.md, "Tests"). `npm test` runs them all; `npm run test:unit` runs
 * only `unit`, in seconds: in-process tests of parsers, state, verdicts, findings, configuration
 * and metrics. A test that starts processes, opens sockets or follows real files on real timers
 * is named *.integration.test.ts and runs in `integration`, beside the code it tests.
 */
const INTEGRATION = "**/*.integration.test.ts";

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    projects: [
      { extends: true, test: { name: "unit", include: ["test/{agent,collectors,docs}/**/*.test.ts"], exclude: [INTEGRATION] } },
      { extends: true, test: { name: "integration", include: [`test/{agent,collectors}/${INTEGRATION}`, "test/repo/**/*.test.ts"] } },
      { extends: true, test: { name: "e2e", include: ["test/{e2e,security,packaging}/**/*.test.ts"] } },
      { extends: true, test: { name: "deploy", include: ["test/deploy/**/*.test.ts"] } },
      { extends: true, test: { name: "faults", include: ["test/faults/**/*.test.ts"] } },
      { extends: true, test: { name: "fuzz", include: ["test/fuzz/**/*.test.ts"] } },
      { extends: true, test: { name: "sim", include: ["test/sim-selftest/**/*.test.ts"] } },
      { extends: true, test: { name: "fakes", include: ["test/fakes-selftest/**/*.test.ts"] } },
      // The cluster in a box (32 agents, Prometheus, Alertmanager) loads the machine: it runs alone, after the others.
      { extends: true, test: { name: "cluster", include: ["test/cluster/**/*.test.ts"], sequence: { groupOrder: 1 } } },
    ],
  },
});
