import { describe, expect, it } from "vitest";
import { CollByteMatcher, type CollFields } from "../../../../../collectors/nccl/logs/ingest/coll-bytes.js";
import { parseLine } from "../../../../../collectors/nccl/logs/parse/line.js";
import { listFixtures, readCapture } from "../../../../helpers/fixtures.js";
import { Scenario } from "../../../../sim/index.js";

/** `host:pid:` of a line's NCCL header when the line starts with it. */
function writerPrefix(line: string): string | undefined {
  const ev = parseLine(line);
  if (!ev || ev.host === undefined || ev.pid === undefined) return undefined;
  const p = `${ev.host}:${ev.pid}:`;
  return line.startsWith(p) ? p : undefined;
}

/** The matcher on `line` as the splitter hands it over: in a buffer with other lines around it. */
function match(m: CollByteMatcher, line: string): CollFields | undefined {
  const before = Buffer.from("x:1:1 [0] NCCL INFO before\n");
  const bytes = Buffer.from(line, "utf8");
  const buf = Buffer.concat([before, bytes, Buffer.from("\nh:1:2 [0] NCCL INFO after comm 0x1\n")]);
  return m.match(buf, before.length, before.length + bytes.length) ? { ...m.fields } : undefined;
}

function matcherFor(prefix: string): CollByteMatcher {
  const m = new CollByteMatcher();
  m.setWriter(prefix);
  return m;
}

function simulated(version: string): [string, string[]] {
  const sim = new Scenario({ nodes: ["dgx-a01"], ranksPerNode: 8, ncclVersion: version, comms: [{ name: "tp", groupSize: 2, layout: "contiguous" }] });
  return [`simulated ${version} job`, sim.advance(20_000).lines.map((l) => l.text)];
}

const REST = " sendbuff 0x1 recvbuff 0x2 count 4 datatype 7 op 0 root 0 comm 0x55aa11 [nranks=2] stream 0x3";

describe("CollByteMatcher", () => {
  it("reads every plain COLL line of every capture and of simulated jobs as the full parser does, and declines every other line", () => {
    let accepted = 0;
    const declinedPlain: string[] = [];
    const sources: [string, string[]][] = listFixtures("nccl", ".log").map((n) => [n, readCapture(`nccl/${n}`).split("\n")]);
    sources.push(simulated("2.21.5"), simulated("2.27.3"), simulated("2.19.3"));
    const matchers = new Map<string, CollByteMatcher>();
    for (const [name, lines] of sources) {
      for (const line of lines) {
        const prefix = writerPrefix(line);
        if (!prefix) continue;
        let m = matchers.get(prefix);
        if (!m) matchers.set(prefix, (m = matcherFor(prefix)));
        const got = match(m, line);
        const full = parseLine(line);
        if (full?.kind === "coll" && !full.torn && full.comm.startsWith("0x") && got) {
          expect(got, `${name}: ${line}`).toEqual({ op: full.op, opCount: Number.parseInt(full.opCount, 16), comm: full.comm });
          accepted++;
        } else {
          expect(got, `${name}: ${line}`).toBeUndefined();
          if (full?.kind === "coll" && !full.torn) declinedPlain.push(`${name}: ${line}`);
        }
      }
    }
    expect(accepted).toBeGreaterThan(1000);
    // Plain COLL lines left to the full parser: only capture lines in a shape the fast path does not take.
    expect(declinedPlain.filter((l) => l.startsWith("simulated"))).toEqual([]);
    expect(declinedPlain.length).toBeLessThan(accepted / 50);
  });

  it("takes the opCount as a number and reuses op and pointer strings across lines", () => {
    const m = matcherFor("h:1:");
    const a = match(m, `h:1:2 [0] NCCL INFO AllReduce: opCount 1f${REST}`);
    const b = match(m, `h:1:2 [0] NCCL INFO AllReduce: opCount 2a0${REST}`);
    expect(a).toEqual({ op: "AllReduce", opCount: 31, comm: "0x55aa11" });
    expect(b).toEqual({ op: "AllReduce", opCount: 0x2a0, comm: "0x55aa11" });
    expect(match(m, `h:1:2 [0] NCCL INFO AllGather: opCount 3${REST.replace("0x55aa11", "0x55AA11")}`)).toEqual({
      op: "AllGather",
      opCount: 3,
      comm: "0x55AA11",
    });
  });

  it("leaves a torn line holding a second writer's COLL line to the full parser", () => {
    const torn =
      "learnfair062:32619:32711 [2] NCCL INFO learnfair062:32629:32629 [7] NCCL INFO Broadcast: opCount 0 sendbuff 0x7f372c7f5400 recvbuff 0x7f372c7f5400 count 53 datatype 4 op 0 root 0 comm 0x5566 [nranks=8] stream 0x1";
    expect(match(matcherFor("learnfair062:32619:"), torn)).toBeUndefined();
    expect(parseLine(torn)).toMatchObject({ kind: "coll", pid: 32629, torn: true });
  });

  it("declines lines that only look like COLL lines, or that the full parser reads otherwise", () => {
    const m = matcherFor("h:1:");
    for (const line of [
      "h:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Init COMPLETE",
      "h:1:2 [0] NCCL WARN AllReduce: opCount 1 comm 0x55aa11",
      "h:1:2 [0] NCCL INFO AllReduce: opCount 1f sendbuff 0x1",
      `h:2:2 [0] NCCL INFO AllReduce: opCount 1f${REST}`, // another writer
      `h:1:2 [0] NCCL INFO All3educe: opCount 1f${REST}`,
      `h:1:2x [0] NCCL INFO AllReduce: opCount 1f${REST}`,
      `h:1:2 NCCL INFO AllReduce: opCount 1f${REST}`,
      `h:1:2 [0] NCCL INFO AllReduce: opCount 1f${REST.replace("count 4", "count 4x")}`,
      `h:1:2 [0] NCCL INFO AllReduce: opCount 1f${REST.replace(" [nranks=2]", " comm 0x77 [nranks=2]")}`,
      `h:1:2 [0] NCCL INFO AllReduce: opCount 1fffffffffffffff${REST}`, // beyond an exact double
      `h:1:2 [0] NCCL INFO ${"A".repeat(30)}: opCount 1f${REST}`,
    ]) {
      expect(match(m, line), line).toBeUndefined();
    }
  });
  it("matchLine finds a COLL line's newline in the read buffer, with the pointer as an exact numeric key", () => {
    const m = matcherFor("h:1:");
    const line = `h:1:2 [0] NCCL INFO AllReduce: opCount 1f${REST}`;
    for (const eol of ["\n", "  \r\n"]) {
      const buf = Buffer.from(`${line}${eol}h:1:2 [0] NCCL INFO next\n`, "latin1");
      const nl = m.matchLine(buf, 0, buf.length, 4096);
      expect(nl).toBe(line.length + eol.length - 1);
      expect(buf[nl]).toBe(10);
      expect(m.fields.op).toBe("AllReduce");
      expect(m.fields.opCount).toBe(0x1f);
      expect([m.ptrKey, m.ptrChars, m.comm(buf)]).toEqual([0x55aa11, 8, "0x55aa11"]);
    }
    const cut = Buffer.from(line, "latin1"); // no newline yet: the splitter keeps it as partial
    expect(m.matchLine(cut, 0, cut.length, 4096)).toBe(-1);
    const crOnly = Buffer.from(`${line}\r`, "latin1");
    expect(m.matchLine(crOnly, 0, crOnly.length, 4096)).toBe(-1);
    const nl = Buffer.from(`${line}\n`, "latin1");
    expect(m.matchLine(nl, 0, nl.length, line.length - 1)).toBe(-1); // over the limit: the splitter counts it
    expect(m.matchLine(nl, 0, nl.length, line.length)).toBe(line.length);
    // Upper-case hex and leading zeros name other text: not keyed, or keyed with another length.
    const upper = Buffer.from(`${line.replace("0x55aa11", "0x55AA11")}\n`, "latin1");
    expect(m.matchLine(upper, 0, upper.length, 4096)).toBeGreaterThan(0);
    expect([m.ptrKey, m.comm(upper)]).toEqual([-1, "0x55AA11"]);
    const zeros = Buffer.from(`${line.replace("0x55aa11", "0x0055aa11")}\n`, "latin1");
    m.matchLine(zeros, 0, zeros.length, 4096);
    expect([m.ptrKey, m.ptrChars, m.comm(zeros)]).toEqual([0x55aa11, 10, "0x0055aa11"]);
    const long = Buffer.from(`${line.replace("0x55aa11", `0x${"1".repeat(14)}`)}\n`, "latin1");
    m.matchLine(long, 0, long.length, 4096);
    expect([m.ptrKey, m.comm(long)]).toEqual([-1, `0x${"1".repeat(14)}`]);
  });

  it("compares its fixed text 4 bytes at a time wherever the line starts, and never reads past the buffer", () => {
    const m = matcherFor("gpu-node-001:56433:");
    const line = `gpu-node-001:56433:56461 [3] NCCL INFO AllGather: opCount 7${REST}`;
    for (let pad = 0; pad < 8; pad++) {
      const buf = Buffer.from(
        `${"#".repeat(pad)}${line}
`,
        "latin1",
      );
      expect(m.matchLine(buf, pad, buf.length, 4096), `offset ${pad}`).toBe(buf.length - 1);
      expect(m.fields.op).toBe("AllGather");
      // One byte changed anywhere in a fixed part declines it (the prefix, " NCCL INFO ", ": opCount ", " [nranks=", " stream ").
      for (const at of [0, 5, 18, 28, 33, line.indexOf(": opCount") + 3, line.indexOf(" [nranks=") + 4, line.indexOf(" stream ") + 6]) {
        const bad = Buffer.from(buf);
        bad[pad + at] = 0x5f;
        expect(m.matchLine(bad, pad, bad.length, 4096), `offset ${pad}, byte ${at}`).toBe(-1);
      }
    }
    // An `end` beyond the buffer (a caller's mistake) is clamped, not a RangeError.
    const buf = Buffer.from(
      `${line}
`,
      "latin1",
    );
    expect(m.matchLine(buf, 0, buf.length + 64, 4096)).toBe(buf.length - 1);
    expect(m.match(buf.subarray(0, 40), 0, 400)).toBe(false);
  });
});
