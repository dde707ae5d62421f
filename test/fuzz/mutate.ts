/**
 * Input generators for the fuzz tests: real captured lines/texts mutated the way logs and tool
 * output get damaged (byte flips, truncation, splicing two lines, NUL / 0xff / lone surrogates,
 * numbers replaced by 2^64+1, 1e309, -1, 0x..., CRLF), plus free-form strings over a hostile alphabet.
 * Every mutation takes plain naturals as parameters, so fast-check shrinks a failure to a short
 * list of small edits of one real line.
 */
import fc from "fast-check";

/** Numbers that have broken parsers elsewhere: beyond 2^64, beyond 2^53, overflowing doubles, signs, hex. */
export const HOSTILE_NUMBERS: readonly string[] = [
  "18446744073709551617", // 2^64 + 1
  "18446744073709551616", // 2^64
  "99999999999999999999", // 20 digits, > 2^64
  "9007199254740993", // 2^53 + 1
  "4294967296", // 2^32
  "1e309",
  "1e-400",
  "-1",
  "-0",
  "0x7fffffffffffffff",
  "0xffffffffffffffffffff",
  "9".repeat(400), // Number() gives Infinity
  "NaN",
  "Infinity",
  "1.5",
  "00000000000000000000001",
  "",
];

/** Characters and fragments that break naive scanners. */
export const HOSTILE_TOKENS: readonly string[] = [
  "\u0000",
  "\u00ff", // what a 0xff byte becomes in a latin1 decode
  "\ufffd", // what an invalid UTF-8 byte becomes in a utf8 decode
  "\ud800", // lone high surrogate
  "\udfff", // lone low surrogate
  "\r",
  "\r\n",
  "\n",
  "\t",
  " ",
  "  ",
  "\u001b[0;32m",
  "\u2502",
  ":",
  "[",
  "]",
  "(",
  ")",
  "<",
  ">",
  "#",
  "-",
  "=",
  ",",
  "0x",
  "(nil)",
  " NCCL ",
  " NCCL INFO ",
  " NCCL WARN ",
  ": opCount ",
  " comm ",
  "h:1:2 [0] NCCL INFO ",
  "ibwarn: ",
  "ibpanic: ",
];

export type Op =
  | { k: "truncate"; a: number }
  | { k: "delete"; a: number; b: number }
  | { k: "insert"; a: number; b: number }
  | { k: "char"; a: number; b: number }
  | { k: "flip"; a: number; b: number; latin1: boolean }
  | { k: "splice"; a: number; b: number; c: number }
  | { k: "number"; a: number; b: number }
  | { k: "dup"; a: number; b: number }
  | { k: "crlf" };

const nat = fc.nat({ max: 1_000_000 });

export const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ k: fc.constant("truncate" as const), a: nat }),
  fc.record({ k: fc.constant("delete" as const), a: nat, b: nat }),
  fc.record({ k: fc.constant("insert" as const), a: nat, b: nat }),
  fc.record({ k: fc.constant("char" as const), a: nat, b: fc.nat({ max: 0xffff }) }),
  fc.record({ k: fc.constant("flip" as const), a: nat, b: fc.nat({ max: 7 }), latin1: fc.boolean() }),
  fc.record({ k: fc.constant("splice" as const), a: nat, b: nat, c: nat }),
  fc.record({ k: fc.constant("number" as const), a: nat, b: nat }),
  fc.record({ k: fc.constant("dup" as const), a: nat, b: nat }),
  fc.record({ k: fc.constant("crlf" as const) }),
);

/** Start indexes and ends of the digit runs of s. */
function digitRuns(s: string): [number, number][] {
  const runs: [number, number][] = [];
  let i = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      let j = i;
      while (j < s.length && s.charCodeAt(j) >= 48 && s.charCodeAt(j) <= 57) j++;
      runs.push([i, j]);
      i = j;
    } else i++;
  }
  return runs;
}

/** Applies one mutation to s; `donors` supplies the second line of a splice. */
export function applyOp(s: string, op: Op, donors: readonly string[]): string {
  const n = s.length;
  const at = (x: number): number => x % (n + 1);
  switch (op.k) {
    case "truncate":
      return s.slice(0, at(op.a));
    case "delete": {
      const p = at(op.a);
      return s.slice(0, p) + s.slice(p + 1 + (op.b % 24));
    }
    case "insert": {
      const p = at(op.a);
      return s.slice(0, p) + (HOSTILE_TOKENS[op.b % HOSTILE_TOKENS.length] as string) + s.slice(p);
    }
    case "char": {
      if (n === 0) return String.fromCharCode(op.b);
      const p = op.a % n;
      return s.slice(0, p) + String.fromCharCode(op.b) + s.slice(p + 1);
    }
    case "flip": {
      const bytes = Buffer.from(s, "utf8");
      if (bytes.length === 0) return s;
      const p = op.a % bytes.length;
      bytes[p] = (bytes[p] as number) ^ (1 << op.b);
      return bytes.toString(op.latin1 ? "latin1" : "utf8");
    }
    case "splice": {
      const other = donors.length > 0 ? (donors[op.b % donors.length] as string) : s;
      return s.slice(0, at(op.a)) + other.slice(op.c % (other.length + 1));
    }
    case "number": {
      const runs = digitRuns(s);
      const repl = HOSTILE_NUMBERS[op.b % HOSTILE_NUMBERS.length] as string;
      if (runs.length === 0) return s.slice(0, at(op.a)) + repl + s.slice(at(op.a));
      const [a, b] = runs[op.a % runs.length] as [number, number];
      return s.slice(0, a) + repl + s.slice(b);
    }
    case "dup": {
      const p = at(op.a);
      const e = Math.min(n, p + 1 + (op.b % 64));
      return s.slice(0, e) + s.slice(p, e) + s.slice(e);
    }
    case "crlf":
      return s.replaceAll("\n", "\r\n") + "\r";
  }
}

/** A seed from `seeds` with 1..maxOps mutations applied (splices take their second half from `seeds`). */
export function mutated(seeds: readonly string[], maxOps = 4): fc.Arbitrary<string> {
  if (seeds.length === 0) throw new Error("no seeds");
  return fc
    .tuple(fc.nat({ max: seeds.length - 1 }), fc.array(opArb, { minLength: 1, maxLength: maxOps }))
    .map(([i, ops]) => ops.reduce((s, op) => applyOp(s, op, seeds), seeds[i] as string));
}

/** Free-form strings over hostile tokens, digits, letters and any UTF-16 code unit. */
export function hostileString(maxParts = 40): fc.Arbitrary<string> {
  const part = fc.oneof(
    fc.constantFrom(...HOSTILE_TOKENS),
    fc.constantFrom(...HOSTILE_NUMBERS),
    // Any code points (fc.string's "binary" unit costs 2 s of set-up per test file).
    fc.array(fc.integer({ min: 0, max: 0x10ffff }), { maxLength: 8 }).map((cps) => String.fromCodePoint(...cps)),
    fc.string({ unit: fc.constantFrom(..."0123456789abcdefxABCDEF :-_./[]()"), maxLength: 12 }),
    fc.nat({ max: 0xffff }).map((c) => String.fromCharCode(c)),
  );
  return fc.array(part, { maxLength: maxParts }).map((p) => p.join(""));
}

/** Mutated seeds most of the time, free-form hostile strings otherwise. */
export function fuzzInput(seeds: readonly string[], maxOps = 4): fc.Arbitrary<string> {
  return fc.oneof({ arbitrary: mutated(seeds, maxOps), weight: 4 }, { arbitrary: hostileString(), weight: 1 });
}

/** A whole text built from mutated seed lines (for parsers of a whole tool output). */
export function mutatedText(lines: readonly string[], maxLines = 40): fc.Arbitrary<string> {
  return fc.tuple(fc.array(fuzzInput(lines), { minLength: 1, maxLength: maxLines }), fc.boolean()).map(([ls, crlf]) => ls.join(crlf ? "\r\n" : "\n"));
}

/**
 * A real text with mutations applied anywhere in it (positions span the whole text, so lines are
 * cut, merged and spliced across their newlines too).
 */
export function mutatedWhole(texts: readonly string[], maxOps = 6): fc.Arbitrary<string> {
  return mutated(texts, maxOps);
}

/** One line of `bytes` length (default 10 MB) of `unit` repeated, for the one-per-parser huge-line case. */
export function hugeLine(unit: string, bytes = 10 * 1024 * 1024): string {
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
}

/** The text with every CR removed: the LF form a CRLF-vs-LF property starts from. */
export function withoutCr(text: string): string {
  return text.replaceAll("\r", "");
}

/** Default run count per property: the whole fuzz folder stays well under 30 s on 2 cores. */
export const RUNS = 300;
