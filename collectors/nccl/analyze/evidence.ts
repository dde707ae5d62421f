/**
 * The evidence analyze reads from pasted text that is neither NCCL's lines nor PyTorch's own: each
 * source reads every log's lines with a reader of its own and gives its findings once, after the NCCL,
 * PyTorch, RAS, Flight Recorder and kernel readers have given theirs. They run in the order of
 * `evidenceSources()`, and each is handed the findings before it: a source whose evidence only adds
 * where nothing else tells the same (libmlx5's print, NCCL's connect retries, Gloo's timeout) says so
 * in findings(). To add a reader: write it beside the others (logs/<origin>/), and add its source here.
 */
import { StallReader } from "../logs/horovod/stall.js";
import { HorovodMismatchReader } from "../logs/horovod/mismatch.js";
import { horovodMismatchFindings, horovodStallFindings } from "../logs/horovod/findings.js";
import { CaughtSignalReader, caughtSignalFindings } from "../logs/crash/caught-signal.js";
import { GdbBacktraceReader, nativeWaitFindings } from "../logs/native/gdb-backtrace.js";
import { StoreBarrierReader, storeBarrierFindings, storeBarrierWaitFindings } from "../logs/pytorch/store-barrier.js";
import { glooConnectFindings, glooConnectReader } from "../logs/pytorch/gloo-connect.js";
import { glooTimeoutFindings, glooTimeoutReader } from "../logs/pytorch/gloo-timeout.js";
import { ConnectRetryReader, connectRetryFindings } from "../logs/socket/connect-retry.js";
import { Mlx5CompletionErrorReader, mlx5CompletionErrorFindings } from "../logs/verbs/mlx5-completion-error.js";
import type { Finding } from "../verdict/report.js";

/** A reader of one log's lines, numbered from 1. */
export interface LineReader {
  line(text: string, lineNo: number): void;
}

export interface EvidenceSource {
  /** What all the logs' lines say; `before`: the findings of the other readers and of the sources earlier in the list. */
  findings(before: readonly Finding[]): Finding[];
}

/** A source that reads each log's lines as pasted (before they are put back together). */
export interface PastedSource extends EvidenceSource {
  /** The reader of the log named `source`. */
  reader(source: string): LineReader;
}

/** A source of one reader per log, whose findings are read from all of them together. */
function perLog<R extends LineReader>(
  make: (source: string) => R,
  findings: (logs: readonly { source: string; reader: R }[], before: readonly Finding[]) => Finding[],
): PastedSource {
  const logs: { source: string; reader: R }[] = [];
  return {
    reader(source: string): R {
      const reader = make(source);
      logs.push({ source, reader });
      return reader;
    },
    findings: (before) => findings(logs, before),
  };
}

/**
 * NCCL's old connect retries (`Call to connect returned Connection refused, retrying`), read from the
 * NCCL lines as the line parser reads them (analyze.ts hands each line's process over): a process
 * whose lines end in retries, where no finding names that process's failure already.
 */
export class ConnectRetrySource implements EvidenceSource {
  private readonly logs: ConnectRetryReader[] = [];

  /** The reader of the NCCL lines of the log named `source`. */
  forLog(source: string): ConnectRetryReader {
    const r = new ConnectRetryReader(source);
    this.logs.push(r);
    return r;
  }

  findings(before: readonly Finding[]): Finding[] {
    const told = new Set(before.filter((f) => f.kind === "network_error" || f.kind === "nccl_error").flatMap((f) => f.processes));
    return connectRetryFindings(
      this.logs.flatMap((r) => r.retries()),
      told,
    );
  }
}

/** A critical finding of a failure (an error, a timeout, a rank behind, a mismatch), not a sign of one. */
export function isFailureFinding(f: Finding): boolean {
  return f.severity === "critical" && f.kind !== "hang_suspected" && f.kind !== "socket_transport" && f.kind !== "gdr_disabled";
}

/** The sources of one analysis: those that read lines as pasted, the connect retries, and all of them in the order their findings are asked for. */
export interface EvidenceSources {
  pasted: readonly PastedSource[];
  connectRetries: ConnectRetrySource;
  inOrder: readonly EvidenceSource[];
}

export function evidenceSources(): EvidenceSources {
  const connectRetries = new ConnectRetrySource();
  const inOrder: EvidenceSource[] = [
    // Horovod's stall inspector and its mismatch errors.
    perLog(
      () => new StallReader(),
      (logs) => logs.flatMap(({ source, reader }) => horovodStallFindings(source, reader.reports, reader.count)),
    ),
    perLog(
      () => new HorovodMismatchReader(),
      (logs) => horovodMismatchFindings(logs.map(({ source, reader }) => ({ source, mismatches: reader.mismatches }))),
    ),
    // NCCL's crash handler (`Caught signal`), gdb's backtraces of a stopped rank, PyTorch's store barrier.
    perLog(
      (source) => new CaughtSignalReader(source),
      (logs) => caughtSignalFindings(logs.flatMap(({ reader }) => reader.crashes)),
    ),
    perLog(
      (source) => new GdbBacktraceReader(source),
      (logs) => nativeWaitFindings(logs.flatMap(({ reader }) => reader.waits())),
    ),
    perLog(
      (source) => new StoreBarrierReader(source),
      (logs) => logs.flatMap(({ reader }) => [...storeBarrierFindings(reader.timeouts), ...storeBarrierWaitFindings(reader.waits, reader.timeouts)]),
    ),
    // libmlx5's print of a failed completion, where no network error of NCCL's own lines tells the failure already.
    perLog(
      (source) => new Mlx5CompletionErrorReader(source),
      (logs, before) => (before.some((f) => f.kind === "network_error") ? [] : mlx5CompletionErrorFindings(logs.flatMap(({ reader }) => reader.errors()))),
    ),
    connectRetries,
    perLog(glooConnectReader, (logs) => glooConnectFindings(logs.flatMap(({ reader }) => reader.items))),
    // Gloo's timeout waits for a rank; where the logs hold a failure already, that failure is why.
    perLog(glooTimeoutReader, (logs, before) =>
      glooTimeoutFindings(
        logs.flatMap(({ reader }) => reader.items),
        before.some(isFailureFinding),
      ),
    ),
  ];
  return { pasted: inOrder.filter((s): s is PastedSource => s !== connectRetries), connectRetries, inOrder };
}
