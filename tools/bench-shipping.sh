#!/usr/bin/env bash
# What shipping to ClickHouse costs a collector: runs etwaudit-bench's (a),
# (c) and (g) (the pipeline with a shipper beside it, as collect --ship
# runs one) against a ClickHouse server of its own (Debian's
# clickhouse-server on a loopback port). The server runs under nice 19:
# in a fleet it is another machine, and here it would otherwise take the
# collector's CPU on the same cores, which is not a cost of shipping.
#
#   bash tools/bench-shipping.sh BENCH [etwaudit-bench options...]
#   bash tools/bench-shipping.sh build/etwaudit-bench --events 10000000
set -euo pipefail
me=bench-shipping
source "$(dirname "$0")/lib.sh"
bench=$(realpath "$1")
shift
require_tools clickhouse-server clickhouse-client
work=$(mktemp -d)
trap 'kill $clickhouse_pid 2>/dev/null; wait $clickhouse_pid 2>/dev/null; rm -rf "$work"' EXIT
clickhouse_setup "$work"
clickhouse_start nice -n 19
"$bench" --only acg --ship-to "http://127.0.0.1:$clickhouse_http/?database=bench" "$@"
echo "$me: rows in ClickHouse: $(clickhouse_query 'SELECT count() FROM bench.events')"
