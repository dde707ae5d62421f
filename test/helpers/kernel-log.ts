/**
 * Kernel log captures (test/fixtures/kmsg: dmesg, syslog and journalctl text as users pasted it)
 * turned back into what the kernel hands out: the bare messages of its records, written as
 * /dev/kmsg records or as `journalctl -o json` records. The envelopes follow the formats of
 * Documentation/ABI/testing/dev-kmsg and systemd.journal-fields(7); the messages are the real ones.
 */
import { readCapture } from "./fixtures.js";

/** Prefixes a pasted kernel line may carry before the kernel's message. */
const PREFIXES: readonly RegExp[] = [
  /^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ kernel: /, // syslog / journalctl short
  /^\d{4}-\d\d-\d\dT[\d:.,+-]+ \S+ kernel: /, // journalctl short-iso
  /^kern\s*:\s*\w+\s*: \d{4}-\d\d-\d\dT[\d:.,+-]+ /, // dmesg --decode --time-format=iso
  /^kernel: /,
  /^\[\s*\d+\.\d+\] /, // dmesg
  /^\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\] /, // dmesg -T / --ctime
];

/**
 * The kernel records of a capture: prefixes removed, and dmesg's indented continuation lines
 * (a record with embedded newlines) joined back to their record with "\n". Comment lines
 * (`# source:`, `# cut:`) and blank lines are skipped.
 */
export function kernelMessages(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split("\n")) {
    if (raw.startsWith("#") || raw.trim() === "") continue;
    if (/^\s{8,}\S/.test(raw) && out.length > 0) {
      out[out.length - 1] += "\n" + raw.trim();
      continue;
    }
    let line = raw;
    for (let again = true; again;) {
      again = false;
      for (const p of PREFIXES) {
        const m = p.exec(line);
        if (m !== null) {
          line = line.slice(m[0].length);
          again = true;
        }
      }
    }
    out.push(line);
  }
  return out;
}

export function captureMessages(rel: string): string[] {
  return kernelMessages(readCapture(rel));
}

/** /dev/kmsg records (`<prio>,<seq>,<usec>,-;<message>`), newlines escaped as the kernel does. */
export function kmsgRecords(messages: readonly string[], opts: { firstSeq?: number; firstUsec?: number; level?: number } = {}): string {
  const first = opts.firstSeq ?? 1;
  const usec = opts.firstUsec ?? 1_000_000;
  return messages.map((m, i) => `${opts.level ?? 3},${first + i},${usec + i * 1000},-;${m.replaceAll("\\", "\\x5c").replaceAll("\n", "\\x0a")}\n`).join("");
}

/** `journalctl -k -o json` records of one boot. */
export function journalRecords(messages: readonly string[], opts: { bootId: string; firstSeq?: number; realtimeMs?: number }): string {
  const first = opts.firstSeq ?? 1;
  const rt = opts.realtimeMs ?? Date.UTC(2026, 10, 24, 2, 47);
  return messages
    .map((m, i) => {
      const seq = first + i;
      const us = (rt + i) * 1000;
      return (
        JSON.stringify({
          __CURSOR: `s=2d1c3b0a9f8e4d7c;i=${seq.toString(16)};b=${opts.bootId.replaceAll("-", "")};m=${(1_000_000 + i * 1000).toString(16)};t=${us.toString(16)};x=${(0xabc0 + seq).toString(16)}`,
          __REALTIME_TIMESTAMP: String(us),
          __MONOTONIC_TIMESTAMP: String(1_000_000 + i * 1000),
          _BOOT_ID: opts.bootId.replaceAll("-", ""),
          _SOURCE_MONOTONIC_TIMESTAMP: String(1_000_000 + i * 1000),
          _TRANSPORT: "kernel",
          PRIORITY: "3",
          SYSLOG_FACILITY: "0",
          SYSLOG_IDENTIFIER: "kernel",
          MESSAGE: m,
        }) + "\n"
      );
    })
    .join("");
}
