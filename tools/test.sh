#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine (tools/setup.sh) and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
ctest --test-dir build --output-on-failure --timeout 300
bash tools/build-windows.sh --test
bash tools/test-sanitizers.sh
bash tools/reliability.sh --quick
