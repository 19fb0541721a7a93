#include <catch2/catch.hpp>

#include "core/time_format.h"

using namespace etwaudit;

TEST_CASE("ISO-8601 times parse to ns since 1970 in UTC", "[time]") {
  CHECK(parse_iso8601("1970-01-01T00:00:00Z") == 0);
  CHECK(parse_iso8601("2026-12-02T10:15:30Z") == 1796206530LL * ns_per_second);
  CHECK(parse_iso8601("2026-12-02T10:15:30.1234567Z") == 1796206530LL * ns_per_second + 123456700);
  CHECK(parse_iso8601("2026-12-02 10:15:30.5z") == 1796206530LL * ns_per_second + 500000000);
  CHECK(parse_iso8601("2026-12-02T11:15:30+01:00") == 1796206530LL * ns_per_second);
  CHECK(parse_iso8601("2026-12-02T05:45:30-0430") == 1796206530LL * ns_per_second);
  CHECK(parse_iso8601("2024-02-29T00:00:00Z").has_value());
}

TEST_CASE("times that are not ISO-8601 with a zone are refused", "[time]") {
  for (const char* bad : {"", "2026-12-02", "2026-12-02T10:15:30", "2026-13-02T10:15:30Z", "2025-02-29T00:00:00Z",
                          "2026-12-02T24:00:00Z", "2026-12-02T10:15:30.Z", "2026-12-02T10:15:30.1234567890Z",
                          "2026-12-02T10:15:30Zjunk", "yesterday", "2026-12-02T10:15:30+25:00"}) {
    INFO(bad);
    CHECK_FALSE(parse_iso8601(bad).has_value());
  }
}

TEST_CASE("times print as ISO-8601 with 100 ns digits and read back the same", "[time]") {
  CHECK(format_iso8601(0) == "1970-01-01T00:00:00.0000000Z");
  const std::int64_t t = 1796206530LL * ns_per_second + 123456700;
  CHECK(format_iso8601(t) == "2026-12-02T10:15:30.1234567Z");
  CHECK(parse_iso8601(format_iso8601(t)) == t);
  CHECK(format_iso8601(-1) == "1969-12-31T23:59:59.9999999Z");
}

TEST_CASE("durations take s, m, h and d, and sums of them, and refuse nonsense", "[time]") {
  CHECK(parse_duration("90s") == 90 * ns_per_second);
  CHECK(parse_duration("1m30s") == 90 * ns_per_second);
  CHECK(parse_duration("1h30m") == 90 * 60 * ns_per_second);
  CHECK(parse_duration("2d12h") == 60 * ns_per_hour);
  CHECK(parse_duration("1s500ms") == 1500 * 1000000LL);
  CHECK(parse_duration("15m") == 15 * 60 * ns_per_second);
  CHECK(parse_duration("2h") == 2 * ns_per_hour);
  CHECK(parse_duration("7d") == 7 * 24 * ns_per_hour);
  CHECK(parse_duration("500ms") == 500 * 1000000LL);
  CHECK(parse_duration("ms") == std::nullopt);
  for (const char* bad : {"", "m", "0", "-5m", "1.5h", "5 m", "5w", "90", "1m30", "1h 30m", "0s0m"}) {
    INFO(bad);
    CHECK_FALSE(parse_duration(bad).has_value());
  }
  CHECK(is_bare_number("90"));
  CHECK_FALSE(is_bare_number("90s"));
}

namespace {
// Berlin: +01:00 in winter, +02:00 from 2026-03-29T01:00:00Z to 2026-10-25T01:00:00Z.
std::int64_t berlin(std::int64_t ns) {
  const std::int64_t summer_from = parse_iso8601("2026-03-29T01:00:00Z").value();
  const std::int64_t summer_to = parse_iso8601("2026-10-25T01:00:00Z").value();
  return ns >= summer_from && ns < summer_to ? 7200 : 3600;
}
}  // namespace

TEST_CASE("times as people type them: dates and times on the local clock, words, back from now", "[time]") {
  const std::int64_t now = parse_iso8601("2026-12-02T12:30:00Z").value();  // 13:30 in Berlin
  auto at = [&](const char* text) { return parse_time_point(text, now, berlin); };
  auto utc = [](const char* text) { return parse_iso8601(text).value(); };
  CHECK(at("now") == now);
  CHECK(at("today") == utc("2026-12-01T23:00:00Z"));
  CHECK(at("yesterday") == utc("2026-11-30T23:00:00Z"));
  CHECK(at("tomorrow") == utc("2026-12-02T23:00:00Z"));
  CHECK(at("2026-12-02") == utc("2026-12-01T23:00:00Z"));
  CHECK(at("2026-12-02 10:16") == utc("2026-12-02T09:16:00Z"));
  CHECK(at("2026-12-02T10:16:30.5") == utc("2026-12-02T09:16:30.5Z"));
  CHECK(at("2026-07-01 10:00") == utc("2026-07-01T08:00:00Z"));  // summer time
  CHECK(at("10:16") == utc("2026-12-02T09:16:00Z"));             // today
  CHECK(at("2026-12-02T10:16:00Z") == utc("2026-12-02T10:16:00Z"));
  CHECK(at("2026-12-02 11:16:00+01:00") == utc("2026-12-02T10:16:00Z"));
  CHECK(at("15m") == now - 15 * ns_per_minute);
  CHECK(at("1h30m") == now - 90 * ns_per_minute);
  CHECK(at("-2h") == now - 2 * ns_per_hour);
  CHECK(at("+1h") == now + ns_per_hour);
  // Past what 64 bits of ns hold: refused, not wrapped (as parse_iso8601 does).
  CHECK_FALSE(parse_time_point("+106751d", now, berlin).has_value());
  CHECK_FALSE(parse_time_point("106751d", INT64_MIN + 1, berlin).has_value());
  CHECK_FALSE(parse_time_point("2262-04-11 23:47", now, [](std::int64_t) { return -14 * 3600; }).has_value());
  CHECK(format_iso8601_at_offset(INT64_MAX, 3600) == format_iso8601(INT64_MAX));
  for (const char* bad :
       {"", "90", "last tuesday", "2026-13-01", "2026-02-30", "25:00", "10:61", "2026-12-02 10", "-", "+x", "todays"}) {
    INFO(bad);
    CHECK_FALSE(parse_time_point(bad, now, berlin).has_value());
  }
}

TEST_CASE("a time on a clock east or west of UTC keeps its fraction and names its offset", "[time]") {
  const std::int64_t t = parse_iso8601("2026-12-02T10:15:30.1234567Z").value();
  CHECK(format_iso8601_at_offset(t, 3600) == "2026-12-02T11:15:30.1234567+01:00");
  CHECK(format_iso8601_at_offset(t, -5 * 3600 - 1800) == "2026-12-02T04:45:30.1234567-05:30");
  CHECK(format_iso8601_at_offset(t, 0) == "2026-12-02T10:15:30.1234567+00:00");
}

TEST_CASE("times beyond what 64 bits of ns hold are refused, not wrapped", "[time]") {
  // Found by fuzzing: years 0000-1677 and 2263-9999 overflowed the ns arithmetic.
  CHECK(parse_iso8601("2262-04-11T23:47:16.854775807Z") == INT64_MAX);
  CHECK_FALSE(parse_iso8601("2262-04-11T23:47:16.854775808Z").has_value());
  CHECK(parse_iso8601("1677-09-21T00:12:43.145224192Z") == INT64_MIN);
  CHECK_FALSE(parse_iso8601("1677-09-21T00:12:43.145224191Z").has_value());
  CHECK(parse_iso8601("1677-09-21T00:12:44Z") == INT64_MIN + 854775808);
  for (const char* far : {"9999-12-31T23:59:59Z", "0000-01-01T00:00:00Z", "6946-12-22T11:00:06.5Z",
                          "2262-04-12T00:00:00+00:01", "1677-09-20T23:59:59-00:01"}) {
    INFO(far);
    CHECK_FALSE(parse_iso8601(far).has_value());
  }
  CHECK(parse_iso8601("1969-12-31T23:59:59.9999999Z") == -100);
  CHECK(parse_iso8601(format_iso8601(INT64_MAX)) == INT64_MAX - 7);
}

TEST_CASE("durations beyond what 64 bits of ns hold are refused, not wrapped", "[time]") {
  // Found by fuzzing: 999999999d overflowed.
  CHECK_FALSE(parse_duration("999999999d").has_value());
  CHECK_FALSE(parse_duration("106752d").has_value());
  CHECK(parse_duration("106751d") == 106751 * 24 * ns_per_hour);
  CHECK(parse_duration("999999999s") == 999999999 * ns_per_second);
}
