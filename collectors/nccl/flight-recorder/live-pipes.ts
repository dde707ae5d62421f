/**
 * PyTorch's debug-info pipes: with TORCH_NCCL_DEBUG_INFO_PIPE_FILE=<prefix> (and a trace buffer,
 * TORCH_NCCL_TRACE_BUFFER_SIZE / TORCH_FR_BUFFER_SIZE > 0), every rank's heartbeat monitor makes a
 * FIFO `<prefix><global rank>.pipe`, opens it O_RDONLY|O_NONBLOCK and reads it about once a second
 * (TORCH_NCCL_COORD_CHECK_MILSEC, default 1000); any byte read makes the rank dump its Flight
 * Recorder to `<TORCH_FR_DUMP_TEMP_FILE or TORCH_NCCL_DEBUG_INFO_TEMP_FILE><rank>`
 * (torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp, DumpPipe).
 *
 * Writing is a non-blocking open for writing, without following a symlink, and fstat must say FIFO:
 * a FIFO nobody reads (its rank exited) answers ENXIO at once, so a poke never blocks the agent, and
 * a pipe swapped for a link to a file the agent can write is refused (ELOOP or ENOTFIFO), never written.
 */
import { close, write } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { jobFsGate, type FsGate } from "../../job-fs-gate.js";
import { openJobFifoForWrite } from "../../untrusted-open.js";

export interface RankFile {
  /** The global rank, from the file name. */
  rank: number;
  path: string;
}

/** At most this many ranks' files are looked at per prefix (one node runs a few dozen at most). */
export const MAX_RANK_FILES = 1024;

/**
 * Files `<prefix><digits><suffix>` in the prefix's directory, by rank. `suffix` "" also takes
 * `<prefix><digits>.<ext>`. Unreadable directory (or one on a mount that does not answer): none.
 * Listed through the gate, never blocking the event loop: the folder is the job's.
 */
export async function rankFilesAsync(prefix: string, suffix: string, gate: FsGate = jobFsGate): Promise<RankFile[]> {
  const dir = dirname(prefix);
  const names = await gate.run(dir, () => readdir(dir)).catch(() => []);
  return matchRankFiles(prefix, suffix, names);
}

function matchRankFiles(prefix: string, suffix: string, names: readonly string[]): RankFile[] {
  const dir = dirname(prefix);
  const stem = basename(prefix);
  const out: RankFile[] = [];
  for (const name of names) {
    if (!name.startsWith(stem) || !name.endsWith(suffix)) continue;
    const middle = name.slice(stem.length, name.length - suffix.length);
    let end = 0;
    while (end < middle.length && middle.charCodeAt(end) >= 48 && middle.charCodeAt(end) <= 57) end++;
    if (end === 0 || end > 9) continue;
    if (end < middle.length && !(suffix === "" && middle.charCodeAt(end) === 46)) continue;
    out.push({ rank: Number(middle.slice(0, end)), path: join(dir, name) });
  }
  // Every match first, then the cap: a cap in readdir's order would let any 1,024 names hide the rest.
  return out.sort((a, b) => a.rank - b.rank).slice(0, MAX_RANK_FILES);
}

/** The FIFOs of the ranks on this node. */
export async function findPipes(prefix: string, gate: FsGate = jobFsGate): Promise<RankFile[]> {
  const out: RankFile[] = [];
  for (const f of await rankFilesAsync(prefix, ".pipe", gate)) {
    const st = await gate.run(f.path, () => lstat(f.path)).catch(() => undefined);
    if (st?.isFIFO() === true) out.push(f);
  }
  return out;
}

export type PokeResult = "ok" | "no_reader" | "error";

/** Writes one line to a rank's pipe without blocking; `no_reader`: the rank is gone. */
export async function pokePipe(path: string, gate: FsGate = jobFsGate): Promise<{ result: PokeResult; reason?: string }> {
  let fd: number;
  try {
    // Never through a symlink, never a regular file: a swap is refused.
    fd = await gate.run(
      path,
      () => openJobFifoForWrite(path),
      (late) => close(late, () => undefined),
    );
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    return code === "ENXIO" ? { result: "no_reader" } : { result: "error", reason: code };
  }
  try {
    await gate.run(path, () => writeLine(fd, "ringwatch\n"));
    return { result: "ok" };
  } catch (err) {
    return { result: "error", reason: (err as NodeJS.ErrnoException).code ?? String(err) };
  } finally {
    gate.close(path, fd);
  }
}

function writeLine(fd: number, line: string): Promise<void> {
  return new Promise((resolve, reject) => write(fd, line, (err) => (err ? reject(err) : resolve())));
}
