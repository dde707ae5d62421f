/**
 * `ringwatch check [--json] [--check.* ...] [agent flags ...]`: a node health check for Slurm
 * prologs and epilogs, NHC and Kubernetes preflight. It runs the collectors once (check-run.ts),
 * judges their series against the expectations (check-expect.ts, check-judge.ts) and prints one
 * line per check (check-output.ts). Exit 0 healthy, 1 unhealthy, 2 could not check: a bad flag or
 * file, a source an expectation needs that is absent or failed, the time limit, or a crash; it
 * never hangs (docs/check.md).
 */
import { ConfigError } from "../collectors/settings/flags.js";
import { askAgent } from "./check-agent.js";
import { HELP, parseCheckArgs } from "./check-args.js";
import { readExpectations, type Expectations } from "./check-expect.js";
import { AGENT_SERIES } from "./check-judge-fabric.js";
import { judge } from "./check-judge.js";
import { exitCode, formatJson, formatText } from "./check-output.js";
import { checkSettings, collectOnce } from "./check-run.js";
import { Samples } from "./check-samples.js";
import type { AgentConfig } from "./config/config.js";
import { escapeControls } from "./control-chars.js";
import { createLogger } from "./logger.js";
import { VERSION } from "./version.js";

export interface CheckIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  env: NodeJS.ProcessEnv;
  /** Ends the process at once: the backstop when the check overruns its own time limit. */
  exit: (code: number) => void;
}

/** Beyond --check.timeout, the time left to stop the collectors and print before the backstop ends the process. */
const BACKSTOP_GRACE_MS = 5000;

type Parsed = { help: true } | { version: true } | { json: boolean; expect: Expectations; config: AgentConfig };

function parse(argv: readonly string[], env: NodeJS.ProcessEnv): Parsed {
  const args = parseCheckArgs(argv);
  if (args.help) return { help: true };
  const expect = readExpectations(args.raw);
  const action = checkSettings(args.agent, env);
  if (action.kind === "help") return { help: true };
  if (action.kind === "version") return { version: true };
  return { json: args.json, expect, config: action.config };
}

async function check(p: { json: boolean; expect: Expectations; config: AgentConfig }, io: CheckIo): Promise<number> {
  const logger = createLogger(p.config.logLevel, true).child({ command: "check" });
  const onRejection = (reason: unknown): void => logger.error({ reason: String(reason) }, "unhandled promise rejection");
  process.on("unhandledRejection", onRejection);
  const backstop = setTimeout(() => {
    io.stderr(`ringwatch: check: could not check: still running ${BACKSTOP_GRACE_MS / 1000}s past --check.timeout\n`);
    io.exit(2);
  }, p.expect.timeoutMs + BACKSTOP_GRACE_MS);
  try {
    const deadline = Date.now() + p.expect.timeoutMs;
    const asked = p.expect.agentUrl === undefined ? undefined : askAgent(p.expect.agentUrl, AGENT_SERIES, deadline);
    const { metrics, ...node } = await collectOnce(p.config, logger, deadline);
    const agent = await asked;
    const results = judge({ ...node, samples: new Samples(metrics), ...(agent !== undefined ? { agent } : {}) }, p.expect);
    const sources = [...node.sources.values()];
    io.stdout(p.json ? formatJson({ version: VERSION, nowMs: node.nowMs, results, sources, expectations: p.expect.given }) : formatText(results));
    return exitCode(results);
  } finally {
    clearTimeout(backstop);
    process.off("unhandledRejection", onRejection);
  }
}

export async function runCheck(argv: readonly string[], io: CheckIo): Promise<number> {
  let p: Parsed;
  try {
    p = parse(argv, io.env);
  } catch (err) {
    const message = err instanceof ConfigError ? err.message : `could not check: ${err instanceof Error ? err.message : String(err)}`;
    io.stderr(`ringwatch: check: ${escapeControls(message)}\n`);
    return 2;
  }
  if ("help" in p) {
    io.stdout(HELP);
    return 0;
  }
  if ("version" in p) {
    io.stdout(`ringwatch ${VERSION} (node ${process.versions.node})\n`);
    return 0;
  }
  try {
    return await check(p, io);
  } catch (err) {
    // A crash is no verdict on the node: "could not check", never "unhealthy".
    io.stderr(`ringwatch: check: could not check: ${escapeControls(err instanceof Error ? err.message : String(err))}\n`);
    return 2;
  }
}
