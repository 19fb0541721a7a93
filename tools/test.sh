#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine (tools/setup.sh) and runs every test, the
# sanitizer builds and a short fuzzing run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
# The HTML report's test renders it in a real browser; another opens a
# database being written in DB Browser for SQLite, under Xvfb.
bash tools/install-packages.sh chromium sqlitebrowser xvfb xauth clickhouse-server clickhouse-client openssl
ctest --test-dir build --output-on-failure --timeout 300
bash tools/build-windows.sh --test
bash tools/test-sanitizers.sh
# The quick form of the fuzzing: every libFuzzer target replays its seeds and
# runs 10 s (two at a time), without the coverage report; a finding fails.
ETWAUDIT_FUZZ_COVERAGE=0 bash tools/fuzz.sh 10
# A plain clone has no .etl traces beside it: what reads them runs again
# without them and must pass.
bash tools/check-without-fixtures.sh
# The reliability checks, short: locks, crashes, a full disk, readers, a soak.
bash tools/reliability.sh --quick
