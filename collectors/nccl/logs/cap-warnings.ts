/**
 * One warning per owner (uid) whose files or communicators filled a cap: the counters
 * (ringwatch_nccl_log_files_dropped_total, ringwatch_nccl_communicators_dropped_total) say how
 * many, the log says whose, once, so a flood does not flood the log too. At most MAX_OWNERS are
 * remembered; then the memory starts anew (a second line per owner at worst).
 */
import type { Logger } from "pino";

const MAX_OWNERS = 1024;

export class CapWarnings {
  private readonly files = new Set<number>();
  private readonly comms = new Set<number>();

  constructor(private readonly log: Logger) {}

  /** A file was left out (or gave way) for --collector.nccl.max-files; uid owns the files that filled the cap. */
  fileDropped(path: string, uid: number, maxFiles: number): void {
    if (!remember(this.files, uid)) return;
    this.log.warn(
      { path, owner_uid: uid, max_files: maxFiles },
      `nccl: the file cap (${maxFiles}) is full: ${path} is not followed; uid ${uid} owns the most followed files and gives way first to other users' logs (ringwatch_nccl_log_files_dropped_total counts the rest)`,
    );
  }

  /** Owners whose communicators were dropped for --collector.nccl.max-communicators (tracker.droppedCommsByOwner). */
  commsDropped(byOwner: ReadonlyMap<number, number>, maxComms: number): void {
    for (const [uid, n] of byOwner) {
      if (!remember(this.comms, uid)) continue;
      this.log.warn(
        { owner_uid: uid < 0 ? null : uid, dropped: n, max_communicators: maxComms },
        `nccl: the communicator cap (${maxComms}) is full: ${n} communicator(s) announced in files of uid ${uid} were not tracked or gave way to other users' (ringwatch_nccl_communicators_dropped_total counts the rest)`,
      );
    }
  }
}

function remember(set: Set<number>, uid: number): boolean {
  if (set.has(uid)) return false;
  if (set.size >= MAX_OWNERS) set.clear();
  set.add(uid);
  return true;
}
