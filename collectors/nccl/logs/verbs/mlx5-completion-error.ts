/**
 * libmlx5's own print of a failed work completion (rdma-core's ConnectX provider, cq.c), written to
 * the process's stderr: `mlx5: nid003244: got completion with error:` and four rows of the CQE in hex.
 * The provider prints it for every error completion but a flush and a transport retry timeout: an
 * RDMA operation of that process failed (a remote access or protection error, a receiver not ready,
 * a peer that exited or deregistered its buffer), and its queue pair went to the error state
 * (nccl-pasted 577, behind a Ray actor's prefix). One network_error per host the lines name; the
 * CQE's bytes are not decoded (their layout differs between ConnectX generations). Analyze only;
 * cut at fixed words.
 */
import { networkError } from "../../verdict/finding.js";
import type { Finding } from "../../verdict/report.js";
import { networkErrorWords } from "../../verdict/words.js";

const MARK = ": got completion with error:";
/** A line without this is none of libmlx5's prints (evidence.ts gates the readers on it). */
export const MLX5_COMPLETION_MARKS: readonly string[] = [MARK];
const PROVIDER = "mlx5: ";
const MAX_HOSTS = 256;

export class Mlx5CompletionErrorReader {
  private readonly byHost = new Map<string, { count: number; where: string[] }>();

  constructor(private readonly source: string) {}

  line(text: string, lineNo: number): void {
    const k = text.indexOf(MARK);
    if (k < 0) return;
    const p = text.lastIndexOf(PROVIDER, k);
    if (p < 0 || k - p > 80 + PROVIDER.length) return;
    const host = text.slice(p + PROVIDER.length, k);
    if (host.length === 0 || host.indexOf(" ") >= 0) return;
    let h = this.byHost.get(host);
    if (h === undefined) {
      if (this.byHost.size >= MAX_HOSTS) return;
      this.byHost.set(host, (h = { count: 0, where: [] }));
    }
    h.count++;
    if (h.where.length < 5) h.where.push(`${this.source}:${lineNo}`);
  }

  errors(): readonly { host: string; count: number; where: readonly string[] }[] {
    return [...this.byHost].map(([host, h]) => ({ host, ...h }));
  }
}

/** One critical network_error per host whose libmlx5 printed a failed completion. */
export function mlx5CompletionErrorFindings(all: readonly { host: string; count: number; where: readonly string[] }[]): Finding[] {
  return all.map((e) =>
    networkError({
      summary: networkErrorWords.mlx5Completion({ host: e.host, count: e.count }),
      ranks: [],
      processes: [],
      comm_id: null,
      evidence: [...e.where],
      ...(e.count > 1 ? { count: e.count } : {}),
    }),
  );
}
