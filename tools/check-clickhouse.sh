#!/usr/bin/env bash
# Ships to a real ClickHouse server (Debian's clickhouse-server, started here
# from a temporary config on a loopback port) and checks what arrives:
#
#   - 100,000 replayed events (gzip bodies, the default; and plain ones): the central count() FINAL, distinct keys and
#     sum(size) equal the local ones; the rows/s shipped is printed;
#   - a second ship sends nothing (the cursor);
#   - a batch sent again (the cursor set back, as after a crash between the
#     server's reply and the cursor's commit): raw rows double, FINAL equal;
#   - a central column dropped: ship stops with ClickHouse's message, exit 1,
#     the cursor where it was; the column back, the next ship catches up;
#   - collect --ship sends a run's events as it writes them, the rest at its end;
#   - the shipper killed (SIGKILL) between the server's yes and its cursor's
#     commit (a proxy kills it): the next ship makes FINAL equal again;
#   - the server killed mid-ship while a collector keeps writing, started
#     again: every event arrives once;
#   - an outage longer than the collector's --keep: nothing unsent is pruned;
#   - a command line learned after its process's events went: sent again;
#   - credentials in the URL are refused; https checks the certificate;
#   - a server that never answers holds a stopping collector 10 s, no more.
#
#   bash tools/check-clickhouse.sh ETWAUDIT
#
# ETWAUDIT may be a script that runs the Windows build under Wine;
# CHECK_CLICKHOUSE_BASIC=1 then keeps to the first checks (one collect and
# three ships: WinHTTP, gzip and the cursor).
#
# Exit 77 (skipped) when clickhouse-server is not installed: tools/test.sh
# installs it.
set -euo pipefail
exe=$(realpath "$1")
doc=$(dirname "$(realpath "$0")")/../doc/fleet.md
if ! command -v clickhouse-server >/dev/null || ! command -v clickhouse-client >/dev/null; then
  echo "check-clickhouse: skipped: clickhouse-server and clickhouse-client are not installed (tools/test.sh installs them)"
  exit 77
fi
work=$(mktemp -d)
me=check-clickhouse
source "$(dirname "$0")/lib.sh"
clickhouse_setup "$work"
http=$clickhouse_http
tcp=$clickhouse_tcp
q() { clickhouse_query "$1"; }
start_server() { clickhouse_start; }
stop_server() { clickhouse_kill; }  # as a crash or a power cut
trap 'kill $clickhouse_pid 2>/dev/null; wait $clickhouse_pid 2>/dev/null; [[ -n "${proxy:-}" ]] && kill $proxy 2>/dev/null; [[ -n "${KEEP:-}" ]] || rm -rf "$work"' EXIT
start_server

fail=0
check() {  # what, expected, got
  if [[ "$2" == "$3" ]]; then echo "check-clickhouse: ok: $1 ($3)"; else echo "check-clickhouse: FAIL: $1: expected $2, got $3"; fail=1; fi
}
db=$work/audit.db
url="http://127.0.0.1:$http/?database=fleet"
python3 - "$work/events.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as out:
    for n in range(100000):
        out.write(json.dumps({"time": 1796202000000000000 + n * 1000000, "pid": 100 + n % 7,
                              "process": "C:\\app%d.exe" % (n % 7), "op": ["read", "write", "open"][n % 3],
                              "path": "C:\\data\\f%d.bin" % (n % 500), "offset": n, "size": n % 4096}) + "\n")
PY
"$exe" collect --source "replay:$work/events.jsonl" --db "$db" --quiet --coalesce-ms 0 2>/dev/null
local_rows=$(sqlite3 "$db" 'SELECT count(*) FROM events')
local_bytes=$(sqlite3 "$db" 'SELECT coalesce(sum(size), 0) FROM events')
"$exe" ship --db "$db" --to "$url" --create-tables 2> "$work/ship.err"
sed 's/^/  /' "$work/ship.err"
# Raw row counts below show repeats; a background merge would fold them.
q 'SYSTEM STOP MERGES fleet.events'
check "events arrived, each once" "$local_rows" "$(q 'SELECT count() FROM fleet.events FINAL')"
check "the run record arrived, with its counts" "1 $local_rows end of input" \
  "$(q 'SELECT count(), sum(events_written), any(exit_reason) FROM fleet.runs FINAL' | tr '\t' ' ')"
check "distinct keys" "$local_rows" "$(q 'SELECT uniqExact(host_id, db_uuid, event_id) FROM fleet.events')"
check "bytes" "$local_bytes" "$(q 'SELECT sum(size) FROM fleet.events FINAL')"

"$exe" ship --db "$db" --to "$url" 2> "$work/again.err"
check "a second ship sends nothing" "0" "$(grep -o 'ship: [0-9,]* event' "$work/again.err" | grep -o '[0-9,]*' | tr -d ,)"

# As if killed between the server's yes and the cursor's commit: all again.
sqlite3 "$db" 'UPDATE destinations SET shipped_through = 0'
"$exe" ship --db "$db" --to "$url" 2>/dev/null
check "a repeated batch: raw rows doubled" "$((2 * local_rows))" "$(q 'SELECT count() FROM fleet.events')"
check "a repeated batch: FINAL counts each once" "$local_rows" "$(q 'SELECT count() FROM fleet.events FINAL')"
finish() {
  if ((fail)); then echo "check-clickhouse: some checks failed"; exit 1; fi
  echo "check-clickhouse: every check held"
  exit 0
}
# CHECK_CLICKHOUSE_BASIC=1: only the above (the Windows executable under Wine).
[[ -n "${CHECK_CLICKHOUSE_BASIC:-}" ]] && finish

# A column the lines have is gone: a permanent error, the cursor stays.
q 'ALTER TABLE fleet.events DROP COLUMN renamed_to'
python3 - "$work/more.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as out:
    for n in range(10):
        out.write(json.dumps({"time": 1796203000000000000 + n, "pid": 9, "op": "write", "path": "C:\\late.txt", "size": 1}) + "\n")
PY
"$exe" collect --source "replay:$work/more.jsonl" --db "$db" --quiet --coalesce-ms 0 2>/dev/null
cursor=$(sqlite3 "$db" 'SELECT shipped_through FROM destinations')
set +e
"$exe" ship --db "$db" --to "$url" 2> "$work/dropped.err"
status=$?
set -e
check "a dropped column stops shipping with exit 1" "1" "$status"
check "...saying ClickHouse will refuse again" "1" "$(grep -c 'refused the events and will again' "$work/dropped.err" || true)"
check "...the cursor where it was" "$cursor" "$(sqlite3 "$db" 'SELECT shipped_through FROM destinations')"
check "...the error in the database" "1" "$(sqlite3 "$db" 'SELECT count(*) FROM destinations WHERE last_error IS NOT NULL')"
q 'ALTER TABLE fleet.events ADD COLUMN renamed_to Nullable(String)'
"$exe" ship --db "$db" --to "$url" 2>/dev/null
check "the column back, the next ship catches up" "$((local_rows + 10))" "$(q 'SELECT count() FROM fleet.events FINAL')"
check "...with the second run's record" "2" "$(q 'SELECT count() FROM fleet.runs FINAL')"

# collect --ship: shipped as the collector writes, the rest when it ends.
db2=$work/collected.db
alone_start=$(date +%s.%N)
"$exe" collect --source "replay:$work/events.jsonl" --db "$work/alone.db" --quiet --coalesce-ms 0 2>/dev/null
alone_end=$(date +%s.%N)
"$exe" collect --source "replay:$work/events.jsonl" --db "$db2" --quiet --coalesce-ms 0 --ship "$url" 2> "$work/collect.err"
shipped_end=$(date +%s.%N)
awk -v a="$alone_start" -v b="$alone_end" -v c="$shipped_end" 'BEGIN {
  printf "check-clickhouse: figures: 100,000 events collected in %.2f s alone, %.2f s with --ship (ratio %.2f)\n", b - a, c - b, (b - a) / (c - b) }'
sed 's/^/  /' "$work/collect.err" | tail -2
uuid2=$(sqlite3 "$db2" 'SELECT db_uuid FROM identity')
check "collect --ship: every event of the run arrived once" "$(sqlite3 "$db2" 'SELECT count(*) FROM events')" \
  "$(q "SELECT count() FROM fleet.events FINAL WHERE db_uuid = '$uuid2'")"
check "collect --ship: its cursor is at the last event" "$(sqlite3 "$db2" 'SELECT max(id) FROM events')" \
  "$(sqlite3 "$db2" 'SELECT shipped_through FROM destinations')"
check "collect --ship: the run's record as it ended" "100000 end of input 1" \
  "$(q "SELECT events_written, exit_reason, stopped_ns IS NOT NULL FROM fleet.runs FINAL WHERE db_uuid = '$uuid2'" | tr '\t' ' ')"

# Killed between the server's yes and the cursor's commit: a proxy in front
# of the server passes the second INSERT on and, once the server has said
# yes, kills the shipper with SIGKILL before the reply reaches it.
cat > "$work/proxy.py" <<'PY'
import http.server, os, signal, sys, urllib.error, urllib.parse, urllib.request
upstream, pid_file, kill_at, port_file = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    inserts = 0
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        request = urllib.request.Request(upstream + self.path, data=body, method="POST")
        for name in ("Content-Type", "Content-Encoding", "Authorization"):
            if self.headers.get(name): request.add_header(name, self.headers[name])
        try:
            with urllib.request.urlopen(request) as reply: status, data = reply.status, reply.read()
        except urllib.error.HTTPError as error: status, data = error.code, error.read()
        if status == 200 and "INSERT INTO events" in urllib.parse.unquote(self.path):
            Proxy.inserts += 1
            if Proxy.inserts == kill_at:
                with open(pid_file) as f: os.kill(int(f.read()), signal.SIGKILL)
                self.close_connection = True
                return
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *args): pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
with open(port_file, "w") as f: f.write(str(server.server_port))
server.serve_forever()
PY
python3 "$work/proxy.py" "http://127.0.0.1:$http" "$work/shipper.pid" 2 "$work/proxy.port" &
proxy=$!
for _ in $(seq 100); do [[ -s "$work/proxy.port" ]] && break; sleep 0.05; done
db3=$work/killed.db
"$exe" collect --source "replay:$work/events.jsonl" --db "$db3" --quiet --coalesce-ms 0 2>/dev/null
uuid3=$(sqlite3 "$db3" 'SELECT db_uuid FROM identity')
"$exe" ship --db "$db3" --to "http://127.0.0.1:$(cat "$work/proxy.port")/?database=fleet" --name central --batch 20000 \
  2>/dev/null &
echo $! > "$work/shipper.pid"
set +e
wait "$(cat "$work/shipper.pid")"
status=$?
set -e
kill $proxy 2>/dev/null; wait $proxy 2>/dev/null || true; proxy=
check "killed after the server's yes to its second batch (SIGKILL)" "137" "$status"
check "...the server has two batches" "40000" "$(q "SELECT count() FROM fleet.events FINAL WHERE db_uuid = '$uuid3'")"
check "...the cursor has one" "20000" "$(sqlite3 "$db3" 'SELECT rows_shipped FROM destinations')"
"$exe" ship --db "$db3" --to "$url" --name central 2>/dev/null  # the same cursor, the server without the proxy
check "...the next ship: every event once (FINAL)" "$(sqlite3 "$db3" 'SELECT count(*) FROM events')" \
  "$(q "SELECT count() FROM fleet.events FINAL WHERE db_uuid = '$uuid3'")"
check "...the second batch went twice (raw rows)" "120000" "$(q "SELECT count() FROM fleet.events WHERE db_uuid = '$uuid3'")"

"$exe" ship --db "$db3" --to "$url" --name plain --compression none 2>/dev/null
check "uncompressed bodies (--compression none) arrive as well" "220000" \
  "$(q "SELECT count() FROM fleet.events WHERE db_uuid = '$uuid3'")"

# --max-rate: 100,000 rows at 50,000 a second take two seconds at least.
rate_start=$(date +%s%N)
"$exe" ship --db "$db3" --to "$url" --name paced --max-rate 50000 --batch 10000 2>/dev/null
check "--max-rate 50000 bounds 100,000 rows to 1.8 s or more" "1" "$(( ($(date +%s%N) - rate_start) >= 1800000000 ))"

# The server killed mid-ship while a collector keeps writing, and started
# again: the collector goes on, the shipper retries, everything arrives once.
db4=$work/outage.db
python3 - "$work/stream.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as out:
    for n in range(150000):
        out.write(json.dumps({"time": 1796210000000000000 + n * 1000000, "pid": 300 + n % 5, "process": "C:\\svc%d.exe" % (n % 5),
                              "op": ["read", "write"][n % 2], "path": "C:\\logs\\l%d.txt" % (n % 50), "size": n % 1000}) + "\n")
PY
# 25,000 events a second for six seconds, through standard input.
python3 -c '
import sys, time
lines = open(sys.argv[1]).readlines()
for i in range(0, len(lines), 2500):
    sys.stdout.write("".join(lines[i:i + 2500])); sys.stdout.flush(); time.sleep(0.1)
' "$work/stream.jsonl" | "$exe" collect --source replay:- --db "$db4" --coalesce-ms 0 --ship "$url" --ship-interval 1s \
  2> "$work/outage.err" &
collector=$!
sleep 1.5
stop_server
sleep 2.5
start_server
set +e
wait $collector
status=$?
set -e
uuid4=$(sqlite3 "$db4" 'SELECT db_uuid FROM identity')
check "server killed mid-ship: the collector ends well" "0" "$status"
check "...and wrote every event" "150000" "$(sqlite3 "$db4" 'SELECT count(*) FROM events')"
check "...it said it retried" "1" "$(grep -c -m1 'trying again in' "$work/outage.err" || true)"
check "...every event arrived once (FINAL)" "150000" "$(q "SELECT count() FROM fleet.events FINAL WHERE db_uuid = '$uuid4'")"
check "...bytes" "$(sqlite3 "$db4" 'SELECT sum(size) FROM events')" \
  "$(q "SELECT sum(size) FROM fleet.events FINAL WHERE db_uuid = '$uuid4'")"

# An outage longer than --keep: the collector keeps an hour, its events
# span 19 hours, the server is down the whole run. Nothing is pruned that
# the server has not had; once it has them, pruning goes on.
python3 - "$work/day.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as out:
    for n in range(70000):
        out.write(json.dumps({"time": 1796220000000000000 + n * 1000000000, "pid": 9, "process": "C:\\batch.exe",
                              "op": "write", "path": "C:\\out\\o%d.csv" % (n % 20), "size": 100}) + "\n")
PY
stop_server
db5=$work/kept.db
"$exe" collect --source "replay:$work/day.jsonl" --db "$db5" --quiet --coalesce-ms 0 --keep 1h --ship "$url" 2> "$work/kept.err" || true
check "outage longer than --keep: every event kept" "70000" "$(sqlite3 "$db5" 'SELECT count(*) FROM events')"
check "...the collector said why" "1" "$(grep -c -m1 'kept until every destination has their events' "$work/kept.err" || true)"
check "...and that the rest waits for the next ship" "1" "$(grep -c -m1 'the next etwaudit ship sends the rest' "$work/kept.err" || true)"
start_server
"$exe" ship --db "$db5" --to "$url" 2>/dev/null
uuid5=$(sqlite3 "$db5" 'SELECT db_uuid FROM identity')
check "...the server back, all arrive" "70000" "$(q "SELECT count() FROM fleet.events FINAL WHERE db_uuid = '$uuid5'")"
"$exe" prune --db "$db5" --older-than 1h 2>/dev/null
check "...then pruning goes on (the newest hour is left)" "1" \
  "$(sqlite3 "$db5" 'SELECT count(*) BETWEEN 1 AND 3600 FROM events')"

# The fleet questions of doc/fleet.md run against the table.
check "who touched a path, per host and process" "21" "$(q "SELECT count() FROM (SELECT host, process, user, op, count() AS events FROM fleet.events FINAL WHERE path = 'C:\\\\data\\\\f7.bin' GROUP BY host, process, user, op)")"
check "top writers per host" "5" "$(q "SELECT count() FROM (SELECT host, process, sum(size) AS bytes FROM fleet.events FINAL WHERE op = 'write' GROUP BY host, process ORDER BY host, bytes DESC LIMIT 5 BY host)")"

# A name learned after its events went: a process's command line arrives
# on a later line, after the shipper sent its first events; those events go
# again, with it, and the central table keeps the newest copy.
db7=$work/late.db
late_line() { printf '{"time":%s,"pid":700,"process":"/usr/bin/tool","op":"write","path":"/srv/out.bin","size":1%s}\n' "$1" "$2"; }
(for n in $(seq 100); do late_line $((1796230000000000000 + n)) ""; done
 for _ in $(seq 200); do  # until the shipper has them
   [[ "$(sqlite3 "$db7" 'SELECT shipped_through FROM destinations' 2>/dev/null)" == 1796230000000000100 ]] && break
   sleep 0.1
 done
 "$exe" export --db "$db7" --output "$work/late-export" 2>/dev/null
 for n in $(seq 101 110); do late_line $((1796230000000000000 + n)) ',"command_line":"tool --late"'; done) |
  "$exe" collect --source replay:- --db "$db7" --quiet --coalesce-ms 0 --ship "$url" --ship-interval 1s 2> "$work/late.err"
uuid7=$(sqlite3 "$db7" 'SELECT db_uuid FROM identity')
check "a command line learned late reaches the events already sent (FINAL)" "110 110" \
  "$(q "SELECT count(), countIf(command_line = 'tool --late') FROM fleet.events FINAL WHERE db_uuid = '$uuid7'" | tr '\t' ' ')"
check "...those went twice (raw rows)" "210" "$(q "SELECT count() FROM fleet.events WHERE db_uuid = '$uuid7'")"
# The same for a JSONL export: the later line of each event_uid has the name.
"$exe" export --db "$db7" --output "$work/late-export" 2> "$work/late-export.err"
check "...and an export writes them again (lines, events, the last of each named)" "210 110 110" \
  "$(cat "$work"/late-export/*.jsonl | python3 -c '
import json, sys
last = {}
lines = 0
for line in sys.stdin:
    event = json.loads(line); lines += 1; last[event["event_uid"]] = event
print(lines, len(last), sum(e.get("command_line") == "tool --late" for e in last.values()))')"
check "...saying so" "1" "$(grep -c 'written again with a name learned after they went' "$work/late-export.err")"

# A collector that died (SIGKILL): its run never ended. The fleet question of
# doc/fleet.md finds it (its "10 minutes" shortened to 1 s here; ClickHouse's
# now() counts whole seconds, so the wait is over 2 s).
db6=$work/died.db
(for i in $(seq 30); do sed -n "$((i * 100 + 1)),$((i * 100 + 100))p" "$work/stream.jsonl"; sleep 0.1; done) |
  "$exe" collect --source replay:- --db "$db6" --quiet --coalesce-ms 0 2>/dev/null &
collector=$!
sleep 1.5
kill -9 $collector; wait $collector 2>/dev/null || true
"$exe" ship --db "$db6" --to "$url" 2>/dev/null
sleep 2.5
uuid6=$(sqlite3 "$db6" 'SELECT db_uuid FROM identity')
silent=$(sed -n '/^-- collectors that went silent/,/;$/p' "$doc" | sed 's/- 600)/- 1)/')
in_fleet() { clickhouse-client --host 127.0.0.1 --port "$tcp" --database fleet --query "$1"; }
check "collectors that went silent or lost events: the one that died" "$uuid6" \
  "$(in_fleet "$silent" | cut -f2 | grep -x "$uuid6" || true)"
check "...and not the ones that ended" "1" "$(in_fleet "$silent" | wc -l)"

set +e
"$exe" ship --db "$db" --to "http://default:secret@127.0.0.1:$http/" 2> "$work/url.err"
status=$?
set -e
check "credentials in the URL are refused (exit 2)" "2" "$status"

# HTTPS, when the URL says so: the server's certificate is checked (here
# against the CA file given; by default the system's).
set +e
"$exe" ship --db "$db" --to "https://127.0.0.1:$clickhouse_https/?database=tls" --create-tables 2> "$work/tls.err"
status=$?
set -e
check "https: a certificate nobody vouches for is refused (exit 1)" "1 1" \
  "$status $(grep -c -m1 -i 'certificate' "$work/tls.err")"
"$exe" ship --db "$db" --to "https://127.0.0.1:$clickhouse_https/?database=tls" --create-tables \
  --ca-file "$work/cert.pem" 2>/dev/null
check "...with its CA given, every event arrives over https" "$(sqlite3 "$db" 'SELECT count(*) FROM events')" \
  "$(q "SELECT count() FROM tls.events FINAL")"

# A server that takes the request and never answers: the collector, told to
# stop (its input ended), gives shipping 10 s more, not the request's 5
# minutes; the events wait in the database.
cat > "$work/silent.py" <<'PY'
import socket, sys, time
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen()
open(sys.argv[1], "w").write(str(listener.getsockname()[1]))
held = []
while True:
    connection, _ = listener.accept()
    held.append(connection)  # read nothing, answer nothing
PY
python3 "$work/silent.py" "$work/silent.port" &
proxy=$!
for _ in $(seq 50); do [[ -s "$work/silent.port" ]] && break; sleep 0.1; done
db8=$work/silent.db
started=$(date +%s)
set +e
(sed -n 1,100p "$work/stream.jsonl"; sleep 2; sed -n 101,200p "$work/stream.jsonl") |
  "$exe" collect --source replay:- --db "$db8" --quiet --coalesce-ms 0 --ship-interval 1s \
    --ship "http://127.0.0.1:$(cat "$work/silent.port")/?database=fleet" 2> "$work/silent.err"
status=$?
set -e
check "a server that never answers: the stopping collector ends within 10 s and some" "0 1" \
  "$status $(( $(date +%s) - started < 20 ))"
check "...saying the rest waits" "1" "$(grep -c 'given up waiting for the server.*the next etwaudit ship sends the rest' "$work/silent.err")"
check "...with every event in the database" "200" "$(sqlite3 "$db8" 'SELECT count(*) FROM events')"

finish
