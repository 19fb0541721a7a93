#pragma once
// Opening etwaudit databases and keeping their schema current.
//
// The schema is the ordered list of migrations sql/NNNN_*.sql, embedded in the
// binary. PRAGMA user_version holds the number of the last one applied; each
// migration runs in its own transaction together with the user_version update,
// so a database is always at exactly one version. A database whose version is
// newer than this program knows is refused rather than misread.

#include <SQLiteCpp/Database.h>

#include <cstdint>
#include <memory>
#include <string>

#include "store/writer_lock.h"

namespace etwaudit {

// Process-wide SQLite settings; called by the open functions below, and by
// anything else that opens SQLite, before it does.
void configure_sqlite();

// The schema version this program writes (the highest migration number).
int program_schema_version();

// Applies the migrations the database lacks. Throws Error for a database
// newer than the program or a failing migration (which leaves it unchanged).
void migrate(SQLite::Database& db);

// What the WAL file is cut back to once a checkpoint has copied all of it
// (a reader holding an old snapshot makes it grow meanwhile).
inline constexpr std::int64_t wal_size_limit = 64 << 20;

// Connections are opened without SQLite's per-connection mutex: each is used by
// one thread at a time.
//
// The single write connection of a collector: WAL, synchronous=NORMAL, a busy
// timeout, the schema migrated, and a lock that keeps a second collector out.
class WriteDatabase {
 public:
  // Opens or creates path. Throws Error when the database cannot be opened or
  // created, is used by another collector, or is newer than the program; a
  // file this call created is removed again on failure.
  explicit WriteDatabase(const std::string& path);

  SQLite::Database& db() { return *m_db; }
  const std::string& path() const { return m_path; }
  // Closes the database and, when this object created the file, removes it
  // again: for a collector whose source cannot start, which then leaves
  // nothing behind. db() is unusable afterwards.
  void close_and_remove_if_created() noexcept;

 private:
  bool m_created = false;  // this object made the file
  std::string m_path;
  WriterLock m_lock;  // released after the connection closes
  std::unique_ptr<SQLite::Database> m_db;
};

// A read-write connection beside a collector, for maintenance (prune): the
// schema migrated, but no writer lock, so its transactions interleave with a
// running collector's batches, each waiting up to busy_timeout_ms for the
// write lock. Throws Error when the file does not exist (it is never created)
// or is not an etwaudit database, or is one a writer must refuse.
std::unique_ptr<SQLite::Database> open_for_maintenance(const std::string& path, int busy_timeout_ms = 60000);

// A read-only connection for queries. Throws Error when the file does not
// exist (it is never created), is not an etwaudit database or is newer than
// the program. path may be an SQLite URI (file:audit.db?mode=ro). A
// database in a folder that cannot be written (no -shm file can be made
// there) is read as it is on disk (immutable=1), without its -wal file;
// note then says so.
std::unique_ptr<SQLite::Database> open_read_only(const std::string& path, std::string* note = nullptr);
// True for an SQLite URI ("file:..."), which names no file to look for.
bool is_sqlite_uri(const std::string& path);

}  // namespace etwaudit
