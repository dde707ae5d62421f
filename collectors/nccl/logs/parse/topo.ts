/**
 * Topology lines: peer links (which transport each connection uses), ring orders and trees.
 *
 *   Channel 00/0 : 3[3] -> 4[4] [send] via NET/IB/0/GDRDMA        (2.12+; peer[nvmlDev] from 2.18)
 *   Channel 00 : 1[a000] -> 0[7000] via P2P/IPC/read               (2.7-2.11; peer[busId])
 *   Ring 00 : 15 -> 0 [receive] via NET/Socket/0                   (2.4-2.6)
 *   Ring 00 : 2[0] -> 3[0] via direct shared memory                (2.4)
 *   CollNet 00/0 : 0 [receive] via COLLNET/SHARP/1/GDRDMA
 *   Channel 00/1 : 1[81000] -> 0[81000] [receive] via NET/IB/1/GDRDMA/Shared
 *   Channel 00/0 : 3[1] -> 4[0] [send] via NET/IBext_v8/5(2)/GDRDMA   (PXN through rank 2)
 *   Channel 00/02 :    0   1        Channel 00 :    0   1 ...      (ring order)
 *   Ring 00 : 1 -> 0 -> 1                                           (2.16 graph dump)
 *   Trees [0] 1/-1/-1->0->-1 [1] ...   2.7: [0] 1/-1/-1->0->-1|-1->0->1/-1/-1
 *   Connected all rings[, use ring PXN 0 GDR 1]   Connected all trees
 */
import type { ChannelEvent, ConnectedEvent, RingEvent, TransportKind, TreeEvent, TreeLink } from "./types.js";
import { find, isDigit, pos, readInt, skipSpaces, tokenEnd, trimEnd } from "./scan.js";

/** Parses a `Channel`, `Ring` or `CollNet` message at m (label already checked by the caller). */
export function parseChannelMsg(s: string, m: number, end: number): ChannelEvent | RingEvent | undefined {
  let i = m;
  while (i < end && s.charCodeAt(i) !== 32) i++;
  const channel = readInt(s, i + 1, end);
  if (channel === undefined) return undefined;
  i = pos;
  let slashNum: number | undefined;
  if (s.charCodeAt(i) === 47 /* / */) {
    slashNum = readInt(s, i + 1, end);
    if (slashNum === undefined) return undefined;
    i = pos;
  }
  i = skipSpaces(s, i, end);
  if (s.charCodeAt(i) !== 58 /* : */) return undefined;
  i = skipSpaces(s, i + 1, end);
  end = trimEnd(s, i, end);
  const via = find(s, "via ", i, end);
  if (via >= 0) return connection(s, i, via, end, channel, slashNum);
  const arrow = find(s, "->", i, end);
  if (arrow >= 0) {
    // Ring 00 : prev -> self -> next
    const prev = readInt(s, i, end);
    const a2 = find(s, "->", arrow + 2, end);
    if (prev === undefined || a2 < 0) return undefined;
    const self = readInt(s, skipSpaces(s, arrow + 2, end), end);
    const next = readInt(s, skipSpaces(s, a2 + 2, end), end);
    if (self === undefined || next === undefined) return undefined;
    return { kind: "ring", channel, prev, self, next };
  }
  const order: number[] = [];
  while (i < end) {
    const v = readInt(s, i, end);
    if (v === undefined) return undefined;
    order.push(v);
    i = skipSpaces(s, pos, end);
  }
  if (order.length === 0) return undefined;
  const ring: RingEvent = { kind: "ring", channel, order };
  if (slashNum !== undefined) ring.nChannels = slashNum;
  return ring;
}

/** Index just after the last peer() read. */
let after = 0;

/** `rank` or `rank[dev]` at i (dev is a busId or nvmlDev, kept as printed). */
function peer(s: string, i: number, end: number): [number, string | undefined] | undefined {
  const r = readInt(s, i, end);
  if (r === undefined) return undefined;
  after = pos;
  if (s.charCodeAt(pos) !== 91 /* [ */) return [r, undefined];
  const close = s.indexOf("]", pos);
  if (close < 0 || close >= end) return undefined;
  after = close + 1;
  return [r, s.slice(pos + 1, close)];
}

function connection(s: string, i: number, via: number, end: number, channel: number, connIndex: number | undefined): ChannelEvent | undefined {
  const from = peer(s, i, via);
  if (from === undefined) return undefined;
  let k = skipSpaces(s, after, via);
  const ev: ChannelEvent = { kind: "channel", channel, from: from[0], transport: "other", via: "", gdr: false };
  if (connIndex !== undefined) ev.connIndex = connIndex;
  if (from[1] !== undefined) ev.fromDev = from[1];
  if (s.startsWith("->", k)) {
    const to = peer(s, skipSpaces(s, k + 2, via), via);
    if (to === undefined) return undefined;
    ev.to = to[0];
    if (to[1] !== undefined) ev.toDev = to[1];
    k = skipSpaces(s, after, via);
  }
  if (s.startsWith("[send]", k)) ev.dir = "send";
  else if (s.startsWith("[receive]", k)) ev.dir = "receive";
  ev.via = s.slice(via + 4, end);
  classify(s, via + 4, end, ev);
  return ev;
}

/** Fills transport/net/netDev/proxyRank/gdr/shared/mode from the `via` text in [i, end). */
function classify(s: string, i: number, end: number, ev: ChannelEvent): void {
  let t: TransportKind = "other";
  for (const name of ["P2P", "SHM", "NET", "COLLNET"] as const) {
    if (s.startsWith(name, i) && s.charCodeAt(i + name.length) === 47 /* / */) t = name;
  }
  if (s.startsWith("NVLS", i)) t = "NVLS";
  else if (s.startsWith("direct shared memory", i)) t = "SHM";
  const rest = t === "other" || t === "NVLS" || s.charCodeAt(i) === 100 ? i : i + t.length + 1;
  ev.transport = t;
  if (t === "P2P" || t === "SHM") {
    if (rest < end && rest !== i) ev.mode = s.slice(rest, end);
    return;
  }
  if (t !== "NET" && t !== "COLLNET") return;
  // NET/<name>/<dev>[(proxy)][/GDRDMA][/Shared]
  let seg = s.indexOf("/", rest);
  if (seg < 0 || seg > end) seg = end;
  ev.net = s.slice(rest, seg);
  let k = seg + 1;
  while (k < end) {
    let next = s.indexOf("/", k);
    if (next < 0 || next > end) next = end;
    const c = s.charCodeAt(k);
    if (isDigit(c) && ev.netDev === undefined) {
      const d = readInt(s, k, next);
      if (d !== undefined) ev.netDev = d;
      if (s.charCodeAt(pos) === 40 /* ( */) {
        const p = readInt(s, pos + 1, next);
        if (p !== undefined) ev.proxyRank = p;
      }
    } else if (s.startsWith("GDRDMA", k)) ev.gdr = true;
    else if (s.startsWith("Shared", k)) ev.shared = true;
    k = next + 1;
  }
}

/** `Trees [0] 1/-1/-1->0->-1 [1] ...`; m points at "Trees". */
export function parseTrees(s: string, m: number, end: number): TreeEvent | undefined {
  const trees: TreeLink[] = [];
  let i = skipSpaces(s, m + 5, end);
  while (i < end && s.charCodeAt(i) === 91) {
    const channel = readInt(s, i + 1, end);
    if (channel === undefined || s.charCodeAt(pos) !== 93) return undefined;
    const ts = skipSpaces(s, pos + 1, end);
    const te = tokenEnd(s, ts, end);
    const link = treeLink(s, ts, te, channel);
    if (link === undefined) return undefined;
    trees.push(link);
    i = skipSpaces(s, te, end);
  }
  return trees.length > 0 ? { kind: "tree", trees } : undefined;
}

/** `d0/d1/d2->rank->up` (anything after '|' is the second tree of 2.7 and is ignored). */
function treeLink(s: string, i: number, end: number, channel: number): TreeLink | undefined {
  const down: number[] = [];
  let k = i;
  for (;;) {
    const v = readInt(s, k, end);
    if (v === undefined) return undefined;
    down.push(v);
    k = pos;
    if (s.charCodeAt(k) === 47) k++;
    else break;
  }
  if (!s.startsWith("->", k)) return undefined;
  const rank = readInt(s, k + 2, end);
  if (rank === undefined || !s.startsWith("->", pos)) return undefined;
  const up = readInt(s, pos + 2, end);
  if (up === undefined) return undefined;
  return { channel, rank, up, down: down.filter((d) => d >= 0) };
}

/** `Connected all rings[, use ring PXN 0 GDR 1]` / `Connected all trees`; m points at "Connected all ". */
export function parseConnected(s: string, m: number, end: number): ConnectedEvent | undefined {
  const k = m + 14;
  let what: "rings" | "trees";
  if (s.startsWith("rings", k)) what = "rings";
  else if (s.startsWith("trees", k)) what = "trees";
  else return undefined;
  const ev: ConnectedEvent = { kind: "connected", what };
  const pk = find(s, "PXN ", k, end);
  if (pk >= 0) {
    const v = readInt(s, pk + 4, end);
    if (v !== undefined) ev.pxn = v !== 0;
  }
  const gk = find(s, "GDR ", k, end);
  if (gk >= 0) {
    const v = readInt(s, gk + 4, end);
    if (v !== undefined) ev.gdr = v !== 0;
  }
  return ev;
}
