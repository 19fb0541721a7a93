#!/usr/bin/env python3
"""Keeps tools/acceptance-windows.ps1 from drifting away from etwaudit.

The acceptance script runs only on a real Windows machine with PowerShell,
which CI here has not (Debian packages no PowerShell, so it cannot run under
Wine either). What in it can go stale is checked against the program instead:

  - every etwaudit subcommand and option it passes exists (`etwaudit CMD --help`);
  - every SQL query it runs is valid against the current schema (run on a
    database made from the bundled sample).

The messages it expects are composed at run time (the session's name, what
stopped the run); the tests of those messages keep them.

  check-acceptance-script.py SCRIPT ETWAUDIT SAMPLE.jsonl WORK_DIR
"""

import os
import re
import subprocess
import sys


def fail(problems):
    for problem in problems:
        print(f"check-acceptance-script: {problem}", file=sys.stderr)
    sys.exit(1)


def invocations(script):
    """(subcommand, [options]) for each way the script starts etwaudit."""
    found = []
    for match in re.finditer(r"-ArgumentList @\(([^)]*)\)", script):
        words = re.findall(r"'([^']*)'", match.group(1))
        found.append((words[0], [w for w in words if w.startswith("--")]))
    for match in re.finditer(r"& \$Exe (\w+)([^\n|]*)", script):
        found.append((match.group(1), re.findall(r"(--[a-z][a-z-]*)", match.group(2))))
    return found


def powershell_string(text):
    """The text of a PowerShell string literal given with its quotes."""
    if text.startswith("'"):
        return text[1:-1].replace("''", "'")
    return text[1:-1].replace("`\"", '"')


def queries(script):
    """The SQL of each Query-Scalar call and of the SQL kept in variables."""
    literal = r"(\"(?:[^\"`]|`.)*\"|'(?:[^']|'')*')"
    texts = [m.group(1) for m in re.finditer(r"Query-Scalar \$\w+ " + literal, script)]
    texts += [m.group(1) for m in re.finditer(r"\$\w+Sql = " + literal, script)]
    sql = []
    for text in texts:
        text = powershell_string(text)
        # $(Path-Is $file): the condition the script builds for one file.
        text = re.sub(r"\$\(Path-Is \$(\w+)\)", lambda m: f"path LIKE '%\\{m.group(1)}.txt'", text)
        if "$" in text:
            continue  # built from other variables: checked where they are defined
        sql.append(text)
    return sql


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    script_path, exe, sample, work = sys.argv[1:]
    with open(script_path, encoding="utf-8") as f:
        script = f.read()
    problems = []

    calls = invocations(script)
    if len(calls) < 3:
        problems.append(f"found only {len(calls)} etwaudit invocations in {script_path}: has its form changed?")
    for command, options in calls:
        result = subprocess.run([exe, command, "--help"], capture_output=True, text=True)
        if result.returncode != 0:
            problems.append(f"'etwaudit {command}' is not a command (--help exits {result.returncode})")
            continue
        for option in options:
            if not re.search(r"(^|[\s,])" + re.escape(option) + r"\b", result.stdout):
                problems.append(f"'etwaudit {command}' has no option {option}")

    os.makedirs(work, exist_ok=True)
    db = os.path.join(work, "acceptance-check.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    made = subprocess.run([exe, "collect", "--source", "replay:" + sample, "--db", db, "--quiet"],
                          capture_output=True, text=True)
    if made.returncode != 0:
        fail([f"could not make a database from {sample}: {made.stderr.strip()}"])
    sql = queries(script)
    if len(sql) < 5:
        problems.append(f"found only {len(sql)} SQL queries in {script_path}: has its form changed?")
    for statement in sql:
        result = subprocess.run([exe, "query", "--db", db, "--sql", statement, "--format", "csv"],
                                capture_output=True, text=True)
        if result.returncode != 0:
            problems.append(f"query fails on the current schema: {statement}\n  {result.stderr.strip()}")

    if problems:
        fail(problems)
    print(f"check-acceptance-script: {len(calls)} invocations and {len(sql)} queries agree with etwaudit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
