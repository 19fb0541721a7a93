#pragma once
// Whether a collector is writing a database, and its run: what `status` and
// `stop` tell from outside. The writer lock (writer_lock.h) says that one
// runs; the newest run record without an end says which.

#include <SQLiteCpp/Database.h>

#include <cstdint>
#include <string>

namespace etwaudit {

struct OpenRun {
  std::int64_t run_id = 0;  // 0: no run is open
  std::uint32_t pid = 0;
  std::string host;
};

// The newest run without an end.
OpenRun open_run(SQLite::Database& db);

// True while another process holds the writer lock of the database at path
// (a collector runs); throws Error when the file cannot be opened. Call it
// before opening the database, or after its last read: closing the probe's
// descriptor drops this process's POSIX locks on the file.
bool collector_running(const std::string& path);
// Throws Error "cannot open database 'PATH': another etwaudit collector is
// writing to it" when one is: before a collector says what it watches.
void refuse_if_collector_running(const std::string& path);
// That message: "cannot open database 'PATH': another etwaudit collector ...".
std::string another_collector_message(const std::string& path);

}  // namespace etwaudit
