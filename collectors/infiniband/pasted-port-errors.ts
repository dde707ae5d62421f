/**
 * ibqueryerrors' rows (infiniband-diags) as people paste them beside their logs: a node's header
 * `Errors for 0x2c903006e29b0 "MF0;ys23ib4:SX6036/U1"` (or `Errors for "dl380g7 mlx4_0"`), then a row
 * per port whose counters passed their thresholds, `   GUID 0x7cfe900300179b31 port 1:
 * [VL15Dropped == 14] [PortXmitWait == 4294967295]`; newer versions add a rate (`[LinkDownedCounter
 * == 25 (25.000)]`). A switch's `port ALL` row sums its ports and comes before their rows: it is read
 * only where no row of its ports follows. The tool prints only counters past their thresholds, so
 * every row is news: link errors (a port that went down, symbol and receive errors: the cable, the
 * transceiver, the port) or only congestion (the time a port waited to send, packets it discarded, a
 * switch's relay errors, dropped management packets). `--counters`/`--data` add data counters
 * (`Data Counters for ...` rows, `[PortXmitData == ...]`): no news, not read. Cut at fixed words; no
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

/** Counters of congestion and drops: news, not a failing link. */
const CONGESTION: ReadonlySet<string> = new Set([
  "PortXmitWait",
  "XmtWait",
  "PortXmitDiscards",
  "XmtDiscards",
  "PortRcvSwitchRelayErrors",
  "PortXmitConstraintErrors",
  "PortRcvConstraintErrors",
  "VL15Dropped",
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
  /** The row's line. */
  lineNo: number;
}

/** At most this many counters of one row are looked at. */
const MAX_COUNTERS = 32;
const NONE: readonly PortErrorsReading[] = [];

export class PastedPortErrors {
  private node: string | undefined;
  /** Rows under a `Data Counters for` header, not an `Errors for` one. */
  private data = false;
  /** A `port ALL` row, held until a line says whether its ports' own rows follow. */
  private sum: PortErrorsReading | undefined;

  /** The readings this line settles: a held `port ALL` row no row of its ports followed, and the line's own row. */
  line(text: string, lineNo: number): readonly PortErrorsReading[] {
    let i = 0;
    // A mail's `> ` quote, blanks.
    while (i < text.length && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9 || text.charCodeAt(i) === 62)) i++;
    if (i === text.length) return NONE;
    // Most lines: no row, no header, nothing held to settle.
    const c = text.charCodeAt(i);
    if (c !== 71 /* G */ && c !== 69 /* E */ && c !== 68 /* D */ && this.sum === undefined && this.node === undefined && !this.data) return NONE;
    const isRow = text.startsWith("GUID 0x", i);
    // Data counters' rows, under their own header: no news.
    if (isRow && this.data) return NONE;
    const row = isRow ? this.row(text, i, lineNo) : undefined;
    const held = this.sum;
    this.sum = undefined;
    const out: PortErrorsReading[] = [];
    // The summed node's ports' own rows say which port: the sum is not read.
    if (held !== undefined && !(row !== undefined && row.guid === held.guid && row.port !== "ALL")) out.push(held);
    if (row !== undefined) {
      if (row.port === "ALL") this.sum = row;
      else if (row.linkErrors.length + row.others.length > 0) out.push(row);
    } else if (!isRow) {
      // Any other line ends the node's rows: its header names none of what follows.
      const header = text.startsWith("Errors for ", i) || text.startsWith("Data Counters for ", i);
      this.data = header && text.startsWith("Data", i);
      const q = header ? text.indexOf('"', i) : -1;
      const e = q >= 0 ? text.indexOf('"', q + 1) : -1;
      this.node = e > q && q >= 0 ? text.slice(q + 1, e) : undefined;
    }
    return out.length > 0 ? out : NONE;
  }

  /** A `port ALL` row the paste ended after. */
  end(): readonly PortErrorsReading[] {
    const held = this.sum;
    this.sum = undefined;
    return held !== undefined ? [held] : NONE;
  }

  /** `GUID 0x... port N: [Name == value] ...` at i; undefined where the line is no such row. */
  private row(text: string, i: number, lineNo: number): PortErrorsReading | undefined {
    const g = i + 5;
    let ge = g;
    while (ge < text.length && text.charCodeAt(ge) !== 32) ge++;
    if (!text.startsWith(" port ", ge)) return undefined;
    const colon = text.indexOf(": [", ge + 6);
    if (colon < 0 || colon - ge > 12) return undefined;
    const r: PortErrorsReading = { guid: text.slice(g, ge), port: text.slice(ge + 6, colon), linkErrors: [], others: [], lineNo };
    if (this.node !== undefined) r.node = this.node;
    for (let k = text.indexOf("[", colon), n = 0; k >= 0 && n < MAX_COUNTERS; k = text.indexOf("[", k + 1), n++) {
      const close = text.indexOf("]", k);
      const eq = text.indexOf(" == ", k);
      if (close < 0 || eq < 0 || eq > close) break;
      const name = text.slice(k + 1, eq);
      let ve = eq + 4;
      while (ve < close && text.charCodeAt(ve) !== 32) ve++;
      const value = text.slice(eq + 4, ve);
      // ibqueryerrors prints no counter at or below its threshold; a 0 is someone else's row.
      if (value !== "0" && value !== "") {
        if (LINK_ERRORS.has(name)) r.linkErrors.push(`${name} ${value}`);
        else if (CONGESTION.has(name)) r.others.push(`${name} ${value}`);
      }
      k = close;
    }
    return r.port === "ALL" && r.linkErrors.length + r.others.length === 0 ? undefined : r;
  }
}
