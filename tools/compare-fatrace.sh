#!/usr/bin/env bash
# Checks the Linux collector against a peer: runs a scripted file workload
# (creates, writes, reads, copies, renames, deletes, in several processes at
# once) while fatrace and `etwaudit collect` both watch, then compares what
# they saw. Every (pid, path, operation) fatrace reports for the workload must
# be in etwaudit's database (recall >= 99 %); etwaudit's rows that fatrace
# has no line for are counted and explained. A file renamed while its events
# wait in the kernel queues is named by whichever name it had when each tool
# read the event; such a match is counted as "other name".
#
#   sudo bash tools/compare-fatrace.sh [--quick] [--workers N] [--files N] [--etwaudit PATH]
#
# Needs root (both tools use fanotify). Exits 0 when recall >= 99 %, 1 when
# not, 77 (skipped) without root.
set -euo pipefail
cd "$(dirname "$0")/.."
me=compare-fatrace
source tools/lib.sh

workers=4
files=250
etwaudit=build/etwaudit
while (($#)); do
  case $1 in
    --quick) workers=3 files=40 ;;
    --workers) workers=$2; shift ;;
    --files) files=$2; shift ;;
    --etwaudit) etwaudit=$2; shift ;;
    *) echo "compare-fatrace: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

skip_unless_root fanotify
require_tools fatrace sqlite3 "$etwaudit"

# The workload runs in a folder of its own on the filesystem of the current
# directory (a local one: /tmp may be tmpfs); both tools watch that filesystem.
scratch=$(mktemp -d "$PWD/.compare-fatrace.XXXXXX")
trap 'kill $fatrace_pid $collector_pid 2>/dev/null || true; [[ -n ${KEEP_SCRATCH:-} ]] || rm -rf "$scratch"' EXIT
work=$scratch/work
mkdir "$work"

fatrace -o "$scratch/fatrace.txt" 2>"$scratch/fatrace.err" & fatrace_pid=$!
"$etwaudit" collect --source fanotify --db "$scratch/audit.db" --mount "$work" --quiet 2>"$scratch/collect.txt" & collector_pid=$!
sleep 1.5  # both have set up their marks

workload() {  # one worker: its own files, through several programs
  local dir=$work/w$1 i
  mkdir "$dir"
  for ((i = 0; i < files; i++)); do
    echo "record $i of worker $1" >"$dir/f$i.txt"   # the shell creates and writes
    cat "$dir/f$i.txt" >/dev/null                   # cat reads
    cp "$dir/f$i.txt" "$dir/g$i.txt"                # cp reads one, creates and writes another
    mv "$dir/g$i.txt" "$dir/h$i.txt"                # mv renames
    dd if="$dir/h$i.txt" of=/dev/null status=none   # dd reads
    rm "$dir/f$i.txt" "$dir/h$i.txt"                # rm deletes
  done
}
started=$(date +%s%N)
worker_pids=()
for ((w = 0; w < workers; w++)); do
  workload "$w" &
  worker_pids+=($!)
done
wait "${worker_pids[@]}"
elapsed_ms=$((($(date +%s%N) - started) / 1000000))
sleep 1.5  # both have read the last events
# fatrace 0.17 exits on some errors (e.g. "open_by_handle_at: Cannot allocate
# memory" under load); then only what it printed before is compared.
fatrace_note=
kill -INT "$fatrace_pid" 2>/dev/null || fatrace_note="fatrace stopped before the workload ended ($(tr '\n' ' ' <"$scratch/fatrace.err")): only the lines it printed are compared"
kill -TERM "$collector_pid"
wait "$fatrace_pid" 2>/dev/null || true
wait "$collector_pid" || { cat "$scratch/collect.txt" >&2; exit 1; }

# fatrace lines look like "comm(pid): FLAGS path"; keep the workload's.
# fatrace keeps the " (deleted)" readlink gives for a file deleted since;
# etwaudit takes it off. Our own process is left out on purpose.
sed -nE "s|^(.*)\(([0-9]+)\): ([A-Z<>+]+) +($work[^ ]*)( \(deleted\))?$|\2\t\3\t\4\t\1|p" "$scratch/fatrace.txt" |
  grep -v "^$collector_pid	" >"$scratch/fatrace.tsv" || true

# An etwaudit row s stands for a fatrace line x: same pid, one of the line's
# operations, and the same path (or, for a directory line, a file in it).
stands_for="s.pid = x.pid AND instr(' ' || x.ops || ' ', ' ' || s.op || ' ')
  AND CASE WHEN x.by_directory THEN s.directory = x.path || '/' ELSE s.path = x.path END"
# One key for the names a file has before and after the workload's mv (g<i>
# becomes h<i>), from the columns path and directory (with its trailing /).
file_key="directory || replace(substr(path, length(directory) + 1, 1), 'h', 'g') || substr(path, length(directory) + 2)"

sqlite3 "$scratch/compare.db" <<SQL
.mode tabs
CREATE TABLE lines (pid INTEGER, flags TEXT, path TEXT, comm TEXT);
.import $scratch/fatrace.tsv lines
ATTACH '$scratch/audit.db' AS audit;
-- One row per flag of a fatrace line, with the etwaudit operations that
-- stand for it. fatrace names the directory for + D < > (no file name), and
-- prints C and W for a close after writing.
CREATE TABLE expected (pid, flag, path, comm, ops, by_directory, directory);
WITH RECURSIVE flags(pid, path, comm, flag, rest) AS (
  SELECT pid, path, comm, substr(flags, 1, 1), substr(flags, 2) FROM lines
  UNION ALL SELECT pid, path, comm, substr(rest, 1, 1), substr(rest, 2) FROM flags WHERE rest <> '')
INSERT INTO expected
SELECT DISTINCT pid, flag, path, comm,
       CASE flag WHEN 'O' THEN 'open' WHEN 'R' THEN 'read' WHEN 'W' THEN 'write close_write'
                 WHEN 'C' THEN 'close close_write' WHEN '+' THEN 'create' WHEN 'D' THEN 'delete'
                 WHEN '<' THEN 'rename' WHEN '>' THEN 'rename' END,
       flag IN ('+', 'D', '<', '>'), rtrim(path, replace(path, '/', ''))
FROM flags;
CREATE TABLE seen AS
SELECT p.pid, o.name AS op, f.path,
       rtrim(f.path, replace(f.path, '/', '')) AS directory  -- with its trailing /
FROM audit.events e JOIN audit.processes p USING (process_id) JOIN audit.files f USING (file_id)
JOIN audit.ops o ON o.op = e.op
WHERE f.path LIKE '$work/%';
CREATE INDEX seen_by_pid ON seen (pid, path);
CREATE INDEX seen_by_directory ON seen (pid, directory);
-- Both tools name a file by what it is called when they read the event, so
-- a file renamed in between can carry either name in either tool.
ALTER TABLE seen ADD COLUMN file_key TEXT;
UPDATE seen SET file_key = $file_key;
CREATE INDEX seen_by_key ON seen (pid, file_key);
ALTER TABLE expected ADD COLUMN file_key TEXT;
UPDATE expected SET file_key = $file_key;
ALTER TABLE expected ADD COLUMN found INTEGER;
ALTER TABLE expected ADD COLUMN found_renamed INTEGER;
UPDATE expected AS x SET found = EXISTS (SELECT 1 FROM seen s WHERE $stands_for);
UPDATE expected AS x SET found_renamed = NOT found AND NOT by_directory AND EXISTS (
  SELECT 1 FROM seen s WHERE s.pid = x.pid AND instr(' ' || x.ops || ' ', ' ' || s.op || ' ')
    AND s.file_key = x.file_key);
-- etwaudit's rows that no fatrace line stands for.
CREATE TABLE extra AS
SELECT s.* FROM seen s WHERE NOT EXISTS (SELECT 1 FROM expected x WHERE $stands_for);

.mode column
.headers on
SELECT flag AS fatrace, ops AS "etwaudit op", count(*) AS lines, sum(found) AS "same name",
       sum(found_renamed) AS "other name", printf('%.2f %%', 100.0 * sum(found + found_renamed) / count(*)) AS recall
FROM expected GROUP BY flag ORDER BY flag;
SELECT count(*) AS lines, sum(found) AS "same name", sum(found_renamed) AS "other name",
       printf('%.2f %%', 100.0 * sum(found) / count(*)) AS "recall, same name",
       printf('%.2f %%', 100.0 * sum(found + found_renamed) / count(*)) AS recall
FROM expected;
.headers off
SELECT '';
SELECT 'missed by etwaudit (first 10):';
SELECT '  ' || comm || '(' || pid || ') ' || flag || ' ' || path FROM expected WHERE NOT found AND NOT found_renamed
LIMIT 10;
SELECT '';
SELECT 'etwaudit rows without a fatrace line, by operation:';
.headers on
SELECT op, count(*) AS rows,
       CASE WHEN EXISTS (SELECT 1 FROM expected x WHERE x.pid = e.pid AND x.file_key = e.file_key
                           AND instr(' ' || x.ops || ' ', ' ' || e.op || ' '))
            THEN 'the same event, named before or after the rename'
            WHEN EXISTS (SELECT 1 FROM expected x WHERE x.file_key = e.file_key AND x.pid = e.pid)
            THEN 'fatrace merged it into a line of another operation'
            WHEN EXISTS (SELECT 1 FROM expected x WHERE x.file_key = e.file_key)
            THEN 'fatrace has no line of this process for the file (it has others)'
            ELSE 'fatrace printed nothing for this workload file' END AS why
FROM extra e GROUP BY op, why ORDER BY rows DESC;
SQL

recall=$(sqlite3 "$scratch/compare.db" "SELECT CAST(1000000 * sum(found + found_renamed) / count(*) AS INTEGER) FROM expected")
events=$(sqlite3 "$scratch/compare.db" "SELECT count(*) FROM seen")
echo
echo "workload: $workers processes x $files files in $elapsed_ms ms; etwaudit recorded $events events in it"
sed 's/^/collector: /' "$scratch/collect.txt"
[[ -z $fatrace_note ]] || echo "note: $fatrace_note"
if ((recall < 990000)); then
  echo "compare-fatrace: FAILED: recall $((recall / 10000)).$((recall % 10000 / 100)) % is under 99 %" >&2
  exit 1
fi
echo "compare-fatrace: recall $((recall / 10000)).$((recall % 10000 / 100)) % (>= 99 %)"
