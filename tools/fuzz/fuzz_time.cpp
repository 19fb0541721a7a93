// libFuzzer target: the time and duration parsers behind --since, --until,
// --duration and the replay format (parse_duration, parse_iso8601,
// parse_time_argument) and format_iso8601.
//
// The input is the text given to the parsers. The seeds are the times and
// durations of the README, the tests and tools/sample/events.jsonl.
//
// parse_time_argument refuses with UsageError, nothing else. Also checked: a
// duration is positive; a parsed time printed by format_iso8601 (which keeps
// 100 ns) parses back to the same time cut to 100 ns; and any 64-bit time,
// taken from the input's first 8 bytes, printed and parsed again is that time
// cut to 100 ns, unless that lies before the earliest 64-bit time.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/error.h"
#include "core/time_format.h"
#include "query/filters.h"

namespace {

using namespace etwaudit;

[[noreturn]] void violated(const std::string& input, const char* what) {
  std::fprintf(stderr, "fuzz_time: %s, for '%s'\n", what, input.c_str());
  std::abort();
}

// The time printed and parsed back: t cut to 100 ns (towards the past).
void check_round_trip(std::int64_t time, const std::string& input) {
  const std::string text = format_iso8601(time);
  const __int128 expected = static_cast<__int128>(time) - ((time % 100) + 100) % 100;
  const auto parsed = parse_iso8601(text);
  if (!parsed) {
    if (expected >= INT64_MIN) violated(input + " -> " + text, "a printed time does not parse");
    return;
  }
  if (*parsed != expected) violated(input + " -> " + text, "a printed time parses to another time");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (const auto duration = parse_duration(text); duration && *duration <= 0)
    violated(text, "a duration is not positive");
  if (const auto time = parse_iso8601(text)) check_round_trip(*time, text);
  const std::int64_t now = 1'796'206'530'000'000'000;  // 2026-12-02T10:15:30Z
  try {
    (void)parse_time_argument("--since", text, now);
  } catch (const UsageError&) {
  }
  if (size >= 8) {
    std::int64_t time;
    std::memcpy(&time, data, sizeof time);
    check_round_trip(time, "the first 8 bytes");
  }
  return 0;
}
