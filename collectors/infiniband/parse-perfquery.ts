/**
 * Parser for perfquery's attribute dumps, whichever attribute was asked for (-x extended counters,
 * plain PortCounters, -E PortRcvErrorDetails...): blocks that start with
 * `# <what>: Lid <lid> port <port>[ (CapMask: ...)]` followed by `Name:.....value` lines.
 * Several blocks appear when several ports were asked for (-l / port lists).
 */
import { diagLine, diagProblem } from "./diag-errors.js";

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

const HEADER = /^#\s*(.+?):\s*Lid\s+(\d+)\s+port\s+(\d+)\s*(?:\((.*)\))?\s*$/i;
const FIELD = /^([A-Za-z][A-Za-z0-9_]*):\.*\s*(\S.*?)\s*$/;
const NOT_COUNTERS: ReadonlySet<string> = new Set(["PortSelect", "CounterSelect", "CounterSelect2"]);

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
    const h = HEADER.exec(line);
    if (h?.[1] !== undefined) {
      block = { title: h[1].trim(), lid: Number(h[2]), port: Number(h[3]), counters: {}, fields: {} };
      if (h[4] !== undefined) block.capMask = h[4].trim();
      blocks.push(block);
      continue;
    }
    const f = FIELD.exec(line);
    if (f?.[1] !== undefined && f[2] !== undefined && block) {
      const [, name, value] = f;
      if (/^\d{1,20}$/.test(value)) {
        if (name === "PortSelect") block.portSelect = Number(value);
        else if (!NOT_COUNTERS.has(name)) block.counters[name] = Number(value);
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
