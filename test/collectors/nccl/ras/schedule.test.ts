/**
 * AskSchedule (collectors/nccl/ras/schedule.ts): when this node asks NCCL RAS, and why. The schedule
 * is a pure function of the times it is given, so the clock here is a plain number.
 */
import { describe, expect, it } from "vitest";
import { AskSchedule, MAX_BACKOFF_MS, type ScheduleInput } from "../../../../collectors/nccl/ras/schedule.js";

const INTERVAL = 30_000;
const SETTLE = 120_000;
const SINCE = 1_000_000;

/** A random() that returns the given values in turn, then the last one again. */
function randoms(...values: number[]): () => number {
  let i = 0;
  return () => values[Math.min(i++, values.length - 1)] as number;
}

function schedule(o: { random?: () => number; spreadStart?: boolean; intervalMs?: number; settleMs?: number } = {}): AskSchedule {
  return new AskSchedule({
    intervalMs: o.intervalMs ?? INTERVAL,
    settleMs: o.settleMs ?? SETTLE,
    random: o.random ?? (() => 0.5),
    spreadStart: o.spreadStart ?? false,
  });
}

function at(now: number, over: Partial<ScheduleInput> = {}): ScheduleInput {
  return { now, role: "undetermined", querierServing: false, suspicion: false, event: false, takeover: false, periodicAllowed: true, ...over };
}

/** A schedule whose job is known (first query answered at `t`), with `role` given at each check by the caller. */
function knownJob(t: number, o: { random?: () => number } = {}): AskSchedule {
  const s = schedule({ random: o.random ?? (() => 0.5) });
  s.listening(SINCE);
  s.asked("periodic", t);
  s.answered(t, false);
  return s;
}

describe("AskSchedule: no listener, settle time", () => {
  it("asks nothing before a RAS service listens, whatever the input", () => {
    const s = schedule();
    expect(s.hasListener).toBe(false);
    for (const over of [{}, { suspicion: true }, { event: true }, { takeover: true, role: "querier" as const }]) {
      expect(s.due(at(SINCE + 10 * SETTLE, over))).toBeUndefined();
    }
  });

  it("asks nothing within settleMs of the listener, not even on an event or suspicion", () => {
    const s = schedule();
    s.listening(SINCE);
    expect(s.hasListener).toBe(true);
    expect(s.due(at(SINCE))).toBeUndefined();
    expect(s.due(at(SINCE + SETTLE - 1, { event: true }))).toBeUndefined();
    expect(s.due(at(SINCE + SETTLE - 1, { suspicion: true }))).toBeUndefined();
    expect(s.due(at(SINCE + SETTLE - 1, { role: "querier", takeover: true }))).toBeUndefined();
    // At the end of the settle time the (unspread) start query is due.
    expect(s.due(at(SINCE + SETTLE))).toBe("periodic");
  });

  it("spreadStart: the start query at since + settle + random * interval", () => {
    const s = schedule({ spreadStart: true, random: randoms(0.25) });
    s.listening(SINCE);
    const start = SINCE + SETTLE + 0.25 * INTERVAL;
    expect(s.due(at(SINCE + SETTLE))).toBeUndefined();
    expect(s.due(at(start - 1))).toBeUndefined();
    expect(s.due(at(start))).toBe("periodic");
  });

  it("spreadStart: another random draw gives another start", () => {
    const s = schedule({ spreadStart: true, random: randoms(0.9) });
    s.listening(SINCE);
    const start = SINCE + SETTLE + 0.9 * INTERVAL;
    expect(s.due(at(start - 1))).toBeUndefined();
    expect(s.due(at(start))).toBe("periodic");
  });

  it("spreadStart false: the start query at since + settle, random not used", () => {
    let calls = 0;
    const s = schedule({
      spreadStart: false,
      random: () => {
        calls++;
        return 0.99;
      },
    });
    s.listening(SINCE);
    expect(calls).toBe(0);
    expect(s.due(at(SINCE + SETTLE - 1))).toBeUndefined();
    expect(s.due(at(SINCE + SETTLE))).toBe("periodic");
  });

  it("after a first query with no report, the next start query comes one interval later", () => {
    const s = schedule();
    s.listening(SINCE);
    const t = SINCE + SETTLE + 5;
    expect(s.due(at(t))).toBe("periodic");
    s.asked("periodic", t);
    expect(s.jobIsKnown).toBe(false);
    expect(s.due(at(t + 1))).toBeUndefined();
    expect(s.due(at(t + INTERVAL - 1))).toBeUndefined();
    expect(s.due(at(t + INTERVAL))).toBe("periodic");
  });
});

describe("AskSchedule: querier", () => {
  it("asks periodically every interval * (0.9 + 0.2 * random)", () => {
    // listening: no random (spreadStart false); the first asked() draws 0.25, the second 1.
    const s = schedule({ random: randoms(0.25, 1) });
    s.listening(SINCE);
    const t = SINCE + SETTLE;
    s.asked("periodic", t);
    s.answered(t + 100, false);
    expect(s.jobIsKnown).toBe(true);
    const next = t + INTERVAL * (0.9 + 0.2 * 0.25); // 28.5 s later
    expect(s.due(at(next - 1, { role: "querier" }))).toBeUndefined();
    expect(s.due(at(next, { role: "querier" }))).toBe("periodic");
    s.asked("periodic", next);
    s.answered(next, false);
    const after = next + INTERVAL * 1.1;
    expect(s.due(at(after - 1, { role: "querier" }))).toBeUndefined();
    expect(s.due(at(after, { role: "querier" }))).toBe("periodic");
  });

  it("the shortest period is 0.9 interval", () => {
    const s = knownJob(SINCE + SETTLE, { random: () => 0 });
    const t = SINCE + SETTLE;
    expect(s.due(at(t + 0.9 * INTERVAL - 1, { role: "querier" }))).toBeUndefined();
    expect(s.due(at(t + 0.9 * INTERVAL, { role: "querier" }))).toBe("periodic");
  });

  it("a rising suspicion asks at once when the last query is at least interval/4 old", () => {
    const t = SINCE + SETTLE;
    const s = knownJob(t);
    expect(s.due(at(t + INTERVAL / 4, { role: "querier", suspicion: true }))).toBe("suspicion");
  });

  it("a rising suspicion under interval/4 after the last query does not ask; nor does a lasting one", () => {
    const t = SINCE + SETTLE;
    const s = knownJob(t);
    expect(s.due(at(t + INTERVAL / 4 - 1, { role: "querier", suspicion: true }))).toBeUndefined();
    // Still suspicious, no longer rising: the timer decides.
    expect(s.due(at(t + INTERVAL / 2, { role: "querier", suspicion: true }))).toBeUndefined();
    // It falls and rises again, now past a quarter interval: asks.
    expect(s.due(at(t + INTERVAL / 2 + 1, { role: "querier", suspicion: false }))).toBeUndefined();
    expect(s.due(at(t + INTERVAL / 2 + 2, { role: "querier", suspicion: true }))).toBe("suspicion");
  });

  it("the periodic query wins over suspicion when both are due", () => {
    const t = SINCE + SETTLE;
    const s = knownJob(t, { random: () => 0 });
    expect(s.due(at(t + INTERVAL, { role: "querier", suspicion: true }))).toBe("periodic");
  });

  it("an event asks at once, right after a query", () => {
    const t = SINCE + SETTLE;
    const s = knownJob(t);
    expect(s.due(at(t + 1, { role: "querier", event: true }))).toBe("suspicion");
  });

  it("setOptions forgets the periodic timer: the querier asks at once", () => {
    const t = SINCE + SETTLE;
    const s = knownJob(t);
    expect(s.due(at(t + 1, { role: "querier" }))).toBeUndefined();
    s.setOptions({ intervalMs: 60_000 });
    expect(s.due(at(t + 1, { role: "querier" }))).toBe("periodic");
  });
});

describe("AskSchedule: listener", () => {
  it("never asks on a timer", () => {
    const t = SINCE + SETTLE;
    const s = knownJob(t);
    for (let k = 1; k <= 20; k++) expect(s.due(at(t + k * INTERVAL, { role: "listener" }))).toBeUndefined();
    expect(s.due(at(t + 20 * INTERVAL, { role: "undetermined" }))).toBeUndefined();
  });

  it("asks on suspicion at most once per interval", () => {
    const t = SINCE + SETTLE;
    const s = knownJob(t);
    const t1 = t + 1000;
    expect(s.due(at(t1, { role: "listener", suspicion: true }))).toBe("suspicion");
    s.asked("suspicion", t1);
    s.answered(t1, false);
    expect(s.due(at(t1 + 1, { role: "listener", suspicion: true }))).toBeUndefined();
    expect(s.due(at(t1 + INTERVAL - 1, { role: "listener", suspicion: true }))).toBeUndefined();
    expect(s.due(at(t1 + INTERVAL, { role: "listener", suspicion: true }))).toBe("suspicion");
  });

  it("asks nothing on suspicion while the querier serves", () => {
    const t = SINCE + SETTLE;
    const s = knownJob(t);
    expect(s.due(at(t + 10 * INTERVAL, { role: "listener", suspicion: true, querierServing: true }))).toBeUndefined();
    // The querier stops serving: the lasting suspicion asks.
    expect(s.due(at(t + 10 * INTERVAL + 1, { role: "listener", suspicion: true, querierServing: false }))).toBe("suspicion");
  });

  it("an event asks at once, past the suspicion's spacing and a serving querier", () => {
    const t = SINCE + SETTLE;
    const s = knownJob(t);
    s.asked("suspicion", t + 10);
    expect(s.due(at(t + 20, { role: "listener", suspicion: true, querierServing: true }))).toBeUndefined();
    expect(s.due(at(t + 20, { role: "listener", querierServing: true, event: true }))).toBe("suspicion");
  });
});

describe("AskSchedule: takeover", () => {
  it("asks at once with reason takeover when the node is querier and timed queries are allowed", () => {
    const t = SINCE + SETTLE;
    const s = knownJob(t);
    expect(s.due(at(t + 1, { role: "querier", takeover: true }))).toBe("takeover");
  });

  it("a takeover seen as a listener waits for the querier role; asked() clears it", () => {
    const t = SINCE + SETTLE;
    const s = knownJob(t);
    expect(s.due(at(t + 1, { role: "listener", takeover: true }))).toBeUndefined();
    expect(s.due(at(t + 2, { role: "querier" }))).toBe("takeover");
    s.asked("takeover", t + 2);
    expect(s.due(at(t + 3, { role: "querier" }))).toBeUndefined();
  });

  it("no takeover query where timed queries are not allowed", () => {
    const t = SINCE + SETTLE;
    const s = knownJob(t);
    expect(s.due(at(t + 1, { role: "querier", takeover: true, periodicAllowed: false }))).toBeUndefined();
    // Suspicion still asks, as suspicion.
    expect(s.due(at(t + INTERVAL, { role: "querier", periodicAllowed: false, suspicion: true }))).toBe("suspicion");
  });
});

describe("AskSchedule: periodicAllowed false (a known defect)", () => {
  it("no start query", () => {
    const s = schedule();
    s.listening(SINCE);
    for (let k = 0; k <= 10; k++) expect(s.due(at(SINCE + SETTLE + k * INTERVAL, { periodicAllowed: false }))).toBeUndefined();
  });

  it("suspicion asks before the job is known, at most once per interval", () => {
    const s = schedule();
    s.listening(SINCE);
    const t = SINCE + SETTLE;
    expect(s.due(at(t, { periodicAllowed: false, suspicion: true }))).toBe("suspicion");
    s.asked("suspicion", t);
    expect(s.due(at(t + INTERVAL - 1, { periodicAllowed: false, suspicion: true }))).toBeUndefined();
    expect(s.due(at(t + INTERVAL, { periodicAllowed: false, suspicion: true }))).toBe("suspicion");
  });

  it("the querier asks on no timer; suspicion still asks", () => {
    const t = SINCE + SETTLE;
    const s = knownJob(t);
    for (let k = 1; k <= 10; k++) expect(s.due(at(t + k * INTERVAL, { role: "querier", periodicAllowed: false }))).toBeUndefined();
    expect(s.due(at(t + 11 * INTERVAL, { role: "querier", periodicAllowed: false, suspicion: true }))).toBe("suspicion");
  });
});

describe("AskSchedule: init hold", () => {
  it("a report showing a rank in init holds every query for settleMs", () => {
    const t = SINCE + SETTLE;
    const s = knownJob(t, { random: () => 0 });
    const r = t + 1000;
    s.answered(r, true);
    const all = { role: "querier" as const, suspicion: true, event: true, takeover: true };
    expect(s.due(at(r + 1, all))).toBeUndefined();
    expect(s.due(at(r + SETTLE - 1, all))).toBeUndefined();
    expect(s.due(at(r + SETTLE, { role: "querier" }))).toBe("takeover");
    s.asked("takeover", r + SETTLE);
    expect(s.due(at(r + SETTLE + 1, { role: "querier", event: true }))).toBe("suspicion");
  });

  it("a later report with no rank in init lifts the hold", () => {
    const t = SINCE + SETTLE;
    const s = knownJob(t, { random: () => 0 });
    s.answered(t + 10, true);
    expect(s.due(at(t + 20, { role: "querier", event: true }))).toBeUndefined();
    s.answered(t + 30, false);
    expect(s.due(at(t + 40, { role: "querier", event: true }))).toBe("suspicion");
  });
});

describe("AskSchedule: backoff", () => {
  it("one interval after a failure, then doubling, capped at MAX_BACKOFF_MS", () => {
    expect(MAX_BACKOFF_MS).toBe(600_000);
    const t = SINCE + SETTLE;
    const s = knownJob(t, { random: () => 0 });
    expect(s.backoffMs).toBe(0);
    const seen: number[] = [];
    let now = t;
    for (let k = 0; k < 7; k++) {
      s.failed(now);
      seen.push(s.backoffMs);
      expect(s.due(at(now + s.backoffMs - 1, { role: "querier", event: true }))).toBeUndefined();
      now += s.backoffMs;
      expect(s.due(at(now, { role: "querier" }))).toBe("periodic");
    }
    expect(seen).toEqual([30_000, 60_000, 120_000, 240_000, 480_000, 600_000, 600_000]);
  });

  it("the backoff holds from the time of the failure", () => {
    const t = SINCE + SETTLE;
    const s = knownJob(t, { random: () => 0 });
    s.failed(t + 5000);
    expect(s.due(at(t + 5000 + INTERVAL - 1, { role: "querier" }))).toBeUndefined();
    expect(s.due(at(t + 5000 + INTERVAL, { role: "querier" }))).toBe("periodic");
  });

  it("answered() resets it: the next failure backs off one interval again", () => {
    const t = SINCE + SETTLE;
    const s = knownJob(t, { random: () => 0 });
    s.failed(t);
    s.failed(t);
    s.failed(t);
    expect(s.backoffMs).toBe(4 * INTERVAL);
    s.answered(t + 1, false);
    expect(s.backoffMs).toBe(0);
    expect(s.due(at(t + 2, { role: "querier", event: true }))).toBe("suspicion");
    s.failed(t + 3);
    expect(s.backoffMs).toBe(INTERVAL);
  });

  it("the start query backs off too", () => {
    const s = schedule();
    s.listening(SINCE);
    const t = SINCE + SETTLE;
    s.asked("periodic", t);
    s.failed(t + 100);
    s.failed(t + 100);
    expect(s.backoffMs).toBe(2 * INTERVAL);
    // The start query would be due one interval after the first, but the backoff holds longer.
    expect(s.due(at(t + INTERVAL))).toBeUndefined();
    expect(s.due(at(t + 100 + 2 * INTERVAL - 1))).toBeUndefined();
    expect(s.due(at(t + 100 + 2 * INTERVAL))).toBe("periodic");
  });
});

describe("AskSchedule: the job forgotten", () => {
  it("a known job whose service stops answering (refused, untrusted) is asked again like a new one, an interval on", () => {
    const t = SINCE + SETTLE;
    const s = knownJob(t, { random: () => 0 });
    // A listener knows the job: it does not ask on a timer...
    expect(s.due(at(t + 10 * INTERVAL, { role: "listener" }))).toBeUndefined();
    s.jobForgotten(t + 10 * INTERVAL);
    // ...until what it knew went: then its first query again (the role is undetermined without a report).
    expect(s.due(at(t + 11 * INTERVAL - 1, { role: "undetermined" }))).toBeUndefined();
    expect(s.due(at(t + 11 * INTERVAL, { role: "undetermined" }))).toBe("periodic");
  });
});

describe("AskSchedule: gone", () => {
  it("gone() clears the listener, the job, the backoff and the init hold", () => {
    const t = SINCE + SETTLE;
    const s = knownJob(t, { random: () => 0 });
    s.answered(t, true);
    s.failed(t);
    s.failed(t);
    s.gone();
    expect(s.hasListener).toBe(false);
    expect(s.jobIsKnown).toBe(false);
    expect(s.backoffMs).toBe(0);
    expect(s.due(at(t + 1, { role: "querier", event: true }))).toBeUndefined();
    // A new service: a new settle time, then the start query, with no backoff nor init hold left.
    const since2 = t + 10;
    s.listening(since2);
    expect(s.hasListener).toBe(true);
    expect(s.due(at(since2 + SETTLE - 1, { role: "querier" }))).toBeUndefined();
    expect(s.due(at(since2 + SETTLE, { role: "querier" }))).toBe("periodic");
  });

  it("gone() forgets a takeover not yet asked: the next job's first query is periodic", () => {
    const t = SINCE + SETTLE;
    const s = knownJob(t, { random: () => 0 });
    // A takeover seen while still a listener waits for the querier role...
    expect(s.due(at(t + 1, { role: "listener", takeover: true }))).toBeUndefined();
    s.gone();
    const since2 = t + 10;
    s.listening(since2);
    // ...and is not carried into the next job.
    expect(s.due(at(since2 + SETTLE, { role: "querier" }))).toBe("periodic");
  });

  it("a new listener without gone() restarts the settle time and the start query", () => {
    const t = SINCE + SETTLE;
    const s = knownJob(t, { random: () => 0 });
    const since2 = t + INTERVAL;
    s.listening(since2);
    expect(s.jobIsKnown).toBe(false);
    expect(s.due(at(since2 + 1, { role: "querier" }))).toBeUndefined();
    expect(s.due(at(since2 + SETTLE, { role: "querier" }))).toBe("periodic");
  });
});
