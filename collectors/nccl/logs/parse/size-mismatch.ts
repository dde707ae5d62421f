/**
 * NCCL's size-mismatch WARNs: a message of another size than the one posted arrived. On a data
 * connection that means the two ranks issued different collectives or sizes (or disagree on
 * NCCL_PROTO / NCCL_ALGO); in the bootstrap it means they disagree on the setup exchange.
 * Every form NCCL 2.3-2.30 writes (read from the writers in src/):
 *
 *   NET/IB : collective mismatch error local size %d remote %d addr %lx rkey %x seq %x/%x          2.3-2.9 (net_ib.cu/.cc)
 *   NET/IB : peer %s collective mismatch error local size %d remote %d addr ...                    2.10-2.11
 *   NET/IB : req %d/%d tag %x peer %s collective mismatch error, local size %d remote size %d      2.12-2.19 (gone from 2.20)
 *   NET/Socket : message truncated : receiving %d bytes instead of %d                              2.4-2.9
 *   NET/Socket : peer %s message truncated : receiving %d bytes instead of %d. If you believe ...   2.10-2.30
 *   Message truncated : received %d bytes instead of %d                                            bootstrap.cc 2.7-2.30 (2.3: net_socket.cu)
 *   Message truncated : received %d,%d bytes instead of %d,%d                                      bootstrap.cc 2.28+ (the first pair is kept)
 *
 * Sizes are bytes. `localSize` is what this process posted or sent, `remoteSize` what the peer did:
 * IB `local size L remote R` is the send size L against the receive buffer R the peer posted; a
 * socket or bootstrap `receiving|received X bytes instead of Y` is the peer's X against the Y posted here.
 */
import type { WarnDetail } from "./types.js";
import { find, readInt, skipSpaces } from "./scan.js";

/** Fills d for a size-mismatch WARN in [i, end) and returns true; false (d untouched) for other messages. */
export function sizeMismatch(s: string, i: number, end: number, d: WarnDetail): boolean {
  let k: number;
  if ((k = find(s, "collective mismatch error", i, end)) >= 0) {
    d.warnKind = "collective_mismatch";
    d.sizeMismatch = "data";
    const lk = find(s, "local size ", k, end);
    const local = lk < 0 ? undefined : readInt(s, lk + 11, end);
    const rk = lk < 0 ? -1 : find(s, " remote ", lk, end);
    let r = rk < 0 ? -1 : skipSpaces(s, rk + 8, end);
    if (r >= 0 && s.startsWith("size ", r)) r += 5;
    const remote = r < 0 ? undefined : readInt(s, r, end);
    set(d, local, remote);
    return true;
  }
  // `NET/<transport> : [peer X ]message truncated :`: a data connection; `Message truncated :` opening the message: the bootstrap.
  const data = s.startsWith("NET/", i);
  if (data) {
    if ((k = find(s, "message truncated :", i, end)) < 0) return false;
  } else if (s.startsWith("Message truncated :", i)) k = i;
  else return false;
  d.warnKind = data ? "collective_mismatch" : "bootstrap_error";
  d.sizeMismatch = data ? "data" : "bootstrap";
  const rk = find(s, data ? "receiving " : "received ", k, end);
  const got = rk < 0 ? undefined : readInt(s, rk + (data ? 10 : 9), end);
  const ik = rk < 0 ? -1 : find(s, " instead of ", rk, end);
  const posted = ik < 0 ? undefined : readInt(s, ik + 12, end);
  set(d, posted, got);
  return true;
}

function set(d: WarnDetail, local: number | undefined, remote: number | undefined): void {
  if (local !== undefined) d.localSize = local;
  if (remote !== undefined) d.remoteSize = remote;
}
