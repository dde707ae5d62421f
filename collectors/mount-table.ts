/**
 * Which mount a path lies on: the longest mount point of `/proc/self/mountinfo` that is the path
 * or a folder above it. The file-system gate (job-fs-gate.ts) bounds calls per mount, since it is
 * a whole file system (an NFS server, a FUSE daemon) that stops answering, not one file.
 *
 * mountinfo is read synchronously: procfs answers from the kernel's own tables and never waits on
 * a file system's server, while an async read would queue behind the very calls the gate bounds.
 * The table is read again at most every REREAD_MS (autofs mounts come and go).
 */
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

const REREAD_MS = 10_000;

/** mountinfo escapes space, tab, newline and backslash in a mount point as \ooo. */
function unescape(field: string): string {
  return field.includes("\\") ? field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))) : field;
}

/** The mount points of a mountinfo text (field 5 of each line), longest first. */
export function parseMountPoints(text: string): string[] {
  const points = new Set<string>();
  for (const line of text.split("\n")) {
    const fields = line.split(" ");
    if (fields.length > 5 && fields[4]?.startsWith("/")) points.add(unescape(fields[4]));
  }
  return [...points].sort((a, b) => b.length - a.length);
}

/** Folders whose mount is remembered between two reads of the table (a node has thousands of mounts; a job's files, few folders). */
const MAX_CACHED = 4096;

export class MountTable {
  private points: string[] = ["/"];
  private readAt = -Infinity;
  private pointSet = new Set<string>(["/"]);
  private readonly byFolder = new Map<string, string>();

  constructor(private readonly file = "/proc/self/mountinfo") {}

  /** The mount point that holds the absolute path p ("/" where mountinfo cannot be read). */
  mountOf(p: string): string {
    this.refresh();
    // Every entry of a folder is on the folder's mount, but for the entries that are mount points.
    if (this.pointSet.has(p)) return p;
    const folder = p.slice(0, p.lastIndexOf("/") + 1);
    const known = this.byFolder.get(folder);
    if (known !== undefined) return known;
    let found = "/";
    for (const m of this.points) {
      if (m === "/" || (p.startsWith(m) && p.charCodeAt(m.length) === 47)) {
        found = m;
        break;
      }
    }
    if (this.byFolder.size >= MAX_CACHED) this.byFolder.clear();
    this.byFolder.set(folder, found);
    return found;
  }

  private refresh(): void {
    const now = performance.now();
    if (now - this.readAt < REREAD_MS) return;
    this.readAt = now;
    this.byFolder.clear();
    try {
      const points = parseMountPoints(readFileSync(this.file, "utf8"));
      if (points.length > 0) this.points = points;
    } catch {
      // Unreadable for now (EMFILE in a file flood): the last table stays.
    }
    this.pointSet = new Set(this.points);
  }
}
