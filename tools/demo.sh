#!/usr/bin/env bash
# etwaudit's main job on a fresh Debian 12 machine: set up, record live file
# activity for a few seconds while some is generated, then answer questions
# from the database. Recording needs root (eBPF, or fanotify); without it the events
# come from the bundled sample through the replay source instead.
#
#   bash tools/demo.sh [database]      (default: demo.db, replaced each run)
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
db=${1:-demo.db}
rm -f "$db" "$db-wal" "$db-shm"
if [[ $(id -u) -ne 0 ]]; then
  echo "demo: not root, so no live recording (eBPF and fanotify need root): replaying tools/sample/events.jsonl" >&2
  set -x
  build/etwaudit collect --source replay:tools/sample/events.jsonl --db "$db"
  build/etwaudit query summary --db "$db"
  build/etwaudit query recent --limit 10 --db "$db"
  exit
fi

work=$(mktemp -d "$PWD/.demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
activity() {  # a little of everything, by a few programs
  sleep 1
  for i in 1 2 3; do
    echo "draft $i" >"$work/notes-$i.txt"
    cat "$work/notes-$i.txt" >/dev/null
    cp "$work/notes-$i.txt" "$work/copy-$i.txt"
    mv "$work/copy-$i.txt" "$work/final-$i.txt"
    sleep 0.3
  done
  rm "$work/notes-1.txt"
}
activity &
set -x
build/etwaudit collect --db "$db" --duration 4s
build/etwaudit query summary --db "$db"
build/etwaudit query file-history "$work/*" --db "$db"
build/etwaudit query top-processes --limit 5 --db "$db"
