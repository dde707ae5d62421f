/**
 * Per-GPU staleness at scrape time, with a scripted Exec and an injected clock: one GPU stops
 * reporting while the child keeps running; its series must go at the next scrape.
 */
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { Exec, StreamHandlers, ToolResult } from "../../../collectors/exec.js";
import { createGpuCollector } from "../../../collectors/gpu/collector.js";
import { captureLogger, series } from "./helpers.js";

function scripted(): { exec: Exec; feed: (line: string) => void } {
  let h: StreamHandlers | undefined;
  const identity: ToolResult = {
    command: "nvidia-smi --query-gpu",
    exitCode: 0,
    stdout: "0, GPU-a, NVIDIA H100 80GB HBM3, 00000000:07:00.0, 550.54.15, 700.00\n1, GPU-b, NVIDIA H100 80GB HBM3, 00000000:0F:00.0, 550.54.15, 700.00\n",
    stderr: "",
    notFound: false,
    timedOut: false,
    overflowed: false,
    signal: undefined,
    ok: true,
    problem: undefined,
  };
  const exec: Exec = {
    run: () => Promise.resolve(identity),
    stream(_f, _a, handlers) {
      h = handlers;
      return {
        pid: 1,
        kill: () => {
          h?.onExit({ exitCode: undefined, signal: "SIGTERM", notFound: false, stderrTail: "", problem: "killed" });
          return Promise.resolve();
        },
      };
    },
    killAll: () => Promise.resolve(),
    running: () => 0,
  };
  return { exec, feed: (line) => h?.onLine(line) };
}

describe("gpu collector staleness", () => {
  it("withdraws a GPU without a fresh row for 3 intervals at scrape time, keeps the others", async () => {
    let now = 1_000_000;
    const registry = new Registry();
    const { exec, feed } = scripted();
    const c = createGpuCollector({ registry, logger: captureLogger().logger, exec, now: () => now }, { nvidiaSmi: "nvidia-smi", intervalSeconds: 1 });
    c.start?.();
    feed("# gpu    pwr     sm");
    feed("# Idx      W      %");
    feed("    0    300    100");
    feed("    1    310     99");
    const gpus = async (): Promise<unknown[]> => (await series(registry, "ringwatch_gpu_power_watts")).map((s) => s.labels["gpu"]).sort();
    expect(await gpus()).toEqual(["0", "1"]);

    now += 2000;
    feed("    0    301    100");
    now += 1500; // GPU 1's row is 3.5 s old, GPU 0's 1.5 s
    expect(await gpus()).toEqual(["0"]);
    expect((await series(registry, "ringwatch_gpu_utilization_ratio")).map((s) => s.labels["gpu"])).toEqual(["0"]);
    expect([...c.latestSamples().keys()]).toEqual(["0"]);
    expect(c.health?.()).toMatchObject({ ok: true, lastSuccessMs: 1_002_000 });

    now += 2000; // every row is stale: the collector reports itself unhealthy
    expect(await gpus()).toEqual([]);
    expect((await series(registry, "ringwatch_gpu_dmon_up"))[0]?.value).toBe(0);
    expect(c.health?.()).toMatchObject({ ok: false, reason: "no sample from nvidia-smi dmon for 3 intervals" });

    feed("    1    320     98"); // a GPU that comes back is published again
    expect(await gpus()).toEqual(["1"]);
    await c.stop?.();
  });
});
