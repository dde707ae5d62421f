/**
 * Per-test factories of fake NCCL RAS services (ras-process.ts starts them): every service a test
 * started is stopped, and its directory removed, after the test.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import type { RasJob } from "../fakes/ras/render.mjs";
import { startRasJob, startRasService, type FakeRasPlace, type RasJobService, type RasMode, type RasService } from "./ras-process.js";

export { closedPort, startRasJob, startRasService, type FakeRasPlace, type RasJobService, type RasMode, type RasService } from "./ras-process.js";

/**
 * For a test file: a function that starts a fake RAS service serving `report` from a temporary
 * directory. Every service it started is stopped, and its directory removed, after each test.
 */
export function rasServices(): (report: string, mode?: RasMode, place?: FakeRasPlace) => Promise<RasService> {
  const started: RasService[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((s) => s.stop()));
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return async (report, mode = "ok", place = {}) => {
    const dir = mkdtempSync(join(tmpdir(), "rw-ras-"));
    dirs.push(dir);
    const s = await startRasService(dir, report, mode, 10_000, place);
    started.push(s);
    return s;
  };
}

/**
 * For a test file: a function that starts a fake RAS service answering from `job` (startRasJob) in a
 * temporary directory. Every service it started is stopped, and its directory removed, after each test.
 */
export function rasJobServices(): (job: RasJob, opts?: { delayMs?: number } & FakeRasPlace) => Promise<RasJobService> {
  const started: RasJobService[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((s) => s.stop()));
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return async (job, opts = {}) => {
    const dir = mkdtempSync(join(tmpdir(), "rw-rasjob-"));
    dirs.push(dir);
    const s = await startRasJob(dir, job, opts);
    started.push(s);
    return s;
  };
}
