#!/usr/bin/env bash
# Cross-compiles etwaudit for 64-bit Windows with mingw-w64 into build-windows/
# (etwaudit.exe, tests/etwaudit-tests.exe: static, no DLLs needed) and, with
# --test, runs the Windows tests under Wine through ctest. Installs what it
# needs; a second run only rebuilds what changed.
#
#   bash tools/build-windows.sh [--test]
#
# The dependencies come from Debian, never from /usr/include (glibc headers
# break a mingw build): SQLiteCpp and the SQLite it bundles, zlib and utf8proc, as
# source packages (`apt-get source`, which needs a deb-src entry), and copies
# of the header-only cxxopts, Catch2 v2 and nlohmann-json headers. All of it
# goes to build-windows/deps/, which CMakeLists.txt reads through
# ETWAUDIT_BUNDLED_DEPS.
#
# Wine: ETW does not work there (OpenTraceW fails with error 5), so the tests
# that run are the portable ones, the device-map glue and the ETW callback with
# synthetic records, and the executable's error for `collect`; then
# etwaudit.exe ships to a real ClickHouse server (tools/check-clickhouse.sh,
# its first checks: WinHTTP and gzip). Wine gets its
# own prefix in build-windows/wine, set to Windows 10.
set -euo pipefail
cd "$(dirname "$0")/.."

run_tests=false
case "${1:-}" in
  --test) run_tests=true ;;
  "") ;;
  *) echo "usage: bash tools/build-windows.sh [--test]" >&2; exit 2 ;;
esac

start=$SECONDS
out=build-windows
deps=$out/deps

bash tools/install-packages.sh cmake g++-mingw-w64-x86-64-posix wine64 dpkg-dev catch2 libcxxopts-dev \
  nlohmann-json3-dev clickhouse-server clickhouse-client sqlite3 python3

# Source packages (SQLiteCpp with the SQLite it bundles; zlib for gzip
# bodies; utf8proc for the width of text in tables), unpacked into deps/ once. apt-get source needs a deb-src line for
# bookworm main.
mkdir -p "$deps"
source_package() {  # package, a file its unpacked folder must have
  local dir
  dir=$(find "$deps" -maxdepth 1 -type d -name "$1-*" -print -quit)
  [[ -n "$dir" && -f "$dir/$2" ]] && return
  if ! apt-cache showsrc "$1" >/dev/null 2>&1; then
    as_root=()
    [[ $(id -u) -eq 0 ]] || as_root=(sudo)
    echo "build-windows: adding a deb-src entry for bookworm main (/etc/apt/sources.list.d/etwaudit-deb-src.sources)"
    printf '%s\n' 'Types: deb-src' 'URIs: http://deb.debian.org/debian' 'Suites: bookworm' 'Components: main' \
      'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' |
      "${as_root[@]}" tee /etc/apt/sources.list.d/etwaudit-deb-src.sources >/dev/null
    "${as_root[@]}" apt-get update -qq
  fi
  rm -rf "$deps/source"
  mkdir -p "$deps/source"
  (cd "$deps/source" && apt-get source -qq "$1" >/dev/null 2>&1) ||
    { echo "build-windows: 'apt-get source $1' failed" >&2; exit 1; }
  dir=$(find "$deps/source" -maxdepth 1 -type d -name "$1-*" -print -quit)
  [[ -f "$dir/$2" ]] || { echo "build-windows: the $1 source package has no $2" >&2; exit 1; }
  mv "$dir" "$deps/"
  rm -rf "$deps/source"
}
source_package sqlitecpp sqlite3/sqlite3.c
source_package zlib deflate.c
source_package utf8proc utf8proc.c

# Header-only dependencies: copied from Debian's packages, never included from /usr/include.
mkdir -p "$deps/include/catch2"
cp -u /usr/include/cxxopts.hpp "$deps/include/"
cp -u /usr/include/catch2/catch.hpp "$deps/include/catch2/"
cp -ru /usr/include/nlohmann "$deps/include/"

# -O2: at -O3 mingw's g++ 12 gives false -Wrestrict warnings inside std::string.
cmake -S . -B "$out" -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-x86_64.cmake -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
  -DETWAUDIT_BUNDLED_DEPS="$PWD/$deps" -DETWAUDIT_BUILD_BENCH=OFF >/dev/null
cmake --build "$out" -j "$(nproc)"
echo "build-windows: built $out/etwaudit.exe and $out/tests/etwaudit-tests.exe in $((SECONDS - start)) s"

$run_tests || exit 0

# Wine in its own prefix. The 64-bit loader is not on PATH in Debian's wine64.
export WINEPREFIX=$PWD/$out/wine WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=;winedbg.exe=d"
wine=/usr/lib/wine/wine64
wineserver=/usr/lib/wine/wineserver
# A persistent wineserver for the whole ctest run (or ctest may wait on Wine's
# background processes); stopped on every exit.
mkdir -p "$WINEPREFIX"
# Exit code 2: one is already running, which is as good. Its output goes
# nowhere, or the daemon would keep the caller's pipes open.
"$wineserver" -p </dev/null >/dev/null 2>&1 || true
trap '"$wineserver" -k 2>/dev/null || true' EXIT
if [[ ! -f "$WINEPREFIX/.etwaudit-win10" ]]; then
  echo "build-windows: creating the Wine prefix $WINEPREFIX"
  "$wine" wineboot --init >/dev/null 2>&1
  # A fresh prefix says Windows 7; the collector branches on the version.
  "$wine" reg add 'HKCU\Software\Wine' /v Version /d win10 /f >/dev/null 2>&1
  touch "$WINEPREFIX/.etwaudit-win10"
else
  "$wine" wineboot --init >/dev/null 2>&1
fi
ctest --test-dir "$out" --output-on-failure --timeout 600 -j "$(nproc)"
# WinHTTP and gzip against a real ClickHouse server: etwaudit.exe ships.
cat > "$out/etwaudit-wine" <<WRAPPER
#!/usr/bin/env bash
exec "$wine" "$PWD/$out/etwaudit.exe" "\$@"
WRAPPER
chmod +x "$out/etwaudit-wine"
CHECK_CLICKHOUSE_BASIC=1 bash tools/check-clickhouse.sh "$out/etwaudit-wine"
echo "build-windows: Windows tests passed under Wine, $((SECONDS - start)) s in all"
