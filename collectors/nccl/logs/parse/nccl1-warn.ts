/**
 * NCCL 1.x's WARN line (src/core.h of the 1.x series: `printf("WARN %s:%d ", __FILE__, __LINE__)`,
 * then the message), with no host:pid:tid header and no `NCCL` marker:
 *   WARN src/reduce.cu:126 Cuda failure 'invalid resource handle'
 * (nccl-pasted 594, MXNet's NCCL kvstore with NCCL 1.3.4). Read as NCCL 2's WARN is read (its kind
 * from warn-kinds.ts), as a warning of no known process. Cold path: asked only of lines that gave no
 * event and open with `WARN `; the source location must be a C, C++ or CUDA file (NCCL's `__FILE__`)
 * with a colon and digits, so that a Java or Python logger's `WARN Foo.java:42 ...` is none.
 */
import { classifyWarn } from "./warn.js";
import { isDigit, trimEnd } from "./scan.js";
import type { WarnEvent } from "./types.js";

const OPEN = "WARN ";
/** The longest source path read. */
const MAX_PATH = 120;
/** NCCL's sources: CUDA and C++ files and their headers. */
const SOURCE_EXTENSIONS = [".cu", ".cuh", ".cc", ".cpp", ".h", ".hpp", ".c"];

export function nccl1Warn(text: string): WarnEvent | undefined {
  if (!text.startsWith(OPEN)) return undefined;
  const pathStart = OPEN.length;
  const blank = text.indexOf(" ", pathStart);
  if (blank < 0 || blank - pathStart > MAX_PATH) return undefined;
  const colon = text.lastIndexOf(":", blank);
  if (colon <= pathStart) return undefined;
  const dot = text.lastIndexOf(".", colon);
  if (dot <= pathStart || !SOURCE_EXTENSIONS.includes(text.slice(dot, colon))) return undefined;
  for (let i = colon + 1; i < blank; i++) if (!isDigit(text.charCodeAt(i))) return undefined;
  if (blank === colon + 1) return undefined;
  const m = blank + 1;
  const end = trimEnd(text, m, text.length);
  if (end <= m) return undefined;
  const ev: WarnEvent = {
    kind: "warn",
    warnKind: "other",
    message: text.slice(m, end),
    file: text.slice(pathStart, colon),
    line: Number(text.slice(colon + 1, blank)),
    headerless: true,
  };
  classifyWarn(text, m, end, ev);
  return ev;
}
