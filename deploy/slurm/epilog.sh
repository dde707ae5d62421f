#!/bin/sh
# Slurm Epilog: after each job, `ringwatch check` judges the node. Unhealthy (exit 1) or not
# checkable (exit 2): the node is drained with the first failing check as the reason
# (`sinfo -R`), and the epilog exits 0, so that Slurm does not drain it a second time as
# "Epilog error". If scontrol cannot drain it, the epilog exits 1 and Slurm drains it anyway.
# slurm.conf: Epilog=/etc/slurm/epilog.d/ringwatch.sh (or a line in your existing epilog).
# Flags, checks and the file of expectations: docs/check.md.
#
#   RINGWATCH             the binary (default /usr/bin/ringwatch)
#   RINGWATCH_CHECK_FILE  the expectations (default /etc/ringwatch/check.yaml; empty: none)
#   RINGWATCH_CHECK_ARGS  more flags, split on spaces (e.g. --no-collector.kmsg)
#   SCONTROL              scontrol (default: scontrol on PATH)
set -u
PATH=${PATH:-/usr/sbin:/usr/bin:/sbin:/bin}
RINGWATCH=${RINGWATCH:-/usr/bin/ringwatch}
CHECK_FILE=${RINGWATCH_CHECK_FILE-/etc/ringwatch/check.yaml}
SCONTROL=${SCONTROL:-scontrol}
node=${SLURMD_NODENAME:-$(hostname -s)}

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
  exit 0
fi
echo "ringwatch epilog: scontrol could not drain $node ($reason)" >&2
exit 1
