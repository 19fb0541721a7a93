#include <catch2/catch.hpp>
#include <string>

#include "cli/status_line.h"

using namespace etwaudit;

TEST_CASE("the live status line shows lost and excluded beside dropped, and fits the terminal", "[status-line]") {
  StatusLine s;
  s.events_per_second = 48120;
  s.written = 1204000;
  s.dropped = 0;
  s.lost = 12;
  s.excluded = 0;
  s.unresolved = 3;
  s.database_bytes = 43u << 20;
  CHECK(status_line(s, 0) ==
        "48,120 events/s | written 1,204,000 | dropped 0 | lost 12 | excluded 0 | unresolved 3 | db 43 MiB");
  CHECK(status_line(s, 120) == status_line(s, 0));
  // Narrower: short words, then without the zeros, then without the last parts.
  CHECK(status_line(s, 80) == "48,120/s | wr 1,204,000 | drop 0 | lost 12 | excl 0 | unres 3 | 43 MiB");
  CHECK(status_line(s, 60) == "48,120/s | wr 1,204,000 | lost 12 | unres 3 | 43 MiB");
  CHECK(status_line(s, 40) == "48,120/s | wr 1,204,000 | lost 12");
  for (int columns : {60, 40, 30, 20, 12, 5, 2}) {
    INFO(columns);
    CHECK(status_line(s, columns).size() <= static_cast<std::size_t>(columns - 1));
  }
}
