#pragma once
// The central tables of a fleet in ClickHouse, as `etwaudit ship
// --create-tables` makes them (or prints them for a DBA): within what
// ClickHouse 18.16 (Debian 12) has, so newer releases take them too.
//
// events: one row per event line (query/event_lines.h), a column per field.
// ReplacingMergeTree ordered by the event's key (host_id, db_uuid,
// event_id): a batch sent twice collapses to one row per event when parts
// merge, and at once for a query that says FINAL. Partitioned by month of
// the event's time.
//
// runs: one row per collector run or import of each database
// (query/run_lines.h), ReplacingMergeTree(updated_ns) ordered by (host_id,
// db_uuid, run_id): a run sent again as it goes on keeps its newest row.

#include <string>

namespace etwaudit {

// CREATE DATABASE and CREATE TABLE statements for database, one per string.
std::string clickhouse_create_database(const std::string& database);
std::string clickhouse_create_events(const std::string& database);
std::string clickhouse_create_runs(const std::string& database);

}  // namespace etwaudit
