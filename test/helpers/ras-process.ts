/**
 * Starts test/fakes/nccl-ras (a fake NCCL RAS service in its own process) on a free local port,
 * serving a report file or answering from a job model (startRasJob), and records the connections and
 * commands it received. No vitest import: the bench starts it too (test/helpers/ras-service.ts adds
 * the per-test factories).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, cpSync, existsSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import type { RasEvent, RasJob } from "../fakes/ras/render.mjs";
import { sharedTempDir } from "./staged-build.js";

/** The repository's root: the nearest directory up from here with a package.json (this file also runs compiled, from .bench/). */
function repoRoot(): string {
  let dir = import.meta.dirname;
  while (!existsSync(join(dir, "package.json")) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

const fakeRas = join(repoRoot(), "test/fakes/nccl-ras");

/**
 * The fake as another user can start it: a copy in a directory every user reaches (a checkout under
 * a 0700 home directory is out of their reach), made once, removed when this process exits.
 */
let sharedFake: string | undefined;
function fakeFor(user: { uid: number; gid: number } | undefined): string {
  if (user === undefined) return fakeRas;
  if (sharedFake === undefined) {
    const dir = sharedTempDir("rw-fake-ras-");
    cpSync(fakeRas, join(dir, "nccl-ras"));
    cpSync(join(dirname(fakeRas), "ras"), join(dir, "ras"), { recursive: true });
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    sharedFake = join(dir, "nccl-ras");
  }
  return sharedFake;
}

export type RasMode = "ok" | "silent" | "not-ras" | "refuse-timeout" | "close-early" | "trickle";

export interface RasService {
  child: ChildProcess;
  port: number;
  /** Commands received so far, in order, without line ends. */
  commands(): string[];
  /**
   * The commands once `enough` holds for them: the fake logs each command on stderr, a pipe that
   * may reach this process after the answer on the socket did. Waits for stderr's data, up to `ms`.
   */
  commandsWhen(enough: (cmds: string[]) => boolean, ms?: number): Promise<string[]>;
  connections(): number;
  stop(): Promise<void>;
}

/** Who runs the fake and where it listens. */
export interface FakeRasPlace {
  /** Run it as this user (the caller must be root), e.g. nobody (65534): a listener that is no rank's. */
  user?: { uid: number; gid: number };
  /** host:port to listen on (FAKE_RAS_ADDR), e.g. "[::1]:0"; default 127.0.0.1 on a free port. */
  addr?: string;
}

/** Another user must read what the fake reads: the directory and its file. */
function shareWith(place: FakeRasPlace, dir: string, file: string): void {
  if (place.user === undefined) return;
  chmodSync(dir, 0o755);
  chmodSync(file, 0o644);
}

/** Writes `report` to <dir>/ras-report.txt and serves it. */
export async function startRasService(dir: string, report: string, mode: RasMode = "ok", timeoutMs = 10_000, place: FakeRasPlace = {}): Promise<RasService> {
  const file = join(dir, "ras-report.txt");
  writeFileSync(file, report);
  shareWith(place, dir, file);
  const { service } = await spawnFake(
    [file],
    { FAKE_RAS_MODE: mode, ...(place.addr !== undefined ? { FAKE_RAS_ADDR: place.addr } : {}) },
    timeoutMs,
    "ignore",
    place.user,
  );
  return service;
}

/** A fake RAS service answering from a job model (test/fakes/ras/render.mjs), as NCCL of `job.version` does. */
export interface RasJobService extends RasService {
  /** The job file the fake re-reads at every command; rewriting it advances the job. */
  jobFile: string;
  /** Replaces the job (through the fake's stdin); resolves once the fake has it. */
  setJob(job: RasJob): Promise<void>;
  /** Sends a MONITOR event to every monitoring client; resolves once it is written to their sockets. */
  emit(event: RasEvent): Promise<void>;
  /** Makes STATUS answers wait `ms` for "gathering" (NCCL's RAS_COLL_COMMS time). */
  setDelay(ms: number): Promise<void>;
}

/** Writes `job` to <dir>/ras-job.json and serves it (`nccl-ras --job`). */
export async function startRasJob(dir: string, job: RasJob, opts: { delayMs?: number; timeoutMs?: number } & FakeRasPlace = {}): Promise<RasJobService> {
  const jobFile = join(dir, "ras-job.json");
  writeFileSync(jobFile, JSON.stringify(job));
  shareWith(opts, dir, jobFile);
  const env: Record<string, string> = opts.addr !== undefined ? { FAKE_RAS_ADDR: opts.addr } : {};
  const { service, child, acked } = await spawnFake(["--job", jobFile], env, opts.timeoutMs ?? 10_000, "pipe", opts.user);
  let sent = 0;
  const control = async (msg: object): Promise<void> => {
    const n = ++sent;
    const stdin = child.stdin;
    if (stdin === null) throw new Error("nccl-ras has no stdin");
    await new Promise<void>((resolve, reject) => stdin.write(`${JSON.stringify(msg)}\n`, (e) => (e ? reject(e) : resolve())));
    await acked(n);
  };
  if (opts.delayMs !== undefined) await control({ delayMs: opts.delayMs });
  return {
    ...service,
    jobFile,
    setJob: (j) => control({ job: j }),
    emit: (event) => control({ event }),
    setDelay: (ms) => control({ delayMs: ms }),
  };
}

async function spawnFake(
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
  stdin: "ignore" | "pipe" = "ignore",
  user?: { uid: number; gid: number },
): Promise<{ service: RasService; child: ChildProcess; acked: (n: number) => Promise<void> }> {
  const child = spawn(process.execPath, [fakeFor(user), ...args], {
    env: { ...process.env, ...env },
    stdio: [stdin, "pipe", "pipe"],
    ...(user !== undefined ? { uid: user.uid, gid: user.gid, cwd: dirname(fakeFor(user)) } : {}),
  });
  const { stdout, stderr } = child;
  if (stdout === null || stderr === null) throw new Error("nccl-ras without stdout/stderr pipes");
  let err = "";
  let out = "";
  stderr.setEncoding("utf8");
  stdout.setEncoding("utf8");
  const errWaiters: (() => void)[] = [];
  stderr.on("data", (d: string) => {
    err += d;
    for (const w of errWaiters.splice(0)) w();
  });
  const waiters: (() => void)[] = [];
  stdout.on("data", (d: string) => {
    out += d;
    for (const w of waiters.splice(0)) w();
  });
  child.once("exit", () => {
    for (const w of waiters.splice(0)) w();
  });
  const acked = (n: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (out.split("\n").includes(`ctl ${n}`)) resolve();
        else if (child.exitCode !== null) reject(new Error(`nccl-ras exited before acknowledging control line ${n}: ${err}`));
        else waiters.push(check);
      };
      check();
    });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`nccl-ras did not start in ${timeoutMs} ms: ${err}`)), timeoutMs);
    stdout.on("data", () => {
      const m = /listening (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`nccl-ras exited with ${String(code)}: ${err}`));
    });
  });
  const lines = (): string[] => err.split("\n");
  const commands = (): string[] =>
    lines()
      .filter((l) => l.startsWith("cmd "))
      .map((l) => l.slice(4));
  const commandsWhen = (enough: (cmds: string[]) => boolean, ms = 10_000): Promise<string[]> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => resolve(commands()), ms);
      const check = (): void => {
        const cmds = commands();
        if (enough(cmds) || child.exitCode !== null) {
          clearTimeout(timer);
          resolve(cmds);
        } else errWaiters.push(check);
      };
      check();
    });
  const service: RasService = {
    child,
    port,
    commands,
    commandsWhen,
    connections: () => lines().filter((l) => l === "conn").length,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
  return { service, child, acked };
}

/** A local port nothing listens on. */
export async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const addr = srv.address();
  await new Promise<void>((r) => srv.close(() => r()));
  if (addr === null || typeof addr === "string") throw new Error("no port");
  return addr.port;
}
