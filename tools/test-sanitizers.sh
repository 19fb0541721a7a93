#!/usr/bin/env bash
# Builds etwaudit with g++, AddressSanitizer and UndefinedBehaviorSanitizer into
# build-asan/ and runs, through ctest, the tests of the .etl reader, the XPRESS
# decompressor, the event decoder, the .etl import, the replay source, the
# fanotify source (which parses the kernel's records), the queue, the time
# parsers and the query filters there (chosen by their Catch tags). Any
# sanitizer report fails the run (exit 1).
# Needs what tools/setup.sh installs.
#
#   bash tools/test-sanitizers.sh [CATCH_TAGS]    default: [etl],[xpress],[etw],[import],[replay],[fanotify],[queue],[time],[filters],[html]
set -euo pipefail
cd "$(dirname "$0")/.."

tags=${1:-[etl],[xpress],[etw],[import],[replay],[fanotify],[queue],[time],[filters],[html]}
out=build-asan
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"

start=$SECONDS
# -O1 -g: quicker to build than -O2, fast enough to run; reports name file and
# line. g++ 12 warns about std::regex (through cxxopts) under the sanitizers
# with false maybe-uninitialized warnings: off here, on in the normal build.
cmake -S . -B "$out" -DCMAKE_CXX_COMPILER=g++ -DCMAKE_BUILD_TYPE=Debug -DETWAUDIT_BUILD_BENCH=OFF \
  -DCMAKE_CXX_FLAGS="$flags -O1 -Wno-maybe-uninitialized" -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
cmake --build "$out" -j "$(nproc)" --target etwaudit-tests

# ctest knows the tests by name only: the names with these tags become an
# anchored regular expression of alternatives. A name ctest does not know (a
# ';' in it makes catch_discover_tests split it) would silently not run: refused.
mapfile -t names < <("$out/tests/etwaudit-tests" --list-test-names-only "$tags" | sed '/^$/d')
if ((${#names[@]} == 0)); then
  echo "test-sanitizers: no test has the tags $tags" >&2
  exit 1
fi
ctest_names=$(ctest --test-dir "$out" -N | sed -n 's/^ *Test *#[0-9]*: //p')
for name in "${names[@]}"; do
  if ! grep -qxF -- "$name" <<<"$ctest_names"; then
    echo "test-sanitizers: ctest has no test named '$name' (no ';' in test names, please)" >&2
    exit 1
  fi
done
regex="^($(printf '%s\n' "${names[@]}" | sed 's/[][\\.*^$+?(){}|]/\\&/g' | paste -sd '|'))\$"

# Sanitizer reports end the process with an error; the log is searched as well,
# in case a test ran a child process whose failure it did not notice.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
status=0
ctest --test-dir "$out" -R "$regex" --output-on-failure --timeout 300 -j "$(nproc)" || status=$?
reports='ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: UndefinedBehaviorSanitizer'
log=$out/Testing/Temporary/LastTest.log
if grep -qE "$reports" "$log"; then
  echo "test-sanitizers: sanitizer reports in $log:" >&2
  grep -nE "$reports" "$log" >&2
  status=1
fi
echo "test-sanitizers: took $((SECONDS - start)) s"
if ((status == 0)); then echo "sanitizers: ${#names[@]} passed, 0 failed"; else echo "sanitizers: FAILED" >&2; fi
exit "$status"
