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

/** Kind, severity and ranks of each finding. */
export const brief = (fs: readonly Finding[]): [string, string, number[]][] => fs.map((f) => [f.kind, f.severity, f.ranks]);
