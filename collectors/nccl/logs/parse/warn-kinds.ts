/**
 * The WARN kinds: one row per `kind` label value of `ringwatch_nccl_warnings_total`, with how its
 * messages are told, which reader fills their fields, its words (as the metric's row of
 * collectors/nccl/README.md says them) and the real captures it classifies. The WarnKind type is
 * derived from this table; test/collectors/nccl/logs/parse/warn-kinds.test.ts parses every capture
 * and compares the kinds and words with the README.
 *
 * warn.ts walks the rows in order, and each row's forms in order: the first form that tells the
 * message names its kind, and no later row is tried. The order is that of the if/else chain it
 * replaced; where a row must come before another, its comment says why. A message no form tells is
 * `other`. One special case stays outside the table: a net plugin's `GDR disabled` WARN is `other`
 * with gdrDisabled set (net.ts's pluginGdrOff, capture GDR_OFF_CAPTURE; NCCL 2.1's `No module present for GPU
 * Direct RDMA`, capture GDR_MODULE_CAPTURE).
 *
 * A literal form is told by substrings, found with indexOf (no regex on this path): the message
 * starts with `start`, holds one of `any` (the first of them found is where the reader starts) and
 * every one of `all`. A `parser` form is told by a sub-parser of its own (size-mismatch.ts,
 * net-plugin.ts), which fills the fields and names the kind. `fields` names the reader of warn.ts
 * that fills the fields of a literal form; a reader may name another kind (the proxy's retcode).
 */

/** A real line: a fixture under test/fixtures/ and its line number (1-based; the `# source:` line is line 1). */
export interface WarnCapture {
  readonly file: string;
  readonly line: number;
  /** The kind it is classified as, where the form's reader or sub-parser names another than the row's. */
  readonly kind?: string;
}

interface LiteralForm {
  readonly start?: string;
  readonly any?: readonly string[];
  readonly all?: readonly string[];
  /** Words the message must not hold. */
  readonly none?: readonly string[];
  readonly fields?: string;
  /** Real lines of this form; empty (with a comment) where none is known. */
  readonly captures: readonly WarnCapture[];
}

interface ParserForm {
  readonly parser: string;
  readonly captures: readonly WarnCapture[];
}

interface WarnRow {
  readonly kind: string;
  /** The words after the kind in the README's row, without the parentheses; undefined where it names the kind alone. */
  readonly words: string | undefined;
  readonly forms: readonly (LiteralForm | ParserForm)[];
}

export const WARN_KINDS = [
  {
    kind: "ib_completion_error",
    words: undefined,
    forms: [
      {
        // `NET/IB : Got completion from peer X<p> with error 4, opcode 5327, len 5327, vendor err 81 (Send)`, the
        // `status=12 opcode=0 ... localGid .. remoteGids..` and 2.28 `status=NAME(12) ... hca mlx5_0` forms, and 2.8's
        // `Got completion with error 12, ...` with no peer (no capture of that one is known).
        any: ["Got completion "],
        fields: "ibCompletion",
        captures: [
          { file: "nccl/68-error-net_ib-completion-error4-vendor81-proxy-thread.log", line: 2 },
          { file: "nccl/70-error-ib-completion-status12-vendor129-gids.log", line: 2 },
          { file: "nccl-pasted/51-nccl-2.28-own-timestamp-ib-completion-status12-vendor129-quoted.log", line: 2 },
        ],
      },
    ],
  },
  {
    // Before system_error: 2.4's `Call to ibv_get_async_event failed` is the async thread's, not a failed setup.
    kind: "ib_async_event",
    words: "the HCA reported an async event: `NET/IB : mlx5_0:1 Got async event : port error`, `... async fatal event on QP (0x..): ...`",
    forms: [
      {
        // warn.ts ibAsync: NCCL's async event thread, every form 2.3-2.30 (`Got async event : %s`, 2.20's device and
        // port before it, 2.23's `async fatal event[ on CQ|QP|SRQ ...]: %s` / `Got async error event: %s`, 2.29's
        // `Got non-fatal async event: %s(%d)`, `GID table changed`, `unknown event type (%d)`). No real capture of the
        // `Got async error event`, `Got non-fatal async event`, CQ, SRQ, GID and unknown forms is known; the
        // tests build them from NCCL's format strings.
        start: "NET/IB",
        any: [" async event", " async fatal event", " async error event", "GID table changed", "unknown event type"],
        fields: "ibAsync",
        captures: [
          { file: "nccl-pasted/59-ib-async-2.4-local-catastrophic-error-mpirun-tags-iso-timestamps.log", line: 2 },
          { file: "nccl-pasted/60-ib-async-2.14-port-error-eight-procs-node48-then-completion-error12.log", line: 5 },
          { file: "nccl-pasted/61-ib-async-2.20.3-mlx5_0-port1-local-access-violation-then-status5.log", line: 2 },
          { file: "nccl-pasted/62-ib-async-2.25.1-mlx5_1-port1-fatal-event-on-qp-invalid-request.log", line: 2 },
          { file: "nccl-pasted/63-ib-async-2.27-mlx5_ib0-fatal-qp-access-violation-ncclibtest-status4-hca.log", line: 3 },
        ],
      },
      {
        // 2.4-2.5 (misc/ibvwrap.cu): the async thread's read failed, after the device's fatal event.
        any: ["Call to ibv_get_async_event"],
        fields: "ibAsync",
        captures: [{ file: "nccl-pasted/59-ib-async-2.4-local-catastrophic-error-mpirun-tags-iso-timestamps.log", line: 4 }],
      },
    ],
  },
  {
    // Before timeout and system_error: `failed with 110 Connection timed out` is a queue pair that could not connect.
    kind: "ib_qp_error",
    words: "IB verbs could not connect a queue pair: `Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, ...`",
    forms: [
      {
        // warn.ts ibQp: `Call to ibv_modify_qp failed with error Network is unreachable` (to 2.23), 2.24+'s
        // `Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, curr state INIT, next state RTR, ...`.
        any: ["Call to ibv_modify_qp failed"],
        fields: "ibQp",
        captures: [
          { file: "nccl/59-error-2.5.6-ibv_modify_qp-invalid-argument.log", line: 8 },
          { file: "nccl-pasted/31-nccl-2.18-ibv-modify-qp-network-unreachable-proxy-connect-failed.log", line: 2 },
          { file: "nccl-pasted/58-ibv-modify-qp-2.27-errno110-connection-timed-out-on-dev-redacted.log", line: 2 },
        ],
      },
    ],
  },
  {
    // Before system_error: a missing library is no failure; NCCL goes on over NET/Socket.
    kind: "ib_unavailable",
    words: "NCCL cannot load IB verbs and falls back to sockets: `Failed to open libibverbs.so[.1]`",
    forms: [
      {
        // `Failed to open libibverbs.so[.1]` (misc/ibvwrap.cc, a WARN to 2.18; an INFO from 2.19, net.ts).
        any: ["libibverbs"],
        fields: "libibverbs",
        captures: [
          { file: "nccl/35-socket-2.4.8-libibverbs-missing.log", line: 13 },
          { file: "nccl/38-socket-2.7.8-libibverbs-missing-ansi-remnant.log", line: 6 },
        ],
      },
    ],
  },
  {
    kind: "net_completion_error",
    words: "a net plugin's request failed: aws-ofi-nccl `NET/OFI Request ... completed with error`",
    forms: [
      {
        // net-plugin.ts: `NET/... completed with error`, with the plugin's RC and words. Before the socket rows and
        // timeout: aws-ofi-nccl 1.6-1.9 give the request's error in libfabric's words (`Error: Connection timed out`).
        parser: "netCompletion",
        captures: [{ file: "nccl-pasted/30-nccl-2.28.8-ofi-undeliverable-remote-error-rank3-traceback.log", line: 9 }],
      },
    ],
  },
  {
    kind: "net_plugin_error",
    words:
      "a net plugin failed to initialize, or a libfabric call of it failed outside its data path: `NET/OFI Initializing plugin failed`, `NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid argument`",
    forms: [
      {
        // aws-ofi-nccl `NET/OFI aws-ofi-nccl initialization failed`, `NET/OFI Initializing plugin failed`.
        start: "NET/",
        all: ["nitializ", "failed"],
        captures: [
          { file: "nccl-pasted/43-gdr-ofi-disabled-on-p4d-plugin-init-failed-socket-fallback-iso-timestamps.log", line: 4 },
          { file: "nccl-pasted/43-gdr-ofi-disabled-on-p4d-plugin-init-failed-socket-fallback-iso-timestamps.log", line: 5 },
        ],
      },
      {
        // aws-ofi-nccl's words for a libfabric call that failed (`Couldn't open AV. RC: %d, ERROR: %s`, `Failed to set
        // FI_OPT_CUDA_API_PERMITTED. RC: -92, ERROR: Protocol not available`, `Unable to register memory ... RC: %d,
        // Error: %s`): the plugin returns an error to NCCL. Not its data path's words (`Error posting RDMA ctrl request.
        // RC: -104, Error: Connection reset by peer`, `Unable to retrieve completion queue entries. RC: -110, ...`,
        // `fi_sendmsg (eager) failed; RC: -113`): the rows below tell those by what the system said.
        start: "NET/OFI ",
        all: [" RC: "],
        none: ["posting", "completion queue", "fi_cq_read", "fi_send", "fi_recv", "failed;", "rx buffer", "receive buffer"],
        captures: [{ file: "nccl-pasted/285-efa-ofi-couldnt-open-av-rc-22-rank23-mpirun-tags-rings-via-net-aws-libfabric-no-gdrdma.log", line: 14 }],
      },
    ],
  },
  {
    kind: "collective_mismatch",
    words: "also a size mismatch on a data connection: `NET/IB : ... collective mismatch error`, `NET/Socket : ... message truncated`",
    forms: [
      {
        // size-mismatch.ts: every size mismatch NCCL 2.3-2.30 writes, with the peer where one is named. It names the
        // kind: on a data connection collective_mismatch, the bootstrap's `Message truncated : received 256 bytes
        // instead of 4` bootstrap_error.
        parser: "sizeMismatch",
        captures: [
          { file: "nccl-pasted/25-nccl-2.14.3-net-ib-collective-mismatch-local-vs-remote-size-pdsh.log", line: 2 },
          { file: "nccl-pasted/27-nccl-2.4.7-net-socket-message-truncated-markdown-bold-tf-build.log", line: 3 },
          { file: "nccl-pasted/28-nccl-2.10.3-net-socket-peer-message-truncated-quoted-wrapped.log", line: 2 },
          { file: "nccl-pasted/26-nccl-2.19.3-bootstrap-message-truncated-srun-label-prefix.log", line: 2, kind: "bootstrap_error" },
        ],
      },
      {
        // `Mismatched collective detected, please check your collective calls at and around rank 39. ...` (2.4)
        any: ["Mismatched collective"],
        fields: "mismatchRank",
        captures: [
          { file: "nccl-pasted/23-nccl-2.4-mismatched-collective-warn-four-ranks-node1.log", line: 2 },
          { file: "nccl-pasted/24-nccl-2.4.8-mismatched-collective-rank39-line-quoted-alone.log", line: 2 },
        ],
      },
    ],
  },
  {
    // Before system_error: `Net : Call to recv from X<p> failed : Connection reset by peer` names the call too.
    kind: "connection_reset",
    words: undefined,
    forms: [
      {
        any: ["Connection reset by peer"],
        fields: "socketFailure",
        captures: [
          { file: "nccl-pasted/34-nccl-2.9-illegal-memory-access-init-then-peer-connection-reset.log", line: 7 },
          { file: "nccl/73-error-2.21.5-distbackenderror-connection-reset.log", line: 5 },
        ],
      },
      {
        any: ["Broken pipe"],
        fields: "socketFailure",
        captures: [{ file: "nccl/62-error-2.14.3-broken-pipe-proxy-service-connection-closed.log", line: 2 }],
      },
    ],
  },
  {
    kind: "connection_closed",
    words: undefined,
    forms: [
      {
        // `socketProgress: Connection closed by remote peer node1<57557>`, `Net : Connection closed by remote peer X<p>`
        any: ["closed by remote peer"],
        fields: "closedPeer",
        captures: [
          { file: "nccl/64-error-socketStartConnect-abort-proxy-service-failed.log", line: 14 },
          { file: "nccl/62-error-2.14.3-broken-pipe-proxy-service-connection-closed.log", line: 9 },
        ],
      },
      {
        // Gloo's pair (`pair.cc:572] Connection closed by peer [10.128.15.205]:53666`, a gloo::IoException): only with its source.
        any: ["Connection closed by peer ["],
        all: ["/pair.cc:"],
        fields: "glooClosedPeer",
        captures: [{ file: "nccl-pasted/810-horovod-1364-gloo-controller-ioexception-connection-closed-reset-by-peer.log", line: 5 }],
      },
    ],
  },
  {
    // Before timeout: CUDA's own words may say it (`Cuda failure 'the launch timed out and was terminated'`).
    kind: "cuda_error",
    words: "a CUDA call inside NCCL failed: out of memory, illegal address, ...",
    forms: [
      {
        // `Cuda failure 'out of memory'`, `Cuda failure 700 'an illegal memory access was encountered'`
        any: ["Cuda failure "],
        fields: "cudaError",
        captures: [
          { file: "nccl-pasted/33-nccl-2.18-cuda-oom-calloc-proxy-setup-failed-peer-closed.log", line: 15 },
          { file: "nccl-pasted/34-nccl-2.9-illegal-memory-access-init-then-peer-connection-reset.log", line: 15 },
          { file: "nccl-pasted/50-nccl-2.2-old-format-no-nccl-word-invalid-device-function-mpirun-tags.log", line: 17 },
        ],
      },
      // No real capture of `CUDA failure ` is known; the form is kept as the old chain had it.
      { any: ["CUDA failure "], fields: "cudaError", captures: [] },
    ],
  },
  {
    // Before timeout: `Connect to X<p> failed : Connection timed out` is a failed connect.
    kind: "connect_failed",
    words:
      "a socket connection NCCL could not make: `Connect to 10.0.0.2<45763> failed : ...`, `Socket creation failed : ...`, 2.19+'s `exceeded error retry count`, 2.0-2.3's `Call to connect failed : Connection refused` (counted as `system_error` before)",
    forms: [
      {
        // `socketStartConnect: Connect to 10.0.0.2<45763> failed : Software caused connection abort`
        any: ["Connect to "],
        fields: "socketFailure",
        captures: [{ file: "nccl/64-error-socketStartConnect-abort-proxy-service-failed.log", line: 2 }],
      },
      {
        // 2.19+ gives up connecting after its retries: `socketPollConnect: connect returned Connection refused, exceeded
        // error retry count (35)` (to 2.26), `socketPollConnect: connect to 10.0.0.2<36085> returned Connection refused,
        // exceeded error retry count after 35 attempts` (2.27+, also `ncclOsSocketPollConnect`): the peer never answered.
        any: ["connect to ", "connect returned "],
        all: ["exceeded error retry count"],
        fields: "retriedConnect",
        // No real capture in test/fixtures/ (misc/socket.cc's format strings; the form is in public issue threads).
        captures: [],
      },
      {
        // 2.0-2.3 (include/socket.h connectAddress, before the retries of 2.4+): `Call to connect failed : Connection
        // refused`, the peer not in the words (system_error's `Call to ` form otherwise).
        any: ["Call to connect failed"],
        fields: "socketFailure",
        captures: [{ file: "nccl-pasted/421-nccl2-early-connect-refused-connection-closed-paddle.log", line: 2 }],
      },
      {
        // `Net : Socket creation failed : Address family not supported by protocol` (socket.h, 2.3-2.11): the socket
        // for a peer connection cannot even be made (an IPv6 interface where IPv6 is off, ...).
        any: ["Socket creation failed"],
        fields: "socketCreation",
        captures: [{ file: "nccl-pasted/55-mpirun-tags-8rank-ib-gdrdma-rank4-socket-creation-failed.log", line: 7 }],
      },
    ],
  },
  {
    // Before system_error: `Call to recv failed : Connection timed out` is a timeout (ibv_modify_qp's is ib_qp_error's).
    kind: "timeout",
    words: undefined,
    // No real capture of a WARN that says `timed out` or `timeout` is known (test/fixtures/ has none).
    forms: [{ any: ["timed out", "imeout"], fields: "socketFailure", captures: [] }],
  },
  {
    kind: "bootstrap_error",
    words: undefined,
    // `Bootstrap Root : rank 1 of 8 ranks has already checked in` (two processes given one rank). The bootstrap's size
    // mismatch is collective_mismatch's size-mismatch form, told before this row.
    forms: [
      {
        any: ["has already checked in"],
        all: ["ootstrap"],
        fields: "duplicateRank",
        captures: [{ file: "nccl-pasted/205-nccl-warn-bootstrap-root-rank1-already-checked-in-slurm-lightning.log", line: 17 }],
      },
      // No real capture of another bootstrap WARN is known.
      { any: ["ootstrap"], captures: [] },
    ],
  },
  {
    kind: "system_error",
    words: undefined,
    forms: [
      {
        // `[Proxy Service 0] Failed to execute operation Connect from rank 0, retcode 2`: its kind is that of its code,
        // 2 (ncclSystemError) system_error, 3 (ncclInternalError) internal_error, any other `other`, whatever else it says.
        any: ["retcode "],
        all: ["Failed to execute operation"],
        fields: "proxyRetcode",
        captures: [
          { file: "nccl/64-error-socketStartConnect-abort-proxy-service-failed.log", line: 10 },
          { file: "nccl-pasted/31-nccl-2.18-ibv-modify-qp-network-unreachable-proxy-connect-failed.log", line: 9 },
          { file: "nccl/65-error-socketFinalizeAccept-wrong-type-proxy-service.log", line: 16, kind: "internal_error" },
          { file: "nccl/62-error-2.14.3-broken-pipe-proxy-service-connection-closed.log", line: 8, kind: "other" },
        ],
      },
      {
        // `Call to ibv_create_cq failed` (ibv_modify_qp is ib_qp_error's, ibv_get_async_event ib_async_event's)
        any: ["Call to "],
        fields: "socketFailure",
        captures: [{ file: "nccl/10-init-2.7.8-roce-2node-ibv_create_cq-warn.log", line: 14 }],
      },
      // No real capture of a WARN that says `system error` is known.
      { any: ["ystem error"], fields: "socketFailure", captures: [] },
    ],
  },
  {
    kind: "internal_error",
    words: undefined,
    // Its real capture is the proxy's `retcode 3`, told by system_error's first form; no real capture of a WARN that
    // says `internal error` or `ncclInternalError` is known.
    forms: [
      { any: ["nternal error", "ncclInternalError"], captures: [] },
      {
        // `Error : no algorithm/protocol available` (2.28: `... for function AllGather with datatype ncclInt8`): the
        // algorithm or protocol forced by NCCL_ALGO / NCCL_PROTO cannot run the call; enqueue returns ncclInternalError.
        any: ["no algorithm/protocol available"],
        captures: [{ file: "nccl-pasted/287-nccl-enqueue-no-algorithm-protocol-available-collnet-forced-srun-labels-empty-hostname-megatron.log", line: 3 }],
      },
    ],
  },
  {
    kind: "invalid_usage",
    words: "NCCL was called in a way it cannot serve: `Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000`",
    forms: [
      {
        // init.cc: two ranks of one communicator on one GPU; ncclCommInitRank returns ncclInvalidUsage.
        any: ["Duplicate GPU detected"],
        fields: "sharedGpu",
        captures: [{ file: "nccl-pasted/340-horovod-mpirun-tags-duplicate-gpu-detected-invalid-usage-all-ranks-device-1000.log", line: 5 }],
      },
      {
        // init.cc: `Invalid rank requested : 2/2`: ncclCommInitRank with a rank outside [0, nranks) (a world size or rank
        // the launcher set wrong); the call returns ncclInvalidArgument.
        any: ["Invalid rank requested"],
        fields: "requestedRank",
        captures: [{ file: "nccl-pasted/561-aml-k8s-worker-net-socket-invalid-rank-requested-2-of-2.log", line: 8 }],
      },
    ],
  },
  {
    kind: "nvml_error",
    words: "NCCL could not use NVML, the driver's management library: `No NVML device handle. Skipping nvlink detection.`",
    forms: [
      {
        // graph/xml.cc: NVML could not give the GPU's handle (a driver and libnvidia-ml.so of different versions in the
        // container, a GPU NVML cannot see): NCCL goes on without NVLink detection.
        any: ["No NVML device handle"],
        captures: [{ file: "nccl-pasted/356-nccl-2.18-nvml-no-device-handle-warns.log", line: 7 }],
      },
      // misc/nvmlwrap.cc's own words (`nvmlDeviceGetHandleByPciBusId() failed: Not Found`, `Failed to open libnvidia-ml.so.1`, 2.8-2.11's `NVML failure 'Unknown Error'`):
      // no real capture in test/fixtures/.
      { any: ["nvmlDevice", "nvmlInit", "libnvidia-ml", "NVML failure"], captures: [] },
    ],
  },
] as const satisfies readonly WarnRow[];

/** A WARN's kind: a row's, or `other` for a message no row tells. */
export type WarnKind = (typeof WARN_KINDS)[number]["kind"] | "other";

type Forms = (typeof WARN_KINDS)[number]["forms"][number];

/** The readers warn.ts must have, named by the literal forms. */
export type WarnFields = Extract<Forms, { fields: string }>["fields"];

/** The sub-parsers warn.ts must have, named by the parser forms. */
export type WarnParser = Extract<Forms, { parser: string }>["parser"];

/** `NET/OFI GDR disabled on GDR-supported instance type p4d.24xlarge`: `other`, with gdrDisabled set (warn.ts). */
export const GDR_OFF_CAPTURE: WarnCapture = {
  file: "nccl-pasted/43-gdr-ofi-disabled-on-p4d-plugin-init-failed-socket-fallback-iso-timestamps.log",
  line: 2,
};

/** The real capture of NCCL 2.1's `No module present for GPU Direct RDMA.` WARN (warn.ts GDR_NO_MODULE). */
export const GDR_MODULE_CAPTURE: WarnCapture = {
  file: "nccl-pasted/242-nccl-2.1.15-old-format-warn-no-module-for-gpu-direct-rdma-roce-gid3-horovod-0.13.8.log",
  line: 2,
};
