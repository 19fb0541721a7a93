#!/usr/bin/env bash
# Puts the collector through what a database meets in real use and checks
# that nothing it received goes missing and the database stays sound:
#
#   locks    another connection holds the write lock mid-run (the sqlite3
#            shell's BEGIN IMMEDIATE; a browser's unsaved change: BEGIN, an
#            INSERT, then nothing); a stop arrives while it is held
#   crash    SIGKILL at random moments of a heavy ingest, several batch sizes
#   disk     the database's filesystem fills up (a small tmpfs)
#   readers  query loops and a reader holding a snapshot during ingest
#   soak     a long steady ingest while memory and descriptors are sampled
#
# and prints one line per check: what was tried, whether what should hold
# held, and the figures. After every run: received = written + dropped +
# excluded, and the rollups (activity, segments, minute_totals) equal a
# recount of the events.
#
#   sudo bash tools/reliability.sh [--quick] [--only SECTION,...] [--seed N] [--etwaudit PATH]
#
# --quick takes about four minutes (shorter locks, fewer kills, a one-minute
# soak); the full form about twenty. Without root the live (fanotify) cases
# and the disk-full case are skipped and say why. Exits 1 when anything did
# not hold.
set -euo pipefail
cd "$(dirname "$0")/.."
me=reliability
source tools/lib.sh

quick=0
only=locks,crash,disk,readers,soak
seed=$(( $(date +%s) % 32768 ))
etwaudit=build/etwaudit
while (($#)); do
  case $1 in
    --quick) quick=1 ;;
    --only) only=$2; shift ;;
    --seed) seed=$2; shift ;;
    --etwaudit) etwaudit=$2; shift ;;
    *) echo "reliability: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
require_tools sqlite3 python3 "$etwaudit"
is_root=0
[[ $(id -u) -eq 0 ]] && is_root=1

if ((quick)); then
  lock_seconds=(1 10) kills=6 crash_events=300000 snapshot_seconds=10 soak_seconds=60
else
  lock_seconds=(1 10 60) kills=20 crash_events=1000000 snapshot_seconds=60 soak_seconds=600
fi
crash_batch_sizes=(1000 20000 100000)

# The scratch folder is on the filesystem of the current directory: fanotify
# watches a block-device filesystem, and /tmp may be tmpfs.
scratch=$(mktemp -d "$PWD/.reliability.XXXXXX")
started_pids=()  # everything this script starts in the background
full_mount=
cleanup() {
  local pid
  for pid in "${started_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [[ -n $full_mount ]] && umount "$full_mount" 2>/dev/null
  [[ -n ${KEEP_SCRATCH:-} ]] || rm -rf "$scratch"
}
trap cleanup EXIT

# --- results ------------------------------------------------------------------

results=()
failures=0
# report yes|NO|skipped WHAT_WAS_TRIED WHY_NOT FIGURES
report() {
  local held=$1
  [[ -n $3 ]] && held+=": $3"
  results+=("$2"$'\t'"$held"$'\t'"$4")
  [[ $1 == NO ]] && failures=$((failures + 1))
  echo "reliability: $2: $held ($4)" >&2
}

print_table() {
  local row tried held figures
  printf '%-50s  %-40s  %s\n' "what was tried" "what held" "figures"
  printf '%-50s  %-40s  %s\n' "$(printf '%.0s-' {1..50})" "$(printf '%.0s-' {1..40})" "$(printf '%.0s-' {1..40})"
  for row in "${results[@]}"; do
    IFS=$'\t' read -r tried held figures <<<"$row"
    printf '%-50s  %-40s  %s\n' "$tried" "$held" "$figures"
  done
}

# A list of what did not hold, joined with "; " into the variable named $1.
fail() { local -n list=$1; list+="${list:+; }$2"; }

# --- helpers ------------------------------------------------------------------

now() { date +%s.%N; }
# True while PID runs (a process that exited but was not waited for yet does not).
alive() { [[ -r /proc/$1/status ]] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
# How long the run of NAME took, as the collector said.
run_seconds() { sed -n 's/.* ended after \([0-9.]*\) s:.*/\1/p' "$scratch/$1.err"; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
query_db() { sqlite3 -readonly "$@"; }

# Events of the replay input: N of them in FILE.jsonl, and EXPECTED.tsv as
# prefix_matches reads them back.
make_input() { python3 tools/reliability-events.py file "$@"; }

# Starts a steady feed of RATE events/s for SECONDS (times over SPAN s) into
# the FIFO $scratch/NAME.fifo; sets feed_pid.
start_feed() {
  local fifo=$scratch/$1.fifo
  mkfifo "$fifo"
  python3 tools/reliability-events.py steady "$2" "$3" "$4" >"$fifo" &
  feed_pid=$!
  started_pids+=("$feed_pid")
}

# Starts `etwaudit collect` on $scratch/NAME.db in the background, its
# messages in $scratch/NAME.err; SOURCE "live" is fanotify. Sets collector_pid.
start_collector() {
  local name=$1 source=$2
  shift 2
  [[ $source == live ]] && source=--source=fanotify || source="--source=$source"
  "$etwaudit" collect $source --db "$scratch/$name.db" --quiet "$@" 2>"$scratch/$name.err" &
  collector_pid=$!
  started_pids+=("$collector_pid")
}

# Waits for the live collector of NAME to have its marks in place.
wait_watching() {
  local i
  for ((i = 0; i < 100; i++)); do
    grep -q 'watching' "$scratch/$1.err" 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

# Waits until DB has a run record a reader can see.
wait_for_run() {
  local i
  for ((i = 0; i < 200; i++)); do
    [[ $(query_db "$1" "SELECT count(*) FROM collector_runs" 2>/dev/null) -ge 1 ]] 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

# Writes and reads back small files in DIR with bash builtins until the file
# DIR.stop appears: a steady stream of file events for a live collector.
file_workload() {
  local dir=$1 i line
  mkdir -p "$dir"
  while [[ ! -e $dir.stop ]]; do
    for ((i = 0; i < 100; i++)); do
      echo "line $i" >"$dir/$i"
      read -r line <"$dir/$i"
    done
  done
}

# The counts of the collector's closing summary in NAME.err:
# "received written dropped lost excluded", excluded with etwaudit's own.
summary_counts() {
  local counts
  counts=$(sed -n 's/^  received \([0-9,]*\), written \([0-9,]*\), dropped \([0-9,]*\), lost by source \([0-9,]*\), excluded \([0-9,]*\), own \([0-9,]*\).*/\1 \2 \3 \4 \5 \6/p' \
    "$scratch/$1.err" | tr -d ,)
  [[ -n $counts ]] || return 0
  local received written dropped lost excluded own
  read -r received written dropped lost excluded own <<<"$counts"
  echo "$received $written $dropped $lost $((excluded + own))"
}

# received = written + dropped + excluded (+ own) in the summary of NAME and in the
# record of run RUN; says what does not add up into the list named $3.
check_counts_add_up() {
  local name=$1 run=$2 received written dropped lost excluded
  read -r received written dropped lost excluded <<<"$(summary_counts "$name")"
  if [[ -z $received ]]; then
    fail "$3" "no summary"
  elif ((received != written + dropped + excluded)); then
    fail "$3" "summary: received $received != written $written + dropped $dropped + excluded $excluded"
  fi
  local record
  record=$(query_db "$scratch/$name.db" "SELECT events_received - events_written - events_dropped - events_excluded - events_own
                                          FROM collector_runs WHERE run_id = $run AND stopped_at IS NOT NULL")
  if [[ -z $record ]]; then
    fail "$3" "run record $run not closed"
  elif ((record != 0)); then
    fail "$3" "run record: received - written - dropped - excluded - own = $record"
  fi
}

# The rollups the writer keeps against a recount of the events. Prints
# "activity_rows_differing segments_differing minute_totals_differing
# events events_in_segments events_written_by_runs"; all is well when the
# first three are 0 and the last three are equal.
#
# The writer keeps activity, segments and minute_totals in the same
# transaction as the events (sql/0001_initial.sql, sql/0002_minute_totals.sql).
# A new rollup or a new kind of event row is one more term here:
# event_weight is what one events row counts for (a coalesced row, its
# count; an operation that failed counts only in activity.failed, sql/0005),
# activity_columns the
# per-operation columns of activity ("op count_column bytes_column", - when
# the operation's sizes are not summed).
event_weight="coalesce(e.count, 1)"
done_weight="CASE WHEN e.status IS NULL THEN $event_weight ELSE 0 END"
activity_columns=(
  "0 reads read_bytes" "1 writes write_bytes" "2 opens -" "3 closes -" "4 cleanups -" "5 creates -"
  "6 deletes -" "7 renames -" "8 set_infos -" "9 flushes -" "10 disk_reads disk_read_bytes"
  "11 disk_writes disk_write_bytes" "12 close_writes -"
)
recount() {
  local db=$1 spec op count bytes stored recounted
  local size="max(coalesce(e.size, 0), 0)" time="coalesce(e.ts, e.id)"
  local sums="sum($done_weight) AS events, sum($event_weight) - sum($done_weight) AS failed, min(e.id) AS first_id,
              max(e.id) AS last_id" columns=(events failed first_id last_id)
  for spec in "${activity_columns[@]}"; do
    read -r op count bytes <<<"$spec"
    columns+=("$count") sums+=", sum(CASE WHEN e.op = $op THEN $done_weight ELSE 0 END) AS $count"
    [[ $bytes == - ]] && continue
    columns+=("$bytes") sums+=", sum(CASE WHEN e.op = $op AND e.status IS NULL THEN $size ELSE 0 END) AS $bytes"
  done
  stored=$(printf ', a.%s' "${columns[@]}") recounted=$(printf ', r.%s' "${columns[@]}")
  # A differing row is missing on one side or has other values: rows on both
  # sides minus twice the rows that agree.
  query_db -separator ' ' "$db" "
    CREATE TEMP TABLE r_activity AS
      SELECT s.segment_id, e.process_id, e.file_id, $sums
      FROM segments s JOIN events e ON e.id BETWEEN s.first_id AND s.last_id
      GROUP BY s.segment_id, e.process_id, e.file_id;
    CREATE TEMP TABLE r_segments AS
      SELECT s.segment_id, min($time) / 3600000000000 AS hour, min(e.id) AS first_id, max(e.id) AS last_id,
             min($time) AS min_time, max($time) AS max_time, count(*) AS events
      FROM segments s JOIN events e ON e.id BETWEEN s.first_id AND s.last_id GROUP BY s.segment_id;
    CREATE TEMP TABLE r_minutes AS
      SELECT $time / 60000000000 AS minute, e.op, sum($event_weight) AS events, sum($size) AS bytes
      FROM events e WHERE e.status IS NULL GROUP BY 1, 2;
    SELECT
      (SELECT count(*) FROM r_activity) + (SELECT count(*) FROM activity) - 2 * (SELECT count(*) FROM r_activity r
        JOIN activity a USING (segment_id, process_id, file_id) WHERE (${stored#, }) = (${recounted#, })),
      (SELECT count(*) FROM r_segments) + (SELECT count(*) FROM segments) - 2 * (SELECT count(*) FROM r_segments r
        JOIN segments s USING (segment_id) WHERE (r.hour, r.first_id, r.last_id, r.min_time, r.max_time, r.events)
                                                = (s.hour, s.first_id, s.last_id, s.min_time, s.max_time, s.events)),
      (SELECT count(*) FROM r_minutes) + (SELECT count(*) FROM minute_totals) - 2 * (SELECT count(*) FROM r_minutes r
        JOIN minute_totals m USING (minute, op) WHERE (r.events, r.bytes) = (m.events, m.bytes)),
      (SELECT coalesce(sum($event_weight), 0) FROM events e), (SELECT count(*) FROM events),
      (SELECT coalesce(sum(events), 0) FROM segments), (SELECT coalesce(sum(events_written), 0) FROM collector_runs);"
}

# integrity_check and the recount of DB; says what is wrong into the list $2.
check_database() {
  local integrity figures activity segments minutes events in_segments written
  integrity=$(query_db "$1" "PRAGMA integrity_check" 2>&1 | sed -n '1,3p' | tr '\n' ' ')
  [[ $integrity == "ok " ]] || { fail "$2" "integrity_check: $integrity"; return; }
  figures=$(recount "$1" 2>&1) || { fail "$2" "recount failed: $figures"; return; }
  read -r activity segments minutes events rows in_segments written <<<"$figures"
  ((activity == 0)) || fail "$2" "$activity activity rows differ from a recount"
  ((segments == 0)) || fail "$2" "$segments segments differ from a recount"
  ((minutes == 0)) || fail "$2" "$minutes minute_totals rows differ from a recount"
  ((rows == in_segments)) || fail "$2" "$rows event rows but segments count $in_segments"
  ((events == written)) || fail "$2" "$events events but runs say $written written"
}

# The events of DB, in id order, are the first lines of EXPECTED.tsv.
prefix_matches() {
  local count
  count=$(query_db "$1" "SELECT count(*) FROM events")
  cmp -s <(head -n "$count" "$2") <(query_db -separator $'\t' "$1" "
    SELECT coalesce(e.ts, e.id), p.pid, o.name, f.path, e.offset, e.size
    FROM events e JOIN processes p USING (process_id) JOIN ops o USING (op) JOIN files f USING (file_id)
    ORDER BY e.id")
}

# Holds DB's write lock for SECONDS as the sqlite3 shell would (immediate) or
# as a browser with an unsaved edit would (browser), then rolls back.
hold_write_lock() {
  local take="BEGIN IMMEDIATE;"
  [[ $3 == browser ]] && take="BEGIN; INSERT INTO ops (op, name, description) VALUES (99, 'edited', 'an unsaved change');"
  sqlite3 -bail "$1" ".timeout 10000" "$take" ".print locked" ".shell sleep $2" "ROLLBACK;"
}

# From the collector's warnings in NAME.err: "seconds_it_said dropped_it_said",
# or nothing when it did not wait long enough to warn.
lock_warning() {
  sed -n 's/.*the database was locked for \([0-9.]*\) s; writing resumed (\([0-9,]*\) events dropped meanwhile).*/\1 \2/p' \
    "$scratch/$1.err" | tr -d , | tail -1
}

# --- 1. locks -----------------------------------------------------------------

# A replayed steady stream (20,000 events/s) while another connection holds
# the write lock for SECONDS; replay input is never dropped (the reader waits),
# so every event fed must be written.
lock_during_replay() {
  local seconds=$1 mode=$2 name=lock-$2-$1 rate=20000 lead=3 tail=4 problems= figures= rc=0
  local fed=$((rate * (lead + seconds + tail)))
  start_feed "$name" "$rate" $((lead + seconds + tail)) $((lead + seconds + tail))
  start_collector "$name" "replay:$scratch/$name.fifo"
  sleep "$lead"
  hold_write_lock "$scratch/$name.db" "$seconds" "$mode" >"$scratch/$name.lock" 2>&1 ||
    fail problems "the lock holder failed: $(tr '\n' ' ' <"$scratch/$name.lock")"
  wait "$collector_pid" || rc=$?
  ((rc == 0)) || fail problems "collector exit $rc: $(grep -v '^  ' "$scratch/$name.err" | tail -2 | tr '\n' ' ')"
  local said dropped written
  read -r said dropped <<<"$(lock_warning "$name")"
  written=$(query_db "$scratch/$name.db" "SELECT events_written FROM collector_runs WHERE run_id = 1")
  ((written == fed)) || fail problems "$fed fed, $written written"
  check_counts_add_up "$name" 1 problems
  check_database "$scratch/$name.db" problems
  if [[ -n $said ]]; then
    grep -q 'the database is locked by another connection.*waiting' "$scratch/$name.err" ||
      fail problems "no warning when the wait began"
    awk -v s="$said" -v h="$seconds" 'BEGIN { exit !(s >= h - 2.5 && s <= h + 0.5) }' ||
      fail problems "it said it waited $said s for a $seconds s lock"
    figures="warned: locked for $said s"
  elif ((seconds >= 5)); then
    fail problems "no warning for a $seconds s lock"
  else
    figures="no warning (shorter than one lock attempt, 1 s, plus the batch delay)"
  fi
  local what="lock $seconds s (BEGIN IMMEDIATE), replay"
  [[ $mode == browser ]] && what="browser edit held $seconds s (BEGIN; INSERT), replay"
  report "$([[ -z $problems ]] && echo yes || echo NO)" "$what" "$problems" \
    "fed $fed, written $written, dropped ${dropped:-0}; $figures"
}

# A live collector with a small queue under a steady file workload, while a
# browser-like connection holds an uncommitted change: events that do not fit
# are dropped, and every drop is counted.
lock_during_live() {
  local seconds=$1 name=lock-live problems= rc=0
  if ((!is_root)); then
    report skipped "browser edit held ${seconds} s, live fanotify" "fanotify needs root" "-"
    return
  fi
  mkdir -p "$scratch/$name"
  start_collector "$name" live --mount "$scratch/$name" --queue-size 4096
  wait_watching "$name" || fail problems "the collector did not start watching"
  file_workload "$scratch/$name/files" &
  local workload_pid=$!
  started_pids+=("$workload_pid")
  sleep 2
  hold_write_lock "$scratch/$name.db" "$seconds" browser >"$scratch/$name.lock" 2>&1 ||
    fail problems "the lock holder failed: $(tr '\n' ' ' <"$scratch/$name.lock")"
  sleep 2
  touch "$scratch/$name/files.stop"
  wait "$workload_pid"
  sleep 1
  kill -TERM "$collector_pid"
  wait "$collector_pid" || rc=$?
  ((rc == 0)) || fail problems "collector exit $rc"
  local said dropped_said received written dropped excluded
  read -r said dropped_said <<<"$(lock_warning "$name")"
  if [[ -z $said ]]; then
    fail problems "no warning that it waited"
  else
    awk -v s="$said" -v h="$seconds" 'BEGIN { exit !(s >= h - 2.5 && s <= h + 0.5) }' ||
      fail problems "it said it waited $said s for a $seconds s lock"
  fi
  check_counts_add_up "$name" 1 problems
  check_database "$scratch/$name.db" problems
  IFS='|' read -r received written dropped excluded <<<"$(query_db "$scratch/$name.db" \
    "SELECT events_received, events_written, events_dropped, events_excluded FROM collector_runs WHERE run_id = 1")"
  ((dropped >= ${dropped_said:-0})) || fail problems "the warning said $dropped_said dropped, the record $dropped"
  report "$([[ -z $problems ]] && echo yes || echo NO)" "browser edit held $seconds s, live fanotify, queue 4096" \
    "$problems" "received $received, written $written, dropped $dropped, excluded $excluded; warned: locked for ${said:-?} s, ${dropped_said:-?} dropped meanwhile"
}

# A stop (SIGTERM) while another connection keeps the lock longer than the
# collector waits at a stop (10 s for the last batch, 10 s for the run record):
# it must end with exit 1 and say so, count what it could not write as
# dropped, and the next run must mark the run interrupted.
stop_while_locked() {
  local hold=25 name=lock-stop problems= rc=0 rate=20000
  start_feed "$name" "$rate" 60 60
  start_collector "$name" "replay:$scratch/$name.fifo"
  sleep 3
  hold_write_lock "$scratch/$name.db" "$hold" immediate >"$scratch/$name.lock" 2>&1 &
  local holder_pid=$!
  started_pids+=("$holder_pid")
  sleep 2
  local stopping
  stopping=$(now)
  kill -TERM "$collector_pid"
  wait "$collector_pid" || rc=$?
  local took
  took=$(elapsed "$stopping")
  ((rc == 1)) || fail problems "exit $rc, expected 1"
  grep -q 'still locked by another connection' "$scratch/$name.err" || fail problems "no message saying it gave up waiting"
  local received written dropped lost excluded
  read -r received written dropped lost excluded <<<"$(summary_counts "$name")"
  if [[ -z $received ]] || ((received != written + dropped + excluded)); then
    fail problems "summary does not add up: received $received, written $written, dropped $dropped, excluded $excluded"
  fi
  wait "$holder_pid" || fail problems "the lock holder failed"
  local record
  record=$(query_db "$scratch/$name.db" "SELECT coalesce(exit_reason, 'open') FROM collector_runs WHERE run_id = 1")
  "$etwaudit" collect --source replay:tools/sample/events.jsonl --db "$scratch/$name.db" --quiet 2>/dev/null ||
    fail problems "the next run failed"
  local marked
  marked=$(query_db "$scratch/$name.db" "SELECT exit_reason FROM collector_runs WHERE run_id = 1")
  [[ $record != open || $marked == interrupted* ]] || fail problems "the next run left run 1 as '$marked'"
  check_database "$scratch/$name.db" problems
  report "$([[ -z $problems ]] && echo yes || echo NO)" "SIGTERM during a $hold s lock, replay" "$problems" \
    "exit $rc after $took s; received $received = written $written + dropped $dropped + excluded $excluded; run record: ${record%% (*} -> next run: ${marked%% (*}"
}

section_locks() {
  local seconds
  for seconds in "${lock_seconds[@]}"; do lock_during_replay "$seconds" immediate; done
  lock_during_replay 10 browser
  lock_during_live 10
  stop_while_locked
}

# --- 2. crash -----------------------------------------------------------------

crash_input=$scratch/crash.jsonl
crash_expected=$scratch/crash.tsv
ingest_seconds=  # how long the uninterrupted ingest of crash_input took

section_crash() {
  [[ -e $crash_input ]] || make_input "$crash_events" "$crash_input" "$crash_expected"
  # One uninterrupted run first: it must be exact, and its length sets when to kill.
  local problems= started
  started=$(now)
  # One row per input line (no coalescing), to compare the rows with the input's lines.
  start_collector crash-whole "replay:$crash_input" --coalesce-ms 0
  wait "$collector_pid" || fail problems "exit $?"
  ingest_seconds=$(elapsed "$started")
  prefix_matches "$scratch/crash-whole.db" "$crash_expected" || fail problems "events differ from the input"
  local written
  written=$(query_db "$scratch/crash-whole.db" "SELECT count(*) FROM events")
  ((written == crash_events)) || fail problems "$crash_events in the input, $written written"
  check_database "$scratch/crash-whole.db" problems
  report "$([[ -z $problems ]] && echo yes || echo NO)" "ingest $crash_events replayed events, no crash" "$problems" \
    "$written written in $ingest_seconds s"

  # Then the kills, each on a fresh database.
  RANDOM=$seed
  local i batch delay name committed=() finished=0 interrupted=0 problems=
  local after=$scratch/after-crash.jsonl
  echo '{"time": "2027-01-01T00:00:00Z", "pid": 1, "op": "open", "path": "/after/the/crash"}' >"$after"
  for ((i = 0; i < kills; i++)); do
    batch=${crash_batch_sizes[i % ${#crash_batch_sizes[@]}]}
    delay=$(awk -v r=$RANDOM -v t="$ingest_seconds" 'BEGIN { printf "%.2f", r / 32768 * t * 0.9 }')
    name=crash-$i
    start_collector "$name" "replay:$crash_input" --batch-size "$batch" --coalesce-ms 0
    sleep "$delay"
    kill -KILL "$collector_pid" 2>/dev/null || true
    wait "$collector_pid" 2>/dev/null || true
    grep -q 'end of input' "$scratch/$name.err" && finished=$((finished + 1))
    local db=$scratch/$name.db run_problems= count
    count=$(query_db "$db" "SELECT count(*) FROM events" 2>/dev/null || echo 0)
    committed+=("$count")
    if [[ -e $db ]] && [[ $(query_db "$db" "PRAGMA user_version") -gt 0 ]]; then
      prefix_matches "$db" "$crash_expected" || fail run_problems "the $count events are not the input's first $count"
      check_database "$db" run_problems
      # The run record's counters are committed with the events they count.
      local record
      record=$(query_db "$db" "SELECT events_written = (SELECT count(*) FROM events)
                                     AND last_event_at IS (SELECT max(coalesce(ts, id)) FROM events)
                              FROM collector_runs WHERE run_id = 1")
      [[ -z $record || $record == 1 ]] || fail run_problems "run record counters differ from the events"
    fi
    # The next run marks the killed one interrupted at its last commit.
    "$etwaudit" collect --source "replay:$after" --db "$db" --quiet 2>"$scratch/$name.next.err" ||
      fail run_problems "the next run failed: $(head -1 "$scratch/$name.next.err")"
    local marked
    # (None when the kill came before the killed collector made its run: the next run is run 1.)
    marked=$(query_db "$db" "SELECT exit_reason LIKE 'interrupted%' AND stopped_at = coalesce(last_commit_at, started_at)
                              FROM collector_runs WHERE run_id = 1 AND source = 'replay:$crash_input'")
    if [[ $marked == 1 ]]; then
      interrupted=$((interrupted + 1))
    elif [[ -n $marked ]] && ! grep -q 'end of input' "$scratch/$name.err"; then
      fail run_problems "run 1 not marked interrupted at its last commit: $(query_db "$db" \
        "SELECT exit_reason, started_at, last_commit_at, stopped_at FROM collector_runs WHERE run_id = 1")"
    fi
    check_database "$db" run_problems
    if [[ -n $run_problems ]]; then
      fail problems "kill $i (after $delay s, batches of $batch, $count committed): $run_problems"
    else
      rm -f "$db" "$db-wal" "$db-shm"
    fi
  done
  local sorted
  sorted=$(printf '%s\n' "${committed[@]}" | sort -n | tr '\n' ' ')
  report "$([[ -z $problems ]] && echo yes || echo NO)" \
    "SIGKILL x$kills, batches $(IFS=/; echo "${crash_batch_sizes[*]}"), seed $seed" "$problems" \
    "committed: ${sorted% }; $interrupted marked interrupted, $finished finished before the kill"

  crash_live_gap
}

# A live run killed, then a new one 2 s later: the gaps report shows the hole.
crash_live_gap() {
  local name=crash-live problems=
  if ((!is_root)); then
    report skipped "SIGKILL a live run, gaps shows the hole" "fanotify needs root" "-"
    return
  fi
  mkdir -p "$scratch/$name"
  start_collector "$name" live --mount "$scratch/$name"
  wait_watching "$name" || fail problems "the collector did not start watching"
  file_workload "$scratch/$name/files" &
  local workload_pid=$!
  started_pids+=("$workload_pid")
  sleep 2.5
  kill -KILL "$collector_pid"
  wait "$collector_pid" 2>/dev/null || true
  touch "$scratch/$name/files.stop"
  wait "$workload_pid"
  sleep 2
  "$etwaudit" collect --db "$scratch/$name.db" --mount "$scratch/$name" --duration 1s --quiet 2>/dev/null ||
    fail problems "the next run failed"
  local marked gap
  marked=$(query_db "$scratch/$name.db" "SELECT exit_reason LIKE 'interrupted%' AND stopped_at = last_commit_at
                                          FROM collector_runs WHERE run_id = 1")
  [[ $marked == 1 ]] || fail problems "run 1 not marked interrupted at its last commit"
  # The first gap, as JSON lines ({"section":"gaps",...,"seconds":2.513}); its seconds have a fraction.
  gap=$("$etwaudit" query gaps --db "$scratch/$name.db" --format jsonl | grep -m1 '"section":"gaps"' || true)
  local seconds
  seconds=$(sed -n 's/.*"seconds":\([0-9.]*\).*/\1/p' <<<"$gap")
  [[ -n $seconds ]] && awk -v s="$seconds" 'BEGIN { exit !(s >= 2) }' ||
    fail problems "gaps shows no hole of 2 s or more ('$gap')"
  check_database "$scratch/$name.db" problems
  report "$([[ -z $problems ]] && echo yes || echo NO)" "SIGKILL a live run, next run 2 s later" "$problems" \
    "gaps: ${gap:-none}"
}

# --- 3. disk full -------------------------------------------------------------

section_disk() {
  local full=$scratch/full name=full problems= rc=0
  mkdir -p "$full"
  if ((!is_root)) || ! mount -t tmpfs -o size=8m etwaudit-reliability "$full" 2>"$scratch/mount.err"; then
    report skipped "database on a full filesystem (8 MiB tmpfs)" \
      "cannot mount a tmpfs: $( ((is_root)) && tr '\n' ' ' <"$scratch/mount.err" || echo "needs root")" "-"
    return
  fi
  full_mount=$full
  [[ -e $crash_input ]] || make_input "$crash_events" "$crash_input" "$crash_expected"
  local db=$full/audit.db started took
  started=$(now)
  timeout 120 "$etwaudit" collect --source "replay:$crash_input" --db "$db" --quiet --coalesce-ms 0 \
    2>"$scratch/$name.err" || rc=$?
  took=$(elapsed "$started")
  ((rc == 1)) || fail problems "exit $rc, expected 1"
  local message
  message=$(grep -m1 -io 'error: .*full.*' "$scratch/$name.err" || true)
  [[ -n $message ]] || fail problems "no message saying the disk is full: $(head -2 "$scratch/$name.err" | tr '\n' ' ')"
  local received written dropped lost excluded
  read -r received written dropped lost excluded <<<"$(summary_counts "$name")"
  [[ -n $received ]] && ((received == written + dropped + excluded)) || fail problems "summary does not add up"
  "$etwaudit" query summary --db "$db" >/dev/null 2>"$scratch/$name.query.err" ||
    fail problems "query summary failed: $(head -1 "$scratch/$name.query.err")"
  prefix_matches "$db" "$crash_expected" || fail problems "the events are not a prefix of the input"
  check_database "$db" problems
  local record
  record=$(query_db "$db" "SELECT coalesce(exit_reason, 'left open') FROM collector_runs WHERE run_id = 1")
  report "$([[ -z $problems ]] && echo yes || echo NO)" "database on a full filesystem (8 MiB tmpfs)" "$problems" \
    "exit $rc after $took s, \"$message\"; written $written of $received; run record: $record; $(du -k "$full" | cut -f1) KiB used"
  disk_full_with_max_size
  umount "$full" && full_mount=
}

# With retention the collector makes room instead: the same ingest into the
# same 8 MiB tmpfs with --max-size below it must go on to the end of the input
# (exit 0), stay under the limit, and keep integrity and totals.
disk_full_with_max_size() {
  local name=disk-full-retention problems="" rc=0 db=$full/retention.db started took
  rm -f "$full"/*
  started=$(now)
  # Batches of 10,000: one default batch (100,000 events) would take most of the 8 MiB disk.
  timeout 120 "$etwaudit" collect --source "replay:$crash_input" --db "$db" --quiet --max-size 4MB --batch-size 10000 \
    2>"$scratch/$name.err" || rc=$?
  took=$(elapsed "$started")
  ((rc == 0)) || fail problems "exit $rc: $(grep -m1 'ended' "$scratch/$name.err")"
  local received written dropped lost excluded
  read -r received written dropped lost excluded <<<"$(summary_counts "$name")"
  [[ -n $received ]] && ((received == written + dropped + excluded)) || fail problems "summary does not add up"
  local bytes
  bytes=$(stat -c %s "$db" 2>/dev/null || echo 0)
  # Pages freed inside the file count as room: allow 1 MiB of them over the cap.
  ((bytes <= 5 * 1048576)) || fail problems "the database file is $bytes bytes, more than 1 MiB over --max-size 4MB"
  [[ $(query_db "$db" "PRAGMA integrity_check") == ok ]] || fail problems "integrity_check failed"
  local pruned
  pruned=$(query_db "$db" "SELECT pruned_events FROM retention" 2>/dev/null || echo "?")
  report "$([[ -z $problems ]] && echo yes || echo NO)" "full filesystem with --max-size 4MB" "$problems" \
    "exit $rc after $took s; written $written of $received, pruned $pruned; file $((bytes / 1024)) KiB"
}

# --- 4. readers ---------------------------------------------------------------

# Runs `etwaudit query` reports over DB in a loop while the process PID lives;
# appends "runs errors" to FILE and any error message to FILE.err.
query_loop() {
  local db=$1 pid=$2 out=$3 runs=0 errors=0
  shift 3
  while alive "$pid"; do
    if ! "$etwaudit" query "$@" --db "$db" >/dev/null 2>>"$out.err"; then errors=$((errors + 1)); fi
    runs=$((runs + 1))
  done
  echo "$runs $errors" >"$out"
}

# Starts the query loops over NAME's database while collector_pid lives; sets loop_pids.
start_query_loops() {
  local name=$1 i=0 report
  loop_pids=()
  for report in "summary" "top-files --limit 10" "recent --limit 20" "file-history /srv/data/d7/* --limit 100"; do
    # shellcheck disable=SC2086
    query_loop "$scratch/$name.db" "$collector_pid" "$scratch/$name.loop$i" $report &
    loop_pids+=($!)
    started_pids+=($!)
    i=$((i + 1))
  done
}

# "runs errors first_error" over NAME's query loops.
loop_results() {
  local runs=0 errors=0 r e file
  for file in "$scratch/$1".loop?; do
    read -r r e <"$file"
    runs=$((runs + r)) errors=$((errors + e))
  done
  echo "$runs $errors $(cat "$scratch/$1".loop?.err | sed -n '1p')"
}

events_per_second() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", n / s }'; }

section_readers() {
  [[ -e $crash_input ]] || make_input "$crash_events" "$crash_input" "$crash_expected"
  local problems= alone shared rc=0
  # Throughput alone, then with the query loops; a row per line, to compare with the input.
  start_collector readers-alone "replay:$crash_input" --coalesce-ms 0
  wait "$collector_pid" || fail problems "the collector alone failed"
  alone=$(run_seconds readers-alone)
  start_collector readers-shared "replay:$crash_input" --coalesce-ms 0
  wait_for_run "$scratch/readers-shared.db" || fail problems "no run record appeared"
  start_query_loops readers-shared
  wait "$collector_pid" || rc=$?
  shared=$(run_seconds readers-shared)
  wait "${loop_pids[@]}"
  ((rc == 0)) || fail problems "the collector with readers failed (exit $rc)"
  local runs errors first_error
  read -r runs errors first_error <<<"$(loop_results readers-shared)"
  ((errors == 0)) || fail problems "$errors of $runs queries failed: $first_error"
  prefix_matches "$scratch/readers-shared.db" "$crash_expected" || fail problems "events differ from the input"
  check_database "$scratch/readers-shared.db" problems
  report "$([[ -z $problems ]] && echo yes || echo NO)" "4 query loops during a heavy ingest" "$problems" \
    "$(events_per_second "$crash_events" "$alone") events/s alone, $(events_per_second "$crash_events" "$shared") with readers; $runs queries, $errors errors"
  rm -f "$scratch"/readers-*.db*

  # A snapshot held for snapshot_seconds during a steady ingest: it must see
  # the same events from start to end, and the WAL must go back to its usual
  # size once it is gone.
  local name=snapshot lead=5 after=25 rate=20000 problems= rc=0
  local seconds=$((lead + snapshot_seconds + after))
  start_feed "$name" "$rate" "$seconds" "$seconds"
  start_collector "$name" "replay:$scratch/$name.fifo"
  wait_for_run "$scratch/$name.db" || fail problems "no run record appeared"
  start_query_loops "$name"
  ( # Every half second: "time wal_file_bytes frames_in_the_wal frames_copied_back", the
    # last two from the WAL index header in -shm (mxFrame at byte 16, nBackfill at 96).
    while alive "$collector_pid"; do
      echo "$(now) $(stat -c %s "$scratch/$name.db-wal" 2>/dev/null || echo 0)" \
        "$(od -An -t u4 -j 16 -N 4 "$scratch/$name.db-shm" 2>/dev/null || echo 0)" \
        "$(od -An -t u4 -j 96 -N 4 "$scratch/$name.db-shm" 2>/dev/null || echo 0)"
      sleep 0.5
    done
  ) >"$scratch/$name.wal" &
  started_pids+=($!)
  sleep "$lead"
  local before_reader reader_left
  before_reader=$(stat -c %s "$scratch/$name.db-wal")
  query_db "$scratch/$name.db" "BEGIN;" "SELECT count(*) FROM events;" ".shell sleep $snapshot_seconds" \
    "SELECT count(*) FROM events;" "COMMIT;" >"$scratch/$name.reader" 2>&1 || fail problems "the snapshot reader failed"
  reader_left=$(now)
  local first second
  { read -r first; read -r second; } <"$scratch/$name.reader"
  [[ $first == "$second" && -n $first ]] || fail problems "the snapshot saw $first events, then $second"
  wait "$collector_pid" || rc=$?
  wait "${loop_pids[@]}"
  ((rc == 0)) || fail problems "the collector failed (exit $rc)"
  read -r runs errors first_error <<<"$(loop_results "$name")"
  ((errors == 0)) || fail problems "$errors of $runs queries failed: $first_error"
  # From the samples: the file at the reader's end and at the last sample, and
  # when the WAL was started over (its frame count fell) after the reader left.
  local left_size end_size end_frames restarted
  read -r left_size end_size end_frames restarted <<<"$(awk -v left="$reader_left" '
    $1 <= left { left_size = $2 }
    $1 > left && restarted == "" && $3 < frames { restarted = sprintf("%.1f", $1 - left) }
    { frames = $3; end_size = $2; end_frames = $3 }
    END { print left_size + 0, end_size + 0, end_frames + 0, (restarted == "" ? "never" : restarted) }' "$scratch/$name.wal")"
  local wal_note="WAL file $(mib "$before_reader") before the reader, $(mib "$left_size") as it left"
  wal_note+=", $(mib "$end_size") at the end ($(mib $((end_frames * 4120))) of it in use); started over"
  [[ $restarted == never ]] && wal_note+=" never in the $after s after" || wal_note+=" $restarted s after the reader left"
  # Back to its usual size: no larger than before the reader, or than the
  # size a restarted WAL is cut to (journal_size_limit, 64 MiB) when larger.
  local usual=$((before_reader > 67108864 ? before_reader : 67108864))
  ((end_size <= usual + 1048576)) || fail problems "the WAL file stayed at $(mib "$end_size")"
  check_counts_add_up "$name" 1 problems
  check_database "$scratch/$name.db" problems
  report "$([[ -z $problems ]] && echo yes || echo NO)" "snapshot held $snapshot_seconds s + 4 query loops, 20k events/s" \
    "$problems" "snapshot saw $first events throughout; $runs queries, $errors errors; $wal_note"
}

# --- 8. soak ------------------------------------------------------------------

# An hour of events at a steady rate, compressed into soak_seconds; the
# collector's resident memory and open descriptors are sampled. Both must be
# flat once it has warmed up: the page cache (32 MiB) and the catalog fill in
# the first part of the run.
section_soak() {
  local name=soak rate=10000 problems= rc=0 interval=2
  # The short form runs faster so that it is warm (cache full, queue ring
  # touched) before its first 40 % are over.
  ((quick)) && interval=1 rate=40000
  start_feed "$name" "$rate" "$soak_seconds" 3600
  start_collector "$name" "replay:$scratch/$name.fifo"
  local pid=$collector_pid t=0
  : >"$scratch/$name.samples"
  while alive "$pid"; do
    local rss fds
    rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status" 2>/dev/null) || break
    fds=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l)
    [[ -n $rss ]] && echo "$t $rss $fds" >>"$scratch/$name.samples"
    sleep "$interval"
    t=$((t + interval))
  done
  wait "$pid" || rc=$?
  ((rc == 0)) || fail problems "collector exit $rc"
  local fed=$((rate * soak_seconds)) written
  written=$(query_db "$scratch/$name.db" "SELECT events_written FROM collector_runs WHERE run_id = 1")
  ((written == fed)) || fail problems "$fed fed, $written written"
  check_counts_add_up "$name" 1 problems
  check_database "$scratch/$name.db" problems
  # The samples after the first 40 % (warming up: SQLite's 32 MiB page cache
  # fills as the database grows, the queue's ring is touched once) in two
  # halves: the second half's peak may not exceed the first's by more than
  # 5 % or 4 MiB, nor its most open descriptors the first's (the count
  # drops by one at the end, when the checkpointing connection closes).
  local verdict
  verdict=$(awk '{ t[NR] = $1; rss[NR] = $2; fds[NR] = $3 } END {
      start = int(NR * 0.4) + 1; half = int((NR - start + 1) / 2)
      for (i = start; i < start + half; i++) { if (rss[i] > early) early = rss[i]; if (fds[i] > early_fds) early_fds = fds[i] }
      for (i = NR - half + 1; i <= NR; i++) { if (rss[i] > late) late = rss[i]; if (fds[i] > late_fds) late_fds = fds[i] }
      lo = hi = fds[start]
      for (i = start; i <= NR; i++) { if (fds[i] < lo) lo = fds[i]; if (fds[i] > hi) hi = fds[i] }
      for (i = 1; i <= NR; i++) if (rss[i] > peak) peak = rss[i]
      ok = late <= early * 1.05 || late <= early + 4096
      printf "%d %s rss %.1f MiB at start, %.1f -> %.1f MiB (peaks of the two halves after warm-up), peak %.1f MiB; fds %d..%d (%d at start); %d samples\n",
        ok && late_fds <= early_fds, (ok ? "" : "memory grew"), rss[1] / 1024, early / 1024, late / 1024, peak / 1024, lo, hi, fds[1], NR
    }' "$scratch/$name.samples")
  local flat=${verdict%% *} figures=${verdict#* }
  ((flat)) || fail problems "not flat"
  report "$([[ -z $problems ]] && echo yes || echo NO)" \
    "soak: 1 h of events in $soak_seconds s, $rate/s" "$problems" "${figures# }; $written written"
}

# --- main ---------------------------------------------------------------------

echo "reliability: $( ((quick)) && echo quick || echo full) form, seed $seed, scratch $scratch" >&2
for section in ${only//,/ }; do
  case $section in
    locks | crash | disk | readers | soak) "section_$section" ;;
    *) echo "reliability: unknown section $section (locks, crash, disk, readers, soak)" >&2; exit 2 ;;
  esac
done
print_table
if ((failures)); then
  echo "reliability: $failures of ${#results[@]} checks did not hold"
  exit 1
fi
echo "reliability: every check held (${#results[@]} checks)"
