/**
 * Control characters from what a training job wrote (log lines, file names, dumps), shown as text
 * before they leave the agent: in label values (web/exposition.ts) and in `ringwatch analyze`'s
 * output. A control is a C0 control (U+0000-U+001F), DEL (U+007F) or a C1 control
 * (U+0080-U+009F); each is written `\xNN` (two lowercase hex digits): ESC `\x1b`, BEL `\x07`,
 * CR `\x0d`, LF `\x0a`, DEL `\x7f`, NEL `\x85` (docs/metrics.md, Conventions).
 */

/** Every control's escape by its code (`\x1b` at 0x1b), undefined for the other codes below 0xa0. */
const ESCAPES: readonly (string | undefined)[] = Array.from({ length: 0xa0 }, (_, c) =>
  c < 0x20 || c >= 0x7f ? `\\x${c.toString(16).padStart(2, "0")}` : undefined,
);

/** A C0 control, DEL or a C1 control. */
export function isControl(c: number): boolean {
  return c < 0x20 || (c >= 0x7f && c <= 0x9f);
}

/** `\x1b` for 0x1b; undefined when c is not a control. */
export function controlEscape(c: number): string | undefined {
  return c < 0xa0 ? ESCAPES[c] : undefined;
}

/**
 * s with every control written `\xNN`, but for line feeds when keepNewlines (a multi-line report):
 * `a\u001b[31mb` → `a\x1b[31mb`. One pass, no regular expression; s itself when it has none.
 */
export function escapeControls(s: string, keepNewlines = false): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && (c < 0x7f || c > 0x9f)) continue;
    if (c === 10 && keepNewlines) continue;
    out += s.slice(from, i) + (ESCAPES[c] ?? "");
    from = i + 1;
  }
  return from === 0 ? s : out + s.slice(from);
}

/**
 * JSON text (JSON.stringify's, which escapes C0 controls) with DEL and C1 controls escaped too,
 * `\u007f`, `\u0085`: the same JSON value, no raw control in the text.
 */
export function jsonWithoutControls(json: string): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c < 0x7f || c > 0x9f) continue;
    out += `${json.slice(from, i)}\\u00${c.toString(16)}`;
    from = i + 1;
  }
  return from === 0 ? json : out + json.slice(from);
}
