import { renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DirWatcher, type DirSink } from "../../../collectors/follow/dir-watch.js";
import { compilePaths } from "../../../collectors/follow/glob.js";
import { jobFsGate } from "../../../collectors/job-fs-gate.js";
import { testTempDir } from "../../helpers/test-temp-dir.js";

let watcher: DirWatcher | undefined;
afterEach(() => watcher?.close());

describe("DirWatcher.rescanDirOf", () => {
  // logrotate's `rotate 1` renames the log over its previous rotation (`x.log` -> `x.log.1`): the
  // name `x.log.1` stays, but names another file. A rescan that only looked for new names missed
  // it, so the rotated file stayed without a name (and, its descriptor closed, was lost with its
  // unread lines when the next rotation deleted it).
  it("finds a followed file under a known name it was renamed over", async () => {
    const d = testTempDir();
    const log = join(d, "x.log");
    const old = join(d, "x.log.1");
    writeFileSync(log, "current\n");
    writeFileSync(old, "previous rotation\n");
    const names = new Map<string, number>();
    const added: string[] = [];
    const sink: DirSink = {
      added: (p, st) => {
        added.push(p);
        names.set(p, st.ino);
      },
      unlinked: (p) => void names.delete(p),
      known: (p) => names.has(p),
      followed: (p) => names.has(p),
      replaced: (p, st) => names.has(p) && names.get(p) !== st.ino,
      watchFailed: () => undefined,
    };
    watcher = new DirWatcher(await compilePaths([d], 4), () => true, sink, jobFsGate);
    await watcher.start(new Map([[d, true]])); // polled: no watch fires behind the test's back
    expect(added.sort()).toEqual([log, old]);
    const rotated = statSync(log).ino;
    renameSync(log, old);
    writeFileSync(log, "");
    added.length = 0;
    await watcher.rescanDirOf(log);
    expect(names.get(old)).toBe(rotated);
    expect(added.sort()).toEqual([log, old]);
    // Nothing changed since: a second look reports nothing.
    added.length = 0;
    await watcher.rescanDirOf(log);
    expect(added).toEqual([]);
  });
});
