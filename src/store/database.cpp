#include "store/database.h"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

#include "core/error.h"
#include "core/utf8_path.h"
#include "store/database_files.h"
#include "store/embedded_sql.h"
#include "store/open_run.h"

namespace etwaudit {
namespace {

namespace fs = std::filesystem;

// Debian's and other distributions' SQLite is built with secure_delete on: a
// deleted row is overwritten with zeros and every freed page written out, so
// pruning a segment wrote it to the WAL once more. The events are not secret
// from whoever can read the database file, and the pages are reused anyway.
constexpr const char* no_secure_delete = "PRAGMA secure_delete = OFF";

struct Migration {
  int version;            // NNNN from the file name
  std::string_view name;  // file name
  std::string_view sql;   // its statements
};

// The embedded sql/NNNN_*.sql files in version order.
const std::vector<Migration>& migrations() {
  static const std::vector<Migration> list = [] {
    std::vector<Migration> result;
    for (const auto& file : embedded_sql_files()) {
      if (file.name.find('/') != std::string_view::npos || file.name.size() < 5) continue;
      int version = 0;
      for (std::size_t i = 0; i < 4; ++i) {
        char c = file.name[i];
        if (c < '0' || c > '9') {
          version = -1;
          break;
        }
        version = version * 10 + (c - '0');
      }
      if (version > 0) result.push_back({version, file.name, file.text});
    }
    std::sort(result.begin(), result.end(),
              [](const Migration& a, const Migration& b) { return a.version < b.version; });
    return result;
  }();
  return list;
}

int user_version(SQLite::Database& db) {
  return db.execAndGet("PRAGMA user_version").getInt();
}

bool has_tables(SQLite::Database& db) {
  return db.execAndGet("SELECT count(*) FROM sqlite_schema").getInt() > 0;
}

void check_not_newer(SQLite::Database& db, int version) {
  if (version > program_schema_version())
    throw Error("database '" + db.getFilename() + "' has schema version " + std::to_string(version) +
                ", newer than this etwaudit understands (" + std::to_string(program_schema_version()) +
                "): use a newer etwaudit");
}

void remove_database_files(const std::string& path) {
  std::error_code ignored;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(utf8_path(path + suffix), ignored);
}

// Says why a database file could not be created, in terms a user can act on.
std::string explain_open_failure(const std::string& path, const std::string& sqlite_message) {
  fs::path parent = utf8_path(path).parent_path();
  if (parent.empty()) parent = ".";
  std::error_code error;
  if (!fs::exists(parent, error)) return "directory '" + utf8_name(parent) + "' does not exist";
  if (!fs::is_directory(parent, error)) return "'" + utf8_name(parent) + "' is not a directory";
  return sqlite_message;
}

}  // namespace

void configure_sqlite() {
  // Before SQLite initialises: without this every allocation SQLite makes takes
  // a global mutex to keep statistics nobody reads (a fifth of the insert cost).
  static const bool configured = [] {
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    return true;
  }();
  (void)configured;
}

int program_schema_version() {
  return migrations().empty() ? 0 : migrations().back().version;
}

void migrate(SQLite::Database& db) {
  int version = user_version(db);
  check_not_newer(db, version);
  if (version == 0 && has_tables(db))
    throw Error("'" + db.getFilename() + "' is an SQLite database but not an etwaudit database");
  if (version == program_schema_version()) return;
  // All of them in one transaction: a database is never seen (or left, by a
  // crash) half made or half migrated.
  SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
  // Another process may have migrated while we waited for the write lock.
  version = user_version(db);
  check_not_newer(db, version);
  for (const Migration& migration : migrations()) {
    if (migration.version <= version) continue;
    try {
      db.exec(std::string(migration.sql));
    } catch (const SQLite::Exception& e) {
      throw Error("migration " + std::string(migration.name) + " failed on '" + db.getFilename() + "': " + e.what());
    }
    db.exec("PRAGMA user_version = " + std::to_string(migration.version));
  }
  transaction.commit();
}

WriteDatabase::WriteDatabase(const std::string& path) : m_path(path) {
  configure_sqlite();
  // The file is made here rather than by SQLite, for its mode or DACL (see
  // database_files.h); SQLite's side files follow the file's mode.
  bool existed = false;
  try {
    existed = !create_private_file(path);
  } catch (const std::system_error& e) {
    throw Error("cannot open database '" + path + "': " + explain_open_failure(path, e.code().message()));
  }
  try {
    // Before SQLite reads or writes anything. (Not SQLite's OPEN_NOFOLLOW: it
    // refuses a link anywhere in the path, such as a linked home folder; the
    // writer lock opens the file without following a link put there since.)
    check_database_files(path);
    try {
      m_db =
          std::make_unique<SQLite::Database>(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE | SQLite::OPEN_NOMUTEX);
    } catch (const SQLite::Exception& e) {
      throw Error("cannot open database '" + path + "': " + explain_open_failure(path, e.what()));
    }
    if (!m_lock.try_lock(path)) throw Error(another_collector_message(path));
    try {
      m_db->exec("PRAGMA busy_timeout = 10000");
      if (!existed) m_db->exec("PRAGMA page_size = 4096");
      std::string mode = m_db->execAndGet("PRAGMA journal_mode = WAL").getString();
      if (mode != "wal") throw Error("cannot open database '" + path + "': WAL mode unavailable (" + mode + ")");
      m_db->exec("PRAGMA synchronous = NORMAL");
      m_db->exec("PRAGMA cache_size = -32768");  // 32 MiB
      m_db->exec(no_secure_delete);
      m_db->exec("PRAGMA wal_autocheckpoint = 4096");
      // A reader holding a snapshot for minutes keeps every later commit in
      // the WAL, which then grows; once the WAL has been copied back in full,
      // SQLite starts it over and cuts the file to this size.
      m_db->exec("PRAGMA journal_size_limit = " + std::to_string(wal_size_limit));
      migrate(*m_db);
      // The schema is all they hold yet: no event is written before this.
      protect_side_files(path);
    } catch (const SQLite::Exception& e) {
      throw Error("cannot open database '" + path + "': " + e.what());
    }
  } catch (...) {
    m_db.reset();
    m_lock.unlock();
    if (!existed) remove_database_files(path);
    throw;
  }
  m_created = !existed;
}

void WriteDatabase::close_and_remove_if_created() noexcept {
  m_db.reset();
  m_lock.unlock();
  if (m_created) remove_database_files(m_path);
  m_created = false;
}

std::unique_ptr<SQLite::Database> open_for_maintenance(const std::string& path, int busy_timeout_ms) {
  configure_sqlite();
  std::error_code error;
  if (!fs::exists(utf8_path(path), error)) throw Error("database '" + path + "' does not exist");
  check_database_files(path);
  std::unique_ptr<SQLite::Database> db;
  try {
    db = std::make_unique<SQLite::Database>(path, SQLite::OPEN_READWRITE | SQLite::OPEN_NOMUTEX);
    db->exec("PRAGMA busy_timeout = " + std::to_string(busy_timeout_ms));
    if (user_version(*db) == 0) throw Error("'" + path + "' is not an etwaudit database");
    std::string mode = db->execAndGet("PRAGMA journal_mode = WAL").getString();
    if (mode != "wal") throw Error("cannot open database '" + path + "': WAL mode unavailable (" + mode + ")");
    db->exec("PRAGMA synchronous = NORMAL");
    db->exec(no_secure_delete);
    migrate(*db);
  } catch (const SQLite::Exception& e) {
    throw Error("cannot open database '" + path + "': " + e.what());
  }
  return db;
}

bool is_sqlite_uri(const std::string& path) {
  return path.rfind("file:", 0) == 0;
}

namespace {

std::string sqlite_file_uri(const std::string& path, const std::string& query) {
  std::string name = path;
#ifdef _WIN32
  std::replace(name.begin(), name.end(), '\\', '/');
  if (name.size() >= 2 && name[1] == ':') name = "/" + name;  // file:/C:/...
#endif
  std::string uri = "file:";
  for (char c : name) {
    if (c == '?' || c == '#' || c == '%') {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", static_cast<unsigned char>(c));
      uri += escaped;
    } else {
      uri += c;
    }
  }
  return query.empty() ? uri : uri + "?" + query;
}

// Opens name (path, or a URI for it) read-only and checks that it is an
// etwaudit database of this program's schema version.
std::unique_ptr<SQLite::Database> open_read_only_as(const std::string& path, const std::string& name, int flags) {
  auto db = std::make_unique<SQLite::Database>(name, flags);
  db->exec("PRAGMA busy_timeout = 10000");
  const int version = user_version(*db);
  check_not_newer(*db, version);
  if (version == 0) throw Error("'" + path + "' is not an etwaudit database");
  if (version < program_schema_version())
    throw Error("database '" + path + "' has schema version " + std::to_string(version) +
                ", older than this etwaudit's (" + std::to_string(program_schema_version()) +
                "): it is upgraded in place when a collector next opens it, or now with 'etwaudit prune --db " + path +
                " --upgrade'");
  return db;
}

}  // namespace

std::unique_ptr<SQLite::Database> open_read_only(const std::string& path, std::string* note) {
  configure_sqlite();
  std::error_code error;
  const bool uri = is_sqlite_uri(path);
  if (!uri && !fs::exists(utf8_path(path), error)) throw Error("database '" + path + "' does not exist");
  try {
    return open_read_only_as(path, path, SQLite::OPEN_READONLY | SQLite::OPEN_NOMUTEX | (uri ? SQLite::OPEN_URI : 0));
  } catch (const SQLite::Exception& e) {
    const int code = e.getErrorCode() & 0xff;
    if (uri || (code != SQLITE_CANTOPEN && code != SQLITE_READONLY))
      throw Error("cannot open database '" + path + "': " + e.what());
    // A WAL database in a folder that cannot be written (a share, a CD,
    // evidence mounted read-only): SQLite cannot make the -shm file its
    // readers share, so the file is read as it is, without locks.
    std::unique_ptr<SQLite::Database> db;
    try {
      db = open_read_only_as(path, sqlite_file_uri(path, "immutable=1"),
                             SQLite::OPEN_READONLY | SQLite::OPEN_NOMUTEX | SQLite::OPEN_URI);
    } catch (const SQLite::Exception&) {
      throw Error("cannot open database '" + path + "': " + e.what());
    }
    if (note) {
      *note = "'" + path + "' is in a folder that cannot be written: read as it is on disk (immutable)";
      const auto wal = fs::file_size(utf8_path(path + "-wal"), error);
      if (!error && wal > 0)
        *note += "; the events in its -wal file (" + std::to_string(wal / 1024) +
                 " KiB) are not read: copy the database and its -wal file to a folder that can be written to "
                 "see them";
    }
    return db;
  }
}

}  // namespace etwaudit
