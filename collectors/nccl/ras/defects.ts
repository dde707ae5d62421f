/**
 * NCCL versions whose RAS service has a known defect that a client query (STATUS over the RAS client
 * socket) can set off: on those versions ringwatch asks RAS on suspicion of a hang only, never on a
 * timer, unless the operator opts in (ras/schedule.ts).
 *
 * Each row cites its thread or release note. `from` is the first release whose src/ras holds the faulty
 * code and `fixedIn` the first that holds the fix, both read in the release tags of
 * github.com/NVIDIA/nccl up to v2.30.7-1, the newest tag read. A row with no `fixedIn` affects every
 * version from `from` on, newer releases included, until a release that fixes it is read.
 *
 * Not here: nccl#1996 and nccl-pr#2406 (a use-after-free in rasMsgHandlePeersUpdate, 2.24.3 to at least
 * 2.30.7). They crash jobs that nobody queries, so not asking does not avoid them; NCCL_RAS_ENABLE=0 does.
 */

/** One known defect of NCCL's RAS service that a client query can set off. */
export interface RasDefect {
  /** "nccl#1762" (issue), "nccl-pr#2406" (pull request) or "nccl-v2.27.3-1" (release note) */
  id: string;
  url: string;
  /** Affected NCCL versions: from `from` (inclusive) up to `fixedIn` (exclusive); undefined fixedIn: not fixed in any release read (see `unfixedAsOf`). */
  from: string;
  fixedIn?: string;
  unfixedAsOf?: string;
  /** What sets it off, in a few words: "a query during communicator init", "STATUS at 128+ GPUs", ... */
  trigger: string;
}

export const RAS_DEFECTS: readonly RasDefect[] = [
  // 2.27.3 release note, "RAS fixes": "Fix a potential race condition when gathering data for a RAS
  // status report." The fix reads a communicator's error state directly instead of through
  // ncclCommGetAsyncError, whose check fails on a communicator not yet set up or being freed.
  {
    id: "nccl-v2.27.3-1",
    url: "https://github.com/NVIDIA/nccl/releases/tag/v2.27.3-1",
    from: "2.24.3",
    fixedIn: "2.27.3",
    trigger: "a query while a communicator is created or destroyed (race)",
  },
  // "during NCCL initialization, running the RAS command can cause NCCL to crash." 2.26.2 began to read
  // comm->peerInfo, still null during init; 2.27.3 added peerInfoValid (release note: Issues #1669, #1718).
  {
    id: "nccl#1669",
    url: "https://github.com/NVIDIA/nccl/issues/1669",
    from: "2.26.2",
    fixedIn: "2.27.3",
    trigger: "a query during communicator init",
  },
  // "its possible to bump into this often enough even at a 5 second poll interval." The same defect as
  // nccl#1669 (closed as its duplicate; both named in the 2.27.3 release note).
  {
    id: "nccl#1718",
    url: "https://github.com/NVIDIA/nccl/issues/1718",
    from: "2.26.2",
    fixedIn: "2.27.3",
    trigger: "polling, even every 5 s, while communicators are created",
  },
  // "pulling NCCL RAS (echo "VERBOSE STATUS" | nc localhost 28028) can potentially cause job crash";
  // maintainer: "the fix was included in NCCL 2.29.2 release." rasClientRunComms stepped over a
  // communicator's missing ranks wrongly from 2.26.2 (which added them) to 2.28.9.
  {
    id: "nccl#1762",
    url: "https://github.com/NVIDIA/nccl/issues/1762",
    from: "2.26.2",
    fixedIn: "2.29.2",
    trigger: "STATUS at 128+ GPUs (a communicator with missing ranks)",
  },
  // "the null `status` values appear when a communicator is being initialized": the `continue` that the
  // 2.27.3 fix of nccl#1669 added to rasCollCommsInit skips a communicator without moving to the next
  // one. Open; the loop is unchanged in v2.30.7-1.
  {
    id: "nccl#2346",
    url: "https://github.com/NVIDIA/nccl/issues/2346",
    from: "2.27.3",
    unfixedAsOf: "2.30.7",
    trigger: "STATUS while communicators are created (seen at 256 GPUs)",
  },
];

/** The defects that affect `version` ("2.27.3", also "2.27.3+cuda12.9" and "2.28.9-1" forms); [] for an unknown or unparsable version. */
export function defectsOf(version: string | undefined): RasDefect[] {
  const v = version === undefined ? undefined : parseVersion(version);
  if (v === undefined) return [];
  return RAS_DEFECTS.filter(
    (d) => compareParts(v, parseVersion(d.from) ?? ZERO) >= 0 && (d.fixedIn === undefined || compareParts(v, parseVersion(d.fixedIn) ?? ZERO) < 0),
  );
}

/** -1, 0, 1 comparing two NCCL versions numerically (major.minor.patch; missing parts are 0). An unparsable version counts as 0.0.0. */
export function compareNcclVersions(a: string, b: string): number {
  return compareParts(parseVersion(a) ?? ZERO, parseVersion(b) ?? ZERO);
}

const ZERO: readonly number[] = [0, 0, 0];

function compareParts(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < 3; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/**
 * [major, minor, patch] of "2.27.3", "v2.27.3", "2.27.3+cuda12.9" or "2.28.9-1" (what follows the first
 * `+` or `-` is dropped); one to three parts of digits only, missing parts 0. undefined otherwise.
 */
function parseVersion(text: string): number[] | undefined {
  let s = text.trim();
  if (s.startsWith("v")) s = s.slice(1);
  const plus = s.indexOf("+");
  if (plus >= 0) s = s.slice(0, plus);
  const dash = s.indexOf("-");
  if (dash >= 0) s = s.slice(0, dash);
  const parts = s.split(".");
  if (parts.length > 3) return undefined;
  const out: number[] = [];
  for (const p of parts) {
    if (p.length === 0 || p.length > 6) return undefined;
    for (let i = 0; i < p.length; i++) {
      const c = p.charCodeAt(i);
      if (c < 48 || c > 57) return undefined;
    }
    out.push(Number(p));
  }
  while (out.length < 3) out.push(0);
  return out;
}
