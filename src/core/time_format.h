#pragma once
// UTC timestamps as integers (ns since 1970-01-01T00:00:00Z) and ISO-8601 text.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace etwaudit {

inline constexpr std::int64_t ns_per_second = 1'000'000'000;
inline constexpr std::int64_t ns_per_minute = 60 * ns_per_second;

// value / divisor rounded toward minus and plus infinity (divisor > 0): the
// minute or hour a time falls in, the first whole one at or after it.
inline constexpr std::int64_t floor_div(std::int64_t value, std::int64_t divisor) {
  return value / divisor - (value % divisor < 0);
}
inline constexpr std::int64_t ceil_div(std::int64_t value, std::int64_t divisor) {
  return value / divisor + (value % divisor > 0);
}
inline constexpr std::int64_t ns_per_hour = 3600 * ns_per_second;

// 1970-01-01 as a Windows FILETIME (100 ns since 1601-01-01).
inline constexpr std::uint64_t filetime_unix_epoch = 116'444'736'000'000'000;
// A FILETIME as ns since 1970; 0 when at or before 1970 (absent) or out of range.
std::int64_t unix_ns_from_filetime(std::uint64_t filetime);

// Parses "2026-12-02T10:15:30Z", "2026-12-02T10:15:30.1234567+01:00",
// "2026-12-02 10:15:30Z" (space for T); up to 9 fractional digits. A time
// without Z or an offset is refused: it would silently depend on the machine's
// time zone. nullopt on anything else.
std::optional<std::int64_t> parse_iso8601(std::string_view text);

// "2026-12-02T10:15:30.1234567Z": 7 fractional digits, the resolution of
// Windows timestamps.
std::string format_iso8601(std::int64_t ns_since_epoch);

// Current UTC time in ns since epoch.
std::int64_t now_ns();

}  // namespace etwaudit

namespace etwaudit {

// "90" (seconds), "90s", "500ms", "15m", "2h", "7d" -> ns. nullopt for anything else,
// including zero and negative durations.
std::optional<std::int64_t> parse_duration(std::string_view text);

}  // namespace etwaudit
