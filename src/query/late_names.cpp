#include "query/late_names.h"

#include <set>
#include <utility>

namespace etwaudit {

std::optional<std::uint64_t> resend_late_names(SQLite::Database& db, EventFeed& feed, DestinationState& destination,
                                               std::size_t batch,
                                               const std::function<bool(const std::vector<FeedEvent>&)>& deliver) {
  const std::vector<NameChange> changes = name_changes_after(db, destination.names_through);
  if (changes.empty()) return 0;
  std::uint64_t rows = 0;
  std::set<std::pair<std::int64_t, std::int64_t>> done;  // a file named twice goes once
  for (const NameChange& change : changes) {
    if (!done.emplace(change.file_id, change.process_id).second) continue;
    for (std::int64_t after = 0;;) {
      const std::vector<FeedEvent> events =
          feed.of(change.file_id, change.process_id, after, destination.shipped_through, batch);
      if (events.empty()) break;
      if (!deliver(events)) return std::nullopt;
      rows += events.size();
      after = events.back().event_id;
    }
  }
  advance_names(db, destination.name, changes.back().seq);
  destination.names_through = changes.back().seq;
  return rows;
}

}  // namespace etwaudit
