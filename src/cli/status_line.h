#pragma once
// The line collect refreshes on a terminal while it runs, fitted to the
// terminal's width: it must never wrap, or each refresh leaves a line
// behind ("\r" goes back to the start of the last one only).

#include <cstdint>
#include <string>

namespace etwaudit {

struct StatusLine {
  std::uint64_t events_per_second = 0;
  std::uint64_t written = 0;
  std::uint64_t dropped = 0;  // the queue was full
  std::uint64_t lost = 0;     // the source lost them (ETW buffers, a full ring buffer)
  std::uint64_t excluded = 0;
  std::uint64_t unresolved = 0;
  std::uint64_t database_bytes = 0;
};

// "48,120 events/s | written 1,204,000 | dropped 0 | lost 0 | excluded 0 |
// unresolved 0 | db 43 MiB" in fewer than columns columns (0: no limit):
// shorter words first, then the counters that are 0, then the least
// needed parts, last the end cut off.
std::string status_line(const StatusLine& status, int columns);

}  // namespace etwaudit
