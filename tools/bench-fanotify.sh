#!/usr/bin/env bash
# The Linux collector under a file-heavy load: several shell processes each
# write and read back many small files (bash builtins, so no process start
# per file) while `etwaudit collect` records them. Prints events captured
# per second, the collector's CPU time per event and the kernel queue
# overflows (events fanotify dropped before we could read them).
#
#   sudo bash tools/bench-fanotify.sh [--workers N] [--files N] [--rounds N] [--etwaudit PATH]
#
# Defaults: 4 workers x 500 files x 50 rounds, each round one write and one
# read of every file: 100,000 writes and 100,000 reads, 200,000 in all.
set -euo pipefail
cd "$(dirname "$0")/.."
workers=4 files=500 rounds=50 etwaudit=build/etwaudit
while (($#)); do
  case $1 in
    --workers) workers=$2; shift ;;
    --etwaudit) etwaudit=$2; shift ;;
    --files) files=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    *) echo "bench-fanotify: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[[ $(id -u) -eq 0 ]] || { echo "bench-fanotify: needs root (fanotify)" >&2; exit 1; }

scratch=$(mktemp -d "$PWD/.bench-fanotify.XXXXXX")
trap 'kill $collector_pid 2>/dev/null || true; rm -rf "$scratch"' EXIT
mkdir "$scratch/work"
"$etwaudit" collect --source fanotify --db "$scratch/audit.db" --mount "$scratch/work" --quiet 2>"$scratch/collect.txt" &
collector_pid=$!
sleep 1.5

worker() {
  local dir=$scratch/work/w$1 round i line
  mkdir "$dir"
  for ((round = 0; round < rounds; round++)); do
    for ((i = 0; i < files; i++)); do
      echo "round $round" >"$dir/$i"
      read -r line <"$dir/$i"
    done
  done
}
ticks() { awk '{print $14 + $15}' "/proc/$collector_pid/stat"; }
cpu_before=$(ticks)
started=$(date +%s%N)
pids=()
for ((w = 0; w < workers; w++)); do worker "$w" & pids+=($!); done
wait "${pids[@]}"
workload_ns=$(($(date +%s%N) - started))
# Let the collector catch up, then take its CPU time before it stops.
sleep 2
cpu_ticks=$(($(ticks) - cpu_before))
kill -TERM "$collector_pid"
wait "$collector_pid"
events=$(sqlite3 "$scratch/audit.db" "SELECT count(*) FROM events e JOIN files f USING (file_id) WHERE f.path LIKE '$scratch/work/%'")
lost=$(sqlite3 "$scratch/audit.db" "SELECT events_lost FROM collector_runs")
dropped=$(sqlite3 "$scratch/audit.db" "SELECT events_dropped FROM collector_runs")
hz=$(getconf CLK_TCK)
writes=$((workers * files * rounds))
awk -v events="$events" -v ns="$workload_ns" -v ticks="$cpu_ticks" -v hz="$hz" -v writes="$writes" \
    -v lost="$lost" -v dropped="$dropped" 'BEGIN {
  printf "workload: %d file writes and %d reads in %.2f s (%.0f file operations/s)\n", writes, writes, ns / 1e9, 2 * writes / (ns / 1e9)
  printf "captured: %d events, %.0f events/s while the workload ran\n", events, events / (ns / 1e9)
  printf "collector CPU: %.2f s, %.2f us per event\n", ticks / hz, events ? ticks / hz * 1e6 / events : 0
  printf "kernel queue overflows: %d, queue drops: %d\n", lost, dropped
}'
sed 's/^/collector: /' "$scratch/collect.txt"
