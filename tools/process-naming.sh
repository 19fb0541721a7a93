#!/usr/bin/env bash
# How well the Linux collector names the processes behind events, measured
# against ground truth: N rounds of seven short-lived commands, each started
# by a shell that logs its pid and then execs the command (so the pid is the
# command's), while `etwaudit collect` and fatrace both watch. For each
# command it prints the share of the events on the workload's files that
# each tool named
#
#   exe     with the command's executable path (etwaudit only: fatrace has none)
#   comm    with its command name only (etwaudit: "[cat]"; fatrace: "cat")
#   wrong   with another program's path or name
#   pid     with the pid alone
#
# and the share of the commands (processes) whose row has their command line
# (each is started by an absolute path, so a command line starting with '/'
# is the command's, not the logging shell's before the exec).
#
#   sudo bash tools/process-naming.sh [--rounds N] [--load] [--quick] [--etwaudit PATH] [--source ebpf]
#
# --load runs a compile loop on every core beside the workload (an exec-heavy
# CPU load, as a build is). --quick: 40 rounds, a check for ctest. --source
# ebpf measures the eBPF source instead of fanotify. Needs root
# (fanotify); exits 77 (skipped) without it. Exits 1 when etwaudit named any
# event wrongly or fewer than --goal percent (default 95) by executable path.
set -euo pipefail
cd "$(dirname "$0")/.."
me=process-naming
source tools/lib.sh

rounds=500
load=0
goal=95
etwaudit=build/etwaudit
source=fanotify
while (($#)); do
  case $1 in
    --rounds) rounds=$2; shift ;;
    --load) load=1 ;;
    --quick) rounds=40 ;;
    --goal) goal=$2; shift ;;
    --etwaudit) etwaudit=$2; shift ;;
    --source) source=$2; shift ;;
    *) echo "process-naming: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

skip_unless_root fanotify
require_tools sqlite3 python3 "$etwaudit"
have_fatrace=0
command -v fatrace >/dev/null && have_fatrace=1

# A folder of its own on the filesystem of the current directory (/tmp may be
# tmpfs); both tools watch only that filesystem's events in it.
scratch=$(mktemp -d "$PWD/.process-naming.XXXXXX")
load_pids=()
trap 'kill ${fatrace_pid:-} ${collector_pid:-} "${load_pids[@]}" 2>/dev/null || true; [[ -n ${KEEP_SCRATCH:-} ]] || rm -rf "$scratch"' EXIT
work=$scratch/work
mkdir "$work"
log=$scratch/pids.tsv  # command, pid, expected executable, the name it was started by

if ((load)); then
  printf 'int f(int x) { return x * 2; }\n' >"$scratch/load.c"
  for ((c = 0; c < $(nproc); c++)); do
    (while :; do cc -O2 -c "$scratch/load.c" -o "$scratch/load$c.o" 2>/dev/null; done) &
    load_pids+=($!)
  done
fi

if ((have_fatrace)); then
  fatrace -o "$scratch/fatrace.txt" 2>"$scratch/fatrace.err" & fatrace_pid=$!
fi
where=(--mount "$work")  # fanotify: that filesystem; eBPF records every one
[[ $source == fanotify ]] || where=()
"$etwaudit" collect --source "$source" --db "$scratch/audit.db" "${where[@]}" --quiet 2>"$scratch/collect.txt" &
collector_pid=$!
sleep 1.5  # both have set up their marks
if grep -q "built without the eBPF source" "$scratch/collect.txt"; then
  echo "process-naming: skipped: $(grep -o 'built without the eBPF source.*' "$scratch/collect.txt")"
  exit 77
fi

py=/usr/bin/python3  # Debian's (a python3 earlier in PATH may be a wrapper script)
# Each command: a shell logs its own pid and the program it is about to
# become, then execs it. The log is outside the workload folder.
run() {  # name program command...
  local name=$1 program=$2
  shift 2
  sh -c 'printf "%s\t%s\t%s\t%s\n" "$0" "$$" "$1" "${3##*/}" >>"$2"; shift 2; exec "$@"' "$name" "$(readlink -f "$program")" "$log" "$@"
}
started=$(date +%s%N)
for ((i = 0; i < rounds; i++)); do
  f=$work/f$i.txt
  run sh /bin/sh /bin/sh -c "echo round $i > $f"
  run cat /bin/cat /bin/cat "$f" >/dev/null
  run head /usr/bin/head /usr/bin/head -c 4 "$f" >/dev/null
  run cp /bin/cp /bin/cp "$f" "$work/g$i.txt"
  run python3 "$py" "$py" -c "open('$work/g$i.txt').read()"
  run mv /bin/mv /bin/mv "$work/g$i.txt" "$work/h$i.txt"
  run rm /bin/rm /bin/rm "$f" "$work/h$i.txt"
done
elapsed_ms=$((($(date +%s%N) - started) / 1000000))
sleep 1.5  # both have read the last events
# The collector's CPU time (user + system, in clock ticks) before it stops.
cpu_ticks=$(awk '{print $14 + $15}' "/proc/$collector_pid/stat")
((have_fatrace)) && kill -INT "$fatrace_pid" 2>/dev/null
kill -TERM "$collector_pid"
((have_fatrace)) && { wait "$fatrace_pid" 2>/dev/null || true; }
wait "$collector_pid" || { cat "$scratch/collect.txt" >&2; exit 1; }
((${#load_pids[@]})) && kill "${load_pids[@]}" 2>/dev/null
load_pids=()

touch "$scratch/fatrace.txt"
sed -nE "s|^(.*)\(([0-9]+)\): ([A-Z<>+]+) +($work/[^ ]*)( \(deleted\))?$|\2\t\1|p" "$scratch/fatrace.txt" >"$scratch/fatrace.tsv" || true

sqlite3 "$scratch/naming.db" <<SQL
.mode tabs
CREATE TABLE truth (command TEXT, pid INTEGER PRIMARY KEY, exe TEXT, started_as TEXT);
-- A process's command name (comm) is what it was started by, or its executable's name, cut to 15.
CREATE VIEW names AS
SELECT pid, substr(started_as, 1, 15) AS comm FROM truth
UNION SELECT pid, substr(substr(exe, length(rtrim(exe, replace(exe, '/', ''))) + 1), 1, 15) FROM truth;
.import $log truth
CREATE TABLE fatrace (pid INTEGER, comm TEXT);
.import $scratch/fatrace.tsv fatrace
ATTACH '$scratch/audit.db' AS audit;
-- etwaudit: each event on the workload's files, by the process it was given.
CREATE TABLE etwaudit AS
SELECT t.command, t.pid, t.exe AS expected, p.image, p.command_line,
       CASE WHEN p.image = t.exe THEN 'exe'
            WHEN p.image IS NULL OR p.image = '' THEN 'pid'
            WHEN EXISTS (SELECT 1 FROM names n WHERE n.pid = t.pid AND p.image = '[' || n.comm || ']') THEN 'comm'
            ELSE 'wrong' END AS named
FROM audit.events e JOIN audit.processes p USING (process_id) JOIN audit.files f USING (file_id)
JOIN truth t ON t.pid = p.pid
WHERE f.path LIKE '$work/%';
-- fatrace: its lines for the workload's files; comm is at most 15 characters.
CREATE TABLE fatrace_named AS
SELECT t.command, x.comm,
       CASE WHEN EXISTS (SELECT 1 FROM names n WHERE n.pid = t.pid AND x.comm = n.comm) THEN 'comm'
            WHEN x.comm IS NULL OR x.comm = '' OR x.comm = 'unknown' THEN 'pid'
            ELSE 'wrong' END AS named
FROM fatrace x JOIN truth t ON t.pid = x.pid;
.mode column
.headers on
SELECT t.command,
       (SELECT count(*) FROM etwaudit e WHERE e.command = t.command) AS events,
       (SELECT printf('%.1f', 100.0 * avg(named = 'exe')) FROM etwaudit e WHERE e.command = t.command) AS "exe %",
       (SELECT printf('%.1f', 100.0 * avg(named = 'comm')) FROM etwaudit e WHERE e.command = t.command) AS "comm %",
       (SELECT printf('%.1f', 100.0 * avg(named = 'wrong')) FROM etwaudit e WHERE e.command = t.command) AS "wrong %",
       (SELECT printf('%.1f', 100.0 * avg(named = 'pid')) FROM etwaudit e WHERE e.command = t.command) AS "pid %",
       (SELECT printf('%.1f', 100.0 * avg(has)) FROM (SELECT max(command_line GLOB '/*') AS has FROM etwaudit e
        WHERE e.command = t.command GROUP BY pid)) AS "cmdline %",
       (SELECT count(*) FROM fatrace_named x WHERE x.command = t.command) AS "fatrace lines",
       (SELECT printf('%.1f', 100.0 * avg(named = 'comm')) FROM fatrace_named x WHERE x.command = t.command) AS "fatrace comm %",
       (SELECT printf('%.1f', 100.0 * avg(named = 'wrong')) FROM fatrace_named x WHERE x.command = t.command) AS "fatrace wrong %"
FROM (SELECT DISTINCT command FROM truth) t ORDER BY t.command;
SELECT count(*) AS events, printf('%.1f', 100.0 * avg(named = 'exe')) AS "exe %",
       printf('%.1f', 100.0 * avg(named = 'comm')) AS "comm %", printf('%.1f', 100.0 * avg(named = 'wrong')) AS "wrong %",
       printf('%.1f', 100.0 * avg(named = 'pid')) AS "pid %",
       (SELECT printf('%.1f', 100.0 * avg(has)) FROM (SELECT max(command_line GLOB '/*') AS has FROM etwaudit
        GROUP BY pid)) AS "cmdline %",
       (SELECT count(*) FROM fatrace_named) AS "fatrace lines",
       (SELECT printf('%.1f', 100.0 * avg(named = 'comm')) FROM fatrace_named) AS "fatrace comm %"
FROM etwaudit;
.mode list
.headers off
SELECT 'etwaudit named ' || command || ' wrongly as ' || image || ' (' || count(*) || ' events)'
FROM etwaudit WHERE named = 'wrong' GROUP BY command, image ORDER BY count(*) DESC LIMIT 5;
SQL

exe_permille=$(sqlite3 "$scratch/naming.db" "SELECT CAST(1000 * avg(named = 'exe') AS INTEGER) FROM etwaudit")
wrong=$(sqlite3 "$scratch/naming.db" "SELECT count(*) FROM etwaudit WHERE named = 'wrong'")
events=$(sqlite3 "$scratch/naming.db" "SELECT count(*) FROM etwaudit")
echo
echo "workload: $rounds rounds of 7 commands ($((rounds * 7)) processes) in $elapsed_ms ms$( ((load)) && echo ", beside a compile loop on $(nproc) cores")"
sed 's/^/collector: /' "$scratch/collect.txt"
received=$(sed -nE 's/.*received ([0-9,]+),.*/\1/p' "$scratch/collect.txt" | tr -d ,)
if ((received > 0)); then
  awk -v t="$cpu_ticks" -v hz="$(getconf CLK_TCK)" -v n="$received" \
    'BEGIN { printf "collector CPU: %.2f s, %.2f us per event received\n", t / hz, t / hz * 1e6 / n }'
fi
((have_fatrace)) || echo "note: fatrace is not installed: its columns are empty"
if ((events == 0 || wrong > 0 || exe_permille < goal * 10)); then
  echo "process-naming: FAILED: $((exe_permille / 10)).$((exe_permille % 10)) % of $events events named by executable path (goal $goal %), $wrong wrongly" >&2
  exit 1
fi
cmdline_permille=$(sqlite3 "$scratch/naming.db" \
  "SELECT CAST(1000 * avg(has) AS INTEGER) FROM (SELECT max(command_line GLOB '/*') AS has FROM etwaudit GROUP BY pid)")
echo "process-naming: $((exe_permille / 10)).$((exe_permille % 10)) % of $events events named by executable path, none wrongly;" \
  "$((cmdline_permille / 10)).$((cmdline_permille % 10)) % of the commands with their command line"
