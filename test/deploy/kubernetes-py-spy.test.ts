/**
 * deploy/kubernetes-py-spy: the opt-in overlay that gives the DaemonSet what py-spy needs (hostPID,
 * uid 0 with SYS_PTRACE added to the dropped-all set, the stacks source auto), rendered by kubectl's
 * kustomize (kubectl 1.20's v2.0.3 in CI: `bases:` and `patchesStrategicMerge:`). The base stays
 * without any of it.
 */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { gate } from "./binaries.js";

const root = resolve(import.meta.dirname, "../..");
const tools = gate(["kubectl"]);

type Obj = { kind?: string; spec?: { template?: { spec?: Record<string, unknown> & { containers?: Record<string, unknown>[] } } } };

function render(dir: string): Obj[] {
  const r = spawnSync(tools.path.kubectl, ["kustomize", dir], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  // Newer kustomize warns that bases and patchesStrategicMerge are deprecated; nothing else.
  expect(r.stderr.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("# Warning: '"))).toEqual([]);
  expect(r.status).toBe(0);
  return parseAllDocuments(r.stdout).map((d) => d.toJS() as Obj);
}

describe.skipIf(tools.skip)("deploy/kubernetes-py-spy (opt-in overlay)", () => {
  it.skipIf(tools.fail)("renders the base with hostPID, uid 0, SYS_PTRACE added to the dropped-all set and the stacks source auto", () => {
    const base = render(resolve(root, "deploy/kubernetes"));
    const over = render(resolve(root, "deploy/kubernetes-py-spy"));
    expect(over.map((o) => o.kind).sort()).toEqual(base.map((o) => o.kind).sort());
    const ds = (objs: Obj[]) => objs.find((o) => o.kind === "DaemonSet")?.spec?.template?.spec;
    const pod = ds(over);
    const c = pod?.containers?.find((x) => x.name === "ringwatch") as {
      securityContext: Record<string, unknown>;
      env: { name: string; value?: string }[];
      args: string[];
    };
    expect(pod?.hostPID).toBe(true);
    expect(pod?.securityContext).toMatchObject({ runAsUser: 0, runAsNonRoot: false });
    expect(c.securityContext).toMatchObject({
      runAsUser: 0,
      allowPrivilegeEscalation: false,
      privileged: false,
      capabilities: { drop: ["ALL"], add: ["SYS_PTRACE"] },
    });
    expect(c.env).toContainEqual({ name: "RINGWATCH_COLLECTOR_NCCL_STACKS_SOURCE", value: "auto" });
    // Everything else is the base's: its args and its other env entries.
    const bc = ds(base)?.containers?.find((x) => x.name === "ringwatch") as { env: unknown[]; args: string[]; securityContext: Record<string, unknown> };
    expect(c.args).toEqual(bc.args);
    expect(c.env).toHaveLength(bc.env.length + 1);
    expect(ds(base)?.hostPID).toBe(false);
    expect(JSON.stringify(bc.securityContext)).not.toContain("SYS_PTRACE");
  });
});
