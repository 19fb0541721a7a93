#!/usr/bin/env bash
# DB Browser for SQLite on a database that a collector is writing to.
#
#   bash tools/check-sqlitebrowser.sh --etwaudit EXE [--seconds N]
#
# A collector records events that arrive on a FIFO at a steady rate; once the
# database has some, sqlitebrowser opens it read-only under Xvfb and browses
# v_events (its row count and first page, what a user sees first), then each
# of the browsing views (v_file_totals, ...), while the events keep coming. Holds when sqlitebrowser kept the database open without
# failing, the collector wrote every event, exited 0 and printed no warning or
# error (no "database is locked", no wait for the write lock), and the database
# passes integrity_check. Exits 77 (skipped) without sqlitebrowser or Xvfb.
set -euo pipefail
cd "$(dirname "$0")/.."

etwaudit=build/etwaudit
seconds=12
while (($#)); do
  case "$1" in
    --etwaudit) etwaudit=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    *) echo "usage: $0 [--etwaudit EXE] [--seconds N]" >&2; exit 2 ;;
  esac
done
for tool in sqlitebrowser xvfb-run python3 sqlite3; do
  if ! command -v "$tool" >/dev/null; then
    echo "check-sqlitebrowser: skipped: $tool is not installed (apt-get install sqlitebrowser xvfb xauth)"
    exit 77
  fi
done

work=$(mktemp -d)
collector=
browser=
feeder=
cleanup() {
  [[ -n $browser ]] && kill -- "-$browser" 2>/dev/null || true  # xvfb-run, Xvfb and sqlitebrowser
  [[ -n $feeder ]] && kill "$feeder" 2>/dev/null || true
  [[ -n $collector ]] && kill -9 "$collector" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "check-sqlitebrowser: FAILED: $*" >&2; exit 1; }

db=$work/audit.db
mkfifo "$work/events.fifo"
# The collector reads the FIFO without waiting for a writer: this shell holds
# one (fd 3, which no child inherits) until the feeder is done, so the
# collector sees the end of its input only then.
exec 3<>"$work/events.fifo"
"$etwaudit" collect --db "$db" --source "replay:$work/events.fifo" --flush-ms 200 --quiet \
  >"$work/collector.out" 2>"$work/collector.log" 3>&- &
collector=$!
rate=2000
events=$((rate * seconds))
python3 - "$work/events.fifo" "$events" "$rate" >"$work/feeder.log" 2>&1 3>&- <<'EOF' &
import sys, time
path, events, rate = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
start = time.time()
with open(path, "w") as fifo:
    for n in range(events):
        ns = 1796206530000000000 + n * 1000000
        fifo.write('{"time": %d, "pid": %d, "process": "C:\\\\app%d.exe", "op": "%s", "path": "C:\\\\data\\\\f%d.bin",'
                   ' "offset": %d, "size": 4096}\n' % (ns, 100 + n % 7, n % 7, "read" if n % 3 else "write", n % 50,
                                                      n * 4096))
        if n % 200 == 199:
            fifo.flush()
            time.sleep(max(0.0, start + (n + 1) / rate - time.time()))
EOF
feeder=$!

for _ in $(seq 100); do
  [[ -s $db ]] && (($(sqlite3 -readonly "$db" "SELECT count(*) FROM events" 2>/dev/null || echo 0) > 0)) && break
  sleep 0.1
done
(($(sqlite3 -readonly "$db" "SELECT count(*) FROM events") > 0)) || fail "the collector wrote nothing in 10 s: $(cat "$work/collector.log")"

export QT_QPA_PLATFORM=xcb XDG_RUNTIME_DIR=$work/runtime
mkdir -m 700 "$XDG_RUNTIME_DIR"
setsid xvfb-run -a -s "-screen 0 1280x800x24" sqlitebrowser -R -t v_events "$db" >"$work/browser.log" 2>&1 3>&- &
browser=$!
# While the events keep coming, the browser must have the database open.
opened=no
for _ in $(seq 100); do
  for pid in $(pgrep -f "sqlitebrowser -R -t v_events" || true); do
    if ls -l "/proc/$pid/fd" 2>/dev/null | grep -q "$db"; then opened=yes; fi
  done
  [[ $opened == yes ]] && break
  sleep 0.1
done
[[ $opened == yes ]] || fail "sqlitebrowser did not open the database: $(tail -5 "$work/browser.log")"
sleep $((seconds / 2))
kill -0 "$browser" 2>/dev/null || fail "sqlitebrowser ended while the collector wrote: $(tail -5 "$work/browser.log")"
browsed_at=$(sqlite3 -readonly "$db" "SELECT count(*) FROM events")

# The views to start from (sql/0021), each opened as a user does, while the
# events keep coming: the browser must open it and stay up.
kill -- "-$browser" 2>/dev/null || true
browser=
for view in v_file_totals v_process_totals v_process_file_totals v_runs; do
  setsid xvfb-run -a -s "-screen 0 1280x800x24" sqlitebrowser -R -t "$view" "$db" >"$work/$view.log" 2>&1 3>&- &
  browser=$!
  opened=no
  for _ in $(seq 100); do
    for pid in $(pgrep -f "sqlitebrowser -R -t $view" || true); do
      if ls -l "/proc/$pid/fd" 2>/dev/null | grep -q "$db"; then opened=yes; fi
    done
    [[ $opened == yes ]] && break
    sleep 0.1
  done
  [[ $opened == yes ]] || fail "sqlitebrowser did not open $view: $(tail -5 "$work/$view.log")"
  sleep 1
  kill -0 "$browser" 2>/dev/null || fail "sqlitebrowser ended on $view: $(tail -5 "$work/$view.log")"
  kill -- "-$browser" 2>/dev/null || true
  browser=
done

wait "$feeder" || fail "the feeder failed: $(cat "$work/feeder.log")"
feeder=
exec 3>&-
set +e
wait "$collector"
status=$?
set -e
collector=
((status == 0)) || fail "the collector exited $status: $(cat "$work/collector.log")"
if grep -Eiq "warning|error|locked|waiting" "$work/collector.log"; then
  fail "the collector warned: $(grep -Ei "warning|error|locked|waiting" "$work/collector.log")"
fi
written=$(sqlite3 -readonly "$db" "SELECT coalesce(sum(events), 0) FROM activity")
((written == events)) || fail "the collector wrote $written of $events events"
totals=$(sqlite3 -readonly "$db" "SELECT sum(events) FROM v_file_totals")
((totals == events)) || fail "v_file_totals holds $totals of $events events after the run"
[[ $(sqlite3 -readonly "$db" "PRAGMA integrity_check") == ok ]] || fail "integrity_check failed"
echo "check-sqlitebrowser: sqlitebrowser browsed v_events and the browsing views read-only while the collector wrote" \
  "($browsed_at events then, $events at the end); the collector wrote every event, exit 0, no warning"
