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
import { closeSync, lstatSync, readdirSync, writeSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { openJobFifoForWrite } from "../../untrusted-open.js";
import { basename, dirname, join } from "node:path";

export interface RankFile {
  /** The global rank, from the file name. */
  rank: number;
  path: string;
}

/** At most this many ranks' files are looked at per prefix (one node runs a few dozen at most). */
export const MAX_RANK_FILES = 1024;

/**
 * Files `<prefix><digits><suffix>` in the prefix's directory, by rank. `suffix` "" also takes
 * `<prefix><digits>.<ext>`. Unreadable directory: none.
 */
export function rankFiles(prefix: string, suffix: string): RankFile[] {
  let names: string[];
  try {
    names = readdirSync(dirname(prefix));
  } catch {
    return [];
  }
  return matchRankFiles(prefix, suffix, names);
}

/** rankFiles without blocking the event loop on a big directory (the dumps' folder is the job's). */
export async function rankFilesAsync(prefix: string, suffix: string): Promise<RankFile[]> {
  const names = await readdir(dirname(prefix)).catch(() => []);
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
export function findPipes(prefix: string): RankFile[] {
  return rankFiles(prefix, ".pipe").filter((f) => {
    try {
      return lstatSync(f.path).isFIFO();
    } catch {
      return false;
    }
  });
}

export type PokeResult = "ok" | "no_reader" | "error";

/** Writes one line to a rank's pipe without blocking; `no_reader`: the rank is gone. */
export function pokePipe(path: string): { result: PokeResult; reason?: string } {
  let fd: number;
  try {
    fd = openJobFifoForWrite(path); // never through a symlink, never a regular file: a swap is refused
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    return code === "ENXIO" ? { result: "no_reader" } : { result: "error", reason: code };
  }
  try {
    writeSync(fd, "ringwatch\n");
    return { result: "ok" };
  } catch (err) {
    return { result: "error", reason: (err as NodeJS.ErrnoException).code ?? String(err) };
  } finally {
    closeSync(fd);
  }
}
