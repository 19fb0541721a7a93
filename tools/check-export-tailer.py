#!/usr/bin/env python3
"""A log forwarder's view of `etwaudit export --follow`: a tailer reads the
export folder while a collector writes events and the export rotates and
deletes files under it, the way Filebeat, Fluent Bit or Vector tail a folder
(each file read through its own open handle from where it stopped, a new
name picked up as it appears, only whole lines taken).

Checks: every event arrives exactly once, no line is cut or repeated, files
rotated (many names) and the oldest were deleted while being tailed. The
export writes a backlog in bursts (a file in milliseconds); --min-age keeps
each file long enough for the tailer to open it.

    python3 tools/check-export-tailer.py ETWAUDIT
"""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

exe = os.path.realpath(sys.argv[1])
work = tempfile.mkdtemp(prefix="etwaudit-tailer-")
db, out = os.path.join(work, "audit.db"), os.path.join(work, "out")
events = 6000


def line(n):
    return json.dumps({"time": 1796202000000000000 + n * 1000000, "pid": 100 + n % 3, "process": "C:\\app.exe",
                       "op": "write", "path": "C:\\data\\f%d.bin" % (n % 40), "offset": n, "size": 512}) + "\n"


collector = subprocess.Popen([exe, "collect", "--source", "replay:-", "--db", db, "--quiet", "--coalesce-ms", "0"],
                             stdin=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
collector.stdin.write(line(0))
collector.stdin.flush()
for _ in range(200):  # the database and its first event
    try:
        if sqlite3.connect(db).execute("SELECT count(*) FROM events").fetchone()[0] > 0:
            break
    except sqlite3.Error:
        pass
    time.sleep(0.05)
exporter = subprocess.Popen([exe, "export", "--db", db, "--out", out, "--follow", "--interval", "20ms",
                             "--max-file-size", "4KB", "--keep-files", "3", "--min-age", "1s", "--batch", "40"],
                            stderr=open(os.path.join(work, "export.err"), "w"))

handles, partial, names_seen, uids, problems = {}, {}, set(), [], []
deleted_while_open = 0
stop = threading.Event()


def tail_once():
    global deleted_while_open
    try:
        names = sorted(n for n in os.listdir(out) if n.endswith(".jsonl"))
    except FileNotFoundError:
        names = []
    for name in names:
        if name not in handles:
            try:
                handles[name] = open(os.path.join(out, name), "rb")
            except FileNotFoundError:  # created and deleted between two looks: its lines are lost to us
                problems.append("%s went before the tailer could open it" % name)
                continue
            partial[name] = b""
            names_seen.add(name)
    for name, handle in handles.items():
        data = handle.read()
        if not data:
            continue
        data = partial[name] + data
        *whole, partial[name] = data.split(b"\n")
        for text in whole:
            try:
                uids.append(json.loads(text)["event_uid"])
            except (ValueError, KeyError) as error:
                problems.append("%s: a line that is not a whole event (%s): %r" % (name, error, text[:80]))
    for name in handles:
        if not os.path.exists(os.path.join(out, name)):
            deleted_while_open += name not in gone
            gone.add(name)


gone = set()


def tailer():
    while not stop.is_set():
        tail_once()
        time.sleep(0.005)


thread = threading.Thread(target=tailer)
thread.start()
# 6,000 events over about three seconds.
for start in range(1, events, 100):
    collector.stdin.write("".join(line(n) for n in range(start, min(start + 100, events))))
    collector.stdin.flush()
    time.sleep(0.05)
collector.stdin.close()
collector.wait(timeout=60)
connection = sqlite3.connect(db)
last = connection.execute("SELECT max(id) FROM events").fetchone()[0]
for _ in range(600):  # until the export has everything
    through = connection.execute("SELECT max(shipped_through) FROM destinations").fetchone()[0]
    if through == last:
        break
    time.sleep(0.05)
exporter.send_signal(signal.SIGTERM)
exporter.wait(timeout=30)
stop.set()
thread.join()
tail_once()

expected = {uuid + ":" + str(i) for uuid, i in connection.execute(
    "SELECT (SELECT db_uuid FROM identity), id FROM events")}
fail = 0


def check(what, ok, detail):
    global fail
    print("check-export-tailer: %s: %s (%s)" % ("ok" if ok else "FAIL", what, detail))
    fail |= not ok


check("every event read once", sorted(uids) == sorted(expected), "%d lines, %d events" % (len(uids), len(expected)))
check("no line repeated", len(uids) == len(set(uids)), "%d repeats" % (len(uids) - len(set(uids))))
check("no cut line left at the end of a file", all(p == b"" for p in partial.values()),
      "%d files" % len(partial))
check("no problem while tailing", not problems, "; ".join(problems[:3]) or "none")
check("files rotated under the tailer", len(names_seen) > 10, "%d names" % len(names_seen))
check("the oldest were deleted while tailed", deleted_while_open > 0 and len(os.listdir(out)) < len(names_seen),
      "%d deleted, %d left" % (deleted_while_open, len(os.listdir(out))))
for handle in handles.values():
    handle.close()
if fail:
    print(open(os.path.join(work, "export.err")).read(), file=sys.stderr)
subprocess.run(["rm", "-rf", work])
if fail:
    sys.exit(1)
print("check-export-tailer: every check held")
