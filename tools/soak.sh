#!/usr/bin/env bash
# Weeks of unattended collection compressed into minutes: the store must stay
# under its size cap, keep every total exact through pruning, and answer
# queries throughout (etwaudit-bench --soak; see its --help).
#
#   bash tools/soak.sh            60 simulated days at a mean 10 events/s (52 M events, about 10 minutes)
#   bash tools/soak.sh --quick    14 simulated days at a mean 2 events/s (2.4 M events, about a minute)
#
# Extra arguments go to etwaudit-bench (e.g. --max-size 64MB --keep 7d). It
# prints the database size by simulated day, events/s with retention on and
# off, the longest prune transaction and the longest wait of another
# connection for the write lock, report times at the end and a recount of
# every total; exit status 1 when the size cap, a total or a query failed.
set -euo pipefail
cd "$(dirname "$0")/.."

days=60 rate=10 cap=128MB keep=14d
if [[ ${1:-} == --quick ]]; then
  shift
  days=14 rate=2 cap=32MB keep=7d
fi
[[ -x build/etwaudit-bench ]] || bash tools/setup.sh
exec build/etwaudit-bench --soak "$days" --rate "$rate" --keep "$keep" --max-size "$cap" "$@"
