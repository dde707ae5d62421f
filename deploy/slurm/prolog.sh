#!/bin/sh
# Slurm Prolog: before a job starts on the node, `ringwatch check` judges it. Unhealthy (exit 1)
# or not checkable (exit 2): the prolog sets the drain reason to the first failing check with
# scontrol and exits 1; a prolog that fails makes Slurm drain the node and requeue the job (a
# batch job; see docs/check.md for what Slurm then shows as the reason). Healthy: exit 0, the job
# starts. slurm.conf: Prolog=/etc/slurm/prolog.d/ringwatch.sh, with PrologFlags=Alloc to run it
# when the job is allocated rather than at its first step. Flags and checks: docs/check.md.
#
#   RINGWATCH             the binary (default /usr/bin/ringwatch)
#   RINGWATCH_CHECK_FILE  the expectations (default /etc/ringwatch/check.yaml; empty: none)
#   RINGWATCH_CHECK_ARGS  more flags, split on spaces (e.g. --check.timeout=20s)
#   SCONTROL              scontrol (default: scontrol on PATH)
set -u
PATH=${PATH:-/usr/sbin:/usr/bin:/sbin:/bin}
RINGWATCH=${RINGWATCH:-/usr/bin/ringwatch}
CHECK_FILE=${RINGWATCH_CHECK_FILE-/etc/ringwatch/check.yaml}
SCONTROL=${SCONTROL:-scontrol}
node=${SLURMD_NODENAME:-$(hostname -s)}

# The reason, as in epilog.sh: the first FAIL (exit 1) or ERROR (exit 2) line, "(+N more)".
reason_of() {
  awk -v rc="$1" '
    ($1 == "FAIL" && rc == 1) || ($1 == "ERROR" && rc == 2) {
      n++
      if (n == 1) { msg = $0; sub(/^[A-Z]+ +[^ ]+ +/, "", msg); first = $2 ": " msg }
    }
    NF { last = $0 }
    END {
      r = n == 0 ? last : "ringwatch: " first (n > 1 ? " (+" (n - 1) " more)" : "")
      print substr(r, 1, 240)
    }'
}

set -- check
if [ -n "$CHECK_FILE" ]; then set -- "$@" "--check.file=$CHECK_FILE"; fi
# shellcheck disable=SC2086 # split on spaces on purpose
set -- "$@" ${RINGWATCH_CHECK_ARGS:-}

out=$("$RINGWATCH" "$@" 2>&1)
rc=$?
[ "$rc" -eq 0 ] && exit 0
printf '%s\n' "$out" >&2
reason=$(printf '%s\n' "$out" | reason_of "$rc")
"$SCONTROL" update nodename="$node" state=drain reason="$reason" || echo "ringwatch prolog: scontrol could not set the reason ($reason)" >&2
exit 1
