/**
 * Port states as people paste them beside their logs, read line by line: `ibstatus` (`Infiniband
 * device 'mlx5_11' port 1 status:`, then `state: 1: DOWN`, `phys state: 3: Disabled`), `ibstat`
 * (`CA 'mlx5_0'`, `Port 1:`, `State: Down`, `Physical state: Polling`) and iproute2's `rdma link`
 * (`link mlx5_7/1 subnet_prefix ... state DOWN physical_state POLLING`). Each port seen not Active
 * is one reading, its physical state saying why: no link (Polling: the cable, the transceiver, the
 * switch port), a link the subnet manager has not activated (LinkUp but Down, Init or Armed), or a
 * port switched off (Disabled). Lines are cut at fixed words; no regular expression.
 */

/** Why a port is not Active; `active` when it is (the caller tells a port that came back). */
export type PortTrouble = "no_link" | "not_activated" | "disabled" | "other" | "active";

export interface PortReading {
  hca: string;
  port: number;
  /** As printed, upper case: DOWN, INIT, ARMED. */
  state: string;
  /** Upper case, no blanks or underscores: POLLING, LINKUP, DISABLED, LINKERRORRECOVERY. */
  physical: string;
  trouble: PortTrouble;
  /** `ibstatus`, `ibstat` or `rdma link`. */
  tool: string;
}

/** `1: DOWN` / `Down` / `LINK_UP` → `DOWN` / `DOWN` / `LINKUP`. */
function norm(v: string): string {
  const c = v.indexOf(":");
  const word = (c >= 0 ? v.slice(c + 1) : v).trim();
  let out = "";
  for (const ch of word) if (ch !== "_" && ch !== " " && ch !== "\t") out += ch.toUpperCase();
  return out;
}

function troubleOf(state: string, physical: string): PortTrouble {
  if (state === "ACTIVE") return "active";
  if (physical === "DISABLED") return "disabled";
  if (physical === "POLLING") return "no_link";
  if (physical === "LINKUP") return "not_activated";
  return "other";
}

/** The value after `key` (a `Key:` label at i), trimmed; undefined when the line has another label. */
function after(s: string, i: number, key: string): string | undefined {
  return s.startsWith(key, i) ? s.slice(i + key.length).trim() : undefined;
}

export class PastedPortStates {
  private hca: string | undefined;
  private port: number | undefined;
  private state: string | undefined;
  private tool = "ibstatus";

  /** The reading a line completes (a port's state and physical state); undefined for any other line. */
  line(s: string): PortReading | undefined {
    let i = 0;
    while (i < s.length && (s.charCodeAt(i) === 32 || s.charCodeAt(i) === 9)) i++;
    switch (s.charCodeAt(i)) {
      case 73: // I: `Infiniband device 'mlx5_11' port 1 status:`
        if (s.startsWith("Infiniband device '", i)) {
          const q = s.indexOf("'", i + 19);
          const p = q < 0 ? -1 : s.indexOf(" port ", q);
          if (q > i + 19 && p === q + 1) this.open(s.slice(i + 19, q), Number.parseInt(s.slice(p + 6), 10), "ibstatus");
        }
        return undefined;
      case 67: // C: `CA 'mlx5_0'`
        if (s.startsWith("CA '", i)) {
          const q = s.indexOf("'", i + 4);
          if (q > i + 4) this.open(s.slice(i + 4, q), undefined, "ibstat");
        }
        return undefined;
      case 80: {
        // P: ibstat's `Port 1:`, `Physical state: Polling`
        if (s.startsWith("Port ", i) && this.hca !== undefined && this.tool === "ibstat") {
          const n = Number.parseInt(s.slice(i + 5), 10);
          if (Number.isSafeInteger(n) && s.trimEnd().endsWith(":")) {
            this.port = n;
            this.state = undefined;
          }
          return undefined;
        }
        const v = after(s, i, "Physical state:");
        return v !== undefined ? this.reading(norm(v)) : undefined;
      }
      case 83: {
        // S: ibstat's `State: Down`
        const v = after(s, i, "State:");
        if (v !== undefined && this.port !== undefined) this.state = norm(v);
        return undefined;
      }
      case 115: {
        // s: ibstatus's `state:\t\t 1: DOWN`
        const v = after(s, i, "state:");
        if (v !== undefined && this.port !== undefined) this.state = norm(v);
        return undefined;
      }
      case 112: {
        // p: ibstatus's `phys state:\t 3: Disabled`
        const v = after(s, i, "phys state:");
        return v !== undefined ? this.reading(norm(v)) : undefined;
      }
      case 108: // l: `link mlx5_7/1 ... state DOWN physical_state POLLING`
        return s.startsWith("link ", i) ? rdmaLink(s, i + 5) : undefined;
      default:
        return undefined;
    }
  }

  private open(hca: string, port: number | undefined, tool: string): void {
    this.hca = hca;
    this.port = port !== undefined && Number.isSafeInteger(port) ? port : undefined;
    this.state = undefined;
    this.tool = tool;
  }

  private reading(physical: string): PortReading | undefined {
    const { hca, port, state } = this;
    this.state = undefined;
    if (hca === undefined || port === undefined || state === undefined) return undefined;
    return { hca, port, state, physical, trouble: troubleOf(state, physical), tool: this.tool };
  }
}

/** `mlx5_7/1 subnet_prefix ... state DOWN physical_state POLLING ...` from i: the reading. */
function rdmaLink(s: string, i: number): PortReading | undefined {
  const sp = s.indexOf(" ", i);
  const slash = s.indexOf("/", i);
  if (sp < 0 || slash < 0 || slash > sp) return undefined;
  const port = Number.parseInt(s.slice(slash + 1, sp), 10);
  const st = s.indexOf(" state ", sp);
  const ph = s.indexOf(" physical_state ", sp);
  if (!Number.isSafeInteger(port) || st < 0 || ph < 0) return undefined;
  const word = (k: number): string => {
    const e = s.indexOf(" ", k);
    return s.slice(k, e < 0 ? s.length : e);
  };
  const state = norm(word(st + 7));
  const physical = norm(word(ph + 16));
  return { hca: s.slice(i, slash), port, state, physical, trouble: troubleOf(state, physical), tool: "rdma link" };
}
