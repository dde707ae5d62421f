/**
 * Succession (collectors/nccl/ras/peers.ts): who of a job's nodes asks RAS, followed by checking the
 * agents ahead of this node. The probe is injected and the clock is a plain number.
 */
import { describe, expect, it } from "vitest";
import type { RasJobView } from "../../../../collectors/nccl/ras/job-view.js";
import { Succession, type PeerAnswer, type PeerCheckResult, type ProbeResult } from "../../../../collectors/nccl/ras/peers.js";

const INTERVAL = 30_000;
const JOB = "0x49bbd7790311d5eb";

const GONE: ProbeResult = { kind: "gone", reason: "ECONNREFUSED" };
const ALIVE: ProbeResult = { kind: "alive" };
const answer = (a: Partial<PeerAnswer> = {}): ProbeResult => ({ kind: "alive", answer: { job: JOB, role: "querier", lastReportAgeSeconds: 5, ...a } });
const SERVING = answer();

function view(succession: string[], jobId = JOB): RasJobView {
  return { jobId, size: succession.length * 8, succession, initialising: false };
}

/** A Succession for node "self", whose probe answers from `results` (per node, mutable) and records the nodes it asked. */
function setup(succession: string[], results: Record<string, ProbeResult> = {}) {
  const clock = { now: 0 };
  const probed: string[] = [];
  const s = new Succession({
    isSelf: (n) => n === "self",
    intervalMs: INTERVAL,
    now: () => clock.now,
    probe: (node) => {
      probed.push(node);
      return Promise.resolve(results[node] ?? GONE);
    },
  });
  s.setView(view(succession));
  /** The nodes probed since the last call. */
  const take = (): string[] => probed.splice(0);
  return { s, clock, results, take };
}

function counts(s: Succession): Record<PeerCheckResult, number> {
  return Object.fromEntries(s.checks) as Record<PeerCheckResult, number>;
}

describe("Succession: roles", () => {
  it("no view: undetermined, nothing probed", async () => {
    const probed: string[] = [];
    const s = new Succession({
      isSelf: () => false,
      intervalMs: INTERVAL,
      now: () => 0,
      probe: (n) => {
        probed.push(n);
        return Promise.resolve(SERVING);
      },
    });
    expect(s.role).toBe("undetermined");
    await s.check();
    expect(probed).toEqual([]);
    s.setView(view([]));
    await s.check();
    expect(s.role).toBe("undetermined");
    expect(s.querier).toBeUndefined();
    expect(probed).toEqual([]);
  });

  it("the first node of the succession is the querier without probing anyone", async () => {
    const { s, take } = setup(["self", "b", "c"], { b: SERVING, c: SERVING });
    expect(s.role).toBe("querier");
    expect(s.querier).toBe("self");
    await s.check();
    await s.check();
    expect(take()).toEqual([]);
    expect(s.role).toBe("querier");
    expect(s.takeTakeover()).toBe(false);
    expect(counts(s)).toEqual({ serving: 0, alive: 0, stale: 0, gone: 0 });
  });

  it("a listener probes only the node ahead while it serves", async () => {
    const { s, take } = setup(["a", "b", "self", "d"], { a: SERVING, b: SERVING, d: SERVING });
    // Before any check: a listener that takes the first node for the querier, not known to serve.
    expect(s.role).toBe("listener");
    expect(s.querier).toBe("a");
    expect(s.querierServing).toBe(false);
    await s.check();
    expect(take()).toEqual(["a"]);
    expect(s.role).toBe("listener");
    expect(s.querier).toBe("a");
    expect(s.querierServing).toBe(true);
    expect(counts(s)).toEqual({ serving: 1, alive: 0, stale: 0, gone: 0 });
  });
});

describe("Succession: a node ahead gone", () => {
  it("gone at one check is not failed; at 2 checks in a row the next node is checked", async () => {
    const { s, take, results } = setup(["a", "b", "self"], { a: GONE });
    results.b = SERVING;
    await s.check();
    expect(take()).toEqual(["a"]);
    expect(s.querier).toBe("a");
    expect(s.querierServing).toBe(false);
    await s.check();
    expect(take()).toEqual(["a", "b"]);
    expect(s.role).toBe("listener");
    expect(s.querier).toBe("b");
    expect(s.querierServing).toBe(true);
    expect(s.takeTakeover()).toBe(false);
    expect(counts(s)).toEqual({ serving: 1, alive: 0, stale: 0, gone: 2 });
  });

  it("a node whose every node ahead failed becomes the querier; takeTakeover() is true once", async () => {
    const { s, take } = setup(["a", "b", "self", "d"], { a: GONE, b: GONE });
    await s.check(); // a: 1
    expect(take()).toEqual(["a"]);
    await s.check(); // a: 2 (failed), b: 1
    expect(take()).toEqual(["a", "b"]);
    expect(s.role).toBe("listener");
    expect(s.querier).toBe("b");
    expect(s.takeTakeover()).toBe(false);
    await s.check(); // a: 3, b: 2 (failed): this node
    expect(take()).toEqual(["a", "b"]);
    expect(s.role).toBe("querier");
    expect(s.querier).toBe("self");
    expect(s.querierServing).toBe(true);
    expect(s.takeTakeover()).toBe(true);
    expect(s.takeTakeover()).toBe(false);
    // Still querier at the next check: no second takeover.
    await s.check();
    expect(s.role).toBe("querier");
    expect(s.takeTakeover()).toBe(false);
    expect(counts(s).gone).toBe(7);
  });

  it("a gone check between answers does not add up: 2 gone checks must be in a row", async () => {
    const { s, results } = setup(["a", "self"], { a: GONE });
    await s.check();
    results.a = SERVING;
    await s.check();
    results.a = GONE;
    await s.check();
    expect(s.role).toBe("listener");
    expect(s.querier).toBe("a");
    expect(s.querierServing).toBe(false);
    await s.check();
    expect(s.role).toBe("querier");
    expect(s.takeTakeover()).toBe(true);
  });

  it("a node outside the succession whose every node failed stays a listener, with no querier", async () => {
    const { s } = setup(["a", "b"], { a: GONE, b: GONE });
    for (let k = 0; k < 3; k++) await s.check();
    expect(s.role).toBe("listener");
    expect(s.querier).toBeUndefined();
    expect(s.querierServing).toBe(false);
    expect(s.takeTakeover()).toBe(false);
  });
});

describe("Succession: a node ahead alive but not serving", () => {
  it("answering for 2 intervals without serving is failed", async () => {
    const { s, clock, take } = setup(["a", "self"], { a: answer({ role: "listener" }) });
    clock.now = 1000;
    await s.check();
    expect(s.querier).toBe("a");
    expect(s.querierServing).toBe(false);
    clock.now = 1000 + 2 * INTERVAL - 1;
    await s.check();
    expect(s.role).toBe("listener");
    clock.now = 1000 + 2 * INTERVAL;
    await s.check();
    expect(s.role).toBe("querier");
    expect(s.takeTakeover()).toBe(true);
    expect(take()).toEqual(["a", "a", "a"]);
    expect(counts(s)).toEqual({ serving: 0, alive: 0, stale: 3, gone: 0 });
  });

  it("not serving: another job, a report over 2 intervals old, or none", async () => {
    for (const a of [
      { job: "0x1" },
      { job: null },
      { lastReportAgeSeconds: (2 * INTERVAL) / 1000 + 0.001 },
      { lastReportAgeSeconds: null },
      { role: "undetermined" as const },
    ]) {
      const { s } = setup(["a", "self"], { a: answer(a) });
      await s.check();
      expect(s.querierServing, JSON.stringify(a)).toBe(false);
      expect(counts(s).stale, JSON.stringify(a)).toBe(1);
    }
  });

  it("a report exactly 2 intervals old still serves", async () => {
    const { s } = setup(["a", "self"], { a: answer({ lastReportAgeSeconds: (2 * INTERVAL) / 1000 }) });
    await s.check();
    expect(s.querierServing).toBe(true);
    expect(counts(s).serving).toBe(1);
  });

  it("an alive answer without JSON is never failed and never serving", async () => {
    const { s, clock } = setup(["a", "self"], { a: ALIVE });
    for (let k = 0; k <= 20; k++) {
      clock.now = k * INTERVAL;
      await s.check();
      expect(s.role).toBe("listener");
      expect(s.querier).toBe("a");
      expect(s.querierServing).toBe(false);
    }
    expect(s.takeTakeover()).toBe(false);
    expect(counts(s)).toEqual({ serving: 0, alive: 21, stale: 0, gone: 0 });
  });

  it("an alive answer without JSON restarts the 2 intervals of not serving", async () => {
    const { s, clock, results } = setup(["a", "self"], { a: answer({ role: "listener" }) });
    clock.now = 0;
    await s.check();
    results.a = ALIVE;
    clock.now = INTERVAL;
    await s.check();
    results.a = answer({ role: "listener" });
    clock.now = 1.5 * INTERVAL;
    await s.check();
    clock.now = 2 * INTERVAL;
    await s.check();
    // Not serving since 1.5 intervals only.
    expect(s.role).toBe("listener");
    clock.now = 3.5 * INTERVAL;
    await s.check();
    expect(s.role).toBe("querier");
  });

  it("serving again restarts them too", async () => {
    const { s, clock, results } = setup(["a", "self"], { a: answer({ role: "listener" }) });
    await s.check();
    clock.now = 1.5 * INTERVAL;
    results.a = SERVING;
    await s.check();
    results.a = answer({ role: "listener" });
    clock.now = 2 * INTERVAL;
    await s.check();
    expect(s.role).toBe("listener");
    clock.now = 3.5 * INTERVAL - 1;
    await s.check();
    expect(s.role).toBe("listener");
    clock.now = 4 * INTERVAL;
    await s.check();
    expect(s.role).toBe("querier");
  });

  it("setInterval changes the 2 intervals", async () => {
    const { s, clock } = setup(["a", "self"], { a: answer({ role: "listener" }) });
    s.setInterval(10_000);
    await s.check();
    clock.now = 20_000;
    await s.check();
    expect(s.role).toBe("querier");
  });
});

describe("Succession: stepping back", () => {
  it("a querier by takeover steps back when the node ahead serves again", async () => {
    const { s, results, take } = setup(["a", "b", "self"], { a: GONE, b: GONE });
    for (let k = 0; k < 3; k++) await s.check();
    expect(s.role).toBe("querier");
    expect(s.takeTakeover()).toBe(true);
    take();
    results.a = SERVING;
    await s.check();
    expect(take()).toEqual(["a"]);
    expect(s.role).toBe("listener");
    expect(s.querier).toBe("a");
    expect(s.querierServing).toBe(true);
    expect(s.takeTakeover()).toBe(false);
  });

  it("steps back behind the second node when only it comes back", async () => {
    const { s, results, take } = setup(["a", "b", "self"], { a: GONE, b: GONE });
    for (let k = 0; k < 3; k++) await s.check();
    expect(s.role).toBe("querier");
    take();
    results.b = SERVING;
    await s.check();
    expect(take()).toEqual(["a", "b"]);
    expect(s.role).toBe("listener");
    expect(s.querier).toBe("b");
    expect(s.querierServing).toBe(true);
  });

  it("a node ahead that is alive but unreadable (auth, TLS) makes the takeover step back", async () => {
    const { s, results } = setup(["a", "self"], { a: GONE });
    await s.check();
    await s.check();
    expect(s.role).toBe("querier");
    results.a = ALIVE;
    await s.check();
    expect(s.role).toBe("listener");
    expect(s.querier).toBe("a");
    expect(s.querierServing).toBe(false);
  });
});

describe("Succession: views", () => {
  it("a new job forgets what was learnt of the nodes", async () => {
    const { s } = setup(["a", "b", "self"], { a: GONE, b: SERVING });
    await s.check();
    await s.check();
    expect(s.querier).toBe("b");
    // The same job again (a new report): a stays failed.
    s.setView(view(["a", "b", "self"]));
    expect(s.querier).toBe("b");
    expect(s.querierServing).toBe(true);
    // Another job on the same nodes: nothing known of a.
    s.setView(view(["a", "b", "self"], "0x2"));
    expect(s.role).toBe("listener");
    expect(s.querier).toBe("a");
    expect(s.querierServing).toBe(false);
    await s.check();
    expect(s.querier).toBe("a");
  });

  it("a view where this node comes first makes it querier at once, with no takeover", async () => {
    const { s } = setup(["a", "self"], { a: SERVING });
    await s.check();
    s.setView(view(["self", "a"]));
    expect(s.role).toBe("querier");
    expect(s.takeTakeover()).toBe(false);
  });

  it("no view: undetermined, and what was learnt is forgotten", async () => {
    const { s, take } = setup(["a", "b", "self"], { a: GONE, b: SERVING });
    await s.check();
    await s.check();
    expect(s.querier).toBe("b");
    s.setView(undefined);
    expect(s.role).toBe("undetermined");
    expect(s.querier).toBeUndefined();
    expect(s.querierServing).toBe(false);
    take();
    await s.check();
    expect(take()).toEqual([]);
    s.setView(view(["a", "b", "self"]));
    expect(s.querier).toBe("a");
  });

  it("a probe answered after the job changed is not counted against the new job", async () => {
    let release: (r: ProbeResult) => void = () => undefined;
    const s = new Succession({
      isSelf: (n) => n === "self",
      intervalMs: INTERVAL,
      now: () => 0,
      probe: () => new Promise<ProbeResult>((resolve) => (release = resolve)),
    });
    s.setView(view(["a", "self"]));
    const pending = s.check();
    s.setView(view(["a", "self"], "0x2"));
    release(SERVING);
    await pending;
    expect(s.querierServing).toBe(false);
    expect(counts(s)).toEqual({ serving: 0, alive: 0, stale: 0, gone: 0 });
  });
});

describe("Succession: checks counter", () => {
  it("counts each check by its result", async () => {
    const { s, results, clock } = setup(["a", "self"]);
    const seq: ProbeResult[] = [SERVING, SERVING, ALIVE, answer({ role: "listener" }), GONE, SERVING, answer({ job: "0x9" }), ALIVE, ALIVE];
    for (const [k, r] of seq.entries()) {
      results.a = r;
      clock.now = k * 1000;
      await s.check();
    }
    expect(counts(s)).toEqual({ serving: 3, alive: 3, stale: 2, gone: 1 });
  });
});
