/** FollowerOptions with defaults applied and checked (one place; a bad value throws at construction). */
import { basename } from "node:path";
import { jobFsGate, type FsGate } from "../job-fs-gate.js";
import type { FollowerOptions, ResumePoint } from "./types.js";

/** Files followed at most (FollowerOptions.maxFiles); more are counted in filesDropped. */
export const DEFAULT_MAX_FILES = 10_000;

export interface ResolvedOptions {
  readonly paths: readonly string[];
  readonly headBytes: number;
  readonly maxLineBytes: number;
  readonly usePolling: boolean | "auto";
  readonly pollIntervalMs: number;
  readonly sweepIntervalMs: number;
  readonly maxFiles: number;
  readonly maxDepth: number;
  readonly removeGraceMs: number;
  readonly accept: (path: string) => boolean;
  readonly resume: ReadonlyMap<string, ResumePoint>;
  readonly fsGate: FsGate;
}

const COMPRESSED = [".gz", ".xz", ".zst", ".bz2", ".lz4"];

/** Default file filter: no hidden files, no compressed (already rotated) logs. */
export function defaultAccept(path: string): boolean {
  const name = basename(path);
  return !name.startsWith(".") && !COMPRESSED.some((ext) => name.endsWith(ext));
}

function int(name: string, v: number | undefined, dflt: number, min: number): number {
  if (v === undefined) return dflt;
  if (!Number.isFinite(v) || Math.floor(v) !== v || v < min) {
    throw new RangeError(`follower: ${name} must be an integer >= ${min}, got ${String(v)}`);
  }
  return v;
}

export function resolveOptions(o: FollowerOptions): ResolvedOptions {
  if (!Array.isArray(o.paths) || o.paths.length === 0 || o.paths.some((p) => typeof p !== "string" || p === "")) {
    throw new TypeError("follower: paths must be a non-empty list of paths or globs");
  }
  const usePolling = o.usePolling ?? "auto";
  if (usePolling !== "auto" && typeof usePolling !== "boolean") {
    throw new TypeError(`follower: usePolling must be true, false or "auto"`);
  }
  return {
    paths: [...o.paths],
    headBytes: int("headBytes", o.headBytes, 256 * 1024, 0),
    maxLineBytes: int("maxLineBytes", o.maxLineBytes, 64 * 1024, 1),
    usePolling,
    pollIntervalMs: int("pollIntervalMs", o.pollIntervalMs, 1000, 1),
    sweepIntervalMs: int("sweepIntervalMs", o.sweepIntervalMs, 5000, 1),
    maxFiles: int("maxFiles", o.maxFiles, DEFAULT_MAX_FILES, 1),
    maxDepth: int("maxDepth", o.maxDepth, 4, 0),
    removeGraceMs: int("removeGraceMs", o.removeGraceMs, 1000, 0),
    accept: o.accept ?? defaultAccept,
    resume: o.resume ?? new Map(),
    fsGate: o.fsGate ?? jobFsGate,
  };
}
