#!/usr/bin/env python3
"""Checks the layer rule of ARCHITECTURE.md: a folder of src/ includes only
its own headers and those of the folders before it in

    core <- platform <- store <- sources <- pipeline <- query <- cli

and only cli/ parses command-line options (cxxopts).

    check-layers.py SRC_DIR

Prints each include that points up, and exits 1 when there is one.
"""

import os
import re
import sys

LAYERS = ["core", "platform", "store", "sources", "pipeline", "query", "cli"]
INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^">]+)[">]')


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    src = sys.argv[1]
    problems = []
    files = 0
    for root, _, names in os.walk(src):
        for name in sorted(names):
            if not name.endswith((".h", ".cpp")):
                continue
            path = os.path.join(root, name)
            layer = os.path.relpath(path, src).split(os.sep)[0]
            if layer not in LAYERS:
                problems.append(f"{path}: src/{layer}/ is no layer of ARCHITECTURE.md ({', '.join(LAYERS)})")
                continue
            files += 1
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    match = INCLUDE.match(line)
                    if not match:
                        continue
                    target = match.group(1)
                    folder = target.split("/")[0]
                    if folder in LAYERS and LAYERS.index(folder) > LAYERS.index(layer):
                        problems.append(f"{path}:{number}: {layer}/ includes {target}, of a layer above it")
                    if target == "cxxopts.hpp" and layer != "cli":
                        problems.append(f"{path}:{number}: {layer}/ includes cxxopts.hpp: only cli/ parses options")
    for problem in problems:
        print(f"check-layers: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"check-layers: {files} files keep to the layers {' <- '.join(LAYERS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
