/**
 * The kubelet's pod-resources API, v1 List, over its unix socket (as dcgm-exporter reads it): which
 * devices each pod's containers were given. One connection per call, closed after it: a poll every
 * half minute does not need a channel kept open, and a kubelet restart needs no reconnect logic.
 *
 * The proto is the kubelet's own (podresources/api.proto, vendored); @grpc/proto-loader reads it
 * from beside this module (in dist/ the build copies it there), or, in the single executable, from
 * the JSON the bundler embedded (embedded.ts).
 */
import { access, constants } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { credentials, loadPackageDefinition, type GrpcObject, type ServiceClientConstructor, type ServiceError } from "@grpc/grpc-js";
import { fromJSON, loadSync } from "@grpc/proto-loader";
import { EMBEDDED } from "../embedded.js";

/** The vendored proto beside this module (none in the single executable, whose code has no file of its own). */
export const PROTO_PATH = EMBEDDED === undefined ? fileURLToPath(new URL("./podresources/api.proto", import.meta.url)) : "";

/** One device a container was given. */
export interface PodDevice {
  namespace: string;
  pod: string;
  container: string;
  resourceName: string;
  deviceId: string;
}

export type PodResourcesResult =
  | { state: "ok"; devices: PodDevice[] }
  /** No socket at the path: no kubelet here, or the directory is not mounted. */
  | { state: "absent"; message: string }
  /** The socket (or its directory) may not be opened by this user. */
  | { state: "denied"; message: string }
  | { state: "error"; message: string };

/** What List returns, as proto-loader decodes it (keepCase). Every field may be missing. */
interface ListResponse {
  pod_resources?: {
    name?: string;
    namespace?: string;
    containers?: { name?: string; devices?: { resource_name?: string; device_ids?: string[] }[] }[];
  }[];
}

type ListClient = InstanceType<ServiceClientConstructor> & {
  List(req: object, opts: { deadline: number }, cb: (err: ServiceError | null, res?: ListResponse) => void): void;
};

let lister: ServiceClientConstructor | undefined;

function listerClass(): ServiceClientConstructor {
  if (lister !== undefined) return lister;
  const options = { keepCase: true, longs: String, enums: String, defaults: true };
  const def = EMBEDDED === undefined ? loadSync(PROTO_PATH, options) : fromJSON(EMBEDDED.podResourcesApi, options);
  const v1 = loadPackageDefinition(def)["v1"] as GrpcObject;
  lister = v1["PodResourcesLister"] as ServiceClientConstructor;
  return lister;
}

function errnoCode(err: unknown): string | undefined {
  return typeof err === "object" && err !== null && "code" in err ? String(err.code) : undefined;
}

/** The response's devices, one per (container, device id); entries without a pod name are skipped. */
export function flattenDevices(res: ListResponse): PodDevice[] {
  const out: PodDevice[] = [];
  for (const p of res.pod_resources ?? []) {
    if (!p.name) continue;
    for (const c of p.containers ?? []) {
      for (const d of c.devices ?? []) {
        for (const id of d.device_ids ?? []) {
          if (id) out.push({ namespace: p.namespace ?? "", pod: p.name, container: c.name ?? "", resourceName: d.resource_name ?? "", deviceId: id });
        }
      }
    }
  }
  return out;
}

/** Responses bigger than this are refused (a node with hundreds of pods answers in kilobytes). */
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

export async function listPodResources(socketPath: string, timeoutMs: number): Promise<PodResourcesResult> {
  try {
    // connect() on a unix socket needs write permission on it, and search permission on its directory.
    await access(socketPath, constants.W_OK);
  } catch (err) {
    const code = errnoCode(err);
    if (code === "ENOENT" || code === "ENOTDIR") return { state: "absent", message: `${socketPath}: no such socket` };
    if (code === "EACCES" || code === "EPERM") return { state: "denied", message: `${socketPath}: permission denied (${code})` };
    return { state: "error", message: `${socketPath}: ${code ?? String(err)}` };
  }
  let client: ListClient;
  try {
    const Lister = listerClass();
    client = new Lister(`unix://${socketPath}`, credentials.createInsecure(), { "grpc.max_receive_message_length": MAX_RESPONSE_BYTES }) as ListClient;
  } catch (err) {
    return { state: "error", message: `pod-resources client: ${err instanceof Error ? err.message : String(err)}` };
  }
  try {
    const res = await new Promise<ListResponse>((resolve, reject) => {
      client.List({}, { deadline: Date.now() + timeoutMs }, (err, r) => (err ? reject(err) : resolve(r ?? {})));
    });
    return { state: "ok", devices: flattenDevices(res) };
  } catch (err) {
    const details = (err as Partial<ServiceError>).details ?? (err instanceof Error ? err.message : String(err));
    if (/EACCES|EPERM/.test(details)) return { state: "denied", message: `${socketPath}: permission denied (${details})` };
    if (/ENOENT/.test(details)) return { state: "absent", message: `${socketPath}: no such socket` };
    return { state: "error", message: `pod-resources List on ${socketPath}: ${details}` };
  } finally {
    client.close();
  }
}
