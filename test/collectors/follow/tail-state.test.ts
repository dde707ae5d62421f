import type { Stats } from "node:fs";
import { beforeEach, describe, expect, it } from "vitest";
import { birthOf, birthTimes, Tail } from "../../../collectors/follow/tail-state.js";

const st = (ino: number, birth: number, ctime: number): Stats => ({ dev: 1, ino, birthtimeMs: birth, ctimeMs: ctime, isFile: () => true }) as unknown as Stats;

const tail = (s: Stats): Tail => new Tail({ path: "/x", dev: 1, ino: s.ino, generation: 0, uid: 0 }, s, "start", 100, false);

describe("Tail identity", () => {
  it("is (dev, ino), plus a birth time that differs from the ctime", () => {
    const t = tail(st(7, 1000, 2000));
    expect(t.sameFile(st(7, 1000, 9000))).toBe(true);
    expect(t.sameFile(st(8, 1000, 9000))).toBe(false);
    expect(t.sameFile(st(7, 5000, 9000))).toBe(false); // inode number reused by a new file
  });

  beforeEach(() => birthTimes.forget());

  it("does not trust a birth time equal to the ctime (libuv's fallback without statx)", () => {
    expect(birthOf(st(7, 5000, 5000))).toBe(0);
    const t = tail(st(7, 1000, 1000));
    expect(t.sameFile(st(7, 3000, 3000))).toBe(true); // a write moved the fake birth with the ctime
    expect(t.sameFile(st(7, 0, 3000))).toBe(true); // no birth time at all
    expect(birthTimes.real).toBe(false);
  });

  it("trusts a birth time equal to the ctime once any file showed real birth times (a new empty file on a reused inode)", () => {
    const old = tail(st(7, 1000, 2000)); // written after its birth: birth times are real here
    expect(birthTimes.real).toBe(true);
    expect(birthOf(st(9, 5000, 5000))).toBe(5000);
    expect(old.sameFile(st(7, 5000, 5000))).toBe(false); // created after the rotation deleted the old one
    expect(old.sameFile(st(7, 1000, 1000))).toBe(true);
    expect(old.sameFile(st(7, 0, 3000))).toBe(true); // no birth time at all
  });
});

describe("Tail fingerprints", () => {
  it("keeps the last 64 bytes before the offset across small and large reads", () => {
    const t = tail(st(1, 0, 0));
    t.rememberTail(Buffer.from("abc"), 0, 3);
    t.rememberTail(Buffer.from("xxdefxx"), 2, 5);
    expect(t.tailPrint.subarray(0, t.tailLen).toString()).toBe("abcdef");
    const big = Buffer.from("0123456789".repeat(10));
    t.rememberTail(big, 0, 100);
    expect(t.tailPrint.subarray(0, t.tailLen).toString()).toBe(big.subarray(36, 100).toString());
    t.rememberTail(Buffer.from("Z"), 0, 1);
    expect(t.tailPrint.subarray(0, t.tailLen).toString()).toBe(big.subarray(37, 100).toString() + "Z");
  });

  it("records the head only from position 0 onwards, up to 256 bytes", () => {
    const t = tail(st(1, 0, 0));
    t.rememberHead(Buffer.from("later"), 0, 5, 10); // not contiguous with what it has: ignored
    expect(t.headLen).toBe(0);
    t.rememberHead(Buffer.from("head"), 0, 4, 0);
    t.rememberHead(Buffer.alloc(1000, 97), 0, 1000, 4);
    expect(t.headLen).toBe(256);
    expect(t.headPrint.subarray(0, 5).toString()).toBe("heada");
  });
});
