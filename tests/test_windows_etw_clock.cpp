// QpcClock turns the raw QPC timestamps of the live session into wall-clock
// times (Wine has the same counter and system clock calls as Windows).
#include <windows.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>

#include "core/time_format.h"
#include "sources/live/etw_clock.h"

using namespace etwaudit;

namespace {

std::int64_t counter_now() {
  LARGE_INTEGER value;
  QueryPerformanceCounter(&value);
  return value.QuadPart;
}

std::int64_t counter_frequency() {
  LARGE_INTEGER value;
  QueryPerformanceFrequency(&value);
  return value.QuadPart;
}

}  // namespace

TEST_CASE("the counter's value now is the system time now", "[windows][etw]") {
  QpcClock clock;
  for (int i = 0; i < 3; ++i) {
    const std::int64_t expected = now_ns();
    const std::int64_t converted = clock.unix_ns(counter_now());
    CAPTURE(expected, converted);
    CHECK(std::llabs(converted - expected) < 50'000'000);  // 50 ms: two clock reads apart
    Sleep(20);
    clock.reanchor();
  }
}

TEST_CASE("counter values convert at the counter's frequency, before and after the anchor", "[windows][etw]") {
  QpcClock clock;
  const std::int64_t frequency = counter_frequency();
  const std::int64_t base = counter_now();
  CHECK(clock.unix_ns(base + frequency) - clock.unix_ns(base) == 1'000'000'000);
  CHECK(clock.unix_ns(base) - clock.unix_ns(base - 3600 * frequency) == 3'600'000'000'000);
  // Half a tick's worth of precision at most is lost.
  const std::int64_t tick_ns = 1'000'000'000 / frequency + 1;
  CHECK(std::llabs(clock.unix_ns(base + frequency / 2) - clock.unix_ns(base) - 500'000'000) <= tick_ns);
}

TEST_CASE("raw timestamps are converted as counter values when the log file header says so, or says nothing",
          "[windows][etw]") {
  TRACE_LOGFILE_HEADER header{};
  header.ReservedFlags = 1;  // the session's clock: the performance counter
  header.PerfFreq.QuadPart = counter_frequency();
  CHECK(raw_timestamps_are_qpc(header, counter_frequency()));
  CHECK(qpc_frequency() == counter_frequency());
  header.PerfFreq.QuadPart = counter_frequency() + 1;  // another machine's counter
  CHECK_FALSE(raw_timestamps_are_qpc(header, counter_frequency()));
  header.PerfFreq.QuadPart = counter_frequency();
  for (ULONG clock : {0u, 2u, 3u}) {  // unset, system time, CPU cycles
    header.ReservedFlags = clock;
    CHECK_FALSE(raw_timestamps_are_qpc(header, counter_frequency()));
  }
  header.ReservedFlags = 1;
  CHECK_FALSE(raw_timestamps_are_qpc(header, 0));
  // A real-time header that says nothing: the clock our session asked for.
  header.ReservedFlags = 0;
  header.PerfFreq.QuadPart = 0;
  CHECK(raw_timestamps_are_qpc(header, counter_frequency()));
}
