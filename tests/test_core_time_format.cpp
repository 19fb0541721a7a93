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

TEST_CASE("durations take s, m, h and d and refuse nonsense", "[time]") {
  CHECK(parse_duration("90") == 90 * ns_per_second);
  CHECK(parse_duration("90s") == 90 * ns_per_second);
  CHECK(parse_duration("15m") == 15 * 60 * ns_per_second);
  CHECK(parse_duration("2h") == 2 * ns_per_hour);
  CHECK(parse_duration("7d") == 7 * 24 * ns_per_hour);
  CHECK(parse_duration("500ms") == 500 * 1000000LL);
  CHECK(parse_duration("ms") == std::nullopt);
  for (const char* bad : {"", "m", "0", "-5m", "1.5h", "5 m", "5w"}) {
    INFO(bad);
    CHECK_FALSE(parse_duration(bad).has_value());
  }
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
