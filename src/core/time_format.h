#pragma once
// UTC timestamps as integers (ns since 1970-01-01T00:00:00Z) and ISO-8601 text.

#include <cstdint>
#include <functional>
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
// The same time on a clock offset_seconds east of UTC:
// "2026-12-02T11:15:30.1234567+01:00".
std::string format_iso8601_at_offset(std::int64_t ns_since_epoch, std::int64_t offset_seconds);

// The local time zone's offset east of UTC, in seconds, at an instant (ns
// since 1970): platform.h's utc_offset_seconds, or a fixed one in tests.
using UtcOffsetAt = std::function<std::int64_t(std::int64_t ns_since_epoch)>;

// A point in time as people type it (journalctl's forms), for --since and
// --until; nullopt for anything else:
//   ISO-8601 with Z or an offset     2026-12-02T10:15:30Z, 2026-12-02 11:15+01:00
//   a local date, a local time       2026-12-02 (its midnight), 2026-12-02 10:16[:00[.5]],
//                                    2026-12-02T10:16, 10:16 (today)
//   words                            now, today, yesterday, tomorrow (local midnight)
//   back from now, ahead of now      15m, 1h30m, -2h; +1h
std::optional<std::int64_t> parse_time_point(std::string_view text, std::int64_t now, const UtcOffsetAt& offset_at);

// Current UTC time in ns since epoch.
std::int64_t now_ns();

}  // namespace etwaudit

namespace etwaudit {

// "90s", "500ms", "15m", "2h", "7d", and their sums "1h30m", "1m30s" ->
// ns. nullopt for anything else: a number without its unit ("90"), zero,
// a negative duration.
std::optional<std::int64_t> parse_duration(std::string_view text);
// True for a number alone, which a duration refuses ("90": seconds? minutes?).
bool is_bare_number(std::string_view text);

}  // namespace etwaudit
