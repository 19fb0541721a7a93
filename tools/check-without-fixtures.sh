#!/usr/bin/env bash
# A plain clone has no .etl traces beside it (they live in ../shared/fixtures/etl,
# outside the repository): the tests that read them must report themselves
# skipped, and the scripts must go on without them. This runs those tests and
# the fuzzing script's fixture paths with ETWAUDIT_ETL_FIXTURES naming an empty
# folder, as tools/test.sh does after the full run.
#
#   bash tools/check-without-fixtures.sh      (after tools/setup.sh built build/)
set -euo pipefail
cd "$(dirname "$0")/.."

empty=$(mktemp -d)
trap 'rm -rf "$empty"' EXIT
export ETWAUDIT_ETL_FIXTURES=$empty

# The unit tests of the tags that read traces, each in a process of its own
# as ctest runs them (a missing trace ends the process with 77: "Skipped").
mapfile -t names < <(build/tests/etwaudit-tests --list-test-names-only '[etl],[import],[etw],[cli]' | sed '/^$/d')
((${#names[@]})) || { echo "check-without-fixtures: no tests listed" >&2; exit 1; }
regex=$(printf '%s\n' "${names[@]}" | sed 's/[][\\.^$*+?(){}|]/\\&/g; s/^/^/; s/$/$/' | paste -sd'|')
log=$(mktemp)
trap 'rm -rf "$empty" "$log"' EXIT
ctest --test-dir build --output-on-failure --timeout 300 -R "$regex" | tee "$log"
# Some of them read traces: they must have been skipped, not passed on traces
# found elsewhere (which would mean the folder was not honoured).
grep -q 'Skipped' "$log" || { echo "check-without-fixtures: no test was skipped: ETWAUDIT_ETL_FIXTURES was not honoured" >&2; exit 1; }

# The fuzzing script's fixture paths: seeds and the replay of the traces.
ETWAUDIT_FUZZ_COVERAGE=0 bash tools/fuzz.sh 2 etl_reader
echo "check-without-fixtures: a clone without the .etl traces passes"
