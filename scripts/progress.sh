#!/usr/bin/env bash
# scripts/progress.sh LABEL COMMAND...: run COMMAND, and while it runs print "LABEL: still at it (Ns)" every
# PROGRESS seconds (default 20), so a long quiet install is not taken for a hang. Exits with COMMAND's status.
set -uo pipefail
label=$1
shift
every=${PROGRESS:-20}
started=$SECONDS
"$@" &
pid=$!
trap 'kill "$pid" 2>/dev/null' INT TERM
while kill -0 "$pid" 2>/dev/null; do
  for _ in $(seq "$every"); do kill -0 "$pid" 2>/dev/null && sleep 1; done
  kill -0 "$pid" 2>/dev/null && echo "$label: still at it ($((SECONDS - started))s)"
done
wait "$pid"
status=$?
echo "$label: done in $((SECONDS - started))s"
exit "$status"
