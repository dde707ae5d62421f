/**
 * Log files and directories the agent may not read (EACCES). Root reads everything, so when the
 * test runs as root (CI) the agent runs as nobody (65534) and the denied paths are root's with
 * mode 000; as another user the agent runs as that user and mode 000 denies it as well. Nobody may
 * not reach the checkout (under /root or a home directory, 0700), so as root the agent runs from a
 * copy of the build and its production dependencies that every user can read (staged-build.ts).
 * Expected: the other files are followed; the failure is counted and logged with the path; once
 * the permissions are restored, the denied files are followed and every line is read.
 */
import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sample, startAgent, type RunningAgent } from "../helpers/agent-process.js";
import { deniedUser, NOBODY, stageBuild, type StagedBuild } from "../helpers/staged-build.js";

const asRoot = deniedUser !== undefined;

let staged: StagedBuild | undefined;
let root: string;
let agent: RunningAgent | undefined;
const lines = new Map<string, number>();
let ok: string;
let denied: string;
let closedDir: string;
let inner: string;
let beforeRestore = "";
let afterRestore = "";
let restoredAfterMs = -1;

function write(p: string, n: number): void {
  const text = Array.from({ length: n }, (_, i) => `eacces-node:4242:4242 [0] NCCL INFO line ${(lines.get(p) ?? 0) + i} of ${p}\n`).join("");
  if (lines.has(p)) appendFileSync(p, text);
  else writeFileSync(p, text, { mode: 0o644 });
  lines.set(p, (lines.get(p) ?? 0) + n);
}

const total = (): number => [...lines.values()].reduce((a, b) => a + b, 0);

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "rw-eacces-"));
  chmodSync(root, 0o755);
  mkdirSync(join(root, "open"), { mode: 0o755 });
  closedDir = join(root, "closed");
  mkdirSync(closedDir, { mode: 0o755 });
  ok = join(root, "open", "ok.log");
  denied = join(root, "open", "denied.log");
  inner = join(closedDir, "inner.log");
  for (const p of [ok, denied, inner]) write(p, 50);
  chmodSync(denied, 0o000);
  chmodSync(closedDir, 0o000);
  if (deniedUser) staged = stageBuild("rw-eacces-agent-");
  agent = await startAgent(
    [
      "--no-collector.gpu",
      "--no-collector.infiniband",
      "--no-collector.gdr",
      "--no-collector.mtu",
      `--collector.nccl.path=${root}`,
      "--collector.nccl.check-pids=false",
    ],
    {},
    30_000,
    {
      ...(deniedUser ? { user: deniedUser } : {}),
      ...(staged ? { main: staged.agentMain } : {}),
    },
  );
  const a = agent;
  await new Promise((r) => setTimeout(r, 1500));
  for (const p of [ok, denied, inner]) write(p, 30);
  await new Promise((r) => setTimeout(r, 3000));
  beforeRestore = await a.scrape();

  chmodSync(denied, 0o644);
  chmodSync(closedDir, 0o755);
  for (const p of [ok, denied, inner]) write(p, 20);
  const t0 = Date.now();
  while (Date.now() - t0 < 20_000) {
    afterRestore = await a.scrape();
    if (sample(afterRestore, "ringwatch_nccl_log_lines_total") === total()) {
      restoredAfterMs = Date.now() - t0;
      console.log(`EACCES: every line read ${restoredAfterMs} ms after the permissions were restored`);
      break;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}, 60_000);

afterAll(async () => {
  await agent?.stop();
  chmodSync(closedDir, 0o755);
  rmSync(root, { recursive: true, force: true });
  staged?.remove();
});

describe(`EACCES on files and directories (agent as ${asRoot ? "nobody" : "this user"})`, () => {
  it("the agent really cannot read the denied paths (else this test proves nothing)", () => {
    const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${(agent as RunningAgent).child.pid}/status`, "utf8"))?.[1];
    expect(Number(uid)).toBe(asRoot ? NOBODY.uid : process.getuid?.());
    // As nobody, the agent runs from the world-readable copy, wherever the checkout lies.
    if (staged) expect(readFileSync(`/proc/${(agent as RunningAgent).child.pid}/cmdline`, "utf8").split("\0")).toContain(staged.agentMain);
    // Only the readable file's lines were read while the others were denied.
    expect(sample(beforeRestore, "ringwatch_nccl_log_lines_total")).toBe(80);
  });

  it("follows the readable file and counts the failed reads", () => {
    expect(sample(beforeRestore, "ringwatch_nccl_log_read_errors_total")).toBeGreaterThan(0);
    expect(sample(beforeRestore, 'ringwatch_collector_success{collector="nccl"}')).toBe(1);
  });

  it("logs the unreadable file by path", () => {
    expect((agent as RunningAgent).logs().some((l) => l.includes(denied) && /EACCES|permission/i.test(l))).toBe(true);
  });

  it("logs the unreadable directory by path", () => {
    expect((agent as RunningAgent).logs().some((l) => l.includes(closedDir) && /EACCES|permission/i.test(l))).toBe(true);
  });

  it("once permissions are restored, the file and the directory are followed and every line is read", () => {
    expect(restoredAfterMs, `lines_total ${sample(afterRestore, "ringwatch_nccl_log_lines_total")} of ${total()}`).toBeGreaterThanOrEqual(0);
    expect(sample(afterRestore, "ringwatch_nccl_log_files")).toBe(3);
  });
});
