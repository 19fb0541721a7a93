#include "store/open_run.h"

#include <SQLiteCpp/Statement.h>

#include "store/writer_lock.h"

namespace etwaudit {

OpenRun open_run(SQLite::Database& db) {
  OpenRun run;
  SQLite::Statement find(db,
                         "SELECT run_id, coalesce(pid, 0), coalesce(host, '') FROM collector_runs "
                         "WHERE stopped_at IS NULL ORDER BY run_id DESC LIMIT 1");
  if (find.executeStep()) {
    run.run_id = find.getColumn(0).getInt64();
    run.pid = static_cast<std::uint32_t>(find.getColumn(1).getInt64());
    run.host = find.getColumn(2).getString();
  }
  return run;
}

bool collector_running(const std::string& path) {
  WriterLock probe;
  return !probe.try_lock(path);
}

}  // namespace etwaudit
