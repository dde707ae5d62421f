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

/** Protocol 2+ pickles start with PROTO (0x80) and the protocol number; PyTorch writes protocol 2. */
export function looksLikePickle(b: Uint8Array): boolean {
  return b.length >= 2 && b[0] === 0x80 && (b[1] as number) >= 2 && (b[1] as number) <= 5;
}

/** A bytes object (and a LONG4 integer) longer than this is refused: a dump holds none. */
const MAX_BINARY = 256;
/** One string longer than this is refused (pg_config's rank list of 131,072 ranks is about 1 MB). */
const MAX_STRING = 4 * 1024 * 1024;

class RefusedInput extends Error {}

/** pickleparser's reader with its lengths checked before anything is copied. */
class BoundedReader extends BufferReader {
  private readonly decoder = new TextDecoder("utf-8");

  override bytes(length: number): Uint8Array {
    if (length > MAX_BINARY) throw new RefusedInput(`a bytes or integer field of ${length} bytes`);
    return super.bytes(length) as Uint8Array;
  }

  override string(size: number): string {
    if (size > MAX_STRING) throw new RefusedInput(`a string of ${size} bytes`);
    if (size < 0 || this.position + size > this.length) throw new RangeError("truncated: a string runs past the end");
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

export type Unpickled = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * The value a pickle holds, or why it cannot be read. pickleparser reports integers of more than
 * 53 bits with console.warn; that warning is silenced while it parses (synchronously, so nothing
 * else can log meanwhile) and restored after.
 */
export function unpickle(bytes: Uint8Array): Unpickled {
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
    return { ok: true, value: parser.read(new BoundedReader(bytes)) };
  } catch (err) {
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
