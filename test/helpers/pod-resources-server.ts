/**
 * A fake kubelet pod-resources server: the same proto (collectors/job/podresources/api.proto)
 * served by @grpc/grpc-js on a real unix socket, answering List with the pods the test gives.
 */
import { loadPackageDefinition, Server, ServerCredentials, status, type GrpcObject, type ServiceClientConstructor } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { PROTO_PATH } from "../../collectors/job/pod-resources.js";

export interface FakePod {
  name: string;
  namespace: string;
  containers: { name: string; devices: { resource_name: string; device_ids: string[] }[] }[];
}

export interface FakePodResources {
  /** List calls answered so far. */
  readonly calls: number;
  setPods(pods: FakePod[]): void;
  close(): Promise<void>;
}

/** One container given GPUs (resource nvidia.com/gpu). */
export function gpuPod(namespace: string, name: string, container: string, uuids: string[]): FakePod {
  return { name, namespace, containers: [{ name: container, devices: [{ resource_name: "nvidia.com/gpu", device_ids: uuids }] }] };
}

export async function startPodResourcesServer(socketPath: string, initial: FakePod[] = []): Promise<FakePodResources> {
  const def = loadSync(PROTO_PATH, { keepCase: true, longs: String, enums: String, defaults: true });
  const v1 = loadPackageDefinition(def)["v1"] as GrpcObject;
  const service = (v1["PodResourcesLister"] as ServiceClientConstructor).service;
  let pods = initial;
  let calls = 0;
  const server = new Server();
  const unimplemented = (_call: unknown, cb: (err: { code: number; details: string }) => void): void =>
    cb({ code: status.UNIMPLEMENTED, details: "not in the fake" });
  server.addService(service, {
    List: (_call: unknown, cb: (err: null, res: object) => void) => {
      calls++;
      cb(null, { pod_resources: pods });
    },
    Get: unimplemented,
    GetAllocatableResources: unimplemented,
  });
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socketPath}`, ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );
  return {
    get calls() {
      return calls;
    },
    setPods(p) {
      pods = p;
    },
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}
