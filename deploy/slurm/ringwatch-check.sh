#!/bin/sh
# Slurm Prolog and Epilog: `ringwatch check` judges the node before a job starts and after it
# ends. Unhealthy (exit 1) or not checkable (exit 2): the node is drained with the first failing
# check as the reason (`sinfo -R`).
#   Prolog: then exit 1; a prolog that fails makes Slurm drain the node and requeue the job (a batch
#     job; docs/check.md says what Slurm then shows as the reason). Healthy: exit 0, the job starts.
#   Epilog: then exit 0, so that Slurm does not drain it a second time as "Epilog error"; if
#     scontrol cannot drain it, exit 1 and Slurm drains it anyway.
# slurm.conf: Prolog=/etc/slurm/ringwatch-check.sh, Epilog=/etc/slurm/ringwatch-check.sh and
# PrologFlags=Alloc (the prolog runs when the job is allocated, not at its first step). Which one
# runs is Slurm's SLURM_SCRIPT_CONTEXT (prolog_slurmd, epilog_slurmd), or the first argument
# (prolog, epilog) where the script is called from another. Flags and checks: docs/check.md.
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

case "${1:-${SLURM_SCRIPT_CONTEXT:-}}" in
  prolog*) stage=prolog ;;
  epilog*) stage=epilog ;;
  *)
    echo "ringwatch-check.sh: run as a Slurm Prolog or Epilog (SLURM_SCRIPT_CONTEXT), or with prolog or epilog as argument" >&2
    exit 2
    ;;
esac

# The reason: "ringwatch: <check>: <message>" of the first FAIL line (exit 1) or ERROR line
# (exit 2), "(+N more)" when there are more; else the last line said (a bad flag, a missing binary).
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
if "$SCONTROL" update nodename="$node" state=drain reason="$reason"; then
  [ "$stage" = epilog ] && exit 0
  exit 1
fi
echo "ringwatch $stage: scontrol could not drain $node ($reason)" >&2
exit 1
