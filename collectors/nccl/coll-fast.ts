/**
 * The hot path of live ingestion. With NCCL_DEBUG_SUBSYS=COLL nearly every line is a COLL line of
 * a process already known from its file, written as `host:pid:tid [dev] NCCL INFO Op: opCount ..`.
 * For those, three indexOf calls and three slices replace the full parse; every other line (and
 * any line that does not match this exact shape) goes through parseLine.
 */

export interface FastColl {
  kind: "coll";
  op: string;
  opCount: string;
  comm: string;
}

const OPCOUNT = ": opCount ";
const INFO = " NCCL INFO ";

/**
 * `line` must start with the writer's `host:pid:` (checked by the caller, `from` = its length).
 * Returns undefined when the line is not a plain COLL line.
 */
export function fastColl(line: string, from: number): FastColl | undefined {
  const i = line.indexOf(OPCOUNT, from);
  if (i < 0) return undefined;
  const opStart = line.lastIndexOf(" ", i - 1) + 1;
  // The first ` NCCL INFO ` must be the one right before the op: a torn line holding a second
  // writer's header goes to the full parser, which attributes it correctly.
  if (opStart < INFO.length || line.indexOf(INFO, from) !== opStart - INFO.length) return undefined;
  const ocStart = i + OPCOUNT.length;
  const ocEnd = line.indexOf(" ", ocStart);
  if (ocEnd <= ocStart) return undefined;
  const c = line.indexOf(" comm ", ocEnd);
  if (c < 0) return undefined;
  let cEnd = line.indexOf(" ", c + 6);
  if (cEnd < 0) cEnd = line.length;
  if (cEnd - (c + 6) < 3) return undefined;
  return { kind: "coll", op: line.slice(opStart, i), opCount: line.slice(ocStart, ocEnd), comm: line.slice(c + 6, cEnd) };
}
