/** Promise forms of the callback fs calls the reader uses (fd-based reads, no FileHandle objects; opening is untrusted-open.ts's). */
import { fstat, read, type Stats } from "node:fs";

export function fstatFd(fd: number): Promise<Stats> {
  return new Promise((res, rej) => fstat(fd, (err, st) => (err ? rej(err) : res(st))));
}

export function readAt(fd: number, buf: Buffer, off: number, len: number, pos: number): Promise<number> {
  return new Promise((res, rej) => read(fd, buf, off, len, pos, (err, n) => (err ? rej(err) : res(n))));
}

export function errCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | null)?.code;
}
