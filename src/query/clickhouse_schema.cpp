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

}  // namespace etwaudit
