#!/usr/bin/env bash
# etwaudit's main job on a fresh Debian 12 machine: set up, collect events into
# a database, then answer questions from it. Until a live source runs on this
# platform, the events come from the bundled sample through the replay source.
#
#   bash tools/demo.sh [database]      (default: demo.db, replaced each run)
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
db=${1:-demo.db}
rm -f "$db" "$db-wal" "$db-shm"
set -x
build/etwaudit collect --source replay:tools/sample/events.jsonl --db "$db"
build/etwaudit query summary --db "$db"
build/etwaudit query recent --limit 10 --db "$db"
