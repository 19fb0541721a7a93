#!/usr/bin/env bash
# Fuzzes what etwaudit reads from outside with libFuzzer, under
# AddressSanitizer and UndefinedBehaviorSanitizer, and says what it found.
#
#   bash tools/fuzz.sh SECONDS [TARGET]      default: every target
#
#   etl_reader   the .etl reader            xpress       the XPRESS decompressor
#   replay_line  the JSONL replay parser    time         --since/--until times, durations
#   glob         the path/process globs     sql_filters  the filter SQL and the read-only query connection
#
# ETWAUDIT_FUZZ_FLAGS adds libFuzzer flags (e.g. "-seed=1 -dict=FILE").
# ETWAUDIT_FUZZ_COVERAGE=0 skips the coverage build and report (the quick run
# of tools/test.sh).
#
# Installs clang and libclang-rt-14-dev (and the build dependencies) when
# missing, builds tools/fuzz with clang into build-fuzz/, seeds each target from
# real inputs (the .etl fixtures in ETWAUDIT_ETL_FIXTURES, default
# ../shared/fixtures/etl; tools/sample/events.jsonl; the times, globs and
# queries of the README), replays the whole fixtures once, then runs each
# target for SECONDS (two at once when there are two cores) and prints per
# target: seconds run, executions, libFuzzer's coverage counts, what it found,
# and the share of the lines and branches of the code under test that the
# corpus reaches. Exit status 1 when a target found something.
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

all_targets=(etl_reader xpress replay_line time glob sql_filters)
usage() {
  echo "usage: bash tools/fuzz.sh SECONDS [$(IFS='|'; echo "${all_targets[*]}")]" >&2
  exit 2
}
[[ $# -ge 1 && $# -le 2 && $1 =~ ^[1-9][0-9]*$ ]] || usage
seconds=$1
targets=("${all_targets[@]}")
if [[ $# -eq 2 ]]; then
  case ${2#fuzz_} in
    etl_reader | xpress | replay_line | time | glob | sql_filters) targets=("${2#fuzz_}") ;;
    *) usage ;;
  esac
fi
coverage=${ETWAUDIT_FUZZ_COVERAGE:-1}

# Longest input per target: the reader gets the header buffer and a few
# compressed buffers of the PerfView trace or 16 buffers of the Windows 7 one;
# the decompressor a compressed buffer and then some; the replay parser the
# whole sample; the others a line or a short query.
declare -A max_len=([etl_reader]=131072 [xpress]=65536 [replay_line]=65536 [time]=256 [glob]=1024
                    [sql_filters]=4096)
# The code each target is meant to reach, for the line coverage report.
declare -A under_test=([etl_reader]="src/sources/etl/etl_reader.cpp src/sources/etl/xpress.cpp"
                       [xpress]="src/sources/etl/xpress.cpp"
                       [replay_line]="src/sources/replay_source.cpp"
                       [time]="src/core/time_format.cpp"
                       [glob]="src/core/glob.cpp"
                       [sql_filters]="src/query/filters.cpp src/query/report.cpp")
# A single input running longer than this is a hang.
timeout_seconds=10

fixtures=${ETWAUDIT_ETL_FIXTURES:-$PWD/../shared/fixtures/etl}
# A plain clone has no traces beside it: the fuzzers then start from their
# corpus alone, and nothing is replayed.
have_fixtures=0
if compgen -G "$fixtures/*.etl" >/dev/null; then have_fixtures=1; fi
if [[ " ${targets[*]} " =~ " etl_reader "|" xpress " ]] && ((!have_fixtures)); then
  echo "fuzz: no .etl files in $fixtures (set ETWAUDIT_ETL_FIXTURES): etl_reader and xpress start from their corpus alone" >&2
fi

# --- Debian packages: only what is missing, one apt-get update -------------
packages=(clang libclang-rt-14-dev llvm-14 cmake make pkg-config libsqlitecpp-dev libsqlite3-dev
          libcxxopts-dev nlohmann-json3-dev libutf8proc-dev)
bash tools/install-packages.sh "${packages[@]}"

# --- build -------------------------------------------------------------------
out=build-fuzz
mkdir -p "$out"
# One run at a time: the seeds are remade and the corpora written.
exec 9>"$out/.fuzz.lock"
flock -n 9 || { echo "fuzz: another tools/fuzz.sh is running in $out" >&2; exit 1; }

cmake -S . -B "$out" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DETWAUDIT_BUILD_FUZZERS=ON \
  -DETWAUDIT_BUILD_TESTS=OFF -DETWAUDIT_BUILD_BENCH=OFF >/dev/null
build_targets=(fuzz_make_seeds)
for target in "${targets[@]}"; do
  build_targets+=("fuzz_$target")
  if ((coverage)); then build_targets+=("fuzz_${target}_coverage"); fi
done
cmake --build "$out" -j "$(nproc)" --target "${build_targets[@]}"

# --- seeds -------------------------------------------------------------------
rm -rf "$out/seeds"
for target in "${all_targets[@]}"; do mkdir -p "$out/seeds/$target"; done
mkdir -p "$out/logs"
if ((have_fixtures)); then
  "$out/tools/fuzz/fuzz_make_seeds" "$fixtures" "$out/seeds/etl_reader" "$out/seeds/xpress" "${max_len[etl_reader]}"
  for trace in "$fixtures"/*.etl; do
    ln -s "$(realpath "$trace")" "$out/seeds/etl_reader/$(basename "$trace")"
  done
fi
# One seed file per line of the list on standard input.
seeds_from_lines() {
  local n=0 line
  while IFS= read -r line; do
    n=$((n + 1))
    printf '%s' "$line" >"$out/seeds/$1/line-$n"
  done
}
sample=tools/sample/events.jsonl
# The replay parser: the sample, and each of its lines.
cp "$sample" "$out/seeds/replay_line/events.jsonl"
seeds_from_lines replay_line <"$sample"
# Times: the sample's, the README's and the forms parse_iso8601 takes; durations.
{
  # (sed reads to the end: head would leave sort writing into a closed pipe, which pipefail makes fatal)
  grep -o '"time": "[^"]*"' "$sample" | cut -d'"' -f4 | sort -u | sed -n '1,40p'
  printf '%s\n' 2026-12-02T10:16:00Z 2026-12-02T11:15:00+01:00 "2026-12-02 10:15:30Z" 2026-12-02T10:15:30,5-0130 \
    2026-12-02t10:15:30.123456789z 1970-01-01T00:00:00Z 2262-04-11T23:47:16.854775807Z 1677-09-21T00:12:43.145224192Z \
    2026-12-31T23:59:60Z 90 90s 15m 2h 7d 999999999d
} | seeds_from_lines time
# Globs: the README's and the tests', each with a path of the sample.
paths=$(grep -o '"path": "[^"]*"' "$sample" | cut -d'"' -f4 | sed 's/\\\\/\\/g' | sort -u | sed -n '1,8p')
n=0
for glob in '*.docx' 'C:\Users\*\notes.txt' notepad.exe '*\Office16\*' '/usr/bin/*' cp 'Steuer*' '/tmp/ex/*' \
  'C:\[x' '[!a-c]*.[tT][xX][tT]' '\\nas01\backup\*' '?gypten'; do
  while IFS= read -r path; do
    n=$((n + 1))
    printf '%s\0%s' "$glob" "$path" >"$out/seeds/glob/pair-$n"
  done <<<"$paths"
done
# Queries: the README's examples as name=value lines, and statements the
# read-only connection must refuse.
n=0
for query in 'report=file-history\npath=/tmp/ex/*' 'report=top-files\nexclude=*.dll\nexclude=C:\\Windows\\*' 'report=top-files\nlimit=3' 'report=summary\nsince=2026-12-02T10:16:00Z' \
  'report=file-history\npath=notes.txt\nlimit=4' 'report=top-processes\nlimit=3' 'report=process-activity\nprocess=notepad.exe' \
  'report=timeline\nbucket=1m\nop=read\nop=write' 'report=recent\nlimit=1' \
  'report=summary\nsince=2026-12-02T10:00:30Z\nuntil=2026-12-02T11:00:06.5Z\nprocess=100\npath=*.txt' \
  'report=timeline\nsince=-9223372036854775807\nuntil=9223372036854775807\nbucket=1d' \
  'report=summary\nsince=2262-04-11T23:47:16Z' 'report=summary\nsince=9223372036854775000' \
  'report=timeline\nuntil=-9223372036854775808' \
  'param=op=write\nsql=SELECT process, count(*) AS events FROM v_events WHERE op = :op GROUP BY process' \
  'sql=SELECT count(*) FROM windowed_events' 'sql=WITH x AS (SELECT 1) SELECT * FROM x, windowed_activity' \
  'sql=DELETE FROM events' 'sql=ATTACH DATABASE '"'"'x.db'"'"' AS x' 'sql=SELECT load_extension('"'"'x'"'"')' \
  'sql=PRAGMA user_version = 5' 'sql=PRAGMA journal_mode = DELETE' 'sql=CREATE TEMP TABLE t (x)' \
  'sql=VACUUM INTO '"'"'copy.db'"'"'' 'sql=select 1; select 2' 'sql=BEGIN' 'sql=PRAGMA table_info(events)'; do
  n=$((n + 1))
  printf "$query" >"$out/seeds/sql_filters/query-$n"
done

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

# The whole traces once, not cut to max_len.
if [[ " ${targets[*]} " =~ " etl_reader " ]] && ((have_fixtures)); then
  echo "fuzz: replaying the fixtures through fuzz_etl_reader"
  "$out/tools/fuzz/fuzz_etl_reader" "$fixtures"/*.etl >"$out/logs/fixtures.log" 2>&1 || {
    cat "$out/logs/fixtures.log" >&2
    echo "fuzz: fuzz_etl_reader fails on the fixtures themselves" >&2
    exit 1
  }
fi

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

# Two at once at most (each target is one process): the machine is shared.
at_once=$(($(nproc) >= 2 ? 2 : 1))
echo "fuzz: running ${targets[*]} for $seconds s each, $at_once at a time; logs in $out/logs/"
for ((i = 0; i < ${#targets[@]}; i += at_once)); do
  for target in "${targets[@]:i:at_once}"; do run_target "$target" & done
  wait
done

# --- summary -----------------------------------------------------------------
stat_of() { sed -n "s/^stat::$1: *//p" "$2" | tail -n 1; }
found_any=0
echo
printf '%-12s %8s %12s %9s %6s %9s %7s  %s\n' target seconds executions exec/s cov features corpus found
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
  printf '%-12s %8s %12s %9s %6s %9s %7s  %s\n' "$target" "$ran" "${executions:-?}" "${rate:-?}" "${cov:-?}" \
    "${features:-?}" "${corpus:-?}" "$found"
done

# Line coverage: the corpus replayed through the coverage build.
if ((!coverage)); then exit "$found_any"; fi
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
      printf "  %-12s %-15s lines %5s (%s of %s), branches %5s (%s of %s)\n", target, parts[n], $10, $8 - $9, $8, $13, $11 - $12, $11
    }'
done
exit "$found_any"
