/**
 * Port states as people paste them beside their logs, read line by line: `ibstatus` (`Infiniband
 * device 'mlx5_11' port 1 status:`, then `state: 1: DOWN`, `phys state: 3: Disabled`), `ibstat`
 * (`CA 'mlx5_0'`, `Port 1:`, `State: Down`, `Physical state: Polling`) and iproute2's `rdma link`
 * (`link mlx5_7/1 subnet_prefix ... state DOWN physical_state POLLING`), and `ibv_devinfo`
 * (`hca_id: mlx5_0`, `port:   1`, `state:   PORT_DOWN (1)`; its physical state only with -v, after
 * other rows, so a port is read at its state: `other` where it is not Active). Each port seen not Active
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
  /** Upper case, no blanks or underscores: POLLING, LINKUP, DISABLED, LINKERRORRECOVERY; empty where the tool printed none (ibv_devinfo). */
  physical: string;
  trouble: PortTrouble;
  /** `ibstatus`, `ibstat`, `rdma link` or `ibv_devinfo`. */
  tool: string;
}

/** ibv_devinfo's `PORT_DOWN (1)` / `PORT_ACTIVE (4)` → `DOWN` / `ACTIVE`. */
function devinfoState(v: string): string {
  const paren = v.indexOf("(");
  const word = norm(paren >= 0 ? v.slice(0, paren) : v);
  return word.startsWith("PORT") ? word.slice(4) : word;
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
  // ACTIVE_DEFER (the kernel's, sysfs's and rdma's state while the port waits to send) is Active.
  if (state.startsWith("ACTIVE")) return "active";
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
  private header: string | undefined;

  /** The HCA whose output a header line began since the last call (a new `ibstat`/`ibstatus` of it), once. */
  takeHeader(): string | undefined {
    const h = this.header;
    this.header = undefined;
    return h;
  }

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
        // P: ibstat's `Port 1:` (indented under its `CA '...'`), `Physical state: Polling`
        if (s.startsWith("Port ", i)) {
          const n = Number.parseInt(s.slice(i + 5), 10);
          if (!Number.isSafeInteger(n) || !s.trimEnd().endsWith(":")) return undefined;
          // `ibstat mlx5_3 1` prints its port alone, no CA line before it: whose it is, the lines do not say.
          if (i > 0 && this.hca !== undefined && this.tool === "ibstat") this.port = n;
          else this.open(undefined, undefined, "ibstat");
          this.state = undefined;
          return undefined;
        }
        const v = this.tool === "ibstat" ? after(s, i, "Physical state:") : undefined;
        return v !== undefined ? this.reading(norm(v)) : undefined;
      }
      case 83: {
        // S: ibstat's `State: Down`
        const v = this.tool === "ibstat" ? after(s, i, "State:") : undefined;
        if (v !== undefined && this.port !== undefined) this.state = norm(v);
        return undefined;
      }
      case 115: {
        // s: ibstatus's `state:\t\t 1: DOWN`; ibv_devinfo's `state:   PORT_DOWN (1)`, read there.
        const v = this.tool === "ibstatus" || this.tool === "ibv_devinfo" ? after(s, i, "state:") : undefined;
        if (v === undefined || this.port === undefined) return undefined;
        if (this.tool === "ibstatus") {
          this.state = norm(v);
          return undefined;
        }
        this.state = devinfoState(v);
        return this.reading("");
      }
      case 104: // h: ibv_devinfo's `hca_id: mlx5_0`
        if (s.startsWith("hca_id:", i)) {
          const name = s.slice(i + 7).trim();
          if (name !== "" && name.indexOf(" ") < 0) this.open(name, undefined, "ibv_devinfo");
        }
        return undefined;
      case 112: {
        // p: ibv_devinfo's `port:   1`
        if (this.tool === "ibv_devinfo") {
          const v = after(s, i, "port:");
          if (v !== undefined) {
            const n = Number.parseInt(v, 10);
            this.port = Number.isSafeInteger(n) ? n : undefined;
            this.state = undefined;
          }
          return undefined;
        }
        // p: ibstatus's `phys state:\t 3: Disabled`
        const v = this.tool === "ibstatus" ? after(s, i, "phys state:") : undefined;
        return v !== undefined ? this.reading(norm(v)) : undefined;
      }
      case 108: // l: `link mlx5_7/1 ... state DOWN physical_state POLLING`
        return s.startsWith("link ", i) ? rdmaLink(s, i + 5) : undefined;
      default: {
        // Older iproute2: `1/1: mlx5_0/1: state DOWN physical_state POLLING netdev ib0`.
        const c = s.charCodeAt(i);
        if (c < 48 || c > 57) return undefined;
        const sep = s.indexOf(": ", i);
        return sep > i && sep - i <= 12 ? rdmaAt(s, i, sep) : undefined;
      }
    }
  }

  private open(hca: string | undefined, port: number | undefined, tool: string): void {
    if (hca !== undefined) this.header = hca;
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

/** `1/1: mlx5_0/1: ...`: the older form's index before the device, `N/N` from i to sep. */
function rdmaAt(s: string, i: number, sep: number): PortReading | undefined {
  const slash = s.indexOf("/", i);
  if (slash < 0 || slash > sep) return undefined;
  for (let k = i; k < sep; k++) {
    const c = s.charCodeAt(k);
    if (k !== slash && (c < 48 || c > 57)) return undefined;
  }
  return rdmaLink(s, sep + 2);
}

/** `mlx5_7/1 subnet_prefix ... state DOWN physical_state POLLING ...` from i (`mlx5_0/1: ...` in the older form): the reading. */
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
