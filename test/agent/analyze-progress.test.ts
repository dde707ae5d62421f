/** The progress line of `ringwatch analyze` (shown only on a terminal, so tested here as text). */
import { describe, expect, it } from "vitest";
import { PROGRESS_EVERY_MS, Progress, formatBytes, formatProgress } from "../../agent/analyze-progress.js";

describe("analyze's progress line", () => {
  it("formats bytes in powers of 1000 and the line with percent and file", () => {
    expect([0, 999, 1000, 12_345, 812_000, 12_400_000, 3_140_000_000, 2e13].map(formatBytes)).toEqual([
      "0 B",
      "999 B",
      "1.0 kB",
      "12.3 kB",
      "812 kB",
      "12.4 MB",
      "3.1 GB",
      "20.0 TB",
    ]);
    expect(formatProgress({ bytes: 1_200_000_000, totalBytes: 3_400_000_000, file: 12, totalFiles: 40 })).toBe(
      "ringwatch: analyze: read 1.2 GB of 3.4 GB (35%), file 12 of 40",
    );
    // A file that grew after it was listed never shows more than 100%.
    expect(formatProgress({ bytes: 5e8, totalBytes: 4e8, file: 1, totalFiles: 1 })).toBe("ringwatch: analyze: read 500 MB of 400 MB (100%), file 1 of 1");
  });

  it("draws at most every 250 ms, only on a terminal and above 100 MB, and erases itself", () => {
    let t = 0;
    const out: string[] = [];
    const p = new Progress(
      (s) => out.push(s),
      true,
      () => t,
    );
    p.start(300_000_000, 2);
    p.nextFile();
    for (let i = 0; i < 10; i++) {
      t += 50;
      p.add(10_000_000);
    }
    expect(PROGRESS_EVERY_MS).toBe(250);
    expect(out).toEqual([
      "\r\x1b[Kringwatch: analyze: read 0 B of 300 MB (0%), file 1 of 2",
      "\r\x1b[Kringwatch: analyze: read 50.0 MB of 300 MB (16%), file 1 of 2",
      "\r\x1b[Kringwatch: analyze: read 100 MB of 300 MB (33%), file 1 of 2",
    ]);
    p.clear();
    p.clear(); // nothing drawn: nothing to erase
    expect(out.slice(3)).toEqual(["\r\x1b[K"]);

    const quiet: string[] = [];
    const notTty = new Progress(
      (s) => quiet.push(s),
      false,
      () => t,
    );
    notTty.start(300_000_000, 1);
    const small = new Progress(
      (s) => quiet.push(s),
      true,
      () => t,
    );
    small.start(100_000_000, 1);
    for (const q of [notTty, small]) {
      q.nextFile();
      q.add(1e8);
      q.clear();
    }
    expect(quiet).toEqual([]);
  });
});
