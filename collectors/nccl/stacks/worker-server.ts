/**
 * PyTorch's torch.distributed.debug frontend (rank 0's debug server) gathers every rank's stacks
 * from the ranks' worker servers (`POST <addr>/handler/dump_traceback`: faulthandler's dump of all
 * threads; `/handler/pyspy_dump`: `py-spy dump --pid <its own pid>`), and gives them as
 * (torch/distributed/debug/_debug_handlers.py, _frontend.py; docs/nccl.md#python-stacks-beside-the-logs):
 *
 * - the periodic dump file `stacks_<YYYYmmdd_HHMMSS>.txt` (`pyspy_dump_...` for py-spy):
 *   `=== Rank 3: http://node1:40123/handler/dump_traceback? ===` then that rank's text, or `Error: 503`;
 * - the `/stacks` and `/pyspy_dump` pages (HTML, the text unescaped in `<pre>`):
 *   `<h2>Rank 3: http://node1:40123/handler/dump_traceback?</h2>`, then `<pre>Thread 0x...` ...
 *   `</pre>`, or `<p>Failed to fetch: status=503</p>`.
 *
 * The rank is the index of the worker's address in the store's keys `rank0..rank<world-1>`, each
 * set by its rank to its global rank's address: the global rank.
 */

export interface RankSection {
  rank: number;
  host?: string;
}

/** `=== Rank 3: http://node1:40123/handler/dump_traceback? ===` or `<h2>Rank 3: ...</h2>` → rank 3 on node1. */
export function rankSection(s: string, i: number, end: number): RankSection | undefined {
  let k: number;
  if (s.startsWith("=== Rank ", i)) k = i + 9;
  else if (s.startsWith("<h2>Rank ", i)) k = i + 9;
  else return undefined;
  let rank = 0;
  const start = k;
  while (k < end && k - start < 9 && s.charCodeAt(k) >= 48 && s.charCodeAt(k) <= 57) rank = rank * 10 + (s.charCodeAt(k++) - 48);
  if (k === start || s.charCodeAt(k) !== 58) return undefined;
  const host = hostOf(s, k + 1, end);
  return host === undefined ? { rank } : { rank, host };
}

/** The host of `http://node1:40123/...` (`[::1]` for IPv6) after i. */
function hostOf(s: string, i: number, end: number): string | undefined {
  const scheme = s.indexOf("://", i);
  if (scheme < 0 || scheme >= end) return undefined;
  let k = scheme + 3;
  const start = k;
  if (s.charCodeAt(k) === 91 /* [ */) {
    const close = s.indexOf("]", k);
    return close > k && close < end ? s.slice(k, close + 1) : undefined;
  }
  while (k < end && k - start < 255) {
    const c = s.charCodeAt(k);
    if (c === 58 || c === 47 || c === 32 || c === 60) break;
    k++;
  }
  return k > start ? s.slice(start, k) : undefined;
}

/** The HTML page's `<pre>` that opens a rank's text (the text follows on the same line). */
export const PRE_OPEN = "<pre>";
/** ... and the `</pre>` after its last line. */
export const PRE_CLOSE = "</pre>";
