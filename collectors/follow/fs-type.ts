/**
 * Which file systems need polling. inotify reports only changes made through the local kernel:
 * on network and cluster file systems a writer on another node (or the server) changes the file
 * without any event, and FUSE file systems deliver events only for some operations. Magic numbers
 * are statfs(2) f_type values (linux/magic.h and the file systems' own headers).
 */
import { statfs } from "node:fs/promises";
import { dirname } from "node:path";
import { isStalled, type FsGate } from "../job-fs-gate.js";

export const POLLING_FS_MAGIC: ReadonlyMap<number, string> = new Map([
  [0x6969, "nfs"],
  [0xff534d42, "cifs"],
  [0xfe534d42, "smb2"],
  [0x517b, "smb"],
  [0x65735546, "fuse"],
  [0x0bd00bd0, "lustre"],
  [0x47504653, "gpfs"],
  [0x00c36400, "ceph"],
  [0x01021997, "9p"],
  [0x5346414f, "afs"],
  [0x6b414653, "kafs"],
  [0x73757245, "coda"],
  [0x19830326, "beegfs"],
  [0xaad7aaea, "panfs"],
  [0x01161970, "gfs2"],
  [0x7461636f, "ocfs2"],
  [0x564c, "ncp"],
  [0x786f4256, "vboxsf"],
]);

/** The file system's name when its type needs polling, else undefined. */
export function pollingFsName(type: number | bigint): string | undefined {
  // f_type is a signed long on some ABIs: 0xff534d42 can arrive negative.
  const t = Number(BigInt.asUintN(32, BigInt(type)));
  return POLLING_FS_MAGIC.get(t);
}

/**
 * Whether the directory (or its nearest existing ancestor) lives on a file system that needs
 * polling. An error (no statfs, permission) answers false: inotify plus the sweep still work.
 */
export async function needsPolling(dir: string, gate: FsGate): Promise<boolean> {
  for (let d = dir; ; d = dirname(d)) {
    try {
      const s = await gate.run(d, () => statfs(d));
      return pollingFsName(s.type) !== undefined;
    } catch (e) {
      // A mount that does not answer is polled: inotify on it would wait on its server too.
      if (isStalled(e)) return true;
      if ((e as NodeJS.ErrnoException).code !== "ENOENT" || dirname(d) === d) return false;
    }
  }
}
