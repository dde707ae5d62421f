/**
 * Fuzz: the `ringwatch analyze` input reader (agent/analyze.ts reads files in 4 MiB chunks and
 * feeds lines to collectors/nccl/analyze/analyze.ts). Whatever the bytes of a real file, it exits 0 and
 * reports exactly what analysing the whole decoded text at once reports; the report holds no NaN.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { analyzeLogs } from "../../collectors/nccl/analyze/analyze.js";
import { runAnalyze } from "../../agent/analyze.js";
import { SNIFF_BYTES, notALog } from "../../agent/analyze-sniff.js";
import { makeTempDir, removeTree } from "../helpers/ttar.js";
import { ncclLines, violations } from "./invariants.js";
import { mutatedText, RUNS, withoutCr } from "./mutate.js";

const LINES = ncclLines();
const dir = makeTempDir("ringwatch-fuzz-analyze-");
afterAll(() => removeTree(dir));

let fileNo = 0;
/** Runs `ringwatch analyze --json` on a real file holding `bytes`; returns exit code, report, stderr. */
async function analyzeFile(bytes: Buffer): Promise<{ code: number; report: unknown; path: string; stderr: string }> {
  const path = join(dir, `log-${fileNo++}.log`);
  writeFileSync(path, bytes);
  let out = "";
  let stderr = "";
  const code = await runAnalyze(["--json", path], { stdout: (s) => (out += s), stderr: (s) => (stderr += s) });
  return { code, report: out === "" ? undefined : JSON.parse(out), path, stderr };
}

/** What analysing the whole decoded file at once reports (JSON round trip, as the CLI prints it). */
function wholeReport(path: string, bytes: Buffer): unknown {
  return JSON.parse(JSON.stringify(analyzeLogs([{ name: path, text: bytes.toString("utf8") }])));
}

describe("fuzz: analyze input reader", () => {
  it("any mutated capture, as bytes: exit 0 and the same report as the whole text, or skipped with its one line when its first block is no log", async () => {
    await fc.assert(
      fc.asyncProperty(mutatedText(LINES, 40), fc.boolean(), async (text, latin1) => {
        // latin1: bytes 0x80-0xff that are not valid UTF-8, as a damaged file would hold.
        const bytes = Buffer.from(text, latin1 ? "latin1" : "utf8");
        const r = await analyzeFile(bytes);
        // A file whose first block is mostly NULs or control bytes (agent/analyze-sniff.ts) is skipped:
        // the only input, so nothing was read (exit 2).
        const skipped = notALog(bytes.subarray(0, SNIFF_BYTES));
        if (skipped !== undefined) {
          expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 2, stderr: expect.stringContaining(`${r.path}: ${skipped}`) as unknown });
          return;
        }
        expect(r.code).toBe(0);
        expect(r.report).toEqual(wholeReport(r.path, bytes));
      }),
      // The shrunk case of a CI run: latin1 turns each astral character into two NULs, a binary file.
      {
        numRuns: RUNS / 3,
        examples: [
          [
            "\u0000\u{10000}\u{10000}\u{10000}\u{10000}\u{10000}\u{10000}\u{10000}\u{10000}\u{10000}\u{10000}\u0000\u{10000}\u{10000}\u{10000}\u{10000}\u{10001}",
            true,
          ],
        ],
      },
    );
  });

  it("the report holds only finite numbers", () => {
    fc.assert(
      fc.property(fc.array(mutatedText(LINES, 30), { minLength: 1, maxLength: 3 }), (texts) => {
        const report = analyzeLogs(texts.map((text, i) => ({ name: `r${i}.log`, text })));
        expect(violations(report, { nonNegative: ["collectives_max", "collectives_min", "ranks_seen", "warnings", "pid"] })).toEqual([]);
      }),
      { numRuns: RUNS / 3 },
    );
  });

  it("CRLF line ends give the same report as LF", () => {
    fc.assert(
      fc.property(mutatedText(LINES, 30).map(withoutCr), (text) => {
        const lf = analyzeLogs([{ name: "x.log", text }]);
        expect(analyzeLogs([{ name: "x.log", text: text.replaceAll("\n", "\r\n") }])).toEqual(lf);
      }),
      { numRuns: RUNS / 3 },
    );
  });

  // Regression (fast-check seed 2116636438): a wrapped watchdog line's rows were joined with the
  // CR of CRLF inside, so the report differed from LF's.
  it("CRLF: the rows of a wrapped PyTorch line join as with LF", () => {
    const text =
      '[rank0]:[E515 18:36:47.341808597 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=241, OpType= warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n" nThread 1 nGpus 1 minBytes 16 maxBytes 4294967296 step: 4(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0';
    const lf = analyzeLogs([{ name: "x.log", text }]);
    expect(lf.findings.map((f) => f.kind)).toEqual(["watchdog_timeout"]);
    expect(analyzeLogs([{ name: "x.log", text: text.replaceAll("\n", "\r\n") }])).toEqual(lf);
  });

  it("a 10 MB line without a newline is one line; exit 0", async () => {
    const r = await analyzeFile(Buffer.alloc(10 * 1024 * 1024, "x NCCL INFO "));
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
  });

  // Regression: ingestFile once cut each read at its last newline and lost the number of a blank
  // line just before it, so later evidence (`file:line`) was one too low.
  it("a blank line before the last newline of a read keeps its line number", async () => {
    const bytes = Buffer.from("\ndgxa100:1050:1315 [0] NCCL INFO Channel 03/0 : 0[90000] -> 1[1000] [send] via NET/Socket/3", "utf8");
    const r = await analyzeFile(bytes);
    expect(JSON.stringify(r.report)).toContain(`${r.path}:2`);
    expect(r.report).toEqual(wholeReport(r.path, bytes));
  });

  // Regression: each 4 MiB read was once decoded on its own, so a multi-byte character cut by the
  // boundary became two U+FFFD. Lines are now cut from the bytes and decoded whole.
  it("a multi-byte character across the 4 MiB read boundary is decoded as in the whole text", async () => {
    const chunk = 4 * 1024 * 1024;
    const warn = "node1:11:12 [0] misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by remote peer caf\u00e9<57557>\n";
    const init = "node1:11:12 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 commId 0xabc - Init COMPLETE\n";
    const head = Buffer.from(init, "utf8");
    const warnBytes = Buffer.from(warn, "utf8");
    const cut = warnBytes.indexOf(0xc3) + 1; // the boundary falls between the two bytes of é
    const fillLen = chunk - head.length - cut;
    const fill = Buffer.alloc(fillLen, "x");
    fill[fillLen - 1] = 0x0a;
    const bytes = Buffer.concat([head, fill, warnBytes]);
    expect(bytes[chunk - 1]).toBe(0xc3);
    const r = await analyzeFile(bytes);
    expect(r.code).toBe(0);
    expect(JSON.stringify(r.report)).toContain("caf\u00e9");
    expect(r.report).toEqual(wholeReport(r.path, bytes));
  });
});
