/**
 * The evidence analyze reads from lines beside NCCL's own INFO/WARN records and PyTorch's
 * ProcessGroupNCCL lines: Horovod's stall inspector and coordinator, crash handlers (UCX, Open MPI),
 * gdb backtraces, PyTorch's store barrier, store server and client, and ncclUniqueId fetch, XLA's rendezvous, Gloo's size mismatches, connect failures and timeouts, libmlx5's prints,
 * and NCCL's old connect retries. Each source reads every log's lines with a reader of its own
 * (connect retries: the NCCL lines, as the line parser read their headers) and gives its findings
 * once, in two stages:
 * - `alone`: findings that stand by themselves, placed after the PyTorch findings (before the
 *   transport's), in list order;
 * - `after`: findings that add only where nothing else tells the same (libmlx5's print, the retries,
 *   Gloo's timeout, a rank's own exception while others hang); each is handed every finding before it
 *   (the nccl-tests' own are not among them) and comes last, in list order.
 * To add a reader: write it beside the others (logs/<origin>/) and add its source to a stage here.
 */
import { StallReader } from "../logs/horovod/stall.js";
import { HOROVOD_MISMATCH_MARKS, HorovodMismatchReader } from "../logs/horovod/mismatch.js";
import { horovodMismatchFindings, horovodStallFindings } from "../logs/horovod/findings.js";
import { CaughtSignalReader, caughtSignalFindings } from "../logs/crash/caught-signal.js";
import { OpenMpiSignalReader } from "../logs/crash/open-mpi-signal.js";
import { GdbBacktraceReader, nativeWaitFindings, type GdbStop, type NativeWait } from "../logs/native/gdb-backtrace.js";
import { STORE_BARRIER_MARKS, StoreBarrierReader, storeBarrierFindings, storeBarrierWaitFindings } from "../logs/pytorch/store-barrier.js";
import { GLOO_CONNECT_MARKS, glooConnectFindings, glooConnectReader } from "../logs/pytorch/gloo-connect.js";
import { STORE_CONNECT_MARKS, storeConnectFindings, storeConnectReader } from "../logs/pytorch/store-connect.js";
import { STORE_CLIENTS_MARKS, storeClientsFindings, storeClientsReader } from "../logs/pytorch/store-clients.js";
import { GLOO_TIMEOUT_MARKS, glooTimeoutFindings, glooTimeoutReader } from "../logs/pytorch/gloo-timeout.js";
import { GLOO_MISMATCH_MARKS, glooMismatchFindings, glooMismatchReader } from "../logs/pytorch/gloo-mismatch.js";
import { UNIQUE_ID_MARKS, uniqueIdWaitFindings, uniqueIdWaitReader } from "../logs/pytorch/unique-id-wait.js";
import { RENDEZVOUS_MARKS, rendezvousFindings, rendezvousReader } from "../logs/xla/rendezvous.js";
import { ConnectRetryReader, RetryState, connectRetryFindings, type LastRetry } from "../logs/socket/connect-retry.js";
import { MLX5_COMPLETION_MARKS, Mlx5CompletionErrorReader, mlx5CompletionErrorFindings } from "../logs/verbs/mlx5-completion-error.js";
import { RANK_EXCEPTION_MARKS, rankExceptionFindings, rankExceptionReader } from "../logs/pytorch/rank-exception.js";
import { isFailureFinding, type Finding } from "../verdict/report.js";

/** A reader of one log's lines, numbered from 1. */
export interface LineReader {
  line(text: string, lineNo: number): void;
}

export interface EvidenceSource {
  /** What all the logs' lines say; `before`: the findings before this source's (`after` stage only; empty for `alone`). */
  findings(before: readonly Finding[]): Finding[];
}

/** A source that reads each log's lines as pasted (before they are put back together). */
export interface PastedSource extends EvidenceSource {
  /** The reader of the log named `source`. */
  reader(source: string): LineReader;
  /**
   * Words one of which every line its readers read holds (a reader that skips any other line at
   * once); undefined where they read every line (a backtrace's rows, a report's). One scan of a line
   * for all the sources' marks (evidenceSources' `gate`) stands for each reader's own.
   */
  marks?: readonly string[];
}

/** The crash handlers' reports in one log: UCX's and Open MPI's, told as one (a process both report is one crash). */
class CrashReaders implements LineReader {
  readonly ucx: CaughtSignalReader;
  readonly openMpi: OpenMpiSignalReader;

  constructor(source: string) {
    this.ucx = new CaughtSignalReader(source);
    this.openMpi = new OpenMpiSignalReader(source);
  }

  line(text: string, lineNo: number): void {
    this.ucx.line(text, lineNo);
    this.openMpi.line(text, lineNo);
  }
}

/** A source of one reader per log, whose findings are read from all of them together. */
function perLog<R extends LineReader>(
  make: (source: string) => R,
  findings: (logs: readonly { source: string; reader: R }[], before: readonly Finding[]) => Finding[],
  marks?: readonly string[],
): PastedSource {
  const logs: { source: string; reader: R }[] = [];
  return {
    ...(marks !== undefined ? { marks } : {}),
    reader(source: string): R {
      const reader = make(source);
      logs.push({ source, reader });
      return reader;
    },
    findings: (before) => findings(logs, before),
  };
}

/**
 * The waits of threads stopped inside NCCL's calls (or the store client's, or CUDA's): gdb's
 * backtraces, read from the lines here, and py-spy's native frames, from the stack dumps analyze
 * placed (analyze/stacks.ts pySpyNativeWaits), handed over before the findings are asked. One
 * finding per tool and kind of wait, for both together.
 */
export class NativeWaitSource implements PastedSource {
  private readonly gdb: GdbBacktraceReader[] = [];
  private pySpy: readonly NativeWait[] = [];

  reader(source: string): GdbBacktraceReader {
    const r = new GdbBacktraceReader(source);
    this.gdb.push(r);
    return r;
  }

  /** py-spy's waits, from the dumps as placed; before findings(). */
  withPySpy(waits: readonly NativeWait[]): void {
    this.pySpy = waits;
  }

  /** gdb's backtraces of stopped processes, not of crashes (analyze/dump-alone.ts). */
  gdbStops(): GdbStop[] {
    return this.gdb.flatMap((r) => r.stopped());
  }

  findings(): Finding[] {
    return nativeWaitFindings([...this.gdb.flatMap((r) => r.waits()), ...this.pySpy]);
  }
}

/**
 * NCCL's connect retries (`Call to connect returned Connection refused, retrying`; 2.19+'s
 * `retrying (N/M)`), read from the NCCL lines as the line parser reads them (analyze.ts hands each
 * line's process over). Two findings: a process whose lines end in retries, where no finding names
 * that process's failure already (a network_error warning); and a thread whose lines end at its
 * connect's last retry, which is that connect's failure (failedConnects: analyze reads them as the
 * WARN NCCL would have written).
 */
export class ConnectRetrySource implements EvidenceSource {
  /** One state for all the logs: a process's retries in one file, its next line in another. */
  private readonly state = new RetryState();

  /** The reader of the NCCL lines of the log named `source`. */
  forLog(source: string): ConnectRetryReader {
    return new ConnectRetryReader(source, this.state);
  }

  /** The threads whose lines end at a connect's last retry, once (the state forgets them). */
  failedConnects(): LastRetry[] {
    const out = [...this.state.lastRetries.values()];
    this.state.lastRetries.clear();
    return out;
  }

  findings(before: readonly Finding[]): Finding[] {
    const told = new Set(before.filter((f) => f.kind === "network_error" || f.kind === "nccl_error").flatMap((f) => f.processes));
    return connectRetryFindings([...this.state.byProcess.values()], told);
  }
}

/**
 * The sources of one analysis, by stage; `pasted`: those of both stages that read lines as pasted;
 * `gate`: one scan for the marks of those that have them, a line without any is not handed to them.
 */
export interface EvidenceSources {
  alone: readonly PastedSource[];
  after: readonly EvidenceSource[];
  pasted: readonly PastedSource[];
  gate: RegExp;
  connectRetries: ConnectRetrySource;
  nativeWaits: NativeWaitSource;
}

/**
 * The marks as one alternation of literals (escaped, no quantifier: no backtracking beyond a mark's
 * length), one scan of a line instead of one indexOf per source: as kmsg/pasted.ts measured for its marks.
 */
function gateOf(sources: readonly PastedSource[]): RegExp {
  const marks = [...new Set(sources.flatMap((s) => s.marks ?? []))];
  return new RegExp(marks.map((m) => m.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"));
}

export function evidenceSources(): EvidenceSources {
  const nativeWaits = new NativeWaitSource();
  const alone: PastedSource[] = [
    // Horovod's stall inspector, the crash handlers, gdb's backtraces and py-spy's native frames of a stopped rank, PyTorch's store barrier, store server and store client, Gloo's size mismatch, PyTorch's ncclUniqueId fetch that timed out, XLA's rendezvous, Horovod's coordinator.
    perLog(
      () => new StallReader(),
      (logs) => logs.flatMap(({ source, reader }) => horovodStallFindings(source, reader.reports, reader.count)),
    ),
    perLog(
      (source) => new CrashReaders(source),
      (logs) => caughtSignalFindings(logs.flatMap(({ reader }) => [...reader.ucx.crashes, ...reader.openMpi.crashes])),
    ),
    nativeWaits,
    perLog(
      (source) => new StoreBarrierReader(source),
      (logs) => logs.flatMap(({ reader }) => [...storeBarrierFindings(reader.timeouts), ...storeBarrierWaitFindings(reader.waits, reader.timeouts)]),
      STORE_BARRIER_MARKS,
    ),
    perLog(storeConnectReader, (logs) => storeConnectFindings(logs.flatMap(({ reader }) => reader.items)), STORE_CONNECT_MARKS),
    perLog(storeClientsReader, (logs) => storeClientsFindings(logs.flatMap(({ reader }) => reader.items)), STORE_CLIENTS_MARKS),
    perLog(glooMismatchReader, (logs) => glooMismatchFindings(logs.flatMap(({ reader }) => reader.items)), GLOO_MISMATCH_MARKS),
    perLog(uniqueIdWaitReader, (logs) => uniqueIdWaitFindings(logs.flatMap(({ reader }) => reader.items)), UNIQUE_ID_MARKS),
    perLog(rendezvousReader, (logs) => rendezvousFindings(logs.flatMap(({ reader }) => reader.items)), RENDEZVOUS_MARKS),
    perLog(
      () => new HorovodMismatchReader(),
      (logs) => horovodMismatchFindings(logs.map(({ source, reader }) => ({ source, mismatches: reader.mismatches }))),
      HOROVOD_MISMATCH_MARKS,
    ),
  ];
  const mlx5 = perLog(
    (source) => new Mlx5CompletionErrorReader(source),
    // Where no network error of NCCL's own lines tells the failure already.
    (logs, before) => (before.some((f) => f.kind === "network_error") ? [] : mlx5CompletionErrorFindings(logs.flatMap(({ reader }) => reader.errors()))),
    MLX5_COMPLETION_MARKS,
  );
  const connectRetries = new ConnectRetrySource();
  const glooConnect = perLog(glooConnectReader, (logs) => glooConnectFindings(logs.flatMap(({ reader }) => reader.items)), GLOO_CONNECT_MARKS);
  // Gloo's timeout waits for a rank; where the logs hold a failure already (a Gloo connect failure among them), that failure is why.
  const glooTimeout = perLog(
    glooTimeoutReader,
    (logs, before) =>
      glooTimeoutFindings(
        logs.flatMap(({ reader }) => reader.items),
        before.some(isFailureFinding),
      ),
    GLOO_TIMEOUT_MARKS,
  );
  // A rank's own exception while others hang: the rank they waited for (after every hang finding).
  const rankException = perLog(
    rankExceptionReader,
    (logs, before) =>
      rankExceptionFindings(
        logs.flatMap(({ reader }) => reader.items),
        before,
      ),
    RANK_EXCEPTION_MARKS,
  );
  return {
    alone,
    after: [mlx5, connectRetries, glooConnect, glooTimeout, rankException],
    pasted: [...alone, mlx5, glooConnect, glooTimeout, rankException],
    gate: gateOf([...alone, mlx5, glooConnect, glooTimeout, rankException]),
    connectRetries,
    nativeWaits,
  };
}
