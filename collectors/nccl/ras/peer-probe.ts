/**
 * One check of another node's agent (ras/peers.ts): `GET http://<node>:<port>/nccl/ras-role`, with a
 * deadline and a 4 KiB cap on the answer. Gone: nothing accepted the connection (refused, no route),
 * or nothing answered by the deadline (a hung agent serves no one either). Alive: any HTTP answer,
 * or a connection the far end reset (an agent serving TLS or refusing plain HTTP); its JSON is read
 * when the answer is a 200.
 */
import { request } from "node:http";
import type { RasRole } from "./job-view.js";
import type { PeerAnswer, ProbeResult } from "./peers.js";

const MAX_BYTES = 4096;
/** A check of another node's agent gives up after this long: that agent, or its node, is taken as gone. */
export const PEER_DEADLINE_MS = 2000;
export const PEER_ROLE_PATH = "/nccl/ras-role";

export function formatHost(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

export function probePeer(node: string, port: number, deadlineMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (r: ProbeResult): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      resolve(r);
    };
    const req = request({
      host: node.replace(/^\[|\]$/g, ""),
      port,
      path: PEER_ROLE_PATH,
      method: "GET",
      agent: false,
      headers: { accept: "application/json" },
    });
    let connected = false;
    const timer = setTimeout(
      () => finish({ kind: "gone", reason: connected ? "no answer within the deadline" : "no connection within the deadline" }),
      deadlineMs,
    );
    req.on("socket", (s) => s.once("connect", () => (connected = true)));
    req.on("error", (err: NodeJS.ErrnoException) => {
      if (connected) finish({ kind: "alive" });
      else finish({ kind: "gone", reason: err.code ?? err.message });
    });
    req.on("response", (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return finish({ kind: "alive" });
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (b: Buffer) => {
        size += b.length;
        if (size > MAX_BYTES) return finish({ kind: "alive" });
        chunks.push(b);
      });
      res.on("end", () => finish({ kind: "alive", answer: parseAnswer(Buffer.concat(chunks).toString("utf8")) }));
      res.on("error", () => finish({ kind: "alive" }));
    });
    req.end();
  });
}

const ROLES: readonly RasRole[] = ["querier", "listener", "undetermined"];

/** The JSON of /nccl/ras-role; undefined when it is not one. */
export function parseAnswer(text: string): PeerAnswer | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== "object" || v === null) return undefined;
  const o = v as Record<string, unknown>;
  const role = ROLES.find((r) => r === o.role);
  if (role === undefined) return undefined;
  const job = typeof o.job === "string" ? o.job : null;
  const age = typeof o.last_report_age_seconds === "number" && Number.isFinite(o.last_report_age_seconds) ? o.last_report_age_seconds : null;
  return { job, role, lastReportAgeSeconds: age };
}
