/**
 * Records of /dev/kmsg (Documentation/ABI/testing/dev-kmsg): one header line
 * `<prio+facility*8>,<seq>,<usec since boot>,<flag>[,...];<message>`, then optional dictionary
 * lines that start with a space (` SUBSYSTEM=pci`, ` DEVICE=+pci:0000:3b:00.0`). The kernel
 * escapes non-printable bytes in the message as `\xNN`, so a record is one line plus its
 * dictionary. The device returns one record per read(); a file replaying records (tests, a saved
 * capture) returns any chunk: RecordSplitter handles both.
 */

export interface KmsgRecord {
  /** The kernel's sequence number: increases by one per record, since boot. */
  seq: number;
  /** Microseconds since boot (the kernel's clock at printk). */
  usec: number;
  /** Syslog level 0 (emerg) .. 7 (debug). */
  level: number;
  /** Syslog facility: 0 = kernel; others come from user space writing to /dev/kmsg. */
  facility: number;
  /** The message text, `\xNN` escapes left as they are. */
  message: string;
  /** The dictionary's DEVICE value (`+pci:0000:3b:00.0`), when present. */
  device?: string;
}

/** Parses one header line; undefined for anything that is not one. */
export function parseKmsgHeader(line: string): KmsgRecord | undefined {
  const semi = line.indexOf(";");
  if (semi < 5) return undefined;
  const c1 = line.indexOf(",");
  const c2 = c1 < 0 ? -1 : line.indexOf(",", c1 + 1);
  const c3 = c2 < 0 ? -1 : line.indexOf(",", c2 + 1);
  if (c1 <= 0 || c2 < 0 || c3 < 0 || c3 > semi) return undefined;
  const prio = digits(line, 0, c1);
  const seq = digits(line, c1 + 1, c2);
  const usec = digits(line, c2 + 1, c3);
  if (prio === undefined || seq === undefined || usec === undefined) return undefined;
  return { seq, usec, level: prio & 7, facility: prio >> 3, message: line.slice(semi + 1) };
}

/** A non-negative decimal integer spanning exactly [from, to). */
function digits(s: string, from: number, to: number): number | undefined {
  if (to <= from || to - from > 20) return undefined;
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return undefined;
    n = n * 10 + c;
  }
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * Turns chunks of kmsg bytes into records. A record is complete when the next header begins or
 * flush() is called (the device returns a whole record per read, so the reader flushes after a
 * read that ended on a newline). Lines that are neither headers nor dictionary lines are
 * counted as garbage.
 */
export class RecordSplitter {
  private partial = "";
  private pending: KmsgRecord | undefined;
  garbage = 0;

  constructor(private readonly emit: (r: KmsgRecord) => void) {}

  push(chunk: string): void {
    let text = this.partial + chunk;
    const lastNl = text.lastIndexOf("\n");
    if (lastNl < 0) {
      this.partial = text;
      return;
    }
    this.partial = text.slice(lastNl + 1);
    text = text.slice(0, lastNl);
    let start = 0;
    while (start <= text.length) {
      let end = text.indexOf("\n", start);
      if (end < 0) end = text.length;
      this.line(text.slice(start, end));
      start = end + 1;
    }
  }

  /** Emits the record held back waiting for dictionary lines. */
  flush(): void {
    if (this.pending !== undefined) this.emit(this.pending);
    this.pending = undefined;
  }

  private line(line: string): void {
    if (line.length === 0) return;
    if (line.charCodeAt(0) === 32) {
      if (this.pending !== undefined && line.startsWith(" DEVICE=")) this.pending.device = line.slice(8);
      return;
    }
    this.flush();
    const r = parseKmsgHeader(line);
    if (r === undefined) this.garbage++;
    else this.pending = r;
  }
}
