#pragma once
// The run records of a database as JSON lines for a destination's runs
// table (query/clickhouse_schema.h): when and from what each collector or
// import ran, and what it received, wrote, lost, dropped and excluded, with
// the rows --max-size pruned before this destination had them
// (destinations.pruned_unshipped, the database's count, on every row).
// Only runs that changed since the lines last arrived are written again; a
// row's updated_ns (the time it was written) lets the newest copy win.

#include <SQLiteCpp/Database.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "query/event_lines.h"

namespace etwaudit {

class RunLines {
 public:
  RunLines(SQLite::Database& db, std::string destination);

  // Replaces out with the lines of the runs that changed since the last
  // sent() (all of them the first time); false when none did.
  bool changed(std::string& out, const EventOrigin& origin);
  // The lines of the last changed() arrived.
  void sent() { m_sent = m_pending; }

 private:
  SQLite::Database& m_db;
  std::string m_destination;
  // run_id -> (the run's latest change, pruned_unshipped) as last sent, and as last written.
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> m_sent, m_pending;
};

}  // namespace etwaudit
