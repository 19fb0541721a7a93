#!/usr/bin/env bash
# What the eBPF source costs: dd reads a cached file in 512-byte blocks
# (one read system call per block, its write to /dev/null left out in the
# kernel), first with no collector, then with `collect --source ebpf`
# recording it. Prints the time each read took more while recorded, the
# collector's CPU per event, the events per second it took and what it lost;
# then the time each read takes more when --exclude-path leaves the file out
# (in the kernel, at its open).
#
#   sudo bash tools/bench-ebpf.sh ETWAUDIT [BLOCKS]   (default 400000)
set -euo pipefail
me=bench-ebpf
source "$(dirname "$0")/lib.sh"
exe=$(realpath "$1")
blocks=${2:-400000}
skip_unless_root "loading eBPF programs"
require_tools sqlite3 dd
work=$(mktemp -d)
collector=
trap 'if [[ -n "$collector" ]]; then kill $collector 2>/dev/null; wait $collector 2>/dev/null || true; fi; rm -rf "$work"' EXIT
dd if=/dev/zero of="$work/data.bin" bs=512 count="$blocks" status=none
ticks=$(getconf CLK_TCK)

# Seconds dd takes to read the file, best of three.
read_time() {
  local best=1000000 t
  for _ in 1 2 3; do
    t=$( { TIMEFORMAT=%R; time dd if="$work/data.bin" of=/dev/null bs=512 status=none; } 2>&1 )
    best=$(python3 -c "print(min($best, $t))")
  done
  echo "$best"
}
cpu_seconds() {  # utime + stime of a process
  awk -v t="$ticks" '{ print ($14 + $15) / t }' "/proc/$1/stat"
}

bare=$(read_time)
"$exe" collect --source ebpf --db "$work/audit.db" --quiet --coalesce-ms 0 2> "$work/collect.err" &
collector=$!
for _ in $(seq 100); do grep -q "watching" "$work/collect.err" 2>/dev/null && break; sleep 0.1; done
sleep 0.5
cpu_before=$(cpu_seconds $collector)
started=$(date +%s.%N)
traced=$(read_time)
sleep 1
cpu_after=$(cpu_seconds $collector)
ended=$(date +%s.%N)
kill -INT $collector
wait $collector
collector=
q() { sqlite3 "$work/audit.db" "$1"; }
reads=$(q "SELECT count(*) FROM v_events WHERE path = '$work/data.bin' AND op = 'read'")
events=$(q "SELECT events_received FROM collector_runs")
lost=$(q "SELECT events_lost + events_dropped FROM collector_runs")
"$exe" collect --source ebpf --db "$work/filtered.db" --exclude-path "$work/*" --quiet --coalesce-ms 0 \
  2> "$work/filtered.err" &
collector=$!
for _ in $(seq 100); do grep -q "watching" "$work/filtered.err" 2>/dev/null && break; sleep 0.1; done
sleep 0.5
left_out=$(read_time)
kill -INT $collector
wait $collector
collector=
excluded=$(sqlite3 "$work/filtered.db" "SELECT events_excluded FROM collector_runs")
python3 - "$bare" "$traced" "$blocks" "$reads" "$events" "$cpu_before" "$cpu_after" "$lost" "$left_out" "$excluded" <<'PY'
import sys
bare, traced, blocks, reads, events, cpu0, cpu1, lost, left_out, excluded = sys.argv[1:]
bare, traced, cpu = float(bare), float(traced), float(cpu1) - float(cpu0)
syscalls = 2 * int(blocks) + 20  # a read and a write per block
print(f"dd, {blocks} blocks of 512 bytes: {bare:.2f} s alone, {traced:.2f} s recorded (best of 3 each)")
print(f"added per system call of dd (its reads and its writes to /dev/null): "
      f"{(traced - bare) / syscalls * 1e6:.2f} us; per recorded read: {(traced - bare) / int(blocks) * 1e6:.2f} us")
print(f"recorded: {reads} reads of the file ({3 * int(blocks)} made in 3 runs), {events} events in all, "
      f"{int(events) / traced / 3:.0f} events/s while dd ran")
print(f"collector CPU: {cpu:.2f} s, {cpu / max(int(events), 1) * 1e6:.2f} us per event; lost or dropped: {lost}")
print(f"the file left out by --exclude-path: {float(left_out):.2f} s, added per read "
      f"{(float(left_out) - bare) / int(blocks) * 1e6:.2f} us; {excluded} events reached the collector to be excluded")
PY
