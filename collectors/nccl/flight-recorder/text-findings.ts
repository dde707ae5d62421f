/**
 * Findings from torchfrtrace's text (text-report.ts), the same kinds as from the dumps themselves:
 * the ranks that never joined collective #N are rank_behind (the others wait in it); a difference
 * the analyzer blames on ranks (op, size, dtype, state) is collective_mismatch, critical but for a
 * state (a rank not started yet may only be slow); an all_to_all whose sizes do not add up is a
 * collective_mismatch with no rank named; ranks the analyzer had no dump from are rank_missing.
 * Seq and process group as the text names them.
 */
import type { Finding, FindingStack } from "../verdict/report.js";
import { collectiveMismatch, rankBehind, rankMissing } from "../verdict/finding.js";
import { frTextWords } from "../verdict/words.js";
import type { FrTextBlock, FrTextCulprit } from "./text-report.js";
import type { FrFrame } from "./types.js";

/** Evidence lines kept per finding. */
const MAX_EVIDENCE = 8;

/** `0:default_pg` → `0 (default_pg)`, as the dumps' findings label a group; the name alone when it has no description. */
export function frTextGroup(group: string | undefined): string | undefined {
  if (group === undefined || group === "") return undefined;
  const c = group.indexOf(":");
  if (c <= 0) return group;
  const desc = group.slice(c + 1);
  return desc === "" || desc === "undefined" ? group.slice(0, c) : `${group.slice(0, c)} (${desc})`;
}

/** `nccl:all_reduce` → `all_reduce` (the backend prefix dropped). */
function opName(op: string | undefined): string | undefined {
  if (op === undefined) return undefined;
  const c = op.indexOf(":");
  return c >= 0 && c < 8 ? op.slice(c + 1) : op;
}

function isTorchFrame(f: FrFrame): boolean {
  return (
    f.file.includes("/torch/distributed/") ||
    f.file.includes("/site-packages/torch/") ||
    f.file.includes("/dist-packages/torch/") ||
    f.file.includes("/torch/nn/parallel/")
  );
}

/** `job.py:20`: the innermost frame outside PyTorch. */
function userFrame(frames: readonly FrFrame[]): string | undefined {
  const f = frames.find((x) => !isTorchFrame(x)) ?? frames[0];
  return f ? `${f.file}:${f.line}` : undefined;
}

const sorted = (xs: Iterable<number>): number[] => [...new Set(xs)].sort((a, b) => a - b);

/** The findings of one log's torchfrtrace text. */
export function frTextFindings(source: string, blocks: readonly FrTextBlock[], noDumps: readonly { ranks: number[]; line: number }[]): Finding[] {
  const out: Finding[] = [];
  for (const b of blocks) {
    const f = blockFinding(source, b);
    if (f) out.push(f);
  }
  const missing = sorted(noDumps.flatMap((d) => d.ranks));
  if (missing.length > 0)
    out.push(
      rankMissing({
        summary: frTextWords.noDumps({ ranks: missing }),
        ranks: missing,
        processes: [],
        comm_id: null,
        evidence: noDumps.slice(0, MAX_EVIDENCE).map((d) => `${source}:${d.line}`),
      }),
    );
  return out;
}

function blockFinding(source: string, b: FrTextBlock): Finding | undefined {
  const group = frTextGroup(b.group);
  const op = opName(b.op);
  const frame = b.frames.length > 0 ? userFrame(b.frames) : undefined;
  const at = {
    ...(group !== undefined ? { group } : {}),
    ...(b.seq !== undefined ? { seq: b.seq } : {}),
    ...(op !== undefined ? { op } : {}),
    ...(frame !== undefined ? { frame } : {}),
  };
  const evidence = b.lines.slice(0, MAX_EVIDENCE).map((n) => `${source}:${n}`);
  const where = {
    ...(b.seq !== undefined ? { seq: b.seq } : {}),
    ...(op !== undefined ? { op } : {}),
    ...(group !== undefined ? { process_group: group } : {}),
  };
  if (b.what === "not_joined") {
    const missing = sorted(b.missing ?? []);
    if (missing.length === 0) return undefined;
    const gone = new Set(missing);
    const waiting = b.expected !== undefined ? b.expected.filter((r) => !gone.has(r)) : undefined;
    const stacks: FindingStack[] =
      b.frames.length > 0 ? [{ ranks: waiting ?? [], frames: b.frames.map((x) => ({ function: x.name, file: x.file, line: x.line })) }] : [];
    return rankBehind({
      summary: frTextWords.notJoined({ ...at, missing, ...(waiting !== undefined ? { waiting } : {}), ...(b.state !== undefined ? { state: b.state } : {}) }),
      ranks: missing,
      processes: [],
      comm_id: null,
      evidence,
      ...where,
      ...(waiting !== undefined && waiting.length > 0 ? { waiting_ranks: waiting } : {}),
      ...(stacks.length > 0 ? { stacks } : {}),
    });
  }
  if (b.what === "numel") {
    return collectiveMismatch({
      summary: frTextWords.numel({
        ...at,
        ...(b.inputNumel !== undefined ? { input: b.inputNumel } : {}),
        ...(b.outputNumel !== undefined ? { output: b.outputNumel } : {}),
      }),
      ranks: [],
      processes: [],
      comm_id: null,
      evidence,
      ...where,
      mismatch: "size",
      ...(b.inputNumel !== undefined ? { expected: `${b.inputNumel} input elements` } : {}),
      ...(b.outputNumel !== undefined ? { found: `${b.outputNumel} output elements` } : {}),
    });
  }
  // errors: the culprits, the class of the first that has one.
  const cs: readonly FrTextCulprit[] = b.errors?.culprits ?? [];
  const first = cs.find((c) => c.mismatch !== undefined) ?? cs[0];
  const ranks = sorted(cs.map((c) => c.rank));
  const kind = first?.mismatch;
  return collectiveMismatch({
    ...(kind === "state" ? { severity: "warning" as const } : {}),
    summary: frTextWords.mismatch({
      ...at,
      ranks,
      ...(kind !== undefined ? { kind } : {}),
      ...(first?.expected !== undefined ? { expected: first.expected } : {}),
      ...(first?.found !== undefined ? { found: first.found } : {}),
      said: first?.detail ?? b.errors?.text ?? "the analyzer printed no error message",
    }),
    ranks,
    processes: [],
    comm_id: null,
    evidence,
    ...where,
    ...(kind === "op" && first?.found !== undefined ? { other_op: first.found } : {}),
    ...(kind !== undefined ? { mismatch: kind } : {}),
    ...(first?.expected !== undefined ? { expected: first.expected } : {}),
    ...(first?.found !== undefined ? { found: first.found } : {}),
  });
}
