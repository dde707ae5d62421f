/**
 * Restart timing of the dmon supervisor under fake timers, with a scripted Exec (the real-process
 * behaviour is covered in collector.test.ts; 60 s backoffs are only testable here).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Exec, StreamExit, StreamHandlers } from "../../../collectors/exec.js";
import { Supervisor } from "../../../collectors/gpu/supervisor.js";

type Behaviour = "crash" | "absent" | "hang";

function scriptedExec(behaviour: () => Behaviour): { exec: Exec; starts: number[]; handlers: StreamHandlers[] } {
  const starts: number[] = [];
  const handlers: StreamHandlers[] = [];
  const exit = (h: StreamHandlers, e: Partial<StreamExit>): void =>
    h.onExit({ exitCode: 1, signal: undefined, notFound: false, stderrTail: "", problem: "exited with code 1", ...e });
  const exec: Exec = {
    run: () => Promise.reject(new Error("not used")),
    stream(_file, _args, h) {
      starts.push(Date.now());
      handlers.push(h);
      const b = behaviour();
      let done = false;
      if (b === "crash") queueMicrotask(() => ((done = true), exit(h, {})));
      if (b === "absent") queueMicrotask(() => ((done = true), exit(h, { exitCode: undefined, notFound: true, problem: "not found" })));
      return {
        pid: 1234,
        kill: () => {
          if (!done) exit(h, { exitCode: undefined, signal: "SIGTERM" });
          done = true;
          return Promise.resolve();
        },
      };
    },
    killAll: () => Promise.resolve(),
    running: () => 0,
  };
  return { exec, starts, handlers };
}

function gaps(starts: number[]): number[] {
  return starts.slice(1).map((t, i) => t - (starts[i] as number));
}

describe("dmon supervisor", () => {
  beforeEach(() => void vi.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => void vi.useRealTimers());

  function make(b: () => Behaviour, hooks: Partial<ConstructorParameters<typeof Supervisor>[0]["hooks"]> = {}) {
    const s = scriptedExec(b);
    const exits: { stalled: boolean; retryInMs: number }[] = [];
    const sup = new Supervisor({
      exec: s.exec,
      file: "nvidia-smi",
      args: ["dmon"],
      now: () => Date.now(),
      silenceMs: 3000,
      hooks: { onLaunch: () => {}, onLine: () => {}, onExit: (_e, i) => void exits.push(i), ...hooks },
    });
    return { ...s, sup, exits };
  }

  it("doubles the delay from 1 s to a 60 s cap while the child keeps failing", async () => {
    const { sup, starts } = make(() => "crash");
    sup.start();
    await vi.advanceTimersByTimeAsync(300_000);
    expect(gaps(starts).slice(0, 9)).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000]);
    await sup.stop();
  });

  it("goes back to 1 s after a child that delivered samples", async () => {
    let n = 0;
    const { sup, starts, handlers } = make(() => (++n === 4 ? "hang" : "crash"));
    sup.start();
    await vi.advanceTimersByTimeAsync(7000 + 10); // starts at 0, 1 s, 3 s, 7 s (4th hangs)
    expect(starts).toHaveLength(4);
    sup.noteSample();
    handlers[3]?.onExit({ exitCode: 1, signal: undefined, notFound: false, stderrTail: "", problem: "x" });
    await vi.advanceTimersByTimeAsync(20_000);
    expect(gaps(starts).slice(0, 5)).toEqual([1000, 2000, 4000, 1000 + 10, 2000]);
    await sup.stop();
  });

  it("retries a missing binary at the capped delay only", async () => {
    const { sup, starts, exits } = make(() => "absent");
    sup.start();
    await vi.advanceTimersByTimeAsync(185_000);
    expect(gaps(starts)).toEqual([60000, 60000, 60000]);
    expect(exits.every((e) => e.retryInMs === 60000)).toBe(true);
    await sup.stop();
  });

  it("kills a child that has been silent for longer than silenceMs and restarts it", async () => {
    const { sup, starts, exits } = make(() => "hang");
    sup.start();
    await vi.advanceTimersByTimeAsync(3000);
    expect(sup.checkSilence()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(sup.checkSilence()).toBe(true);
    expect(exits).toEqual([{ stalled: true, delivered: false, retryInMs: 1000 }]);
    expect(sup.running).toBe(false);
    await vi.advanceTimersByTimeAsync(1000);
    expect(starts).toHaveLength(2);
    expect(sup.running).toBe(true);
    await sup.stop();
  });

  it("ignores lines of a child being killed and does not restart after stop()", async () => {
    const lines: string[] = [];
    const { sup, starts, handlers } = make(() => "hang", { onLine: (l) => void lines.push(l) });
    sup.start();
    handlers[0]?.onLine("a");
    const stopping = sup.stop();
    handlers[0]?.onLine("b");
    await stopping;
    await vi.advanceTimersByTimeAsync(120_000);
    expect(lines).toEqual(["a"]);
    expect(starts).toHaveLength(1);
    expect(sup.running).toBe(false);
  });
});
