#!/usr/bin/env bash
# Installs what etwaudit needs on Debian 12 (only what is missing) and builds it
# into build/. Safe to run again.
#
#   bash tools/setup.sh [extra cmake arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config libsqlitecpp-dev libsqlite3-dev libcxxopts-dev catch2
          nlohmann-json3-dev libcurl4-openssl-dev zlib1g-dev libutf8proc-dev sqlite3 fatrace python3 clang-format
          clang bpftool libbpf-dev libelf-dev)

bash tools/install-packages.sh "${packages[@]}"

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build build -j "$(nproc)"
