/**
 * ibqueryerrors' rows (infiniband-diags) as people paste them beside their logs: a node's header
 * `Errors for 0x2c903006e29b0 "MF0;ys23ib4:SX6036/U1"` (or `Errors for "dl380g7 mlx4_0"`), then a row
 * per port whose counters passed their thresholds, `   GUID 0x7cfe900300179b31 port 1:
 * [VL15Dropped == 14] [PortXmitWait == 4294967295]`; newer versions add a rate (`[LinkDownedCounter
 * == 25 (25.000)]`), and a switch's `port ALL` row sums its ports. The tool prints only counters past
 * their thresholds, so every row is news: link errors (a port that went down, symbol and receive
 * errors: the cable, the transceiver, the port) or only congestion (the time a port waited to send,
 * packets it discarded, a switch's relay errors, dropped management packets). Cut at fixed words; no
 * regular expression.
 */

/** Counters that say the link itself is failing (PortCounters, IBA vol. 1). */
const LINK_ERRORS: ReadonlySet<string> = new Set([
  "SymbolErrorCounter",
  "LinkErrorRecoveryCounter",
  "LinkDownedCounter",
  "PortRcvErrors",
  "PortRcvRemotePhysicalErrors",
  "LocalLinkIntegrityErrors",
  "ExcessiveBufferOverrunErrors",
]);

export interface PortErrorsReading {
  /** The port's GUID as printed (`0x1070fd0300370ea2`). */
  guid: string;
  /** The port number, or `ALL` for a node's sum. */
  port: string;
  /** The node's description from its header (`dl380g7 mlx4_0`: an HCA's host and device), where one came. */
  node?: string;
  /** Counters past threshold that say the link fails, as printed (`LinkDownedCounter 25`). */
  linkErrors: string[];
  /** The others: congestion and drops (`PortXmitWait 14681376621`). */
  others: string[];
}

/** At most this many counters of one row are kept. */
const MAX_COUNTERS = 32;

export class PastedPortErrors {
  private node: string | undefined;
  /** The GUID of the last `port ALL` row: the rows of its ports after it are parts of that sum. */
  private summed: string | undefined;

  line(text: string): PortErrorsReading | undefined {
    let i = 0;
    // A mail's `> ` quote, blanks.
    while (i < text.length && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9 || text.charCodeAt(i) === 62)) i++;
    if (text.startsWith("Errors for ", i)) {
      const q = text.indexOf('"', i);
      const e = q >= 0 ? text.indexOf('"', q + 1) : -1;
      this.node = q >= 0 && e > q ? text.slice(q + 1, e) : undefined;
      this.summed = undefined;
      return undefined;
    }
    if (!text.startsWith("GUID 0x", i)) return undefined;
    const g = i + 5;
    let ge = g;
    while (ge < text.length && text.charCodeAt(ge) !== 32) ge++;
    if (!text.startsWith(" port ", ge)) return undefined;
    const colon = text.indexOf(": [", ge + 6);
    if (colon < 0 || colon - ge > 12) return undefined;
    const guid = text.slice(g, ge);
    const port = text.slice(ge + 6, colon);
    if (port === "ALL") this.summed = guid;
    else if (this.summed === guid) return undefined;
    const r: PortErrorsReading = { guid, port, linkErrors: [], others: [] };
    if (this.node !== undefined) r.node = this.node;
    for (let k = text.indexOf("[", colon), n = 0; k >= 0 && n < MAX_COUNTERS; k = text.indexOf("[", k + 1), n++) {
      const close = text.indexOf("]", k);
      const eq = text.indexOf(" == ", k);
      if (close < 0 || eq < 0 || eq > close) break;
      const name = text.slice(k + 1, eq);
      let ve = eq + 4;
      while (ve < close && text.charCodeAt(ve) !== 32) ve++;
      const counter = `${name} ${text.slice(eq + 4, ve)}`;
      (LINK_ERRORS.has(name) ? r.linkErrors : r.others).push(counter);
      k = close;
    }
    return r.linkErrors.length + r.others.length > 0 ? r : undefined;
  }
}
