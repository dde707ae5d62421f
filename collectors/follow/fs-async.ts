/** Promise forms of the callback fs calls the reader uses (fd-based reads, no FileHandle objects). */
import { fstat, open, read, type Stats } from "node:fs";

export function openRead(path: string): Promise<number> {
  return new Promise((res, rej) => open(path, "r", (err, fd) => (err ? rej(err) : res(fd))));
}

export function fstatFd(fd: number): Promise<Stats> {
  return new Promise((res, rej) => fstat(fd, (err, st) => (err ? rej(err) : res(st))));
}

export function readAt(fd: number, buf: Buffer, off: number, len: number, pos: number): Promise<number> {
  return new Promise((res, rej) => read(fd, buf, off, len, pos, (err, n) => (err ? rej(err) : res(n))));
}

export function errCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | null)?.code;
}
