#include "store/open_run.h"

#include <SQLiteCpp/Statement.h>

#include <filesystem>

#include "core/error.h"
#include "core/utf8_path.h"
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

void refuse_if_collector_running(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(utf8_path(path), error)) return;
  bool running = false;
  try {
    running = collector_running(path);
  } catch (const Error&) {
    return;  // a database that cannot be opened: opening it says why
  }
  if (running) throw Error(another_collector_message(path));
}

std::string another_collector_message(const std::string& path) {
  return "cannot open database '" + path +
         "': another etwaudit collector is writing to it (one collector per database)";
}

}  // namespace etwaudit
