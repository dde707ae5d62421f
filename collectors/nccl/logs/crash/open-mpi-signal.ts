/**
 * Open MPI's own signal handler (opal's backtrace, in every process mpirun starts), as it reports a
 * crash: `[rtptest1621:405884] *** Process received signal ***`, then rows of the same prefix
 * (`Signal: Segmentation fault (11)`, `Signal code: Address not mapped (1)`, `[ 0] /lib64/
 * libpthread.so.0(+0xf630)[0x7f...]`, `[ 3] /usr/lib/libnccl.so.2(ncclGroupEnd+0x1d)[0x...]`) and
 * `*** End of error message ***` (nccl-pasted 648). The prefix `[host:pid]` names the process as
 * NCCL's lines do. Cut at fixed words; no regular expression.
 */
import { readInt, pos } from "../parse/scan.js";
import type { CaughtSignal } from "./caught-signal.js";

const MARK = "] *** Process received signal ***";
const END = "*** End of error message ***";
const MAX_CRASHES = 64;
const MAX_FRAMES = 8;

/** `[host:pid] *** Process received signal ***` (after blanks or a launcher's tag) → `host:pid` and the tag as printed (`[n1:05951]`: opal pads the pid); undefined otherwise. */
export function openMpiSignal(s: string): { process: string; tag: string } | undefined {
  const k = s.indexOf(MARK);
  if (k < 0) return undefined;
  const i = s.lastIndexOf("[", k);
  const c = i < 0 ? -1 : s.indexOf(":", i + 1);
  if (c <= i + 1 || c > k) return undefined;
  const host = s.slice(i + 1, c);
  if (host.indexOf(" ") >= 0) return undefined;
  const pid = readInt(s, c + 1, k);
  return pid !== undefined && pos === k ? { process: `${host}:${pid}`, tag: s.slice(i, k + 1) } : undefined;
}

/** A row of the report whose tag is `tag`: `Signal: Segmentation fault (11)` → the signal, or a frame `[ 3] lib(fn+0x1d)[0x...]` → its function. */
export function openMpiRow(s: string, tag: string): { signal: number; what: string } | { fn: string } | undefined {
  const p = s.indexOf(`${tag} `);
  if (p < 0) return undefined;
  const i = p + tag.length + 1;
  if (s.startsWith("Signal: ", i)) {
    const open = s.lastIndexOf(" (");
    const signal = open > i ? readInt(s, open + 2, s.length) : undefined;
    return signal !== undefined ? { signal, what: s.slice(i + 8, open) } : undefined;
  }
  if (s.charCodeAt(i) !== 91 /* [ */) return undefined;
  const open = s.indexOf("(", i);
  const plus = open < 0 ? -1 : s.indexOf("+0x", open);
  return open > 0 && plus > open + 1 ? { fn: s.slice(open + 1, plus) } : undefined;
}

/** The crashes Open MPI's handler reported in one log, as UCX's are read (several processes' reports may interleave). */
export class OpenMpiSignalReader {
  readonly crashes: CaughtSignal[] = [];
  /** Reports whose end is not read yet, by their tag. */
  private readonly open = new Map<string, CaughtSignal>();

  constructor(private readonly source: string) {}

  line(text: string, lineNo: number): void {
    if (this.open.size > 0 && text.indexOf("] ") >= 0) {
      for (const [tag, c] of this.open) {
        if (text.indexOf(tag) < 0) continue;
        if (text.indexOf(END) >= 0) return void this.open.delete(tag);
        const row = openMpiRow(text, tag);
        if (row === undefined) return;
        if ("fn" in row) {
          if (c.frames.length < MAX_FRAMES) c.frames.push(row.fn);
        } else if (c.signal === 0) {
          c.signal = row.signal;
          c.what = row.what;
        }
        return;
      }
    }
    if (text.indexOf(MARK) < 0) return;
    const r = openMpiSignal(text);
    if (r === undefined || this.crashes.length >= MAX_CRASHES) return;
    const c: CaughtSignal = { process: r.process, handler: "Open MPI", tid: 0, signal: 0, what: "", frames: [], where: `${this.source}:${lineNo}` };
    this.crashes.push(c);
    this.open.set(r.tag, c);
  }
}
