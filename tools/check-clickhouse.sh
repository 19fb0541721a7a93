#!/usr/bin/env bash
# Ships to a real ClickHouse server (Debian's clickhouse-server, started here
# from a temporary config on a loopback port) and checks what arrives:
#
#   - 100,000 replayed events: the central count() FINAL, distinct keys and
#     sum(size) equal the local ones; the rows/s shipped is printed;
#   - a second ship sends nothing (the cursor);
#   - a batch sent again (the cursor set back, as after a crash between the
#     server's reply and the cursor's commit): raw rows double, FINAL equal;
#   - a central column dropped: ship stops with ClickHouse's message, exit 1,
#     the cursor where it was; the column back, the next ship catches up;
#   - collect --ship sends a run's events as it writes them, the rest at its end;
#   - credentials in the URL are refused.
#
#   bash tools/check-clickhouse.sh ETWAUDIT
#
# Exit 77 (skipped) when clickhouse-server is not installed: tools/test.sh
# installs it.
set -euo pipefail
exe=$(realpath "$1")
if ! command -v clickhouse-server >/dev/null || ! command -v clickhouse-client >/dev/null; then
  echo "check-clickhouse: skipped: clickhouse-server and clickhouse-client are not installed (tools/test.sh installs them)"
  exit 77
fi
work=$(mktemp -d)
http=$((20000 + RANDOM % 20000))
tcp=$((http + 1))
mkdir -p "$work/data" "$work/tmp"
cat > "$work/config.xml" <<XML
<yandex>
  <logger><level>warning</level><log>$work/server.log</log><errorlog>$work/error.log</errorlog></logger>
  <http_port>$http</http_port>
  <tcp_port>$tcp</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>$work/data/</path>
  <tmp_path>$work/tmp/</tmp_path>
  <users_config>$work/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>536870912</mark_cache_size>
</yandex>
XML
cat > "$work/users.xml" <<'XML'
<yandex><profiles><default/></profiles><users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users><quotas><default/></quotas></yandex>
XML
clickhouse-server --config-file="$work/config.xml" >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
q() { clickhouse-client --host 127.0.0.1 --port "$tcp" --query "$1"; }
for _ in $(seq 200); do q 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.1; done
q 'SELECT 1' >/dev/null || { echo "check-clickhouse: the server did not start"; cat "$work/error.log"; exit 1; }

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
check "events arrived, each once" "$local_rows" "$(q 'SELECT count() FROM fleet.events FINAL')"
check "distinct keys" "$local_rows" "$(q 'SELECT uniqExact(host_id, db_uuid, event_id) FROM fleet.events')"
check "bytes" "$local_bytes" "$(q 'SELECT sum(size) FROM fleet.events FINAL')"

"$exe" ship --db "$db" --to "$url" 2> "$work/again.err"
check "a second ship sends nothing" "0" "$(grep -o 'ship: [0-9,]* event' "$work/again.err" | grep -o '[0-9,]*' | tr -d ,)"

# As if killed between the server's yes and the cursor's commit: all again.
sqlite3 "$db" 'UPDATE destinations SET shipped_through = 0'
"$exe" ship --db "$db" --to "$url" 2>/dev/null
check "a repeated batch: raw rows doubled" "$((2 * local_rows))" "$(q 'SELECT count() FROM fleet.events')"
check "a repeated batch: FINAL counts each once" "$local_rows" "$(q 'SELECT count() FROM fleet.events FINAL')"

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

# The fleet questions of doc/fleet.md run against the table.
check "who touched a path, per host and process" "21" "$(q "SELECT count() FROM (SELECT host, process, user, op, count() AS events FROM fleet.events FINAL WHERE path = 'C:\\\\data\\\\f7.bin' GROUP BY host, process, user, op)")"
check "top writers per host" "5" "$(q "SELECT count() FROM (SELECT host, process, sum(size) AS bytes FROM fleet.events FINAL WHERE op = 'write' GROUP BY host, process ORDER BY host, bytes DESC LIMIT 5 BY host)")"

set +e
"$exe" ship --db "$db" --to "http://default:secret@127.0.0.1:$http/" 2> "$work/url.err"
status=$?
set -e
check "credentials in the URL are refused (exit 2)" "2" "$status"

if ((fail)); then echo "check-clickhouse: some checks failed"; exit 1; fi
echo "check-clickhouse: every check held"
