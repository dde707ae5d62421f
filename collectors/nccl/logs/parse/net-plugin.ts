/**
 * A net plugin's failed request, as aws-ofi-nccl words it (NCCL_OFI_WARN prefixes `NET/OFI `):
 *
 *   NET/OFI Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 (UNDELIVERABLE). Completed length: 0      (1.10-1.17)
 *   NET/OFI Request 0x.. completed with error. RC: 5. Error: Input/output error. Completed length: 0, Request: ...   (1.6-1.9)
 *   NET/OFI Request 0x.. seq 4 completed with error. RC: 113. ...  /  NET/OFI Remote write completed with error. RC: ...
 *   NET/OFI Request 0x.. (send) completed with error: err: 113, flags: 0, prov_errno: 2, strerror: UNDELIVERABLE, len: 0  (1.18+)
 *
 * RC is the libfabric error number (113: host unreachable); the provider's words (UNDELIVERABLE)
 * go to `error`. Also read when only the message is quoted, as PyTorch's `Last error:` continuation
 * (`[rank3]: NET/OFI Request ... completed with error ...`): see quoted-net.ts.
 */
import type { WarnDetail } from "./types.js";
import { find, readInt, skipSpaces } from "./scan.js";

/** Fills d for a plugin request that completed with an error and returns true; false otherwise. */
export function netCompletion(s: string, i: number, end: number, d: WarnDetail): boolean {
  if (!s.startsWith("NET/", i) || find(s, "completed with error", i, end) < 0) return false;
  d.warnKind = "net_completion_error";
  const rk = find(s, "RC: ", i, end);
  const ek = rk >= 0 ? rk + 4 : find(s, "err: ", i, end) + 5;
  const rc = ek >= 4 ? readInt(s, ek, end) : undefined;
  if (rc !== undefined) d.rc = rc;
  const sk = find(s, "strerror: ", i, end);
  if (sk >= 0) {
    const c = s.indexOf(",", sk);
    d.error = s.slice(sk + 10, c > sk && c < end ? c : end);
    return true;
  }
  const ok = find(s, "Error: ", i, end);
  if (ok < 0) return true;
  const lp = s.indexOf("(", ok);
  const dot = s.indexOf(". ", ok);
  const stop = dot > ok && dot < end ? dot : end;
  if (lp > ok && lp < stop) {
    const rp = s.indexOf(")", lp);
    if (rp > lp && rp < stop) d.error = s.slice(lp + 1, rp);
  } else {
    d.error = s.slice(skipSpaces(s, ok + 7, stop), stop);
  }
  return true;
}
