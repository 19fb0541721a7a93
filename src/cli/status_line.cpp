#include "cli/status_line.h"

#include <vector>

#include "core/human_format.h"

namespace etwaudit {
namespace {

struct Part {
  std::string full, brief;
  bool zero = false;  // a counter at 0: left out first when the line is too long
};

std::string joined(const std::vector<Part>& parts, bool brief) {
  std::string line;
  for (const Part& part : parts) line += (line.empty() ? "" : " | ") + (brief ? part.brief : part.full);
  return line;
}

}  // namespace

std::string status_line(const StatusLine& s, int columns) {
  auto counter = [](const char* full, const char* brief, std::uint64_t value) {
    return Part{std::string(full) + " " + with_thousands(value), std::string(brief) + " " + with_thousands(value),
                value == 0};
  };
  // In the order they are given up when there is no room: from the end.
  std::vector<Part> parts = {
      {with_thousands(s.events_per_second) + " events/s", with_thousands(s.events_per_second) + "/s"},
      counter("written", "wr", s.written),
      counter("dropped", "drop", s.dropped),
      counter("lost", "lost", s.lost),
      counter("excluded", "excl", s.excluded),
      counter("unresolved", "unres", s.unresolved),
      {"db " + human_bytes(s.database_bytes), human_bytes(s.database_bytes)},
  };
  parts[1].zero = false;  // written 0 says something
  // One column stays free: a line that fills the last one wraps on some terminals.
  const std::size_t room = columns > 0 ? static_cast<std::size_t>(columns - 1) : SIZE_MAX;
  if (const std::string line = joined(parts, false); line.size() <= room) return line;
  if (const std::string line = joined(parts, true); line.size() <= room) return line;
  std::vector<Part> kept;
  for (const Part& part : parts)
    if (!part.zero) kept.push_back(part);
  while (kept.size() > 1 && joined(kept, true).size() > room) kept.pop_back();
  std::string line = joined(kept, true);
  if (line.size() > room) line.resize(room);
  return line;
}

}  // namespace etwaudit
