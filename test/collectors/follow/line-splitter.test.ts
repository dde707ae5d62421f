import { describe, expect, it } from "vitest";
import { firstNonZero, LineSplitter, type LineSink } from "../../../collectors/follow/line-splitter.js";

function feed(s: LineSplitter, ...chunks: (string | Buffer)[]): string[] {
  const out: string[] = [];
  for (const c of chunks) {
    const b = typeof c === "string" ? Buffer.from(c, "latin1") : c;
    // A reused buffer: stale bytes after the chunk must be ignored.
    const big = Buffer.alloc(b.length + 16, "\n");
    b.copy(big);
    s.push(big, 0, b.length, out);
  }
  return out;
}

/** A sink whose bytes() takes the lines starting with 'A' and records what reached it, and how. */
function recordingSink(seen: string[]): Required<Pick<LineSink, "bytes" | "line">> {
  return {
    bytes(buf: Buffer, a: number, e: number): boolean {
      if (buf[a] !== 0x41) return false; // 'A'
      seen.push(`bytes:${buf.toString("latin1", a, e)}`);
      return true;
    },
    line(text: string): void {
      seen.push(`text:${text}`);
    },
  };
}

/** A reused read buffer: the chunk's bytes, then stale bytes after it that must be ignored. */
const chunk = (t: string): [Buffer, number] => [Buffer.concat([Buffer.from(t, "latin1"), Buffer.from("AZZZ\nstale\n")]), t.length];

describe("LineSplitter", () => {
  it("emits complete lines only, keeping a partial one until its newline", () => {
    const s = new LineSplitter(100);
    expect(feed(s, "a\nb\nhal")).toEqual(["a", "b"]);
    expect(s.hasPartial()).toBe(true);
    expect(feed(s, "f")).toEqual([]);
    expect(feed(s, "\nc\n")).toEqual(["half", "c"]);
    expect(s.hasPartial()).toBe(false);
  });

  it("gives the same lines whatever the chunk boundaries", () => {
    const text = "one\r\ntwo\n\nthr\u00e9e \u2502x\nfour\n";
    const bytes = Buffer.from(text, "utf8");
    const want = ["one", "two", "", "thr\u00e9e \u2502x", "four"];
    for (let i = 0; i <= bytes.length; i++) {
      for (let j = i; j <= bytes.length; j++) {
        const s = new LineSplitter(100);
        const got = feed(s, bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j));
        expect(got, `cut at ${i},${j}`).toEqual(want);
      }
    }
  });

  it("strips one CR before LF and keeps a lone CR inside a line", () => {
    expect(feed(new LineSplitter(100), "a\r\nb\rc\n\r\n")).toEqual(["a", "b\rc", ""]);
  });

  it("decodes invalid UTF-8 and NUL bytes without throwing", () => {
    const junk = Buffer.from([0x61, 0x00, 0xff, 0xfe, 0x62, 0x0a, 0xc3, 0x0a]);
    expect(feed(new LineSplitter(100), junk)).toEqual(["a\u0000\ufffd\ufffdb", "\ufffd"]);
  });

  it("skips and counts lines longer than the cap, within one chunk and across chunks", () => {
    const s = new LineSplitter(10);
    expect(feed(s, "x".repeat(11) + "\nok\n" + "y".repeat(10) + "\n")).toEqual(["ok", "y".repeat(10)]);
    expect(s.tooLong).toBe(1);
    expect(feed(s, "z".repeat(8), "z".repeat(8), "z".repeat(1000), "\nnext\n")).toEqual(["next"]);
    expect(s.tooLong).toBe(2);
    expect(s.hasPartial()).toBe(false);
  });

  it("accepts a line of exactly the cap even when it ends in CRLF across chunks", () => {
    const s = new LineSplitter(4);
    expect(feed(s, "abcd\r", "\n")).toEqual(["abcd"]);
    expect(feed(s, "abcde\r", "\n")).toEqual([]);
    expect(s.tooLong).toBe(1);
  });

  it("skips leading NULs after a reset (sparse hole) but not NULs inside lines", () => {
    const s = new LineSplitter(100);
    s.skipNul = true;
    expect(feed(s, Buffer.alloc(10000), Buffer.alloc(5000), "\u0000new\n\u0000x\n")).toEqual(["new", "\u0000x"]);
    expect(s.skipNul).toBe(false);
  });

  it("in skipping mode drops up to the next newline (a line joined in the middle)", () => {
    const s = new LineSplitter(100);
    s.skipping = true;
    expect(feed(s, "tail of a line\nwhole\n")).toEqual(["whole"]);
    expect(s.tooLong).toBe(0);
  });

  it("firstNonZero finds the first data byte across the fast 4 KiB path", () => {
    const b = Buffer.alloc(20000);
    b[12345] = 7;
    expect(firstNonZero(b, 0, b.length)).toBe(12345);
    expect(firstNonZero(b, 12346, b.length)).toBe(b.length);
  });

  it("pushTo hands lines to a sink's bytes() first, in order, and decodes only what it declines", () => {
    const s = new LineSplitter(100);
    const seen: string[] = [];
    const sink = recordingSink(seen);
    let n = 0;
    for (const t of ["A1\nb2\r\nA3", "x\nb4\n", "A5\n"]) {
      const [b, len] = chunk(t);
      n += s.pushTo(b, 0, len, sink);
    }
    expect(seen).toEqual(["bytes:A1", "text:b2", "bytes:A3x", "text:b4", "bytes:A5"]);
    expect(n).toBe(5);
  });
  it("pushTo asks a sink's lineAt() first for lines inside one read: it finds their end, declined and cut lines take the usual way", () => {
    const s = new LineSplitter(8);
    const seen: string[] = [];
    const sink = {
      // Takes lines starting with 'A' that end inside the data and are at most `max` bytes (no CR).
      lineAt(buf: Buffer, a: number, end: number, max: number): number {
        if (buf[a] !== 0x41) return -1;
        let k = a;
        while (k < end && buf[k] !== 10) k++;
        if (k >= end) return -1;
        const e = buf[k - 1] === 13 ? k - 1 : k;
        if (e - a > max) return -1;
        seen.push(`lineAt:${buf.toString("latin1", a, e)}`);
        return k;
      },
      ...recordingSink(seen),
    };
    let n = 0;
    // A CRLF line, a declined line, a line cut between reads (finished through bytes()), and an
    // 'A' line over the limit of 8 that lineAt declines: the splitter counts it as too long.
    for (const t of ["A1\r\nb2\nA3", "x\nAlongerthan8\nA5\n"]) {
      const [b, len] = chunk(t);
      n += s.pushTo(b, 0, len, sink);
    }
    expect(seen).toEqual(["lineAt:A1", "text:b2", "bytes:A3x", "lineAt:A5"]);
    expect(n).toBe(4);
    expect(s.tooLong).toBe(1);
  });
});
