/**
 * Python pickle bytes → plain values (Map, array, string, number, bigint, boolean, null), with the
 * pickleparser package. Flight Recorder dumps hold only dicts, lists, tuples, strings, numbers,
 * booleans and None, so anything that names a Python class or function (GLOBAL, STACK_GLOBAL, INST,
 * persistent ids, extensions) is refused: nothing in a dump is ever called or built. Bytes objects
 * and long integers are capped so that no field can make the parser work quadratically, and every
 * parser error, a stack overflow from a deeply nested or hostile input included, becomes an error
 * string. pickleparser reads integers of more than 32 bits as unsigned doubles: the nanosecond
 * timestamps keep about 0.25 µs, and a negative one (which no dump holds) would read wrong.
 */
import { BufferReader, Parser } from "pickleparser";
import { Budget, OverBudget } from "./budget.js";

/** Protocol 2+ pickles start with PROTO (0x80) and the protocol number; PyTorch writes protocol 2. */
export function looksLikePickle(b: Uint8Array): boolean {
  return b.length >= 2 && b[0] === 0x80 && (b[1] as number) >= 2 && (b[1] as number) <= 5;
}

/** A bytes object (and a LONG4 integer) longer than this is refused: a dump holds none. */
const MAX_BINARY = 256;
/** One string longer than this is refused (pg_config's rank list of 131,072 ranks is about 1 MB). */
const MAX_STRING = 4 * 1024 * 1024;

class RefusedInput extends Error {}

/**
 * About what one opcode makes pickleparser hold (V8, 64-bit), in bytes, counted against the dump's
 * heap budget: a dict (an empty Map with its table), a list or tuple (with the backing store its
 * first push allocates), a memo slot, and any value pushed (a slot in the list or dict it joins, or
 * a boxed number). A string counts its characters on top (string() below). The first byte of every
 * opcode goes through byte() right after hasNext(), so every opcode is counted, memo references
 * (BINGET, LONG_BINGET, GET, DUP) included: they cost a slot each, not what they refer to.
 */
const COST_DICT = 200;
const COST_LIST = 176;
const COST_MEMO = 48;
const COST_VALUE = 24;
/** Opcodes that make a new dict, list, tuple or set (MARK starts a new stack list). */
const DICT_OPS = new Set([0x7d, 0x64]); // EMPTY_DICT, DICT
const LIST_OPS = new Set([0x5d, 0x29, 0x6c, 0x74, 0x85, 0x86, 0x87, 0x28, 0x8f, 0x91]); // EMPTY_LIST, EMPTY_TUPLE, LIST, TUPLE, TUPLE1-3, MARK, EMPTY_SET, FROZENSET
/** Opcodes that store the top of the stack in the memo: PUT, BINPUT, LONG_BINPUT, MEMOIZE. */
const MEMO_OPS = new Set([0x70, 0x71, 0x72, 0x94]);
/** Opcodes that push nothing and keep nothing: PROTO, FRAME, STOP, POP, POP_MARK, APPEND(S), SETITEM(S), ADDITEMS. */
const FREE_OPS = new Set([0x80, 0x95, 0x2e, 0x30, 0x31, 0x61, 0x65, 0x73, 0x75, 0x90]);

function costOf(op: number): number {
  if (DICT_OPS.has(op)) return COST_DICT;
  if (LIST_OPS.has(op)) return COST_LIST;
  if (MEMO_OPS.has(op)) return COST_MEMO;
  return FREE_OPS.has(op) ? 0 : COST_VALUE;
}
const COSTS = Array.from({ length: 256 }, (_, op) => costOf(op));

/** pickleparser's reader with its lengths checked before anything is copied, and what it builds counted. */
class BoundedReader extends BufferReader {
  private readonly decoder = new TextDecoder("utf-8");
  private opcodeNext = false;

  constructor(
    bytes: Uint8Array,
    private readonly budget: Budget,
  ) {
    super(bytes);
  }

  override hasNext(): boolean {
    this.opcodeNext = true;
    return super.hasNext();
  }

  override byte(): number {
    const b = super.byte();
    if (this.opcodeNext) {
      this.opcodeNext = false;
      this.budget.spend("heap", COSTS[b] as number);
    }
    return b;
  }

  override bytes(length: number): Uint8Array {
    if (length > MAX_BINARY) throw new RefusedInput(`a bytes or integer field of ${length} bytes`);
    return super.bytes(length) as Uint8Array;
  }

  override string(size: number): string {
    if (size > MAX_STRING) throw new RefusedInput(`a string of ${size} bytes`);
    if (size < 0 || this.position + size > this.length) throw new RangeError("truncated: a string runs past the end");
    // At most one character per byte, two bytes each where one is not Latin-1.
    this.budget.spend("heap", 16 + 2 * size);
    return this.decoder.decode(super.bytes(size));
  }

  override uint64(): number {
    const lo = this.uint32();
    const hi = this.uint32();
    // Only lengths use it (BINUNICODE8, BINBYTES8): anything this large is past the end anyway.
    return hi > 0 ? Number.MAX_SAFE_INTEGER : lo;
  }
}

const refuse = (what: string) => (): never => {
  throw new RefusedInput(what);
};

/** overBudget: the pickle went past the dump's budget (budget.ts). */
export type Unpickled = { ok: true; value: unknown } | { ok: false; error: string; overBudget?: true };

/**
 * The value a pickle holds, or why it cannot be read. pickleparser reports integers of more than
 * 53 bits with console.warn; that warning is silenced while it parses (synchronously, so nothing
 * else can log meanwhile) and restored after. What it builds is counted against `budget` (the
 * dump's: conversion goes on counting in it).
 */
export function unpickle(bytes: Uint8Array, budget: Budget = new Budget()): Unpickled {
  if (!looksLikePickle(bytes)) return { ok: false, error: "not a pickle (protocol 2 or later)" };
  const parser = new Parser({
    nameResolver: { resolve: (module: string, name: string) => refuse(`a Python object (${module}.${name})`)() },
    persistentResolver: { resolve: refuse("a persistent id") },
    extensionResolver: { resolve: refuse("an extension code") },
    unpicklingTypeOfDictionary: "Map",
    unpicklingTypeOfSet: "array",
  });
  const warn = console.warn;
  console.warn = (): void => undefined;
  try {
    return { ok: true, value: parser.read(new BoundedReader(bytes, budget)) };
  } catch (err) {
    if (err instanceof OverBudget) return { ok: false, error: err.message, overBudget: true };
    return { ok: false, error: reason(err) };
  } finally {
    console.warn = warn;
  }
}

function reason(err: unknown): string {
  if (err instanceof RefusedInput) return `refused: it holds ${err.message}`;
  const msg = err instanceof Error ? err.message : String(err);
  if (msg.includes("Unexpected end of file") || msg.includes("more bytes") || msg.includes("end of line") || msg.includes("truncated")) {
    return "truncated: the pickle ends before its STOP";
  }
  // pickleparser spreads a MARK ... APPENDS run into one call: V8 allows about 120,000 arguments.
  if (err instanceof RangeError && msg.includes("call stack")) return "too large: a list of more than about 120,000 items written at once";
  return `corrupt: ${msg.length > 120 ? `${msg.slice(0, 120)}...` : msg}`;
}
