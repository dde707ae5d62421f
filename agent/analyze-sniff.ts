/**
 * What `ringwatch analyze` takes for no log, and skips with a word on stderr instead of reading
 * (a README that quotes a watchdog line, or a saved scrape whose `# HELP
 * ringwatch_nccl_hang_suspected ...` reads like a hang, would otherwise give a verdict):
 *
 * - by name, in a folder only (a file named on the command line is read): Markdown and other
 *   documentation (`SOURCES.md`, `README`, `LICENSE`);
 * - by the first block of its (decompressed) bytes, always: a Prometheus / OpenMetrics scrape, a
 *   binary file (binary()), an archive or a compression analyze does not read.
 *
 * Flight Recorder dumps (pickles, which hold NUL bytes) are told apart before this, and JSON
 * documents by the analysis (a RAS report, or not). No regular expression here can backtrack.
 */

/** The bytes looked at. */
export const SNIFF_BYTES = 64 * 1024;

const DOC_NAMES = new Set(["readme", "sources", "license", "licence", "copying", "changelog", "notice", "authors"]);

/** Why a file met in a folder is no log, by its name alone; undefined when it may be one. */
export function notALogByName(name: string): string | undefined {
  const lower = name.toLowerCase();
  const dot = lower.lastIndexOf(".");
  const ext = dot > 0 ? lower.slice(dot + 1) : "";
  if (ext === "md" || ext === "markdown") return "Markdown, not a log";
  if (ext === "rst" || ext === "adoc" || DOC_NAMES.has(ext === "txt" ? lower.slice(0, dot) : lower)) return "documentation, not a log";
  return undefined;
}

function startsWith(b: Uint8Array, bytes: readonly number[], at = 0): boolean {
  if (b.length < at + bytes.length) return false;
  for (let i = 0; i < bytes.length; i++) if (b[at + i] !== bytes[i]) return false;
  return true;
}

const ARCHIVES: readonly { magic: readonly number[]; at?: number; also?: readonly number[]; what: string }[] = [
  { magic: [0x75, 0x73, 0x74, 0x61, 0x72], at: 257, what: "a tar archive, not a log (unpack it first: tar -xf)" },
  { magic: [0x50, 0x4b, 0x03, 0x04], what: "a zip archive, not a log (unpack it first: unzip)" },
  { magic: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], what: "xz-compressed (decompress it first: xz -d)" },
  { magic: [0x42, 0x5a, 0x68], also: [0x31, 0x41, 0x59, 0x26, 0x53, 0x59], what: "bzip2-compressed (decompress it first: bzip2 -d)" },
  { magic: [0x04, 0x22, 0x4d, 0x18], what: "lz4-compressed (decompress it first: lz4 -d)" },
];

/** A run of at least this many NUL bytes is a hole in a log, not binary data. */
const NUL_RUN = 32;

/**
 * Whether the block is binary: more than 30% of its bytes (of 32 at least) are NULs, control
 * characters other than tab, line ends, form feed and ESC, or bytes that are no UTF-8. Runs of
 * NUL_RUN NULs or more do not count: logrotate's copytruncate leaves one before the text of a log
 * whose writer kept its offset, and a node that crashed leaves zeroed blocks in the logs it was
 * writing, the very logs to analyze. A stray NUL or a latin1 byte in a log is not enough.
 */
export function binary(head: Uint8Array): boolean {
  let n = 0;
  let bad = 0;
  let i = 0;
  while (i < head.length) {
    const c = head[i] ?? 0;
    if (c === 0) {
      let j = i;
      while (j < head.length && head[j] === 0) j++;
      if (j - i < NUL_RUN) {
        n += j - i;
        bad += j - i;
      }
      i = j;
    } else if (c < 0x20) {
      n++;
      if (c !== 9 && c !== 10 && c !== 11 && c !== 12 && c !== 13 && c !== 0x1b) bad++;
      i++;
    } else if (c < 0x80) {
      n++;
      i++;
    } else {
      const len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
      let ok = len > 0 && i + len <= head.length;
      for (let k = 1; ok && k < len; k++) if (((head[i + k] ?? 0) & 0xc0) !== 0x80) ok = false;
      if (ok) {
        n += len;
        i += len;
      } else {
        n++;
        bad++;
        i++;
      }
    }
  }
  return n >= 32 && bad * 10 > n * 3;
}

const METRIC_TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped", "info", "stateset", "gaugehistogram", "unknown"]);

function metricNameChar(c: number, first: boolean): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || c === 0x3a || (!first && c >= 0x30 && c <= 0x39);
}

/** `name{...} value` or `name value` (a timestamp may follow): a sample line of the text exposition format. */
function sampleLine(line: string): boolean {
  let i = 0;
  while (i < line.length && metricNameChar(line.charCodeAt(i), i === 0)) i++;
  if (i === 0) return false;
  if (line[i] === "{") {
    const close = line.lastIndexOf("}");
    if (close < i) return false;
    i = close + 1;
  }
  if (line[i] !== " ") return false;
  const rest = line.slice(i + 1);
  const space = rest.indexOf(" ");
  const value = space < 0 ? rest : rest.slice(0, space);
  return value === "NaN" || value === "+Inf" || value === "-Inf" || (value !== "" && Number.isFinite(Number(value)));
}

/**
 * Whether the text is a saved /metrics page: it starts with `# HELP` or `# TYPE`, has a `# TYPE
 * name type` line, and every other line looked at is a comment or a sample.
 */
export function looksLikeMetricsScrape(text: string): boolean {
  const rows = text.split("\n", 201);
  if (rows.length > 1 && text.length >= SNIFF_BYTES) rows.pop(); // the last row may be cut
  let typed = false;
  let seen = false;
  for (const raw of rows) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line === "") continue;
    if (!seen) {
      seen = true;
      if (!line.startsWith("# HELP ") && !line.startsWith("# TYPE ")) return false;
    }
    if (line.startsWith("# TYPE ")) {
      const parts = line.split(" ");
      if (parts.length === 4 && METRIC_TYPES.has(parts[3] ?? "")) typed = true;
    } else if (line.startsWith("#")) continue;
    else if (!sampleLine(line)) return false;
  }
  return typed;
}

/** Why a file whose first bytes are head is no log; undefined when it may be one. */
export function notALog(head: Uint8Array): string | undefined {
  for (const a of ARCHIVES) if (startsWith(head, a.magic, a.at) && (a.also === undefined || startsWith(head, a.also, 4))) return a.what;
  if (binary(head)) return "binary, not a log";
  if (looksLikeMetricsScrape(Buffer.from(head.buffer, head.byteOffset, Math.min(head.length, SNIFF_BYTES)).toString("utf8"))) {
    return "a Prometheus metrics scrape, not a log";
  }
  return undefined;
}
