/**
 * Parser for perfquery's attribute dumps, whichever attribute was asked for (-x extended counters,
 * plain PortCounters, -E PortRcvErrorDetails...): blocks that start with
 * `# <what>: Lid <lid> port <port>[ (CapMask: ...)]` followed by `Name:.....value` lines.
 * Several blocks appear when several ports were asked for (-l / port lists).
 */
import { diagLine, diagProblem } from "./diag-errors.js";
import { parseU64 } from "./parse-sysfs.js";

export interface PerfqueryBlock {
  /** `Port extended counters`, `Port counters`, `PortRcvErrorDetails counters`... */
  title: string;
  lid?: number;
  port?: number;
  /** Text inside the parentheses of the header (`CapMask: 0x5300 CapMask2: 0x0000002`). */
  capMask?: string;
  /** PortSelect field, when printed. */
  portSelect?: number;
  /** Decimal fields by perfquery's name (PortSelect and the CounterSelect masks excluded). */
  counters: Record<string, number>;
  /** Non-decimal fields (CounterSelect: 0x0000...). */
  fields: Record<string, string>;
}

export interface PerfqueryResult {
  blocks: PerfqueryBlock[];
  warnings: string[];
  problem?: string;
}

// No two adjacent quantifiers may match the same characters (no `\s*(.*?)\s*$`): a long run of
// blanks in a line would make the match quadratic. The tail after the port is checked in code.
const HEADER = /^#([^:]+):\s*Lid\s+(\d{1,10})\s+port\s+(\d{1,10})(.*)$/is;
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;
const LINE_BREAK = /[\r\n\u2028\u2029]/;
const NOT_COUNTERS: ReadonlySet<string> = new Set(["PortSelect", "CounterSelect", "CounterSelect2"]);

/** `# <title>: Lid <lid> port <port>[ (<capmask>)]` (the line is trimmed). */
function header(line: string): PerfqueryBlock | undefined {
  const h = HEADER.exec(line);
  if (h?.[1] === undefined || h[4] === undefined) return undefined;
  const tail = h[4].trim();
  if (tail !== "" && !(tail.length >= 2 && tail.startsWith("(") && tail.endsWith(")"))) return undefined;
  if (LINE_BREAK.test(line)) return undefined;
  const block: PerfqueryBlock = { title: h[1].trim(), lid: Number(h[2]), port: Number(h[3]), counters: {}, fields: {} };
  if (tail !== "") block.capMask = tail.slice(1, -1).trim();
  return block;
}

/** `Name:.....value` (the line is trimmed): [name, value], or undefined. */
function field(line: string): [string, string] | undefined {
  const colon = line.indexOf(":");
  if (colon < 1) return undefined;
  const name = line.slice(0, colon);
  if (!FIELD_NAME.test(name)) return undefined;
  let i = colon + 1;
  while (line.charCodeAt(i) === 46 /* . */) i++;
  const value = line.slice(i).trim();
  if (value === "" || LINE_BREAK.test(value)) return undefined;
  return [name, value];
}

export function parsePerfquery(text: string): PerfqueryResult {
  const blocks: PerfqueryBlock[] = [];
  const warnings: string[] = [];
  let block: PerfqueryBlock | undefined;
  let unexpected: string | undefined;

  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.length === 0) continue;
    const diag = diagLine(line);
    if (diag) {
      if (diag.kind === "ibwarn") warnings.push(diag.text);
      continue;
    }
    const h = header(line);
    if (h) {
      block = h;
      blocks.push(block);
      continue;
    }
    const f = field(line);
    if (f && block) {
      const [name, value] = f;
      const n = parseU64(value);
      if (n !== undefined) {
        if (name === "PortSelect") block.portSelect = n;
        else if (!NOT_COUNTERS.has(name)) block.counters[name] = n;
        else block.fields[name] = value;
      } else block.fields[name] = value;
      continue;
    }
    unexpected ??= line.slice(0, 80);
  }

  const result: PerfqueryResult = { blocks, warnings };
  const diag = diagProblem(text);
  if (diag !== undefined) result.problem = diag;
  else if (unexpected !== undefined) result.problem = `unexpected line in perfquery output: ${JSON.stringify(unexpected)}`;
  else if (blocks.length === 0) result.problem = "perfquery printed no counters";
  return result;
}

/** The block for `port` (its header or PortSelect names it); never another port's numbers. */
export function blockForPort(result: PerfqueryResult, port: number): PerfqueryBlock | undefined {
  return result.blocks.find((b) => b.port === port || b.portSelect === port);
}
