/**
 * Follows /dev/kmsg without blocking a thread: the device is opened O_NONBLOCK and drained every
 * poll until it says EAGAIN. Each read() of the device returns one record (a buffer too small for
 * it fails with EINVAL, hence 16 KiB); EPIPE means the kernel overwrote records before they were
 * read (counted, and reading goes on with the oldest one left). A regular file or a FIFO given
 * instead (a capture replayed by a test) is read the same way: its end counts as EAGAIN.
 */
import { constants, close, open, read } from "node:fs";
import { RecordSplitter, type KmsgRecord } from "./parse/kmsg-record.js";

export interface KmsgDeviceEvents {
  onRecord(r: KmsgRecord): void;
  /** Records the kernel overwrote before ringwatch read them. */
  onLost(): void;
  /** Everything written so far has been read (EAGAIN, or the end of a file). */
  onIdle?(): void;
  /** The device could not be opened or read (errno code, e.g. EPERM): reading has stopped. */
  onError(code: string, message: string): void;
}

const BUFFER_BYTES = 16 * 1024;
/** Reads per poll before yielding to the event loop (a backlog of thousands is read in steps). */
const READS_PER_TURN = 256;

export class KmsgDevice {
  private fd: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly buf = Buffer.allocUnsafe(BUFFER_BYTES);
  private readonly splitter: RecordSplitter;
  /** Lines that were not kmsg records. */
  get garbage(): number {
    return this.splitter.garbage;
  }

  constructor(
    private readonly path: string,
    private readonly pollMs: number,
    private readonly events: KmsgDeviceEvents,
  ) {
    this.splitter = new RecordSplitter((r) => events.onRecord(r));
  }

  /** Opens the device; resolves with the errno code on failure (nothing is retried then). */
  open(): Promise<string | undefined> {
    return new Promise((resolve) => {
      open(this.path, constants.O_RDONLY | constants.O_NONBLOCK, (err, fd) => {
        if (err !== null) {
          resolve(err.code ?? "EIO");
          return;
        }
        if (this.stopped) {
          close(fd, () => undefined);
          resolve(undefined);
          return;
        }
        this.fd = fd;
        this.drain(0);
        resolve(undefined);
      });
    });
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.fd !== undefined) close(this.fd, () => undefined);
    this.fd = undefined;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.drain(0);
    }, ms);
    this.timer.unref();
  }

  private idle(): void {
    this.splitter.flush();
    this.events.onIdle?.();
    this.schedule(this.pollMs);
  }

  private drain(reads: number): void {
    const fd = this.fd;
    if (fd === undefined || this.stopped) return;
    if (reads >= READS_PER_TURN) {
      setImmediate(() => this.drain(0));
      return;
    }
    read(fd, this.buf, 0, BUFFER_BYTES, null, (err, n) => {
      if (this.stopped) return;
      if (err !== null) {
        if (err.code === "EAGAIN" || err.code === "EWOULDBLOCK") {
          this.idle();
        } else if (err.code === "EPIPE") {
          this.events.onLost();
          this.drain(reads + 1);
        } else {
          this.stop();
          this.events.onError(err.code ?? "EIO", err.message);
        }
        return;
      }
      if (n === 0) {
        this.idle();
        return;
      }
      this.splitter.push(this.buf.toString("utf8", 0, n));
      this.drain(reads + 1);
    });
  }
}
