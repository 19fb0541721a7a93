#pragma once
// Where this database's events go besides it, and how far each has them
// (sql/0016_destinations.sql): a cursor per destination, moved only after
// the destination has the events, so that a crash at any point sends some
// events again and never skips one.
//
// These run beside a collector on a connection without the writer lock
// (open_for_maintenance): each change is one small transaction that waits
// for the collector's batch in progress.

#include <SQLiteCpp/Database.h>

#include <cstdint>
#include <string>
#include <vector>

namespace etwaudit {

// The database's own id (identity.db_uuid).
std::string database_uuid(SQLite::Database& db);

struct DestinationState {
  std::string name;
  std::int64_t shipped_through = 0;  // every event with an id up to this was delivered
  std::uint64_t rows_shipped = 0;
  std::int64_t names_through = 0;  // every name_changes row up to this seq was dealt with (sql/0018)
};

// A name learned late (sql/0018): file_id or process_id, the other 0.
struct NameChange {
  std::int64_t seq = 0, file_id = 0, process_id = 0;
};

// The destination's cursor; a destination seen for the first time starts at
// 0, with no name change to deal with (it had no events before them).
DestinationState open_destination(SQLite::Database& db, const std::string& name);
// The destination has every event up to through (rows more of them):
// moves the cursor, clears the last error.
void advance_destination(SQLite::Database& db, const std::string& name, std::int64_t through, std::uint64_t rows);
// The names learned after seq after, oldest first.
std::vector<NameChange> name_changes_after(SQLite::Database& db, std::int64_t after);
// The destination has had the events of every name change up to seq again;
// the changes every destination has dealt with are deleted.
void advance_names(SQLite::Database& db, const std::string& name, std::int64_t seq);
// Lets a destination that is gone for good go: its cursor no longer holds
// retention back (sql/0017). Error, naming the destinations there are, when
// there is none of that name.
void forget_destination(SQLite::Database& db, const std::string& name);
// The last attempt failed with error; the cursor stays.
void record_destination_error(SQLite::Database& db, const std::string& name, const std::string& error);

}  // namespace etwaudit
