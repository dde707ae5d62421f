/**
 * Open MPI's own signal handler (opal's backtrace, in every process mpirun starts), as it reports a
 * crash: `[rtptest1621:405884] *** Process received signal ***`, then rows of the same prefix
 * (`Signal: Segmentation fault (11)`, `Signal code: Address not mapped (1)`, `[ 0] /lib64/
 * libpthread.so.0(+0xf630)[0x7f...]`, `[ 3] /usr/lib/libnccl.so.2(ncclGroupEnd+0x1d)[0x...]`) and
 * `*** End of error message ***` (nccl-pasted 648). The prefix `[host:pid]` names the process as
 * NCCL's lines do. Cut at fixed words; no regular expression.
 */
import { readInt, pos } from "../parse/scan.js";

export const OPEN_MPI_MARK = "] *** Process received signal ***";
export const OPEN_MPI_END = "*** End of error message ***";

/** `[host:pid] *** Process received signal ***` (after blanks or a launcher's tag) → `host:pid`; undefined otherwise. */
export function openMpiSignal(s: string): string | undefined {
  const k = s.indexOf(OPEN_MPI_MARK);
  if (k < 0) return undefined;
  const i = s.lastIndexOf("[", k);
  const c = i < 0 ? -1 : s.indexOf(":", i + 1);
  if (c <= i + 1 || c > k) return undefined;
  const host = s.slice(i + 1, c);
  if (host.indexOf(" ") >= 0) return undefined;
  const pid = readInt(s, c + 1, k);
  return pid !== undefined && pos === k ? `${host}:${pid}` : undefined;
}

/** A row of the report: `Signal: Segmentation fault (11)` → the signal, or a frame `[ 3] lib(fn+0x1d)[0x...]` → its function. */
export function openMpiRow(s: string, process: string): { signal: number; what: string } | { fn: string } | undefined {
  const p = s.indexOf(`[${process}] `);
  if (p < 0) return undefined;
  const i = p + process.length + 3;
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
