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
  for (const char* bad : {"", "m", "0", "-5m", "1.5h", "5 m", "5w"}) {
    INFO(bad);
    CHECK_FALSE(parse_duration(bad).has_value());
  }
}
