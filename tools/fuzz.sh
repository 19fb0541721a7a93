#!/usr/bin/env bash
# Fuzzes the .etl reader and the XPRESS decompressor with libFuzzer, under
# AddressSanitizer and UndefinedBehaviorSanitizer, and says what it found.
#
#   bash tools/fuzz.sh SECONDS [TARGET]      TARGET: etl_reader or xpress (default: both)
#
# ETWAUDIT_FUZZ_FLAGS adds libFuzzer flags (e.g. "-seed=1 -dict=FILE").
#
# Installs clang and libclang-rt-14-dev (and the build dependencies) when
# missing, builds tools/fuzz with clang into build-fuzz/, seeds each target from
# the .etl fixtures (ETWAUDIT_ETL_FIXTURES, default ../shared/fixtures/etl),
# replays the whole fixtures once, then runs each target for SECONDS (both at
# once when there are two cores) and prints per target: seconds run,
# executions, libFuzzer's coverage counts, what it found, and the share of the
# lines and branches of the code under test that the corpus reaches. Exit
# status 1 when a target found something.
#
# Kept in build-fuzz/:
#   corpus/TARGET     inputs that reached new code; grows from run to run
#   seeds/TARGET      made from the fixtures on every run
#   artifacts/TARGET  crash-*, leak-*, timeout-*, oom-*, slow-unit-* inputs
#   logs/TARGET.log   libFuzzer's output
#   coverage/TARGET.txt  the code under test line by line, with execution counts
# Replay a finding: build-fuzz/tools/fuzz/fuzz_TARGET build-fuzz/artifacts/TARGET/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: bash tools/fuzz.sh SECONDS [etl_reader|xpress]" >&2
  exit 2
}
[[ $# -ge 1 && $# -le 2 && $1 =~ ^[1-9][0-9]*$ ]] || usage
seconds=$1
targets=(etl_reader xpress)
if [[ $# -eq 2 ]]; then
  case ${2#fuzz_} in
    etl_reader | xpress) targets=("${2#fuzz_}") ;;
    *) usage ;;
  esac
fi

# Longest input per target: the reader gets the header buffer and a few
# compressed buffers of the PerfView trace or 16 buffers of the Windows 7 one;
# the decompressor a compressed buffer and then some.
declare -A max_len=([etl_reader]=131072 [xpress]=65536)
# The code each target is meant to reach, for the line coverage report.
declare -A under_test=([etl_reader]="src/sources/etl/etl_reader.cpp src/sources/etl/xpress.cpp"
                       [xpress]="src/sources/etl/xpress.cpp")
# A single input running longer than this is a hang.
timeout_seconds=10

fixtures=${ETWAUDIT_ETL_FIXTURES:-$PWD/../shared/fixtures/etl}
if ! compgen -G "$fixtures/*.etl" >/dev/null; then
  echo "fuzz: no .etl files in $fixtures (set ETWAUDIT_ETL_FIXTURES)" >&2
  exit 1
fi

# --- Debian packages: only what is missing, one apt-get update -------------
packages=(clang libclang-rt-14-dev llvm-14 cmake make pkg-config libsqlitecpp-dev libsqlite3-dev
          libcxxopts-dev nlohmann-json3-dev)
bash tools/install-packages.sh "${packages[@]}"

# --- build -------------------------------------------------------------------
out=build-fuzz
mkdir -p "$out"
# One run at a time: the seeds are remade and the corpora written.
exec 9>"$out/.fuzz.lock"
flock -n 9 || { echo "fuzz: another tools/fuzz.sh is running in $out" >&2; exit 1; }

cmake -S . -B "$out" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DETWAUDIT_BUILD_FUZZERS=ON \
  -DETWAUDIT_BUILD_TESTS=OFF -DETWAUDIT_BUILD_BENCH=OFF >/dev/null
cmake --build "$out" -j "$(nproc)" --target fuzz_etl_reader fuzz_xpress fuzz_etl_reader_coverage \
  fuzz_xpress_coverage fuzz_make_seeds

# --- seeds -------------------------------------------------------------------
rm -rf "$out/seeds"
mkdir -p "$out/seeds/etl_reader" "$out/seeds/xpress" "$out/logs"
"$out/tools/fuzz/fuzz_make_seeds" "$fixtures" "$out/seeds/etl_reader" "$out/seeds/xpress" "${max_len[etl_reader]}"
for trace in "$fixtures"/*.etl; do
  ln -s "$(realpath "$trace")" "$out/seeds/etl_reader/$(basename "$trace")"
done

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

# The whole traces once, not cut to max_len.
echo "fuzz: replaying the fixtures through fuzz_etl_reader"
"$out/tools/fuzz/fuzz_etl_reader" "$fixtures"/*.etl >"$out/logs/fixtures.log" 2>&1 || {
  cat "$out/logs/fixtures.log" >&2
  echo "fuzz: fuzz_etl_reader fails on the fixtures themselves" >&2
  exit 1
}

# --- fuzzing -----------------------------------------------------------------
stamp=$(mktemp)
trap 'rm -f "$stamp"' EXIT

run_target() {
  local target=$1
  mkdir -p "$out/corpus/$target" "$out/artifacts/$target"
  local start=$SECONDS status=0
  local extra=()
  read -ra extra <<<"${ETWAUDIT_FUZZ_FLAGS:-}"
  "$out/tools/fuzz/fuzz_$target" -max_total_time="$seconds" -max_len="${max_len[$target]}" \
    -timeout="$timeout_seconds" -print_final_stats=1 -artifact_prefix="$out/artifacts/$target/" "${extra[@]}" \
    "$out/corpus/$target" "$out/seeds/$target" >"$out/logs/$target.log" 2>&1 || status=$?
  echo "$((SECONDS - start)) $status" >"$out/logs/$target.result"
}

echo "fuzz: running ${targets[*]} for $seconds s each; logs in $out/logs/"
if (($(nproc) >= ${#targets[@]})); then
  for target in "${targets[@]}"; do run_target "$target" & done
  wait
else
  for target in "${targets[@]}"; do run_target "$target"; done
fi

# --- summary -----------------------------------------------------------------
stat_of() { sed -n "s/^stat::$1: *//p" "$2" | tail -n 1; }
found_any=0
echo
printf '%-11s %8s %12s %9s %6s %9s %7s  %s\n' target seconds executions exec/s cov features corpus found
for target in "${targets[@]}"; do
  log=$out/logs/$target.log
  read -r ran status <"$out/logs/$target.result"
  executions=$(stat_of number_of_executed_units "$log")
  rate=$(stat_of average_exec_per_sec "$log")
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -n 1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  features=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corpus=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  mapfile -t findings < <(find "$out/artifacts/$target" -type f -newer "$stamp" -printf '%f\n' | sort)
  if ((${#findings[@]})); then
    found="${#findings[@]}: ${findings[*]} (in $out/artifacts/$target/)"
    found_any=1
  elif [[ $status -ne 0 ]]; then
    found="libFuzzer exited with status $status; see $log"
    found_any=1
  else
    found=0
  fi
  printf '%-11s %8s %12s %9s %6s %9s %7s  %s\n' "$target" "$ran" "${executions:-?}" "${rate:-?}" "${cov:-?}" \
    "${features:-?}" "${corpus:-?}" "$found"
done

# Line coverage: the corpus replayed through the coverage build.
mkdir -p "$out/coverage"
echo
echo "code under test reached by the corpus (line by line in $out/coverage/TARGET.txt):"
for target in "${targets[@]}"; do
  profile=$out/coverage/$target
  rm -f "$profile.profraw" "$profile.profdata"
  LLVM_PROFILE_FILE="$profile.profraw" "$out/tools/fuzz/fuzz_${target}_coverage" -runs=0 \
    -max_len="${max_len[$target]}" "$out/corpus/$target" "$out/seeds/$target" >"$profile.log" 2>&1
  llvm-profdata-14 merge -sparse -o "$profile.profdata" "$profile.profraw"
  read -ra sources <<<"${under_test[$target]}"
  llvm-cov-14 show "$out/tools/fuzz/fuzz_${target}_coverage" -instr-profile="$profile.profdata" \
    -show-branches=count "${sources[@]}" >"$profile.txt"
  # Columns: file, regions, missed, cover, functions, missed, executed, lines, missed, cover, branches, missed, cover.
  llvm-cov-14 report "$out/tools/fuzz/fuzz_${target}_coverage" -instr-profile="$profile.profdata" "${sources[@]}" |
    awk -v target="$target" '$1 ~ /\.cpp$/ {
      n = split($1, parts, "/")
      printf "  %-11s %-15s lines %5s (%s of %s), branches %5s (%s of %s)\n", target, parts[n], $10, $8 - $9, $8, $13, $11 - $12, $11
    }'
done
exit "$found_any"
