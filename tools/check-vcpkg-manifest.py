#!/usr/bin/env python3
"""Checks vcpkg.json: valid JSON, a builtin-baseline of 40 hex digits, and a
"$builtin-baseline" note beside it saying where the commit comes from (vcpkg
ignores fields that begin with "$"). A baseline that is not a commit of
microsoft/vcpkg's master branch makes `cmake --preset msvc` fail on every
plain clone of vcpkg, which cannot be seen from Linux: the note is the record
of where it was taken.

    python3 tools/check-vcpkg-manifest.py [vcpkg.json]
"""
import json
import re
import sys

path = sys.argv[1] if len(sys.argv) > 1 else "vcpkg.json"
problems = []
try:
    with open(path, encoding="utf-8") as f:
        manifest = json.load(f)
except (OSError, ValueError) as e:
    sys.exit(f"{path}: cannot read it as JSON: {e}")

baseline = manifest.get("builtin-baseline")
if not isinstance(baseline, str) or not re.fullmatch(r"[0-9a-f]{40}", baseline):
    problems.append(f"builtin-baseline {baseline!r} is not a commit id (40 lowercase hex digits)")
note = manifest.get("$builtin-baseline")
if not isinstance(note, str) or "master" not in note or not re.search(r"\d{4}-\d{2}-\d{2}", note):
    problems.append('"$builtin-baseline" must say which branch of microsoft/vcpkg the commit is on and its date')
for dependency in manifest.get("dependencies", []):
    name = dependency if isinstance(dependency, str) else dependency.get("name")
    if not name:
        problems.append(f"a dependency without a name: {dependency!r}")

for problem in problems:
    print(f"{path}: {problem}", file=sys.stderr)
if problems:
    sys.exit(1)
print(f"{path}: builtin-baseline {baseline} ({note})")
