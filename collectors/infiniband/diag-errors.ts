/**
 * infiniband-diags report trouble with `ibpanic:` (fatal, exit 255), `iberror:` (fatal) and
 * `ibwarn:` (debug chatter, or the cause of a fatal error) lines, each with a `[pid]`. This turns
 * them into one stable line (no pid, so the runner logs it once, not every cycle).
 */

export interface DiagLine {
  kind: "ibpanic" | "iberror" | "ibwarn";
  /** The message after the keyword, without the `[pid]`. */
  text: string;
}

// `(.*)$` with the s flag always matches at once; trailing blanks are trimmed in code (the former
// `(.*?)\s*$` backtracked quadratically on a long run of blanks inside the message).
const DIAG = /(?:^|[\s:])(ibpanic|iberror|ibwarn):\s*(?:\[\d+\]\s*)?(.*)$/s;

/** Longest diag message kept in a problem line (a tool's garbage must not become a 10 MB log line). */
const MAX_PROBLEM_TEXT = 200;

/** Recognises a diag line anywhere in a line (talosctl and others prefix their own text). */
export function diagLine(line: string): DiagLine | undefined {
  const m = DIAG.exec(line);
  if (!m?.[1]) return undefined;
  return { kind: m[1] as DiagLine["kind"], text: (m[2] ?? "").trimEnd() };
}

/** One line of bounded length: line breaks become blanks, long text is cut with an ellipsis. */
function clip(text: string): string {
  const t = text.replace(/[\r\n\u2028\u2029]+/g, " ");
  return t.length > MAX_PROBLEM_TEXT ? `${t.slice(0, MAX_PROBLEM_TEXT)}…` : t;
}

/** ibwarn messages that mean the tool cannot talk to the fabric at all (umad / MAD port trouble). */
const FATAL_WARN = /umad_init|umad_open_port|mad_rpc_open_port|can't open UMAD|ib_umad|client_register|can't open MAD port|Permission denied/i;

/** Whether an ibwarn message is the cause of a failure rather than debug output. */
export function isFatalWarning(text: string): boolean {
  return FATAL_WARN.test(text);
}

/**
 * The one-line problem in a tool's output, or undefined when it shows none.
 * Order: ibpanic, then iberror (with the ibwarn that explains it), then a fatal ibwarn.
 */
export function diagProblem(output: string): string | undefined {
  let panic: string | undefined;
  let error: string | undefined;
  let fatalWarn: string | undefined;
  for (const line of output.split(/\r?\n/)) {
    const d = diagLine(line);
    if (!d) continue;
    if (d.kind === "ibpanic") panic ??= clip(d.text);
    else if (d.kind === "iberror") error ??= clip(d.text);
    else if (isFatalWarning(d.text)) fatalWarn ??= clip(d.text);
  }
  if (panic !== undefined) return `ibpanic: ${panic}`;
  if (error !== undefined) return fatalWarn !== undefined ? `iberror: ${error} (ibwarn: ${fatalWarn})` : `iberror: ${error}`;
  if (fatalWarn !== undefined) return `ibwarn: ${fatalWarn}`;
  return undefined;
}
