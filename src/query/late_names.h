#pragma once
// Events a destination received before one of their names was known
// (sql/0018): a file named after its first events, a process whose command
// line came later. ship and export send them again with the names; the
// receiver keeps the newest copy of an event (ClickHouse's
// ReplacingMergeTree, a forwarder's sink keyed by event_uid).

#include <SQLiteCpp/Database.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "query/event_feed.h"
#include "store/destinations.h"

namespace etwaudit {

// Hands deliver, a batch of at most batch at a time, the events up to
// destination.shipped_through of every name learned since
// destination.names_through; once all went, moves names_through (in the
// database too). Returns the rows handed over, or nullopt when deliver
// said no (names_through stays: all of them again next time).
std::optional<std::uint64_t> resend_late_names(SQLite::Database& db, EventFeed& feed, DestinationState& destination,
                                               std::size_t batch,
                                               const std::function<bool(const std::vector<FeedEvent>&)>& deliver);

}  // namespace etwaudit
