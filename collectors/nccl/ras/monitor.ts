/**
 * A subscription to NCCL RAS monitor mode (NCCL 2.29+): one long-lived connection on which the
 * service pushes lifecycle events as they happen, a dead peer above all, instead of waiting for the
 * next STATUS poll.
 *
 *   > CLIENT PROTOCOL 2        < SERVER PROTOCOL 2
 *   > SET FORMAT json          < OK (2.28.7+), or `ERROR: Unknown command ...` (events come as text)
 *   > MONITOR lifecycle        < OK (2.29+), or `ERROR: Unknown command ...`: this job cannot be followed
 *   ... events (parse-event.ts) until either side closes
 *
 * Connected only when asked (after a STATUS query found a job); an NCCL without monitor mode is not
 * asked again until reset() (a new job). With `verify`, who answered is checked after its greeting,
 * as for a query (client.ts): a refused one is never subscribed to, and no event of it is read.
 * Never throws; every state change is reported.
 */
import { connect, type Socket } from "node:net";
import { RAS_CLIENT_PROTOCOL, refusedPeer, type RasAddress } from "./client.js";
import { RasEventReader, type RasEvent } from "./parse-event.js";
import type { RasConnection } from "./socket-owner.js";

export type RasMonitorState = "off" | "connecting" | "subscribed" | "unsupported";

export interface RasMonitorOptions {
  address: RasAddress;
  /** Deadline of the handshake (ms). */
  handshakeMs?: number;
  onEvent: (e: RasEvent) => void;
  /** Every change of state, with why. */
  onState: (state: RasMonitorState, reason: string) => void;
  /** Checks who answered (ras/socket-owner.ts): a reason to refuse it, or undefined. */
  verify?: (c: RasConnection) => string | undefined;
}

/** An event line is at most 2 KiB in NCCL (formattedNotification); longer is garbage. */
const MAX_LINE = 4096;

type Step = "protocol" | "format" | "monitor" | "events";

export class RasMonitor {
  private sock: Socket | undefined;
  private current: RasMonitorState = "off";
  /** Events and lines that were not events, since start. */
  events = 0;
  skipped = 0;

  constructor(private opts: RasMonitorOptions) {}

  get state(): RasMonitorState {
    return this.current;
  }

  /** Subscribes unless subscribed, on the way, or known unsupported. */
  ensure(): void {
    if (this.current !== "off") return;
    this.open();
  }

  /** Drops the connection and forgets that the job could not be followed (a new job may). */
  reset(address?: RasAddress): void {
    if (address !== undefined) this.opts = { ...this.opts, address };
    this.drop();
    if (this.current !== "off") this.set("off", "reset");
  }

  close(): void {
    this.drop();
    this.current = "off";
  }

  private set(state: RasMonitorState, reason: string): void {
    if (state === this.current) return;
    this.current = state;
    this.opts.onState(state, reason);
  }

  private drop(): void {
    const s = this.sock;
    this.sock = undefined;
    s?.destroy();
  }

  private open(): void {
    const { host, port } = this.opts.address;
    const sock = connect({ host, port });
    this.sock = sock;
    this.set("connecting", `${host}:${port}`);
    let step: Step = "protocol";
    let pending: Buffer = Buffer.alloc(0);
    const reader = new RasEventReader((e) => {
      this.events++;
      this.opts.onEvent(e);
    });
    const live = (): boolean => this.sock === sock;
    const end = (state: "off" | "unsupported", reason: string): void => {
      if (!live()) return;
      clearTimeout(timer);
      this.sock = undefined;
      sock.destroy();
      this.skipped += reader.skipped;
      this.set(state, reason);
    };
    const timer = setTimeout(() => end("off", `no answer to ${step} within ${this.opts.handshakeMs ?? 5000} ms`), this.opts.handshakeMs ?? 5000);
    timer.unref();
    sock.setKeepAlive(true, 30_000);
    sock.on("connect", () => sock.write(`CLIENT PROTOCOL ${RAS_CLIENT_PROTOCOL}\n`));
    sock.on("error", (err: NodeJS.ErrnoException) => end("off", err.code ?? err.message));
    sock.on("close", () => end("off", step === "events" ? "the RAS service closed the connection" : `closed at ${step}`));
    const reply = (line: string): void => {
      const upper = line.toUpperCase();
      if (step === "protocol") {
        if (!upper.startsWith("SERVER PROTOCOL ")) return end("off", `not an NCCL RAS service: "${line.slice(0, 80)}"`);
        const refused = refusedPeer(sock, this.opts.verify);
        if (refused !== undefined) return end("off", `not believed: ${refused}`);
        step = "format";
        sock.write("SET FORMAT json\n");
      } else if (step === "format") {
        step = "monitor"; // OK: JSON events; an error: text events
        sock.write("MONITOR lifecycle\n");
      } else if (step === "monitor") {
        if (upper !== "OK") return end("unsupported", `MONITOR refused: "${line.slice(0, 80)}" (NCCL before 2.29)`);
        step = "events";
        clearTimeout(timer);
        this.set("subscribed", `${host}:${port}`);
      } else reader.line(line);
    };
    sock.on("data", (data: Buffer) => {
      if (!live()) return;
      pending = pending.length === 0 ? data : Buffer.concat([pending, data]);
      for (let nl = pending.indexOf(10); nl >= 0 && live(); nl = pending.indexOf(10)) {
        const line = pending.subarray(0, nl).toString("utf8");
        pending = pending.subarray(nl + 1);
        reply(line.endsWith("\r") ? line.slice(0, -1) : line);
      }
      if (pending.length > MAX_LINE) end("off", `a line of more than ${MAX_LINE} bytes`);
    });
  }
}
