import { appendFileSync, copyFileSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { eventually, follow, MODES, sleep } from "./helpers.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";

const line = (i: number): string =>
  `node1:4242:4242 [0] NCCL INFO AllReduce: opCount ${i.toString(16)} sendbuff 0x7f01 recvbuff 0x7f02 count 1024 datatype 7 op 0 root 0 comm 0x55aa10 [nranks=2] stream 0x5501`;
const lines = (from: number, n: number): string => Array.from({ length: n }, (_, k) => `${line(from + k)}\n`).join("");

describe.each(MODES)("Follower and copies of followed files ($name)", ({ opts }) => {
  it("a copy made by logrotate copytruncate is followed from its end; the original's new lines are read once", async () => {
    const d = testTempDir();
    const p = join(d, "nccl-node1-4242.log");
    writeFileSync(p, "");
    const { rec, f } = await follow({ ...opts, paths: [d] });
    appendFileSync(p, lines(0, 10));
    await eventually(() => expect(rec.lines("nccl-node1-4242.log")).toHaveLength(10));
    copyFileSync(p, `${p}.1`); // copytruncate: copy, then truncate the original
    truncateSync(p, 0);
    appendFileSync(p, lines(10, 3));
    await eventually(() => expect(rec.lines("nccl-node1-4242.log")).toHaveLength(13));
    await eventually(() => expect(f.stats().copiesSkipped).toBe(1));
    appendFileSync(`${p}.1`, `${line(99)}\n`); // written to the copy later: a new line, read
    await eventually(() => expect(rec.lines("nccl-node1-4242.log.1")).toEqual([line(99)]));
    await sleep(100);
    expect(rec.lines("nccl-node1-4242.log")).toEqual(lines(0, 13).trimEnd().split("\n"));
    expect(f.stats().copiesSkipped).toBe(1);
  });

  it("a new file with a head of its own is read from its start", async () => {
    const d = testTempDir();
    const { rec, f } = await follow({ ...opts, paths: [d] });
    writeFileSync(join(d, "a.log"), lines(0, 5));
    writeFileSync(join(d, "b.log"), lines(0, 5).replaceAll("4242", "4243"));
    await eventually(() => expect(rec.got).toHaveLength(10));
    expect(f.stats().copiesSkipped).toBe(0);
  });
});
