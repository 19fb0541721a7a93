#include "query/clickhouse_schema.h"

namespace etwaudit {

std::string clickhouse_create_database(const std::string& database) {
  return "CREATE DATABASE IF NOT EXISTS `" + database + "`";
}

std::string clickhouse_create_events(const std::string& database) {
  return "CREATE TABLE IF NOT EXISTS `" + database +
         "`.events (\n"
         "  event_uid String,\n"
         "  host_id String,\n"
         "  host String,\n"
         "  db_uuid String,\n"
         "  event_id Int64,\n"
         "  time String,\n"
         "  time_ns Int64,\n"
         "  op String,\n"
         "  path String,\n"
         "  offset Nullable(Int64),\n"
         "  size Nullable(Int64),\n"
         "  count Int64,\n"
         "  end_offset Nullable(Int64),\n"
         "  status Nullable(String),\n"
         "  pid Int64,\n"
         "  tid Nullable(Int64),\n"
         "  process String,\n"
         "  process_start Nullable(String),\n"
         "  user Nullable(String),\n"
         "  parent_pid Nullable(Int64),\n"
         "  command_line Nullable(String),\n"
         "  renamed_from Nullable(String),\n"
         "  renamed_to Nullable(String),\n"
         "  date Date MATERIALIZED toDate(intDiv(time_ns, 1000000000))\n"
         ") ENGINE = ReplacingMergeTree\n"
         "PARTITION BY toYYYYMM(date)\n"
         "ORDER BY (host_id, db_uuid, event_id)";
}

std::string clickhouse_create_runs(const std::string& database) {
  return "CREATE TABLE IF NOT EXISTS `" + database +
         "`.runs (\n"
         "  host_id String,\n"
         "  host String,\n"
         "  db_uuid String,\n"
         "  run_id Int64,\n"
         "  source String,\n"
         "  live UInt8,\n"
         "  version Nullable(String),\n"
         "  collector_pid Nullable(Int64),\n"
         "  started String,\n"
         "  started_ns Int64,\n"
         "  last_commit_ns Nullable(Int64),\n"
         "  stopped_ns Nullable(Int64),\n"
         "  first_event_ns Nullable(Int64),\n"
         "  last_event_ns Nullable(Int64),\n"
         "  events_received Int64,\n"
         "  events_written Int64,\n"
         "  events_dropped Int64,\n"
         "  events_lost Int64,\n"
         "  events_excluded Int64,\n"
         "  bad_input Int64,\n"
         "  unresolved Int64,\n"
         "  exit_reason Nullable(String),\n"
         "  clock Nullable(String),\n"
         "  pruned_unshipped Int64,\n"
         "  updated_ns UInt64,\n"
         "  date Date MATERIALIZED toDate(intDiv(started_ns, 1000000000))\n"
         ") ENGINE = ReplacingMergeTree(updated_ns)\n"
         "PARTITION BY toYYYYMM(date)\n"
         "ORDER BY (host_id, db_uuid, run_id)";
}

}  // namespace etwaudit
