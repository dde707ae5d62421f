/**
 * Compressed logs for `ringwatch analyze`: gzip (logrotate's default: `nccl.log.1.gz`) through
 * node:zlib, zstd through fzstd (pure JS: Node 20's zlib has no zstd). Known by their first bytes,
 * whatever the file is called. Streamed: compressed bytes are read a chunk at a time and what they
 * give is handed on as it comes, never held whole.
 *
 * A zip bomb is bounded: at most MAX_RATIO times the compressed bytes read so far (and at least
 * MIN_BUDGET) are decompressed; beyond that reading stops with a line saying so, and what came
 * before counts. A zstd frame that asks for a window larger than MAX_ZSTD_WINDOW (which zstd itself
 * refuses without --long or --memory) is not read.
 */
import { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { Decompress } from "fzstd";

export type Compression = "gzip" | "zstd";

/** Decompressed bytes per compressed byte beyond which a file is taken for a zip bomb. */
export const MAX_RATIO = 200;
/** Decompressed bytes always allowed, whatever the ratio. */
export const MIN_BUDGET = 1024 * 1024 * 1024;
/** The largest zstd window read (zstd's own default limit, 128 MiB). */
export const MAX_ZSTD_WINDOW = 128 * 1024 * 1024;

/** The compression of a file whose first bytes are head; undefined when none analyze reads. */
export function compressionOf(head: Uint8Array): Compression | undefined {
  if (head.length >= 3 && head[0] === 0x1f && head[1] === 0x8b && head[2] === 0x08) return "gzip";
  if (head.length >= 4 && head[0] === 0x28 && head[1] === 0xb5 && head[2] === 0x2f && head[3] === 0xfd) return "zstd";
  return undefined;
}

/** The window a zstd frame header at the start of head asks for; undefined when it cannot tell yet. */
export function zstdWindow(head: Uint8Array): number | undefined {
  const fhd = head[4];
  if (fhd === undefined) return undefined;
  const single = (fhd >> 5) & 1;
  if (single === 0) {
    const wd = head[5];
    if (wd === undefined) return undefined;
    const base = 2 ** (10 + (wd >> 3));
    return base + (base / 8) * (wd & 7);
  }
  // A single segment: the window is the content size.
  const dictBytes = [0, 1, 2, 4][fhd & 3] ?? 0;
  const fcs = fhd >> 6;
  const sizeBytes = fcs === 0 ? 1 : 2 ** fcs;
  const at = 5 + dictBytes;
  if (head.length < at + sizeBytes) return undefined;
  let size = 0;
  for (let i = sizeBytes - 1; i >= 0; i--) size = size * 256 + (head[at + i] ?? 0);
  return sizeBytes === 2 ? size + 256 : size;
}

function mib(n: number): string {
  return `${Math.round(n / (1024 * 1024))} MiB`;
}

/** How much may be decompressed: ratio times the compressed bytes read, and at least floor. */
export interface BombLimits {
  ratio: number;
  floor: number;
}

const LIMITS: BombLimits = { ratio: MAX_RATIO, floor: MIN_BUDGET };

function budget(raw: number, l: BombLimits): number {
  return Math.max(l.floor, raw * l.ratio);
}

function bombLine(kind: Compression, out: number, l: BombLimits): string {
  const cat = kind === "gzip" ? "gzip -dc" : "zstd -dc";
  return `stopped after ${mib(out)} decompressed, more than ${l.ratio} times its compressed size (taken for a zip bomb); the rest is not read (a real log: ${cat} FILE | ringwatch analyze -)`;
}

/**
 * Decompresses the input whose first chunk is `first` and whose next chunks next() returns
 * (undefined at the end), handing each piece to out (false: no more wanted). Resolves with why it
 * stopped before the end (a zip bomb, corrupt or cut-short data), or undefined.
 */
export async function decompress(
  kind: Compression,
  first: Buffer,
  next: () => Buffer | undefined,
  out: (b: Buffer) => boolean,
  limits: BombLimits = LIMITS,
): Promise<string | undefined> {
  return kind === "gzip" ? gunzip(first, next, out, limits) : unzstd(first, next, out, limits);
}

async function gunzip(first: Buffer, next: () => Buffer | undefined, out: (b: Buffer) => boolean, limits: BombLimits): Promise<string | undefined> {
  let raw = 0;
  let done = 0;
  function* chunks(): Generator<Buffer> {
    raw += first.length;
    yield first;
    for (let b = next(); b !== undefined; b = next()) {
      raw += b.length;
      yield b;
    }
  }
  const src = Readable.from(chunks(), { objectMode: false });
  const gz = createGunzip({ chunkSize: 256 * 1024 });
  src.once("error", (err) => gz.destroy(err));
  src.pipe(gz);
  try {
    for await (const piece of gz as AsyncIterable<Buffer>) {
      const room = budget(raw, limits) - done;
      if (piece.length > room) {
        if (room > 0) out(piece.subarray(0, room));
        return bombLine("gzip", done + room, limits);
      }
      done += piece.length;
      if (!out(piece)) return undefined;
    }
    return undefined;
  } catch (err) {
    return cutShort("gzip", done, err);
  } finally {
    src.destroy();
    gz.destroy();
  }
}

function cutShort(kind: Compression, done: number, err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const why = e.code === "Z_BUF_ERROR" || e.code === "ERR_ZSTD_EOF" ? "cut short" : `corrupt (${e.code ?? e.message})`;
  return `${kind} data ${why} after ${done} decompressed bytes; what came before is read`;
}

/** Thrown from fzstd's callback to stop it. */
class Stop extends Error {}

function unzstd(first: Buffer, next: () => Buffer | undefined, out: (b: Buffer) => boolean, limits: BombLimits): Promise<string | undefined> {
  const window = zstdWindow(first);
  if (window !== undefined && window > MAX_ZSTD_WINDOW) {
    return Promise.resolve(
      `zstd window of ${mib(window)} is more than the ${mib(MAX_ZSTD_WINDOW)} analyze reads (compressed with --long?); decompress it first: zstd -d --long=31`,
    );
  }
  let raw = first.length;
  let done = 0;
  let why: string | undefined;
  const d = new Decompress((data) => {
    const piece = Buffer.from(data.buffer, data.byteOffset, data.length);
    const room = budget(raw, limits) - done;
    if (piece.length > room) {
      if (room > 0) out(piece.subarray(0, room));
      why = bombLine("zstd", done + room, limits);
      throw new Stop();
    }
    done += piece.length;
    if (!out(piece)) throw new Stop();
  });
  try {
    d.push(first, false);
    for (let b = next(); b !== undefined; b = next()) {
      raw += b.length;
      d.push(b, false);
    }
    d.push(new Uint8Array(0), true);
  } catch (err) {
    if (err instanceof Stop) return Promise.resolve(why);
    const code = (err as { code?: number }).code;
    return Promise.resolve(cutShort("zstd", done, code === 5 ? Object.assign(new Error("eof"), { code: "ERR_ZSTD_EOF" }) : err));
  }
  return Promise.resolve(undefined);
}
