#!/usr/bin/env bash
# The eBPF source against workloads whose bytes are known: dd writes a file
# of 16 blocks of 64 KiB and reads it back in 4 KiB blocks, cat reads it
# and exits at once, cp copies it (copy_file_range), python sends 256 KiB of
# it to another file (sendfile), mv renames the copy and rm deletes it by a
# relative name. The database must hold exactly those transfers (bytes,
# offsets), creates, renames and deletes, each named by its program and
# command line, and nothing lost. Then the filters the kernel applies:
# --exclude-path, --ops, --mount.
#
#   sudo bash tools/check-ebpf.sh ETWAUDIT
#
# It runs `collect` without --source: eBPF is the default live source where
# it loads.
# Exit 77 (skipped) when not root or when this etwaudit has no eBPF source.
set -euo pipefail
me=check-ebpf
source "$(dirname "$0")/lib.sh"
exe=$(realpath "$1")
skip_unless_root "loading eBPF programs"
require_tools sqlite3 dd
work=$(mktemp -d)
collector=
trap 'if [[ -n "$collector" ]]; then kill $collector 2>/dev/null; wait $collector 2>/dev/null || true; fi; rm -rf "$work"' EXIT
"$exe" collect --db "$work/audit.db" --quiet --coalesce-ms 0 2> "$work/collect.err" &  # eBPF: the default
collector=$!
for _ in $(seq 100); do grep -q "watching" "$work/collect.err" 2>/dev/null && break; sleep 0.1; done
if grep -q "built without the eBPF source" "$work/collect.err"; then
  echo "$me: skipped: $(grep -o 'built without the eBPF source.*' "$work/collect.err")"
  exit 77
fi
if grep -q "Operation not permitted" "$work/collect.err"; then  # root without CAP_BPF (a container)
  echo "$me: skipped: this root may not load eBPF programs: $(head -1 "$work/collect.err")"
  exit 77
fi
grep -q "watching" "$work/collect.err" || { echo "$me: the collector did not start:"; cat "$work/collect.err"; exit 1; }
grep -q "with eBPF" "$work/collect.err" || { echo "$me: eBPF is not the default live source:"; cat "$work/collect.err"; exit 1; }

file=$work/data.bin
dd if=/dev/zero of="$file" bs=64k count=16 status=none
dd if="$file" of=/dev/null bs=4k status=none
cat "$file" > /dev/null
cp "$file" "$work/copy.bin"  # copy_file_range
python3 -c 'import os, sys
source = os.open(sys.argv[1], os.O_RDONLY)
target = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT, 0o600)
sent = 0
while sent < 262144: sent += os.sendfile(target, source, sent, 262144 - sent)' "$file" "$work/sent.bin"
mv "$work/copy.bin" "$work/moved.bin"
(cd "$work" && rm moved.bin)  # a name relative to the working directory
sleep 1
kill -INT $collector
wait $collector
collector=

fail=0
check() {  # what, expected, got
  if [[ "$2" == "$3" ]]; then echo "$me: ok: $1 ($3)"; else echo "$me: FAIL: $1: expected $2, got $3"; fail=1; fi
}
q() { sqlite3 "$work/audit.db" "$1"; }
in_file="path = '$file'"
check "dd's writes: 16 of 64 KiB, bytes and offsets exact" "16|1048576|0|983040" \
  "$(q "SELECT count(*), sum(size), min(offset), max(offset) FROM v_events WHERE $in_file AND op = 'write'")"
check "...each where the one before ended" "0" \
  "$(q "SELECT count(*) FROM (SELECT offset, size, lag(offset + size) OVER (ORDER BY time_ns) AS expected FROM v_events WHERE $in_file AND op = 'write') WHERE expected IS NOT NULL AND offset != expected")"
check "dd's reads: 1 MiB in 4 KiB blocks" "1048576|256" \
  "$(q "SELECT sum(size), count(*) FILTER (WHERE size = 4096) FROM v_events WHERE $in_file AND op = 'read' AND command_line LIKE 'dd %'")"
check "cat's reads: the whole file, though cat exited at once" "1048576" \
  "$(q "SELECT sum(size) FROM v_events WHERE $in_file AND op = 'read' AND process LIKE '%/cat'")"
check "every event named by its program" "0" \
  "$(q "SELECT count(*) FROM v_events WHERE $in_file AND (process IS NULL OR process NOT LIKE '/%')")"
check "...and the command lines" "dd if=/dev/zero of=$file bs=64k count=16 status=none" \
  "$(q "SELECT DISTINCT command_line FROM v_events WHERE $in_file AND op = 'write'")"
# dd opens the file, moves it to its standard input or output (dup2) and
# closes both descriptors: two closes each; cat one.
check "opens and closes: of each descriptor" "3|5" \
  "$(q "SELECT count(*) FILTER (WHERE op = 'open'), count(*) FILTER (WHERE op = 'close') FROM v_events WHERE $in_file AND (process LIKE '%/dd' OR process LIKE '%/cat')")"
check "...the first dd created the file, and no one else did" "1|dd if=/dev/zero of=$file bs=64k count=16 status=none" \
  "$(q "SELECT count(*), group_concat(command_line) FROM v_events WHERE $in_file AND op = 'create'")"
check "cp: copy_file_range read the file and wrote the copy, which it created" "1048576|1048576|1" \
  "$(q "SELECT (SELECT sum(size) FROM v_events WHERE $in_file AND op = 'read' AND process LIKE '%/cp'),
               (SELECT sum(size) FROM v_events WHERE path = '$work/copy.bin' AND op = 'write'),
               (SELECT count(*) FROM v_events WHERE path = '$work/copy.bin' AND op = 'create')")"
check "sendfile: 256 KiB from the file at offset 0, to a file" "262144|0|262144" \
  "$(q "SELECT (SELECT sum(size) FROM v_events WHERE $in_file AND op = 'read' AND process LIKE '%python3%'),
               (SELECT min(offset) FROM v_events WHERE $in_file AND op = 'read' AND process LIKE '%python3%'),
               (SELECT sum(size) FROM v_events WHERE path = '$work/sent.bin' AND op = 'write')")"
check "mv: a rename under each name, each naming both" "2|2" \
  "$(q "SELECT count(*), count(*) FILTER (WHERE renamed_from = '$work/copy.bin' AND renamed_to = '$work/moved.bin') FROM v_events WHERE op = 'rename' AND path IN ('$work/copy.bin', '$work/moved.bin')")"
check "rm: the delete under the whole path, though rm was given a relative name" "1" \
  "$(q "SELECT count(*) FROM v_events WHERE op = 'delete' AND path = '$work/moved.bin' AND process LIKE '%/rm'")"
check "nothing lost" "0|0" "$(q "SELECT events_lost, events_dropped FROM collector_runs")"
# Path filters and --ops in the kernel: the reads and writes of a file left
# out never reach the collector (only its opens do: they carry the name),
# nor do the operations --ops did not pick. A file renamed out of the names
# left out is recorded from its rename on, through the descriptor it had.
mkdir "$work/skip"
"$exe" collect --db "$work/filter.db" --exclude-path "$work/skip/*" --exclude-path "*.later" --ops open,create,write,rename,delete \
  --quiet --coalesce-ms 0 2> "$work/filter.err" &
collector=$!
for _ in $(seq 100); do grep -q "watching" "$work/filter.err" 2>/dev/null && break; sleep 0.1; done
dd if=/dev/zero of="$work/skip/big.bin" bs=4k count=2000 status=none
dd if="$work/skip/big.bin" of=/dev/null bs=4k status=none
dd if=/dev/zero of="$work/kept.bin" bs=4k count=16 status=none
dd if="$work/kept.bin" of=/dev/null bs=4k status=none
# A glob the kernel cannot compare: the collector's verdict, once it has read the open.
python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o600)
os.write(fd, b"first")
time.sleep(0.3)
for _ in range(2000): os.write(fd, b"x")' "$work/file.later"
python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o600)
for _ in range(3): os.write(fd, b"left out ")
os.rename(sys.argv[1], sys.argv[2])
time.sleep(0.2)
for _ in range(2): os.write(fd, b"kept ")
os.close(fd)' "$work/skip/moved.txt" "$work/moved.txt"
sleep 1
kill -INT $collector
wait $collector
collector=
qf() { sqlite3 "$work/filter.db" "$1"; }
check "--exclude-path: nothing of the files left out is stored" "0" \
  "$(qf "SELECT count(*) FROM v_events WHERE (path LIKE '$work/skip/%' AND op != 'rename') OR path LIKE '%.later'")"
check "...the file kept: dd's 16 writes of 4 KiB, and no reads (--ops)" "16|65536|0" \
  "$(qf "SELECT count(*) FILTER (WHERE op = 'write'), sum(size) FILTER (WHERE op = 'write'), count(*) FILTER (WHERE op = 'read') FROM v_events WHERE path = '$work/kept.bin'")"
check "...the kernel left out 4,000 writes and 4,000 reads: under 20 reached the collector to be excluded" "yes" \
  "$(qf "SELECT CASE WHEN events_excluded < 20 THEN 'yes' ELSE 'no: ' || events_excluded || ' excluded' END FROM collector_runs")"
check "...a file renamed out of the names left out: its writes from then on" "2|10" \
  "$(qf "SELECT count(*), sum(size) FROM v_events WHERE path = '$work/moved.txt' AND op = 'write'")"
# --mount: only the filesystems named. A tmpfs of its own (when this root may
# mount one) is recorded; the disk the rest lies on is not.
mkdir "$work/tmpfs"
if mount -t tmpfs -o size=8m etwaudit-check "$work/tmpfs" 2>/dev/null; then
  "$exe" collect --db "$work/mount.db" --mount "$work/tmpfs" --quiet --coalesce-ms 0 2> "$work/mount.err" &
  collector=$!
  for _ in $(seq 100); do grep -q "watching" "$work/mount.err" 2>/dev/null && break; sleep 0.1; done
  echo in > "$work/tmpfs/in.txt"
  echo out > "$work/out.txt"
  sleep 0.5
  kill -INT $collector
  wait $collector
  collector=
  umount "$work/tmpfs"
  check "--mount: the filesystem named is recorded, no other" "1|0" \
    "$(sqlite3 "$work/mount.db" "SELECT count(*) FILTER (WHERE path = '$work/tmpfs/in.txt' AND op = 'write'), count(*) FILTER (WHERE path NOT LIKE '$work/tmpfs/%') FROM v_events")"
else
  echo "$me: skipped the --mount check: this root may not mount a tmpfs"
fi
[[ $fail -eq 0 ]] && echo "$me: every check held" || { echo "$me: some checks failed"; exit 1; }
