#!/bin/bash
# rounds.sh OUT N PHASE NAME=BINARY... [-- BENCH FLAGS]
#
# Runs the bench binaries (each built from a commit of its own) in N rounds:
# each binary once per round, a fresh process each run, the order rotated by
# one each round, so that the builds share the machine's slow and fast
# spells. Logs go to OUT/r<round>-<name>.log, the load before each run to
# OUT/load.txt. ratios.py compares the builds round by round.
#
#   rounds.sh /tmp/cmp 24 create before=/tmp/b/before head=/tmp/b/head
#   rounds.sh /tmp/cmpw 20 watch before=/tmp/b/before head=/tmp/b/head -- -watch-writes 4000
set -euo pipefail
out=$1 n=$2 phase=$3
shift 3
arms=() extra=()
while [ $# -gt 0 ]; do
  if [ "$1" = -- ]; then shift; extra=("$@"); break; fi
  arms+=("$1"); shift
done
k=${#arms[@]}
mkdir -p "$out"
for ((r = 1; r <= n; r++)); do
  echo "round $r $(date -u +%T) $(cat /proc/loadavg)" >> "$out/load.txt"
  for ((i = 0; i < k; i++)); do
    a=${arms[$(((i + r - 1) % k))]}
    "${a#*=}" -run "$phase" "${extra[@]}" > "$out/r$r-${a%%=*}.log" 2>&1
  done
done
