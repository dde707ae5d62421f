/**
 * Parser for `nvidia-smi --query-gpu=<fields> --format=csv[,noheader][,nounits]`.
 *
 * Generic: rows are split on commas and keyed by the field list (the caller's, or the header's
 * when the output has one and no list is given). nvidia-smi's "no value" spellings (`[N/A]`,
 * `N/A`, `[Not Supported]`, `[Requested functionality has been deprecated]`,
 * `[Function Not Found]`, `[Unknown Error]`, empty) become undefined. Rows with the wrong number
 * of fields and nvidia-smi failure messages are reported, never thrown.
 */
import { classifyFailure, type NvsmiFailure } from "./failures.js";

export type QueryRow = Readonly<Record<string, string | undefined>>;

export interface QueryParseResult {
  /** Field names the rows are keyed by. */
  fields: readonly string[];
  /** True when a header line was present (and skipped). */
  hadHeader: boolean;
  rows: QueryRow[];
  errors: NvsmiFailure[];
  /** Lines that were neither rows, header nor failure messages. */
  skipped: string[];
}

/** The identity query ringwatch runs. */
export const IDENTITY_FIELDS = ["index", "uuid", "name", "pci.bus_id", "driver_version", "power.limit"] as const;

export interface GpuIdentity {
  /** nvidia-smi index (the same numbering as dmon's `gpu` column). */
  index: string;
  uuid?: string;
  name?: string;
  pciBusId?: string;
  driverVersion?: string;
  powerLimitWatts?: number;
}

/** A value nvidia-smi prints when it has none. */
export function isNoValue(v: string): boolean {
  if (v.length === 0 || v === "N/A") return true;
  // Every bracketed value is a "no value" marker: [N/A], [Not Supported], [Unknown Error], ...
  return v.charCodeAt(0) === 91 /* [ */ && v.charCodeAt(v.length - 1) === 93; /* ] */
}

/** `power.draw [W]` -> `power.draw`. */
function stripUnit(name: string): string {
  const b = name.indexOf(" [");
  return (b > 0 ? name.slice(0, b) : name).trim();
}

function isIdentChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 46;
}

/** `name`, `pci.bus_id`, `clocks_event_reasons.active`: letters first, then [A-Za-z0-9_.]. */
function isFieldName(s: string): boolean {
  const c0 = s.charCodeAt(0);
  if (!((c0 >= 97 && c0 <= 122) || (c0 >= 65 && c0 <= 90))) return false;
  for (let i = 1; i < s.length; i++) if (!isIdentChar(s.charCodeAt(i))) return false;
  return true;
}

/**
 * A header line: every cell is a field name (units in brackets allowed), and at least one is a
 * requested field or looks like one (contains `.` or `_`) — values such as `Enabled` alone don't.
 */
function looksLikeHeader(cells: readonly string[], fields: readonly string[] | undefined): boolean {
  let strong = false;
  for (let i = 0; i < cells.length; i++) {
    const name = stripUnit(cells[i] as string);
    if (!isFieldName(name)) return false;
    if (name === fields?.[i] || name.includes(".") || name.includes("_")) strong = true;
  }
  return strong;
}

function splitCells(line: string): string[] {
  return line.split(",").map((c) => c.trim());
}

/**
 * Parse the output. `fields` is the list given to `--query-gpu=`; without it the output must
 * start with a header line, whose names (units removed) key the rows.
 */
export function parseQueryCsv(text: string, fields?: readonly string[]): QueryParseResult {
  const result: QueryParseResult = { fields: fields ?? [], hadHeader: false, rows: [], errors: [], skipped: [] };
  let keys = fields;
  let first = true;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line.length === 0) continue;
    const failure = classifyFailure(line);
    if (failure) {
      result.errors.push(failure);
      continue;
    }
    const cells = splitCells(line);
    if (first) {
      first = false;
      if (looksLikeHeader(cells, fields) && (!fields || cells.length === fields.length)) {
        result.hadHeader = true;
        if (!keys) keys = cells.map(stripUnit);
        result.fields = keys;
        continue;
      }
    }
    if (!keys || cells.length !== keys.length) {
      result.skipped.push(line);
      continue;
    }
    const row: Record<string, string | undefined> = {};
    for (let i = 0; i < keys.length; i++) {
      const v = cells[i] as string;
      row[keys[i] as string] = isNoValue(v) ? undefined : v;
    }
    result.rows.push(row);
  }
  return result;
}

/** Leading decimal of a value, with or without its unit (`700.00 W`, `52 %`, `2100`). */
export function queryNumber(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const sp = v.indexOf(" ");
  const num = sp < 0 ? v : v.slice(0, sp);
  if (num.length === 0) return undefined;
  const n = Number(num);
  return Number.isFinite(n) ? n : undefined;
}

/** GPUs from the identity query (`IDENTITY_FIELDS`, noheader, nounits). */
export function parseIdentity(text: string): { gpus: GpuIdentity[]; errors: NvsmiFailure[]; skipped: string[] } {
  const parsed = parseQueryCsv(text, IDENTITY_FIELDS);
  const gpus: GpuIdentity[] = [];
  for (const r of parsed.rows) {
    const index = r["index"];
    if (index === undefined || Number.isNaN(Number(index))) {
      parsed.skipped.push(Object.values(r).join(", "));
      continue;
    }
    const g: GpuIdentity = { index };
    if (r["uuid"] !== undefined) g.uuid = r["uuid"];
    if (r["name"] !== undefined) g.name = r["name"];
    if (r["pci.bus_id"] !== undefined) g.pciBusId = r["pci.bus_id"];
    if (r["driver_version"] !== undefined) g.driverVersion = r["driver_version"];
    const limit = queryNumber(r["power.limit"]);
    if (limit !== undefined) g.powerLimitWatts = limit;
    gpus.push(g);
  }
  return { gpus, errors: parsed.errors, skipped: parsed.skipped };
}
