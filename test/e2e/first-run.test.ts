/**
 * A first run on a machine without GPUs or InfiniBand (this one, and CI's), as a developer runs it
 * (`npm start`, `npx ringwatch --once`): the real built agent with its default settings logs
 * nothing above info. The sources that are not here (nvidia-smi, /sys/class/infiniband, a module
 * list, /var/log/nccl, /var/lib/ringwatch) are info lines, and /metrics says for every collector
 * whether its source is present, absent or failing.
 *
 * The one kind of warning let through: a missing privilege to read the kernel log (not root, with
 * kernel.dmesg_restrict=1, and the journal's files not readable by the user). That is no absence:
 * the kernel log is there and the agent cannot read it, which an operator must hear about.
 */
import { existsSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { eventually, runAgent, sample, startAgent, type RunningAgent } from "../helpers/agent-process.js";

interface Line {
  level: number;
  msg: string;
  collector?: string;
  reason?: string;
}

const COLLECTORS = ["gpu", "infiniband", "gdr", "mtu", "nccl", "job", "kmsg"];
const STATES = ["present", "absent", "failing"];

/**
 * The default state file, unless an installed agent's /var/lib/ringwatch is here (the test must
 * not write into it): then none. Named explicitly, as the default, so that the test helper keeps it.
 */
const STATE_FILE = existsSync("/var/lib/ringwatch") ? "--collector.kmsg.state-file=" : "--collector.kmsg.state-file=/var/lib/ringwatch/kmsg-position.json";

/** A warning that says a privilege to read the kernel log is missing (see above); any other line above info fails. */
function justified(l: Line): boolean {
  const why = `${l.msg} ${l.reason ?? ""}`;
  return l.collector === "kmsg" && (why.includes("CAP_SYSLOG") || why.includes("the journal files' group") || why.includes("the journal's files"));
}

const parse = (text: string[]): Line[] => text.filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Line);
const aboveInfo = (lines: Line[]): Line[] => lines.filter((l) => l.level > 30 && !justified(l));

/** Each collector's source state on a scrape: the state at 1, or undefined. */
function sources(text: string): Record<string, string | undefined> {
  return Object.fromEntries(
    COLLECTORS.map((c) => [c, STATES.find((s) => sample(text, `ringwatch_collector_source_state{collector="${c}",state="${s}"}`) === 1)]),
  );
}

let agent: RunningAgent | undefined;
afterEach(async () => {
  await agent?.stop();
  agent = undefined;
});

describe("a first run without GPUs, with the default settings", () => {
  it("npm start: serves /metrics, says each collector's source state, and logs nothing above info, the shutdown included", async () => {
    const a = await startAgent([STATE_FILE]);
    agent = a;
    const text = await eventually(async () => {
      const t = await a.scrape();
      const s = sources(t);
      // Every poll collector has run once and every stream has started.
      return COLLECTORS.every((c) => s[c] !== undefined) ? t : undefined;
    }, 20_000);
    const s = sources(text);
    for (const c of COLLECTORS) expect(STATES, c).toContain(s[c]);
    // Absent, never failing, is what a machine without the hardware reports (the kernel log aside: a privilege).
    for (const c of ["gpu", "infiniband"]) if (s[c] !== "present") expect(s[c], c).toBe("absent");
    for (const c of ["gdr", "mtu", "nccl", "job"]) expect(s[c], c).not.toBe("failing");
    if (!existsSync("/var/log/nccl")) expect(s["nccl"]).toBe("absent");
    const { code } = await a.stop();
    agent = undefined;
    expect(code).toBe(0);
    const lines = parse(a.logs());
    expect(lines.some((l) => l.msg === "shutting down")).toBe(true);
    expect(aboveInfo(lines)).toEqual([]);
  }, 40_000);

  it("npx ringwatch --once: prints the exposition and logs nothing above info", async () => {
    const r = await runAgent(["--once", STATE_FILE]);
    expect(r.code).toBe(0);
    const s = sources(r.stdout);
    for (const c of COLLECTORS) expect(STATES, c).toContain(s[c]);
    const lines = parse(r.stderr.split("\n"));
    expect(lines.length).toBeGreaterThan(0);
    expect(aboveInfo(lines)).toEqual([]);
  });
});
