#!/usr/bin/env bash
# Fails when a C++ file of the project is not as .clang-format wants it, and
# names the files. `clang-format -i FILE` fixes one.
#
#   bash tools/check-format.sh
set -euo pipefail
cd "$(dirname "$0")/.."
me=check-format
source tools/lib.sh
require_tools clang-format
mapfile -t files < <(find src tests tools/bench tools/fuzz \( -name '*.cpp' -o -name '*.h' \) | sort)
unformatted=()
for file in "${files[@]}"; do
  clang-format --dry-run --Werror "$file" >/dev/null 2>&1 || unformatted+=("$file")
done
if ((${#unformatted[@]})); then
  printf 'check-format: not formatted (clang-format -i fixes it): %s\n' "${unformatted[@]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files as .clang-format wants them"
