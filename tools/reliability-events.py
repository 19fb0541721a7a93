#!/usr/bin/env python3
"""Replay input for tools/reliability.sh: JSON Lines events (see the README's
replay format) with distinct, increasing times, so that the events a database
holds can be compared line by line with the start of the input.

  reliability-events.py file N OUT.jsonl [EXPECTED.tsv]
      N events into OUT.jsonl as fast as possible; EXPECTED.tsv gets one line
      per event as the reliability checks read it back from the database:
      time_ns, pid, op, path, offset, size (tab-separated, empty when absent).
  reliability-events.py steady RATE SECONDS SPAN [FIRST_TIME_NS]
      RATE events a second for SECONDS on stdout (a FIFO the collector
      replays), their times spread over SPAN seconds: a long recording played
      back compressed. Ends early, quietly, when the reader goes away.

The same seed always gives the same events. A few hundred processes work on a
few thousand files, so the collector's catalog stops growing early and a soak
shows its steady state.
"""

import json
import random
import sys
import time

FIRST_TIME_NS = 1_796_205_600_000_000_000  # 2026-12-02T10:00:00Z
PROCESSES = 300
FILES = 5000
OPS = ["read", "read", "read", "write", "write", "open", "close", "close_write", "create", "delete", "rename"]


def events(count, step_ns, first_time_ns):
    """Yields (jsonl line, expected tsv line) pairs; times strictly increase."""
    rng = random.Random(20261202)
    images = [f"/usr/bin/worker{p % 37}" for p in range(PROCESSES)]
    time_ns = first_time_ns
    for i in range(count):
        time_ns += 1 + rng.randrange(2 * step_ns)
        process = min(int(rng.paretovariate(1.2)) - 1, PROCESSES - 1)
        pid = 1000 + process
        op = rng.choice(OPS)
        path = f"/srv/data/d{rng.randrange(50)}/f{min(int(rng.paretovariate(0.8)), FILES)}.dat"
        record = {"time": time_ns, "pid": pid, "tid": pid + 1, "process": images[process], "op": op, "path": path}
        offset = size = ""
        if op in ("read", "write"):
            offset, size = rng.randrange(1 << 20) * 512, rng.randrange(1, 1 << 16)
            record["offset"], record["size"] = offset, size
        yield json.dumps(record, separators=(",", ":")), f"{time_ns}\t{pid}\t{op}\t{path}\t{offset}\t{size}"


def write_file(count, out_path, expected_path=None):
    with open(out_path, "w") as out, open(expected_path or "/dev/null", "w") as expected:
        for line, row in events(count, 500_000, FIRST_TIME_NS):
            out.write(line + "\n")
            expected.write(row + "\n")


def write_steady(rate, seconds, span, first_time_ns):
    total = int(rate * seconds)
    step_ns = max(1, int(span * 1e9 / max(total, 1) / 2))
    tick = 0.05  # seconds between two writes
    per_tick = max(1, int(rate * tick))
    started = time.monotonic()
    chunk = []
    try:
        for i, (line, _) in enumerate(events(total, step_ns, first_time_ns), 1):
            chunk.append(line)
            if len(chunk) == per_tick or i == total:
                sys.stdout.write("\n".join(chunk) + "\n")
                sys.stdout.flush()
                chunk.clear()
                delay = started + i / rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
    except BrokenPipeError:
        sys.stderr.close()  # the collector stopped reading: not an error here
        return


def main(argv):
    if len(argv) >= 3 and argv[0] == "file":
        write_file(int(argv[1]), argv[2], argv[3] if len(argv) > 3 else None)
    elif len(argv) >= 4 and argv[0] == "steady":
        first = int(argv[4]) if len(argv) > 4 else FIRST_TIME_NS
        write_steady(float(argv[1]), float(argv[2]), float(argv[3]), first)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
