/**
 * `ringwatch analyze` on what a job can leave in a log folder, run as users run it (the built CLI,
 * a child process): dangling and looping symlinks, a FIFO (with and without a writer that never
 * writes), a listening socket, a link to /dev/zero, a subfolder, file names with control
 * characters; /dev/zero and a FIFO named on the command line; standard input. Each run must end by
 * itself (runAgent fails after 30 s), skip what is not a regular file with one line each, and give
 * the verdict from the rest.
 */
import { spawn } from "node:child_process";
import { appendFileSync, closeSync, copyFileSync, mkdirSync, openSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { entries } from "../../agent/analyze-input.js";
import type { Report } from "../../collectors/nccl/verdict/report.js";
import { agentMain, runAgent } from "../helpers/agent-process.js";
import { fixturesDir } from "../helpers/fixtures.js";
import { runProcess } from "../helpers/run-process.js";
import { testTempDir } from "../helpers/test-temp-dir.js";

/** A real capture: ranks at opCount 0x28c in different collectives (a collective_mismatch). */
const CAPTURE = join(fixturesDir, "nccl/91-hang-coll-rank2-allgather-while-others-allreduce.log");
const PREFIX = "ringwatch: analyze: ";

let servers: Server[] = [];
let held: number[] = [];
afterEach(async () => {
  for (const fd of held) closeSync(fd);
  held = [];
  await Promise.all(servers.map((s) => new Promise((res) => s.close(res))));
  servers = [];
});

async function mkfifo(path: string): Promise<void> {
  const r = await runProcess("mkfifo", [path]);
  expect(r.code).toBe(0);
}

/** A FIFO with a writer that never writes: a reader that opened it would wait forever. */
async function heldFifo(path: string): Promise<void> {
  await mkfifo(path);
  held.push(openSync(path, "r+")); // O_RDWR: opening does not wait for a partner
}

async function listeningSocket(path: string): Promise<void> {
  const s = createServer();
  servers.push(s);
  await new Promise<void>((res) => s.listen(path, res));
}

function mismatch(report: Report): Report["findings"][number] | undefined {
  return report.findings.find((f) => f.kind === "collective_mismatch");
}

/** The verdict of the capture, checked to come from `file`. */
function expectCaptureVerdict(stdout: string, file: string): void {
  const report = JSON.parse(stdout) as Report;
  expect(mismatch(report)).toMatchObject({ op_count: "28c" });
  expect(mismatch(report)?.evidence[0]).toBe(`${file}:2`);
}

/** `ringwatch analyze args` with standard input from `stdin` (a file descriptor, or bytes through a pipe). */
function analyzeWithStdin(args: string[], stdin: number | Buffer): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [agentMain, "analyze", ...args], { stdio: [typeof stdin === "number" ? stdin : "pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout?.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr?.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`analyze ${args.join(" ")} did not finish in 30 s; stderr: ${stderr}`));
    }, 30_000);
    child.once("error", reject);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    if (typeof stdin !== "number") child.stdin?.end(stdin);
  });
}

describe("ringwatch analyze on a folder a job could write to", () => {
  it("skips a dangling link, a link loop, a FIFO with a silent writer, a socket and a link to /dev/zero, one line each; the verdict comes from the real log", async () => {
    const dir = testTempDir();
    copyFileSync(CAPTURE, join(dir, "rank.log"));
    symlinkSync("b.log", join(dir, "a.log")); // a.log -> b.log -> a.log
    symlinkSync("a.log", join(dir, "b.log"));
    symlinkSync("gone.log", join(dir, "dangling.log"));
    await heldFifo(join(dir, "fifo.log"));
    await listeningSocket(join(dir, "sock.log"));
    symlinkSync("/dev/zero", join(dir, "zero.log"));
    mkdirSync(join(dir, "sub"));
    copyFileSync(CAPTURE, join(dir, "sub", "deeper.log")); // read too: a bundle's folders are (node1/, node2/)

    const r = await runAgent(["analyze", "--json", dir]);
    expect(r.code).toBe(0);
    expect(r.stderr.split("\n")).toEqual([
      `${PREFIX}skipped ${dir}/a.log: symbolic link loop`,
      `${PREFIX}skipped ${dir}/b.log: symbolic link loop`,
      `${PREFIX}skipped ${dir}/dangling.log: dangling symbolic link`,
      `${PREFIX}skipped ${dir}/fifo.log: not a regular file`,
      `${PREFIX}skipped ${dir}/sock.log: not a regular file`,
      `${PREFIX}skipped ${dir}/zero.log: not a regular file`,
      "",
    ]);
    expectCaptureVerdict(r.stdout, join(dir, "rank.log"));
    const text = await runAgent(["analyze", dir]);
    expect(text.code).toBe(0);
    expect(text.stdout.split("\n")[0]).toMatch(/^ringwatch analyze: 2 file\(s\), \d+ lines/); // rank.log and sub/deeper.log
  });

  it("a FIFO or a device named on the command line is skipped with one line; with nothing else to read, exit 2", async () => {
    const dir = testTempDir();
    const rank = join(dir, "rank.log");
    copyFileSync(CAPTURE, rank);
    const lonely = join(dir, "lonely.fifo"); // no writer: opening it for reading would wait forever
    await mkfifo(lonely);
    const silent = join(dir, "silent.fifo");
    await heldFifo(silent);
    const hint = "not a regular file or directory (to read from a pipe, give -)";

    const zero = await runAgent(["analyze", "/dev/zero"]);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toBe(`${PREFIX}skipped /dev/zero: ${hint}\n${PREFIX}none of the inputs could be read\n`);
    expect(zero.stdout).toBe("");

    const fifos = await runAgent(["analyze", "--json", lonely, silent, rank]);
    expect(fifos.code).toBe(0);
    expect(fifos.stderr).toBe(`${PREFIX}skipped ${lonely}: ${hint}\n${PREFIX}skipped ${silent}: ${hint}\n`);
    expectCaptureVerdict(fifos.stdout, rank);
  });

  it("standard input: a pipe is read to its end; a device on it is refused", async () => {
    const piped = await analyzeWithStdin(["--json", "-"], readFileSync(CAPTURE));
    expect(piped.code).toBe(0);
    expect(piped.stderr).toBe("");
    expectCaptureVerdict(piped.stdout, "-");

    const fd = openSync("/dev/zero", "r");
    try {
      const zero = await analyzeWithStdin(["-"], fd);
      expect(zero.code).toBe(2);
      expect(zero.stderr).toBe(`${PREFIX}skipped -: standard input is a device, not a file, pipe or terminal\n${PREFIX}none of the inputs could be read\n`);
    } finally {
      closeSync(fd);
    }
  });

  it("control characters in a job's file names are escaped on stderr and in the report, never written raw", async () => {
    const dir = testTempDir();
    const evil = "x\u001b[2J\u0007\u0085.log"; // clear screen, bell, NEL
    copyFileSync(CAPTURE, join(dir, evil));
    symlinkSync("gone", join(dir, "d\u001b]0;owned\u0007.log")); // sets a terminal's title
    const shown = (s: string): string => s.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
    const raw = (s: string): string[] => [...s].filter((c) => c !== "\n" && shown(c) !== c);

    const text = await runAgent(["analyze", dir]);
    expect(text.code).toBe(0);
    expect(text.stderr).toBe(`${PREFIX}skipped ${dir}/d\\x1b]0;owned\\x07.log: dangling symbolic link\n`);
    expect(text.stdout).toContain(`evidence: ${dir}/x\\x1b[2J\\x07\\x85.log:2`);
    expect(raw(text.stdout)).toEqual([]);

    const json = await runAgent(["analyze", "--json", dir]);
    expect(raw(json.stdout)).toEqual([]);
    expect(json.stdout).toContain("x\\u001b[2J\\u0007\\u0085.log:2");
    expectCaptureVerdict(json.stdout, join(dir, evil)); // the same name once parsed
  });
});

describe("analyze's inputs", () => {
  it("a regular file is read up to the size it had when opened, however much is written after", () => {
    const dir = testTempDir();
    const path = join(dir, "growing.log");
    writeFileSync(path, "first line\n");
    const [e] = [...entries(path)];
    if (e === undefined || !("input" in e)) throw new Error(`not opened: ${JSON.stringify(e)}`);
    appendFileSync(path, "written after the open\n".repeat(1000));
    const buf = Buffer.alloc(1 << 16);
    let got = "";
    for (let n = e.input.read(buf, buf.length); n > 0; n = e.input.read(buf, buf.length)) got += buf.toString("utf8", 0, n);
    e.input.close();
    expect(got).toBe("first line\n");
    expect(readFileSync(path, "utf8").length).toBe(11 + 23 * 1000); // the file did grow
  });
});
