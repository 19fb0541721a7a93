#!/usr/bin/env python3
"""Renders `etwaudit report --output` in headless Chromium and checks what it shows.

    check-html-report.py --etwaudit EXE --sample EVENTS.jsonl --out DIR [--screenshot PNG]

Makes a database of two runs (the bundled sample, then a second run two hours
later, whose run record is given 7 lost and 3 dropped events), writes the
page, and has Debian's chromium load it from the file: the DOM it builds
(--dump-dom) and a screenshot. Then it checks that:

- the bars of top files and top processes carry the figures of
  `etwaudit query top-files` / `top-processes --format json` for the same
  filters, and show their event counts;
- the timeline's bars add up, per bucket and operation, to `query timeline`
  with the page's bucket;
- the totals, the coverage, the gap and the loss marks are those of
  `query summary` and `query gaps`, and the unresolved names those of
  `query unresolved`;
- the screenshot is a page of the expected width whose charts were drawn
  (pixels in the colours of reads and writes, and of the gap).

It runs twice: over everything, and with --process, --since and --until (a
window that ends before now, so that its gaps are the same in the page and
in the query run after it). Exits 77 (skipped) when chromium is not installed, 1 on the first disagreement.
"""

import argparse
import html.parser
import json
import os
import re
import shutil
import sqlite3
import struct
import subprocess
import sys
import zlib


def fail(message):
    print(f"check-html-report: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


class Elements(html.parser.HTMLParser):
    """Every element as (tag, attributes, the data-chart/section it is in, its text)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.elements = []
        self.stack = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        within = [e for e in self.stack if e[1].get("data-chart") or e[0] == "section" or e[0] == "article"]
        element = [tag, attributes, [(e[0], e[1].get("data-chart") or e[1].get("id")) for e in within], ""]
        self.elements.append(element)
        if tag not in ("meta", "br", "hr", "img", "link", "input"):  # the void elements
            self.stack.append(element)

    def handle_endtag(self, tag):
        if not any(element[0] == tag for element in self.stack):
            return
        while self.stack:
            element = self.stack.pop()
            if element[0] == tag:
                break

    def handle_data(self, data):
        for element in self.stack:
            element[3] += data

    def select(self, tag, within=None, **attributes):
        found = []
        for element in self.elements:
            if element[0] != tag:
                continue
            if within and not any(name == within for _, name in element[2]):
                continue
            if all(element[1].get(key.replace("_", "-")) == value for key, value in attributes.items()):
                found.append(element)
        return found


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        fail(f"{' '.join(command)} exited {result.returncode}: {result.stderr.strip()}")
    return result.stdout


def chromium(args, out):
    profile = os.path.join(out, "chromium-profile")
    command = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--hide-scrollbars", f"--user-data-dir={profile}"] + args
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def png_pixels(path):
    """Width, height and the set of RGB colours of an 8-bit RGB(A) PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path} is not a PNG")
    at, idat, header = 8, b"", None
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    width, height, depth, colour_type = header[:4]
    if depth != 8 or colour_type not in (2, 6):
        fail(f"{path}: unexpected PNG format (depth {depth}, colour type {colour_type})")
    channels = 3 if colour_type == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    colours = set()
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up = previous[x]
            upper_left = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - upper_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - upper_left)
                predictor = left if pa <= pb and pa <= pc else up if pb <= pc else upper_left
                line[x] = (line[x] + predictor) & 0xFF
        for x in range(0, stride, channels * 2):  # every other pixel is enough
            colours.add(bytes(line[x:x + 3]))
        previous = line
    return width, height, colours


def query(etwaudit, db, report, filters, *extra):
    text = run([etwaudit, "query", report, "--db", db, "--format", "json", *filters, *extra])
    return json.loads(text) if text.strip() else []


def check_page(etwaudit, db, out, name, filters, screenshot=None):
    page = os.path.join(out, f"{name}.html")
    run([etwaudit, "report", "--db", db, "--output", page, *filters])
    rendered = chromium(["--dump-dom", f"file://{page}"], out)
    if rendered.returncode != 0 or "</html>" not in rendered.stdout:
        fail(f"chromium could not render {page}: {rendered.stderr.strip()[-500:]}")
    dom = Elements()
    dom.feed(rendered.stdout)

    # Top files and processes: every figure of the reports' rows.
    for chart, report, key in (("top-files", "top-files", "path"), ("top-processes", "top-processes", "process")):
        rows = dom.select("g", within=chart)
        expected = query(etwaudit, db, report, filters, "--limit", "15")
        if len(rows) != len(expected):
            fail(f"{name}: {chart} shows {len(rows)} rows, query {report} gives {len(expected)}")
        partners = "processes" if key == "path" else "files"
        for element, row in zip(rows, expected):
            attributes, text = element[1], element[3]
            shown = (attributes.get(f"data-{key}"), int(attributes["data-read-bytes"]),
                     int(attributes["data-write-bytes"]), int(attributes["data-disk-bytes"]),
                     int(attributes["data-events"]), int(attributes[f"data-{partners}"]))
            wanted = (row[key], row["read_bytes"], row["write_bytes"], row["disk_bytes"], row["events"], row[partners])
            if shown != wanted:
                fail(f"{name}: {chart} row {shown} is not query {report}'s {wanted}")
            if f"{row['events']:,} events" not in text:
                fail(f"{name}: {chart} row of {row[key]} does not show '{row['events']:,} events': {text!r}")

    # The timeline: every bar, per bucket and operation.
    charts = dom.select("svg", data_chart="timeline-events")
    if len(charts) != 1:
        fail(f"{name}: the page has no events timeline")
    bucket_ns = int(charts[0][1]["data-bucket-ns"])
    bucket = {60 * 10**9: "1m", 3600 * 10**9: "1h", 86400 * 10**9: "1d"}[bucket_ns]
    shown = sorted((e[1]["data-bucket"], e[1]["data-op"], int(e[1]["data-events"]))
                   for e in dom.select("rect", within="timeline-events"))
    wanted = sorted((r["bucket"], r["op"], r["events"]) for r in query(etwaudit, db, "timeline", filters,
                                                                       "--bucket", bucket))
    if shown != wanted or not shown:
        fail(f"{name}: the timeline's bars {shown[:5]}... are not query timeline --bucket {bucket}'s {wanted[:5]}...")

    # Totals, coverage, gaps, losses, unresolved names.
    summary = query(etwaudit, db, "summary", filters)
    figures = {e[1]["data-figure"]: e[3] for e in dom.select("div") if "data-figure" in e[1]}
    value = lambda figure: int(re.match(r"[\d,]+", figures[figure].strip()).group(0).replace(",", ""))
    checks = {"events": summary["totals"][0]["events"], "processes": summary["totals"][0]["processes"],
              "files": summary["totals"][0]["files"], "runs": summary["coverage"][0]["runs"],
              "gaps": summary["coverage"][0]["gaps"], "lost": summary["coverage"][0]["lost"],
              "dropped": summary["coverage"][0]["dropped"]}
    for figure, wanted in checks.items():
        if value(figure) != wanted:
            fail(f"{name}: the page shows {figures[figure]!r} {figure}, query summary says {wanted}")
    gaps = query(etwaudit, db, "gaps", filters)
    shown = [(e[1]["data-from"], e[1]["data-until"]) for e in dom.select("rect", within="coverage")
             if e[1].get("class") == "gap"]
    if shown != [(g["gap_from"], g["gap_until"]) for g in gaps["gaps"]]:
        fail(f"{name}: gaps {shown} are not query gaps' {gaps['gaps']}")
    losses = [(e[1]["data-run"], int(e[1]["data-lost"]), int(e[1]["data-dropped"])) for e in dom.select("path")
              if e[1].get("class") == "loss"]
    wanted = [(str(r["run_id"]), r["lost"], r["dropped"]) for r in gaps["runs"] if r["lost"] or r["dropped"]]
    if losses != wanted:
        fail(f"{name}: loss marks {losses} are not the runs' {wanted}")
    shown = [(e[1]["data-process"], int(e[1]["data-events"])) for e in dom.select("tr", within="unresolved")
             if "data-events" in e[1]]
    wanted = [(r["process"], r["events"]) for r in query(etwaudit, db, "unresolved", filters)]
    if shown != wanted:
        fail(f"{name}: unresolved names {shown} are not query unresolved's {wanted}")

    if screenshot:
        shot = chromium(["--window-size=1200,2200", f"--screenshot={screenshot}", f"file://{page}"], out)
        if shot.returncode != 0 or not os.path.exists(screenshot):
            fail(f"chromium took no screenshot: {shot.stderr.strip()[-500:]}")
        width, height, colours = png_pixels(screenshot)
        if (width, height) != (1200, 2200):
            fail(f"the screenshot is {width}x{height}, not 1200x2200")
        for colour, what in (("4e79a7", "reads"), ("e15759", "writes"), ("e34a33", "the gap")):
            if bytes.fromhex(colour) not in colours:
                fail(f"the screenshot has no pixel of #{colour} ({what}): the charts were not drawn")
    print(f"check-html-report: {name}: {len(dom.elements)} elements; top files, top processes, "
          f"{len(dom.select('rect', within='timeline-events'))} timeline bars, totals, gaps, losses and unresolved "
          f"names agree with etwaudit query")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--etwaudit", required=True)
    parser.add_argument("--sample", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--screenshot")
    args = parser.parse_args()
    if not shutil.which("chromium"):
        print("check-html-report: skipped: chromium is not installed (apt-get install chromium)")
        return 77
    out = os.path.abspath(args.out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    db = os.path.join(out, "audit.db")
    run([args.etwaudit, "collect", "--quiet", "--db", db, "--source", f"replay:{args.sample}"])
    # A second run two hours after the sample's (2026-12-02T10:15-10:17Z): a gap between them.
    later = os.path.join(out, "later.jsonl")
    with open(later, "w") as f:
        for n in range(40):
            f.write(json.dumps({"time": f"2026-12-02T12:{n // 10:02d}:{n % 60:02d}.5Z", "pid": 4242,
                                "process": "C:\\Tools\\backup <nightly> & co.exe", "op": "write" if n % 2 else "read",
                                "path": f"D:\\Backup\\part{n % 4}.bin", "offset": n * 4096, "size": 4096}) + "\n")
    run([args.etwaudit, "collect", "--quiet", "--db", db, "--source", f"replay:{later}"])
    with sqlite3.connect(db) as connection:  # what a live run that fell behind records
        connection.execute("UPDATE collector_runs SET events_lost = 7, events_dropped = 3 WHERE run_id = 2")

    check_page(args.etwaudit, db, out, "everything", [], args.screenshot or os.path.join(out, "report.png"))
    check_page(args.etwaudit, db, out, "filtered", ["--process", "*.exe", "--since", "2026-12-02T10:16:00Z",
                                                 "--until", "2026-12-02T13:00:00Z"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
