/**
 * What the tests of analyze's forms share: a capture of test/fixtures/nccl-pasted by its number, its
 * findings as analyze gives them (one log named `x.log`), and a brief form to compare.
 */
import { analyzeLogs } from "../../collectors/nccl/analyze/analyze.js";
import type { Finding } from "../../collectors/nccl/verdict/report.js";
import { listFixtures, readCapture } from "./fixtures.js";

/** The text of the pasted capture whose name starts with `prefix` (`614-`), its line 1 left out. */
export const pastedText = (prefix: string): string => readCapture(`nccl-pasted/${listFixtures("nccl-pasted", ".log").find((f) => f.startsWith(prefix)) ?? ""}`);

/** Every finding of `text` read as one log, `x.log`. */
export const allFindings = (text: string): Finding[] => analyzeLogs([{ name: "x.log", text }]).findings;

/** The findings at warning and above. */
export const seriousFindings = (text: string): Finding[] => allFindings(text).filter((f) => f.severity !== "info");

/**
 * Text after PyTorch's watchdog timeout line (01-watchdog-pt2.4's first line): beside a hang's
 * finding, a stack dump says only what its own waits say (analyze/dump-alone.ts speaks for dumps
 * that are the only evidence).
 */
export const besideTimeout = (text: string): string =>
  "[rank0]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7753, OpType=_REDUCE_SCATTER_BASE, NumelIn=544997376, NumelOut=68124672, Timeout(ms)=600000) ran for 600061 milliseconds before timing out.\n" +
  text;

/** The hang_suspected findings of `text` after a watchdog timeout (besideTimeout): what the dump's own waits say. */
export const dumpWaits = (text: string): Finding[] => allFindings(besideTimeout(text)).filter((f) => f.kind === "hang_suspected");

/** Kind, severity and ranks of each finding. */
export const brief = (fs: readonly Finding[]): [string, string, number[]][] => fs.map((f) => [f.kind, f.severity, f.ranks]);
