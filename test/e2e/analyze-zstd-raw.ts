/**
 * A real zstd frame made without a zstd compressor (fzstd only decompresses, and the zstd CLI is
 * not everywhere): Raw blocks (RFC 8878, 3.1.1.2), which every zstd decoder reads.
 */
export function zstdRawFrame(data: Uint8Array, windowLog = 20): Buffer {
  const BLOCK = 128 * 1024;
  // Frame header: no single segment, no checksum, no dictionary, no content size; Window_Descriptor.
  const parts: Buffer[] = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, (windowLog - 10) << 3])];
  let off = 0;
  do {
    const size = Math.min(BLOCK, data.length - off);
    const last = off + size >= data.length ? 1 : 0;
    const header = last | (0 << 1) | (size << 3); // Raw_Block
    parts.push(Buffer.from([header & 0xff, (header >> 8) & 0xff, (header >> 16) & 0xff]), Buffer.from(data.subarray(off, off + size)));
    off += size;
  } while (off < data.length);
  return Buffer.concat(parts);
}
