#pragma once
// One event as one JSON object on one line: what `etwaudit export` writes and
// what a ClickHouse destination receives (INSERT ... FORMAT JSONEachRow); the
// fields are listed in doc/fleet.md, and the central table has a column for
// each (query/clickhouse_schema.h).

#include <string>
#include <vector>

#include "query/event_feed.h"

namespace etwaudit {

// Where the events come from: the machine's id and name, the database's id.
struct EventOrigin {
  std::string host_id, host, db_uuid;
};

// Replaces out with the lines of events (each with its newline), their
// processes from feed.
void event_lines(std::string& out, EventFeed& feed, const std::vector<FeedEvent>& events, const EventOrigin& origin);

}  // namespace etwaudit
