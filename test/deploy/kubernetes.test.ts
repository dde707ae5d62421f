import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, posix, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import { DaemonSet, type IDaemonSet } from "kubernetes-models/apps/v1/DaemonSet";
import { ConfigMap, type IConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Namespace } from "kubernetes-models/v1/Namespace";
import { Service, type IService } from "kubernetes-models/v1/Service";
import { ServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import type { IContainer } from "kubernetes-models/v1/Container";
import type { IPodSpec } from "kubernetes-models/v1/PodSpec";
import { PrometheusRule, type IPrometheusRule } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule";
import { ServiceMonitor, type IServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor";
import { parseCli, type AgentConfig } from "../../agent/config/config.js";
import { gate } from "./binaries.js";

// The manifests in deploy/kubernetes are checked against the OpenAPI schemas that the
// kubernetes-models packages compile into validators (Kubernetes' own API, and the Prometheus
// Operator's CRDs): no cluster and no network needed. On top of that: the security posture,
// the agent's flags (parsed by the agent's own parser), and the PrometheusRule's single source.
// Sub-directories are optional pieces outside the base (grafana-dashboard/: the dashboard as a
// ConfigMap for kube-prometheus-stack's Grafana sidecar, generated from deploy/grafana).

const root = resolve(import.meta.dirname, "../..");
const dir = join(root, "deploy/kubernetes");
const generator = join(root, "scripts/gen-prometheusrule.mjs");
const dashboardGenerator = join(root, "scripts/gen-dashboard-configmap.mjs");
const dashboardDir = join(dir, "grafana-dashboard");
const dashboardFile = join(root, "deploy/grafana/ringwatch-dashboard.json");

type Obj = Record<string, unknown>;

interface Manifest {
  file: string;
  index: number;
  obj: Obj;
}

/** Every YAML document of a multi-document text (empty documents skipped); a syntax error throws. */
function documents(text: string, file: string): Obj[] {
  const out: Obj[] = [];
  for (const d of parseAllDocuments(text)) {
    if (d.errors.length > 0) throw new Error(`${file}: ${d.errors.map((e) => e.message).join("; ")}`);
    const v: unknown = d.toJS();
    if (v === null || v === undefined) continue;
    if (typeof v !== "object" || Array.isArray(v)) throw new Error(`${file}: a document is not a mapping`);
    out.push(v as Obj);
  }
  return out;
}

const entries = readdirSync(dir, { withFileTypes: true });
const dirEntries = entries
  .filter((e) => e.isFile())
  .map((e) => e.name)
  .sort();
/** Optional pieces, each a kustomization of its own that an overlay adds; the base leaves them out. */
const optionalDirs = entries
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();
const manifestFiles = dirEntries.filter((f) => /\.ya?ml$/.test(f) && f !== "kustomization.yaml");
const manifests: Manifest[] = manifestFiles.flatMap((file) =>
  documents(readFileSync(join(dir, file), "utf8"), file).map((obj, index) => ({ file, index, obj })),
);
const kustomization = parseYaml(readFileSync(join(dir, "kustomization.yaml"), "utf8")) as {
  namespace?: string;
  resources?: string[];
  images?: { name?: string; newName?: string; newTag?: string }[];
};

/** The validating model class for each apiVersion/kind these manifests may use. */
interface ModelClass {
  new (data: never): { validate(): void };
  prototype: { validate(): void };
}
const MODELS: Record<string, ModelClass> = {
  "v1/Namespace": Namespace,
  "v1/ServiceAccount": ServiceAccount,
  "v1/Service": Service,
  "apps/v1/DaemonSet": DaemonSet,
  "monitoring.coreos.com/v1/ServiceMonitor": ServiceMonitor,
  "monitoring.coreos.com/v1/PrometheusRule": PrometheusRule,
};
/** The same for the optional pieces' objects. */
const OPTIONAL_MODELS: Record<string, ModelClass> = {
  "v1/ConfigMap": ConfigMap,
};
const modelOf = (o: Obj): ModelClass | undefined => MODELS[typeKey(o)] ?? OPTIONAL_MODELS[typeKey(o)];

function typeKey(o: Obj): string {
  return `${String(o.apiVersion)}/${String(o.kind)}`;
}

function label(m: Manifest): string {
  return `${m.file}#${m.index} ${typeKey(m.obj)}`;
}

/** Schema validation as the package documents it; throws a ValidationError naming every problem. */
function validate(o: Obj): void {
  const Model = modelOf(o);
  if (!Model) throw new Error(`no schema for ${typeKey(o)}: add its kubernetes-models class to MODELS`);
  new Model(o as never).validate();
}

/**
 * Fields the schema does not know, the way `kubectl apply` (strict field validation) rejects them.
 * The Kubernetes OpenAPI schemas allow additional properties, so the validators accept a typo like
 * `readOnlyRootFilesytem` silently. Their generated code reads every property the schema defines;
 * running the validator over a proxy that records reads shows which keys it never looked at. An
 * object it only type-checked (a free-form field) is left alone; map-valued fields (labels, resource
 * quantities) are read key by key and so never reported.
 */
function unknownFields(o: Obj): string[] {
  const Model = modelOf(o);
  if (!Model) throw new Error(`no schema for ${typeKey(o)}`);
  const reads = new Map<object, { probed: boolean; keys: Set<string> }>();
  const wrap = (target: object): object => {
    const rec = { probed: false, keys: new Set<string>() };
    reads.set(target, rec);
    const children = new Map<object, object>();
    return new Proxy(target, {
      get(t, k, receiver) {
        if (typeof k === "string") {
          rec.keys.add(k);
          if (!Array.isArray(t)) rec.probed = true;
        }
        const v: unknown = Reflect.get(t, k, receiver);
        if (v === null || typeof v !== "object") return v;
        let p = children.get(v);
        if (!p) children.set(v, (p = wrap(v)));
        return p;
      },
      has(t, k) {
        if (typeof k === "string") {
          rec.keys.add(k);
          rec.probed = true;
        }
        return Reflect.has(t, k);
      },
    });
  };
  const proxy = wrap(o);
  try {
    Model.prototype.validate.call(proxy);
  } catch {
    // schema errors are reported by the schema test; here only the reads matter
  }
  const out: string[] = [];
  const walk = (v: unknown, path: string): void => {
    if (v === null || typeof v !== "object") return;
    const rec = reads.get(v);
    for (const [k, child] of Object.entries(v)) {
      if (rec?.probed && !Array.isArray(v) && !rec.keys.has(k)) out.push(`${path}.${k}`);
      walk(child, `${path}.${k}`);
    }
  };
  walk(o, "");
  return out;
}

function only<T>(kind: string): T {
  const found = manifests.filter((m) => m.obj.kind === kind);
  expect(found.map(label), `exactly one ${kind}`).toHaveLength(1);
  return (found[0] as Manifest).obj as T;
}

function daemonSet(): IDaemonSet {
  return only<IDaemonSet>("DaemonSet");
}

function podSpec(): IPodSpec {
  const spec = daemonSet().spec?.template.spec;
  if (!spec) throw new Error("the DaemonSet has no pod spec");
  return spec;
}

function allContainers(spec: IPodSpec): IContainer[] {
  return [...spec.containers, ...(spec.initContainers ?? []), ...((spec.ephemeralContainers ?? []) as IContainer[])];
}

function agentContainer(): IContainer {
  const c = podSpec().containers.find((x) => x.name === "ringwatch");
  if (!c) throw new Error("no container named ringwatch");
  return c;
}

/** The agent's configuration from the container's args and environment, through the agent's own parser. */
function agentConfig(c: IContainer): AgentConfig {
  const env: NodeJS.ProcessEnv = {};
  for (const e of c.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
  const action = parseCli(c.args ?? [], env);
  if (action.kind !== "run") throw new Error(`the args ask for ${action.kind}, not a run`);
  return action.config;
}

/** hostPath volume name → host path. */
function hostPathVolumes(spec: IPodSpec): Map<string, string> {
  return new Map((spec.volumes ?? []).flatMap((v) => (v.hostPath ? [[v.name, v.hostPath.path] as [string, string]] : [])));
}

/** Where the container mounts the hostPath volume of this host path. */
function mountPathOf(spec: IPodSpec, c: IContainer, hostPath: string): string | undefined {
  const volume = [...hostPathVolumes(spec)].find(([, p]) => p === hostPath)?.[0];
  return c.volumeMounts?.find((m) => m.name === volume)?.mountPath;
}

function isUnder(path: string, dirPath: string): boolean {
  const rel = posix.relative(dirPath, path);
  return rel === "" || (!rel.startsWith("..") && !posix.isAbsolute(rel));
}

function matches(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
  const entries = Object.entries(selector ?? {});
  return entries.length > 0 && entries.every(([k, v]) => labels?.[k] === v);
}

function runGenerator(args: string[], script = generator): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [script, ...args], { cwd: root, encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The optional dashboard ConfigMap, the one object of grafana-dashboard/configmap.yaml. */
function dashboardConfigMap(): IConfigMap {
  const docs = documents(readFileSync(join(dashboardDir, "configmap.yaml"), "utf8"), "grafana-dashboard/configmap.yaml");
  expect(docs.map(typeKey)).toEqual(["v1/ConfigMap"]);
  return docs[0] as unknown as IConfigMap;
}

/**
 * What `kubectl apply` (client side) stores in the last-applied-configuration annotation for an
 * object: its JSON as Go's encoding/json writes it (<, > and & escaped as \u003c...), and the key.
 */
function lastAppliedBytes(o: unknown): number {
  const json = JSON.stringify(o).replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);
  return Buffer.byteLength("kubectl.kubernetes.io/last-applied-configuration") + Buffer.byteLength(json);
}

describe("deploy/kubernetes: kustomization", () => {
  it("lists every file of the directory as a resource, and only those", () => {
    const resources = [...(kustomization.resources ?? [])].sort();
    const others = dirEntries.filter((f) => f !== "kustomization.yaml" && f !== "README.md");
    expect(resources).toEqual(others);
    expect(manifestFiles).toEqual(others);
  });

  it("leaves the optional pieces (sub-directories) out; each lists every file of its own directory", () => {
    expect(optionalDirs).toEqual(["grafana-dashboard"]);
    for (const d of optionalDirs) {
      expect((kustomization.resources ?? []).filter((r) => r.split("/")[0] === d)).toEqual([]);
      const own = parseYaml(readFileSync(join(dir, d, "kustomization.yaml"), "utf8")) as { resources?: string[] };
      const files = readdirSync(join(dir, d)).filter((f) => f !== "kustomization.yaml" && f !== "README.md");
      expect([...(own.resources ?? [])].sort(), d).toEqual(files.sort());
    }
  });

  it("puts everything in the namespace it creates", () => {
    const ns = only<{ metadata: { name: string } }>("Namespace").metadata.name;
    expect(kustomization.namespace).toBe(ns);
    for (const m of manifests.filter((x) => x.obj.kind !== "Namespace")) {
      expect((m.obj.metadata as Obj | undefined)?.namespace, label(m)).toBe(ns);
    }
  });

  it("sets the image of the agent container through `images`", () => {
    const image = agentContainer().image;
    const entry = kustomization.images?.find((i) => i.name === image);
    expect(entry, `an images entry named ${image}`).toBeDefined();
    expect(entry?.newTag).toMatch(/\S/);
  });
});

describe("deploy/kubernetes: schemas", () => {
  it("has the manifests it should", () => {
    expect(manifests.map((m) => typeKey(m.obj)).sort()).toEqual(Object.keys(MODELS).sort());
  });

  it.each(manifests.map((m) => [label(m), m] as const))("%s validates against its schema", (_name, m) => {
    expect(() => validate(m.obj)).not.toThrow();
  });

  it.each(manifests.map((m) => [label(m), m] as const))("%s has no field its schema does not know", (_name, m) => {
    expect(unknownFields(m.obj)).toEqual([]);
  });

  it("the unknown-field check sees typos (it would go blind if the validators' code changed)", () => {
    const ds: Obj = {
      apiVersion: "apps/v1",
      kind: "DaemonSet",
      metadata: { name: "x", labels: { "a.b/c": "d" } },
      spec: {
        selector: { matchLabels: { a: "b" } },
        template: {
          metadata: { labels: { a: "b" } },
          spec: {
            nodeSelector: { "nvidia.com/gpu.present": "true" },
            containers: [
              {
                name: "c",
                image: "i",
                imagePullPolice: "Always",
                resources: { limits: { memory: "1Mi" } },
                securityContext: { readOnlyRootFilesytem: true, capabilities: { drop: ["ALL"] } },
              },
            ],
          },
        },
      },
    };
    expect(() => validate(ds)).not.toThrow(); // the schema alone accepts both typos
    expect(unknownFields(ds)).toEqual([
      ".spec.template.spec.containers.0.imagePullPolice",
      ".spec.template.spec.containers.0.securityContext.readOnlyRootFilesytem",
    ]);
  });
});

describe("deploy/kubernetes: security posture", () => {
  it("runs every container as non-root, read-only, without privilege escalation or capabilities", () => {
    const spec = podSpec();
    const pod = spec.securityContext ?? {};
    const containers = allContainers(spec);
    expect(containers.length).toBeGreaterThan(0);
    for (const c of containers) {
      const sc = c.securityContext ?? {};
      expect(sc.runAsNonRoot ?? pod.runAsNonRoot, c.name).toBe(true);
      const uid = sc.runAsUser ?? pod.runAsUser;
      expect(uid, `${c.name}: an explicit non-zero uid`).toBeGreaterThan(0);
      expect(sc.readOnlyRootFilesystem, c.name).toBe(true);
      expect(sc.allowPrivilegeEscalation, c.name).toBe(false);
      expect(sc.privileged ?? false, c.name).toBe(false);
      expect(sc.capabilities?.drop, c.name).toContain("ALL");
      expect(sc.capabilities?.add ?? [], c.name).toEqual([]);
      expect((sc.seccompProfile ?? pod.seccompProfile)?.type, c.name).toBe("RuntimeDefault");
    }
  });

  it("mounts only /sys, /proc, the journal, the NCCL log directory and the kubelet's pod-resources directory from the host, all read-only", () => {
    const spec = podSpec();
    const hostPaths = hostPathVolumes(spec);
    expect([...hostPaths.values()].sort()).toEqual(["/proc", "/sys", "/var/lib/kubelet/pod-resources", "/var/log/journal", "/var/log/nccl"]);
    for (const c of allContainers(spec)) {
      for (const m of c.volumeMounts ?? []) {
        if (hostPaths.has(m.name)) expect(m.readOnly, `${c.name}: ${m.name} at ${m.mountPath}`).toBe(true);
      }
    }
  });

  it("shares only the host's network namespace, and no API token", () => {
    const spec = podSpec();
    expect(spec.hostNetwork).toBe(true); // `ip link` must list the node's interfaces
    expect(spec.hostPID ?? false).toBe(false);
    expect(spec.hostIPC ?? false).toBe(false);
    expect(spec.automountServiceAccountToken).toBe(false);
  });
});

describe("deploy/kubernetes: the agent's flags", () => {
  it("passes only flags ringwatch accepts, through the image's entrypoint", () => {
    const c = agentContainer();
    expect(c.command).toBeUndefined();
    expect(c.args?.length).toBeGreaterThan(0);
    expect(() => agentConfig(c)).not.toThrow();
  });

  it("points the agent at the host paths the pod mounts", () => {
    const spec = podSpec();
    const c = agentContainer();
    const config = agentConfig(c);
    expect(config.sysfsRoot).toBe(mountPathOf(spec, c, "/sys"));
    expect(config.procfsRoot).toBe(mountPathOf(spec, c, "/proc"));
    const ncclMount = mountPathOf(spec, c, "/var/log/nccl");
    expect(ncclMount).toBeDefined();
    for (const p of config.collectors.nccl.paths) expect(isUnder(p, ncclMount ?? "/nonexistent"), p).toBe(true);
  });

  it("checks rank liveness in the host's /proc, where pods' pids are found by NSpid", () => {
    const config = agentConfig(agentContainer());
    expect(config.collectors.nccl.checkPids).toBe(true);
    expect(config.procfsRoot).toBe("/host/proc");
    const mounts = agentContainer().volumeMounts ?? [];
    expect(mounts.find((m) => m.mountPath === "/host/proc")?.readOnly).toBe(true);
  });

  it("listens on the port the pod, the probes, the Service and the ServiceMonitor name", () => {
    const c = agentContainer();
    const config = agentConfig(c);
    const port = c.ports?.find((p) => p.name === "metrics");
    expect(port?.containerPort).toBe(config.listen.port);
    for (const probe of [c.livenessProbe, c.readinessProbe]) {
      expect(probe?.httpGet?.path).toBe("/healthz");
      expect(probe?.httpGet?.port).toBe("metrics");
    }
    const svc = only<IService>("Service");
    expect(svc.spec?.clusterIP).toBe("None");
    const svcPort = svc.spec?.ports?.find((p) => p.name === "metrics");
    expect(svcPort?.targetPort).toBe("metrics");
    expect(svcPort?.port).toBe(config.listen.port);
    const sm = only<IServiceMonitor>("ServiceMonitor");
    const endpoint = sm.spec.endpoints?.find((e) => e.port === "metrics");
    expect(endpoint?.path ?? "/metrics").toBe(config.telemetryPath);
  });

  it("sets resource requests and a memory limit", () => {
    const r = agentContainer().resources;
    expect(r?.requests?.cpu).toBeDefined();
    expect(r?.requests?.memory).toBeDefined();
    expect(r?.limits?.memory).toBeDefined();
  });
});

describe("deploy/kubernetes: selection and scraping", () => {
  it("selects its own pods and runs them on GPU nodes despite their taint", () => {
    const ds = daemonSet();
    const podLabels = ds.spec?.template.metadata?.labels;
    expect(matches(ds.spec?.selector.matchLabels, podLabels)).toBe(true);
    const spec = podSpec();
    expect(spec.nodeSelector?.["nvidia.com/gpu.present"]).toBe("true");
    expect(spec.tolerations).toContainEqual(expect.objectContaining({ key: "nvidia.com/gpu", effect: "NoSchedule" }));
    expect(ds.spec?.updateStrategy?.type).toBe("RollingUpdate");
  });

  it("has a Service over those pods and a ServiceMonitor over that Service, labelling series with the node", () => {
    const podLabels = daemonSet().spec?.template.metadata?.labels;
    const svc = only<IService>("Service");
    expect(matches(svc.spec?.selector, podLabels)).toBe(true);
    const sm = only<IServiceMonitor>("ServiceMonitor");
    expect(matches(sm.spec.selector.matchLabels, svc.metadata?.labels)).toBe(true);
    const relabelings = sm.spec.endpoints?.flatMap((e) => e.relabelings ?? []) ?? [];
    expect(relabelings).toContainEqual(expect.objectContaining({ sourceLabels: ["__meta_kubernetes_pod_node_name"], targetLabel: "node" }));
  });
});

describe("deploy/kubernetes/prometheusrule.yaml", () => {
  it("is what scripts/gen-prometheusrule.mjs makes of deploy/prometheus/ringwatch-rules.yml (run `npm run gen:k8s`)", () => {
    const r = runGenerator(["--out", "-"]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(readFileSync(join(dir, "prometheusrule.yaml"), "utf8")).toBe(r.stdout);
  });

  it("carries the rule file's groups unchanged, under a PrometheusRule with the do-not-edit header", () => {
    const rules = `# a comment
groups:
  - name: g1
    rules:
      # kept
      - alert: A
        expr: |
          max by (node) (ringwatch_nccl_hang_suspected) == 1
        for: 2m
        keep_firing_for: 5m
        labels: {severity: critical}
        annotations:
          summary: "a long summary that runs past eighty columns and must stay on one line {{ $labels.node }}"
  - name: g2
    interval: 1m
    rules:
      - record: ringwatch:x
        expr: sum(ringwatch_nccl_log_files)
`;
    const tmp = mkdtempSync(join(tmpdir(), "rw-gen-"));
    writeFileSync(join(tmp, "rules.yml"), rules);
    const r = runGenerator(["--rules", join(tmp, "rules.yml"), "--out", "-"]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^# generated by scripts\/gen-prometheusrule\.mjs — do not edit/);
    expect(r.stdout).toContain("# kept");
    expect(r.stdout).toContain('summary: "a long summary that runs past eighty columns and must stay on one line {{ $labels.node }}"');
    const out = parseYaml(r.stdout) as IPrometheusRule;
    expect(out.apiVersion).toBe("monitoring.coreos.com/v1");
    expect(out.kind).toBe("PrometheusRule");
    expect(out.spec.groups).toEqual((parseYaml(rules) as { groups: unknown }).groups);
    expect(() => validate(out as unknown as Obj)).not.toThrow();
    expect(unknownFields(out as unknown as Obj)).toEqual([]);
  });

  it.each([
    ["a key besides groups", "groups: [{name: a, rules: []}]\nrule_files: []\n", /unexpected top-level key\(s\) rule_files/],
    ["no groups", "groups: []\n", /non-empty list/],
    ["a group without a name", "groups: [{rules: []}]\n", /every group needs a name/],
    ["a duplicate group", "groups: [{name: a, rules: []}, {name: a, rules: []}]\n", /used twice/],
    ["broken YAML", "groups: [\n", /rules\.yml/],
  ])("refuses a rule file with %s", (_what, text, message) => {
    const tmp = mkdtempSync(join(tmpdir(), "rw-gen-"));
    writeFileSync(join(tmp, "rules.yml"), text);
    const r = runGenerator(["--rules", join(tmp, "rules.yml"), "--out", "-"]);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(message);
  });

  it("--check reports a stale file", () => {
    const tmp = mkdtempSync(join(tmpdir(), "rw-gen-"));
    writeFileSync(join(tmp, "rules.yml"), "groups: [{name: a, rules: []}]\n");
    writeFileSync(join(tmp, "out.yaml"), "stale\n");
    const stale = runGenerator(["--check", "--rules", join(tmp, "rules.yml"), "--out", join(tmp, "out.yaml")]);
    expect(stale.status).toBe(1);
    expect(stale.stderr).toMatch(/out of date/);
    expect(runGenerator(["--rules", join(tmp, "rules.yml"), "--out", join(tmp, "out.yaml")]).status).toBe(0);
    expect(runGenerator(["--check", "--rules", join(tmp, "rules.yml"), "--out", join(tmp, "out.yaml")]).status).toBe(0);
  });
});

describe("deploy/kubernetes/grafana-dashboard (optional)", () => {
  const key = "ringwatch-dashboard.json";

  it("is what scripts/gen-dashboard-configmap.mjs makes of deploy/grafana/ringwatch-dashboard.json (run `npm run gen:k8s`)", () => {
    const r = runGenerator(["--out", "-"], dashboardGenerator);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    // One 160 kB line: a plain toBe would print all of it.
    const same = readFileSync(join(dashboardDir, "configmap.yaml"), "utf8") === r.stdout;
    expect(same, "grafana-dashboard/configmap.yaml is stale: run `npm run gen:k8s`").toBe(true);
    expect(r.stdout).toMatch(/^# generated by scripts\/gen-dashboard-configmap\.mjs — do not edit/);
  });

  it("`npm run gen:k8s -- --check` checks the PrometheusRule and the dashboard ConfigMap, and finds both current", () => {
    const r = runGenerator(["--check"]);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("embeds the dashboard file unchanged, in a valid ConfigMap of the base's namespace with the sidecar's label", () => {
    const cm = dashboardConfigMap();
    expect(() => validate(cm as unknown as Obj)).not.toThrow();
    expect(unknownFields(cm as unknown as Obj)).toEqual([]);
    // kube-prometheus-stack's defaults: grafana.sidecar.dashboards.label / labelValue, searchNamespace ALL.
    expect(cm.metadata?.labels?.grafana_dashboard).toBe("1");
    expect(cm.metadata?.namespace).toBe(kustomization.namespace);
    expect(Object.keys(cm.data ?? {})).toEqual([key]);
    expect(JSON.parse(cm.data?.[key] ?? "null")).toStrictEqual(JSON.parse(readFileSync(dashboardFile, "utf8")));
  });

  it("fits `kubectl apply`'s last-applied annotation (256 KiB for all of an object's annotations)", () => {
    const cm = dashboardConfigMap();
    expect(lastAppliedBytes(cm)).toBeLessThan(256 * 1024);
    // the measure sees size: the dashboard indented, as in deploy/grafana, would not fit
    const indented = { ...cm, data: { [key]: readFileSync(dashboardFile, "utf8") } };
    expect(lastAppliedBytes(indented)).toBeGreaterThan(256 * 1024);
  });

  it.each([
    ["an import input", '{"uid": "x", "__inputs": [{"name": "DS_PROMETHEUS"}], "panels": []}', /__inputs, which a provisioned dashboard cannot resolve/],
    ["no uid", '{"title": "x", "panels": []}', /needs a uid/],
    ["broken JSON", '{"uid": "x",', /dashboard\.json: /],
    ["a list", "[]", /not a dashboard/],
    ["too much to apply", JSON.stringify({ uid: "x", description: "x".repeat(300 * 1024) }), /last-applied annotation, over Kubernetes' 262144/],
  ])("refuses a dashboard with %s", (_what, text, message) => {
    const tmp = mkdtempSync(join(tmpdir(), "rw-gen-"));
    writeFileSync(join(tmp, "dashboard.json"), text);
    const r = runGenerator(["--dashboard", join(tmp, "dashboard.json"), "--out", "-"], dashboardGenerator);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(message);
  });

  it("--check reports a stale file", () => {
    const tmp = mkdtempSync(join(tmpdir(), "rw-gen-"));
    writeFileSync(join(tmp, "dashboard.json"), '{"uid": "x", "panels": []}');
    writeFileSync(join(tmp, "out.yaml"), "stale\n");
    const args = ["--dashboard", join(tmp, "dashboard.json"), "--out", join(tmp, "out.yaml")];
    const stale = runGenerator(["--check", ...args], dashboardGenerator);
    expect(stale.status).toBe(1);
    expect(stale.stderr).toMatch(/out of date/);
    expect(runGenerator(args, dashboardGenerator).status).toBe(0);
    expect(runGenerator(["--check", ...args], dashboardGenerator).status).toBe(0);
  });
});

// kubectl's built-in kustomize renders what `kubectl apply -k` would send (Debian's
// kubernetes-client, kubectl 1.20, renders this directory; .ci/run installs it). Without kubectl
// the case is skipped and says so; under CI that is a failure.
const tools = gate(["kubectl"]);

describe.skipIf(tools.skip)(`kubectl kustomize deploy/kubernetes${tools.skip ? ` (SKIPPED: ${tools.message})` : ""}`, () => {
  it("kubectl is installed", () => {
    expect(tools.missing, tools.message).toEqual([]);
  });

  it.skipIf(tools.fail)("renders every manifest, valid, with the image replaced", () => {
    const r = spawnSync(tools.path.kubectl, ["kustomize", dir], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const rendered = documents(r.stdout, "kubectl kustomize");
    expect(rendered.map(typeKey).sort()).toEqual(manifests.map((m) => typeKey(m.obj)).sort());
    for (const o of rendered) {
      expect(() => validate(o)).not.toThrow();
      expect(unknownFields(o)).toEqual([]);
    }
    const ds = rendered.find((o) => o.kind === "DaemonSet") as IDaemonSet | undefined;
    const image = ds?.spec?.template.spec?.containers.find((c) => c.name === "ringwatch")?.image;
    const entry = kustomization.images?.find((i) => i.name === agentContainer().image);
    expect(image).toBe(`${entry?.newName ?? entry?.name}:${entry?.newTag}`);
  });

  it.skipIf(tools.fail)("renders the optional dashboard piece on its own (kubectl kustomize deploy/kubernetes/grafana-dashboard)", () => {
    const r = spawnSync(tools.path.kubectl, ["kustomize", dashboardDir], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const rendered = documents(r.stdout, "kubectl kustomize grafana-dashboard");
    expect(rendered.map(typeKey)).toEqual(["v1/ConfigMap"]);
    expect(rendered[0]).toStrictEqual(dashboardConfigMap());
  });

  it.skipIf(tools.fail)("renders an overlay of the base and the dashboard piece, as README.md shows", () => {
    // `bases:` is what kubectl 1.20's kustomize (v2.0.3) takes for directories; later ones warn
    // that it is deprecated and still take it.
    const tmp = mkdtempSync(join(tmpdir(), "rw-overlay-"));
    const bases = [dir, dashboardDir].map((d) => relative(tmp, d));
    writeFileSync(
      join(tmp, "kustomization.yaml"),
      `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nbases:\n${bases.map((b) => `  - ${b}\n`).join("")}`,
    );
    const r = spawnSync(tools.path.kubectl, ["kustomize", tmp], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
    expect(r.stderr.split("\n").filter((l) => l !== "" && !/'bases' is deprecated/.test(l))).toEqual([]);
    expect(r.status).toBe(0);
    const rendered = documents(r.stdout, "kubectl kustomize overlay");
    expect(rendered.map(typeKey).sort()).toEqual([...manifests.map((m) => typeKey(m.obj)), "v1/ConfigMap"].sort());
  });
});
