#!/usr/bin/env node
/** Entry point: command line → config → logger → agent → signals. Bad flags or config: one line, exit 2. */
import type { Logger } from "pino";
import { jobFsGate } from "../collectors/job-fs-gate.js";
import { runAnalyze } from "./analyze.js";
import { createAgent } from "./app.js";
import { runCheck } from "./check.js";
import { ConfigError, parseCli, type AgentConfig } from "./config/config.js";
import { helpText } from "./config/help.js";
import { createLogger } from "./logger.js";
import { loadSettings } from "./reload.js";
import { VERSION } from "./version.js";
import { WebConfigError } from "./web/config.js";
import { loadWebConfig, type LoadedWebConfig } from "./web/source.js";

const SHUTDOWN_DEADLINE_MS = 4500;
/** How long the exit waits for file-system calls still running. */
const EXIT_WAIT_MS = 1000;

/**
 * Ends the daemon. exit() waits for libuv's threads, and a call abandoned on a mount that does not
 * answer (job-fs-gate.ts) holds one until its server answers: then the process ends by SIGTERM's
 * default action instead, which ends every thread (a stop all the same for systemd and Kubernetes).
 */
async function exitDaemon(logger: Logger, code = 0): Promise<void> {
  // A call still running may be one that hangs and is not yet counted as abandoned (10 s): the
  // calls of a healthy mount end within this wait.
  const until = Date.now() + EXIT_WAIT_MS;
  while (jobFsGate.busy > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  const stuck = jobFsGate.busy;
  if (stuck === 0) process.exit(code);
  const mounts = jobFsGate.stalledMounts().map((m) => m.mount);
  logger.warn({ mounts, calls: stuck }, "file-system calls on a job's paths are still waiting; ending by SIGTERM");
  logger.flush();
  // The init of a PID namespace (the container's first process) never gets a signal it sends
  // itself without a handler: abort() ends it whatever it is.
  if (process.pid === 1) process.abort();
  process.removeAllListeners("SIGTERM");
  process.kill(process.pid, "SIGTERM");
}

function fail(message: string): never {
  process.stderr.write(`ringwatch: ${message}\n`);
  process.exit(2);
}

async function runOnce(config: AgentConfig, logger: Logger): Promise<void> {
  const agent = createAgent(config, { logger });
  const text = await agent.runOnce();
  process.stdout.write(text, () => process.exit(0));
}

/** The web config, checked completely (certificates, key, bcrypt hashes) before anything starts; one line and exit 2 if bad. */
function webConfigOrExit(config: AgentConfig): LoadedWebConfig {
  try {
    return loadWebConfig(config.webConfigFile);
  } catch (err) {
    if (err instanceof WebConfigError) fail(err.message);
    throw err;
  }
}

async function runDaemon(argv: readonly string[], config: AgentConfig, logger: Logger, webConfig: LoadedWebConfig): Promise<void> {
  const agent = createAgent(config, { logger, webConfig });
  let stopping = false;
  let listening = false;
  let hupWhileStarting = false;
  /** SIGHUP: the same command line, the environment and the files, read again (reload.ts). */
  const reload = (): void => {
    if (stopping) return;
    if (!listening) {
      hupWhileStarting = true;
      return;
    }
    logger.info({ signal: "SIGHUP" }, "reloading the configuration");
    try {
      const next = loadSettings(argv, process.env);
      agent.reload(next.config, next.web);
    } catch (err) {
      agent.reloadFailed(err);
    }
  };
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    const deadline = setTimeout(() => {
      logger.warn("shutdown deadline reached; exiting");
      void exitDaemon(logger);
    }, SHUTDOWN_DEADLINE_MS);
    deadline.unref();
    agent.stop().then(
      () => exitDaemon(logger),
      (err: unknown) => {
        logger.error({ err: String(err) }, "error during shutdown");
        return exitDaemon(logger);
      },
    );
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGHUP", reload);
  try {
    const port = await agent.start();
    const web = { tls: webConfig.tls !== undefined, basic_auth: webConfig.auth.enabled };
    logger.info({ version: VERSION, port, ...web, collectors: agent.collectors.map((c) => c.name) }, "ringwatch listening");
    listening = true;
    if (hupWhileStarting) reload();
  } catch (err) {
    logger.error({ reason: err instanceof Error ? err.message : String(err) }, "cannot start");
    await agent.stop();
    await exitDaemon(logger, 1);
  }
}

async function main(argv: readonly string[]): Promise<void> {
  if (argv[0] === "analyze") {
    let out = "";
    const code = await runAnalyze(argv.slice(1), { stdout: (s) => (out += s), stderr: (s) => process.stderr.write(s) });
    process.stdout.write(out, () => process.exit(code));
    return;
  }
  if (argv[0] === "check") {
    let out = "";
    const io = { stdout: (s: string) => (out += s), stderr: (s: string) => process.stderr.write(s), env: process.env, exit: (c: number) => process.exit(c) };
    const code = await runCheck(argv.slice(1), io);
    process.stdout.write(out, () => process.exit(code));
    return;
  }
  let action;
  try {
    action = parseCli(argv, process.env);
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message);
    throw err;
  }
  if (action.kind === "help") {
    process.stdout.write(helpText());
    return;
  }
  if (action.kind === "version") {
    process.stdout.write(`ringwatch ${VERSION} (node ${process.versions.node})\n`);
    return;
  }
  const config = action.config;
  const logger = createLogger(config.logLevel, config.once);
  process.on("unhandledRejection", (reason) => logger.error({ reason: String(reason) }, "unhandled promise rejection"));
  if (config.once) await runOnce(config, logger);
  else await runDaemon(argv, config, logger, webConfigOrExit(config));
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`ringwatch: fatal: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
