/**
 * Drives the WebAssembly COLL line scanner (wasm/coll-scan.ts, built into coll-scan-wasm.ts) for
 * the file sinks: copies a window of a read buffer and the writer's `host:pid:` into the module's
 * memory, and scans runs of lines there. A scan returns records that give, for each accepted line,
 * what CollByteMatcher.matchLine would: its newline, op, opCount and comm pointer, in the read
 * buffer's coordinates. One instance serves every file (JavaScript runs one sink at a time): a
 * window belongs to the sink that copied it, until that sink starts a new read buffer.
 * Where WebAssembly SIMD is missing, collScanner() is undefined and the sinks use the JavaScript
 * matcher, which accepts the same lines.
 */
import type { CollByteMatcher } from "./coll-bytes.js";
import { COLL_SCAN_WASM } from "./coll-scan-wasm.js";

/** What this file uses of the WebAssembly API (lib ES2023 and @types/node 20 do not declare it). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
  Global: abstract new (...args: never[]) => { value: unknown };
}
const WebAssembly = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

interface ScanExports {
  memory: WasmMemory;
  scan(start: number, end: number, prefixLen: number, max: number, maxRecords: number, prefixGen: number): number;
}

/** Layout and record fields, as the module exports them (wasm/coll-scan.ts). */
interface Layout {
  prefixStart: number;
  prefixMax: number;
  recordsStart: number;
  recordFields: number;
  maxRecords: number;
  dataStart: number;
  padding: number;
  fNewline: number;
  fOpCount: number;
  fOpKey0: number;
  fOpKey1: number;
  fOpKey2: number;
  fOpLen: number;
  fPtrKey: number;
  fPtrChars: number;
  fOpStart: number;
  fPtrStart: number;
}

/**
 * Largest window copied into the module at once: the follower's read size (512 KiB), or twice the
 * line limit when that is more. The module's memory is this plus DATA_START and PADDING.
 */
const WINDOW_BYTES = 512 * 1024;
const PAGE = 65536;

export class CollScanner {
  private bytes: Uint8Array;
  private records: Float64Array;
  /** The sink whose bytes are in the window, the buffer they came from, and where. */
  private owner: object | undefined;
  private src: Buffer | undefined;
  private srcEnd = 0;
  private winStart = 0;
  private winEnd = 0;
  private prefix: Buffer | undefined;
  /** Bumped with each prefix copied in: the module forgets the header it checked against the last one. */
  private prefixGen = 0;
  /** Bumped by every scan: records of an older scan are gone. */
  scans = 0;

  constructor(
    private readonly ex: ScanExports,
    readonly layout: Layout,
  ) {
    this.bytes = new Uint8Array(0);
    this.records = new Float64Array(0);
    this.ensure(layout.dataStart + WINDOW_BYTES + layout.padding);
  }

  /** Drops the window if `owner` copied it: its read buffer is about to hold other bytes. */
  release(owner: object): void {
    if (this.owner === owner) this.owner = undefined;
  }

  /**
   * Scans the lines of buf from s (data up to `end`, the end of the read) for owner, whose writer
   * is `prefix`. Returns how many consecutive lines from s were accepted (0 when the first was not,
   * or the prefix is too long for the module); newline(k) and values() give them.
   */
  scan(owner: object, prefix: Buffer, buf: Buffer, s: number, end: number, max: number): number {
    const L = this.layout;
    if (prefix.length > L.prefixMax) return 0;
    if (this.owner !== owner || this.src !== buf || this.srcEnd !== end || s < this.winStart || s >= this.winEnd) {
      if (!this.copy(owner, buf, s, end, max)) return 0;
    }
    if (this.prefix !== prefix) {
      this.bytes.set(prefix, L.prefixStart);
      this.prefix = prefix;
      this.prefixGen = (this.prefixGen + 1) | 0;
    }
    this.scans++;
    let n = this.run(s, max);
    // A line cut by the window's end (not the read's): copy a window that starts with it, once.
    if (n === 0 && this.winEnd < end && s > this.winStart && this.copy(owner, buf, s, end, max)) n = this.run(s, max);
    return n;
  }

  /** The newline of accepted line k of the last scan, in the read buffer. */
  newline(k: number): number {
    return (this.records[k * this.layout.recordFields + this.layout.fNewline] as number) + this.shift();
  }

  /**
   * The records of the last scan: record k's field f is at k * layout.recordFields + f (a position
   * field is in the module's memory: see shift()). Valid until the next scan.
   */
  values(): Float64Array {
    return this.records;
  }

  /** What turns a position in the module's memory into one in the read buffer. */
  shift(): number {
    return this.winStart - this.layout.dataStart;
  }

  private run(s: number, max: number): number {
    const L = this.layout;
    const at = L.dataStart + (s - this.winStart);
    return this.ex.scan(at, L.dataStart + (this.winEnd - this.winStart), this.prefix?.length ?? 0, max, L.maxRecords, this.prefixGen);
  }

  /** Copies buf[s, ...) into the module for owner; false when its memory cannot grow that far (the lines then take the JavaScript path). */
  private copy(owner: object, buf: Buffer, s: number, end: number, max: number): boolean {
    const L = this.layout;
    const size = Math.min(end - s, Math.max(WINDOW_BYTES, 2 * max + 64));
    try {
      this.ensure(L.dataStart + size + L.padding);
    } catch {
      this.owner = undefined;
      return false;
    }
    this.bytes.set(buf.subarray(s, s + size), L.dataStart);
    this.bytes.fill(0, L.dataStart + size, L.dataStart + size + L.padding);
    this.owner = owner;
    this.src = buf;
    this.srcEnd = end;
    this.winStart = s;
    this.winEnd = s + size;
    return true;
  }

  /** Grows the module's memory to at least `bytes` (views of the old memory are gone after a grow). */
  private ensure(bytes: number): void {
    const m = this.ex.memory;
    if (bytes > m.buffer.byteLength) m.grow(Math.ceil((bytes - m.buffer.byteLength) / PAGE));
    if (this.bytes.buffer === m.buffer) return;
    const L = this.layout;
    this.bytes = new Uint8Array(m.buffer);
    this.records = new Float64Array(m.buffer, L.recordsStart, L.maxRecords * L.recordFields);
    if (this.prefix !== undefined) this.bytes.set(this.prefix, L.prefixStart);
  }
}

/**
 * One file's lines through the scanner: lineAt() works like CollByteMatcher.matchLine, but a scan
 * matches a run of lines ahead and the following calls take them one by one, in order.
 */
export class ScannedLines {
  private count = 0;
  private next = 0;
  private scanNo = -1;
  /** Where the next scanned line starts. */
  private from = -1;

  constructor(private readonly sc: CollScanner) {}

  /**
   * The newline of the plain COLL line of m's writer at s (data up to `end`, at most `max` bytes),
   * its fields adopted by m as matchLine would set them; or -1.
   */
  lineAt(m: CollByteMatcher, buf: Buffer, s: number, end: number, max: number): number {
    const sc = this.sc;
    if (this.next >= this.count || this.from !== s || this.scanNo !== sc.scans) {
      this.count = sc.scan(this, m.writerBytes(), buf, s, end, max);
      this.next = 0;
      this.scanNo = sc.scans;
      if (this.count === 0) return -1;
    }
    const k = this.next++;
    const nl = sc.newline(k);
    this.from = nl + 1;
    m.adopt(buf, sc, k);
    return nl;
  }

  /** Forgets what was scanned: the read buffer is about to hold new bytes, or the writer changed. */
  reset(): void {
    this.count = 0;
    this.sc.release(this);
  }
}

function globalValue(ex: Record<string, unknown>, name: string): number {
  const g = ex[name];
  if (!(g instanceof WebAssembly.Global)) throw new Error(`coll-scan module lacks ${name}`);
  return Number(g.value);
}

let shared: CollScanner | string | undefined;

/**
 * The process's scanner, or undefined where this runtime cannot run the module (no WebAssembly
 * SIMD; collScannerProblem() says why): the JavaScript matcher is used then.
 * RINGWATCH_COLL_SCAN=js forces that (for comparing the two).
 */
export function collScanner(): CollScanner | undefined {
  if (shared === undefined) shared = loadScanner();
  return typeof shared === "string" ? undefined : shared;
}

/** Why collScanner() is undefined, or undefined when it is not. */
export function collScannerProblem(): string | undefined {
  collScanner();
  return typeof shared === "string" ? shared : undefined;
}

/** A new scanner (its own memory), or why the module cannot run here. */
export function loadScanner(): CollScanner | string {
  if (process.env.RINGWATCH_COLL_SCAN === "js") return "RINGWATCH_COLL_SCAN=js";
  try {
    const bytes = Buffer.from(COLL_SCAN_WASM, "base64");
    if (!WebAssembly.validate(bytes)) return "this runtime cannot run the WebAssembly SIMD module";
    const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), {});
    const ex = instance.exports as unknown as ScanExports & Record<string, unknown>;
    const g = (name: string): number => globalValue(ex, name);
    return new CollScanner(ex, {
      prefixStart: g("PREFIX_START"),
      prefixMax: g("PREFIX_MAX"),
      recordsStart: g("RECORDS_START"),
      recordFields: g("RECORD_FIELDS"),
      maxRecords: g("MAX_RECORDS"),
      dataStart: g("DATA_START"),
      padding: g("PADDING"),
      fNewline: g("F_NEWLINE"),
      fOpCount: g("F_OP_COUNT"),
      fOpKey0: g("F_OP_KEY0"),
      fOpKey1: g("F_OP_KEY1"),
      fOpKey2: g("F_OP_KEY2"),
      fOpLen: g("F_OP_LEN"),
      fPtrKey: g("F_PTR_KEY"),
      fPtrChars: g("F_PTR_CHARS"),
      fOpStart: g("F_OP_START"),
      fPtrStart: g("F_PTR_START"),
    });
  } catch (err) {
    return `the WebAssembly module failed to load: ${err instanceof Error ? err.message : String(err)}`;
  }
}
