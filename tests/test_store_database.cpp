#include <SQLiteCpp/Database.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/error.h"
#include "core/file_event.h"
#include "store/activity_columns.h"
#include "store/bulk_statement.h"
#include "store/database.h"
#include "store/database_files.h"
#include "store/embedded_sql.h"
#include "store/event_slots.h"
#include "temp_dir.h"

#ifndef _WIN32
#include <sys/stat.h>
#include <unistd.h>
#endif

using namespace etwaudit;
using etwaudit::test::TempDir;
namespace fs = std::filesystem;

namespace {
int user_version(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  return db.execAndGet("PRAGMA user_version").getInt();
}
std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("a new database gets the whole schema, in WAL mode", "[database]") {
  TempDir dir;
  const auto path = dir.file("audit.db");
  {
    WriteDatabase database(path);
    auto& db = database.db();
    CHECK(db.execAndGet("PRAGMA journal_mode").getString() == "wal");
    CHECK(db.execAndGet("PRAGMA synchronous").getInt() == 1);  // NORMAL
    // Whatever the SQLite build's default: pruning must not write every
    // deleted row and freed page once more.
    CHECK(db.execAndGet("PRAGMA secure_delete").getInt() == 0);
    for (const char* table : {"ops", "files", "processes", "events_00", "events_15", "event_slots", "segments",
                              "activity", "collector_runs"})
      CHECK(db.tableExists(table));
    CHECK(db.execAndGet("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name GLOB 'events_[0-9][0-9]'")
              .getInt() == event_slot_count);
    CHECK(db.execAndGet("SELECT count(*) FROM event_slots").getInt() == event_slot_count);
    CHECK(db.execAndGet("SELECT name FROM ops WHERE op = 1").getString() == "write");
    CHECK(db.execAndGet("SELECT count(*) FROM ops").getInt() == op_count);
  }
  CHECK(user_version(path) == program_schema_version());
  CHECK(program_schema_version() >= 1);
}

TEST_CASE("the migrations a database needs run in one transaction: one that fails leaves it as it was",
          "[database][migration]") {
  TempDir dir;
  const auto path = dir.file("audit.db");
  { WriteDatabase database(path); }
  {
    // Back to schema v5, but with v7's column already there: 0006 would
    // succeed, 0007 then fails.
    SQLite::Database db(path, SQLite::OPEN_READWRITE);
    db.exec("ALTER TABLE processes DROP COLUMN uid");
    db.exec("PRAGMA user_version = 5");
  }
  CHECK_THAT(error_of([&] { WriteDatabase database(path); }),
             Catch::Contains("migration 0007_pruned_segments.sql failed") && Catch::Contains("duplicate column"));
  CHECK(user_version(path) == 5);
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  CHECK(db.execAndGet("SELECT count(*) FROM pragma_table_info('processes') WHERE name = 'uid'").getInt() == 0);
}

TEST_CASE("a maintenance connection (etwaudit prune) deletes without overwriting, too", "[database]") {
  TempDir dir;
  const auto path = dir.file("audit.db");
  { WriteDatabase create(path); }
  auto db = open_for_maintenance(path, 0);
  CHECK(db->execAndGet("PRAGMA secure_delete").getInt() == 0);
}

TEST_CASE("a bulk statement binds values and NULLs, and a failed step throws SQLite's error and can be run again",
          "[database]") {
  SQLite::Database db(":memory:", SQLite::OPEN_READWRITE);
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, value INTEGER)");
  BulkStatement insert(db, "INSERT INTO t (id, value) VALUES (?, ?)");
  insert.bind(1, 1);
  insert.bind(2, 10, true);
  insert.exec();
  insert.bind(1, 2);
  insert.bind(2, 20, false);
  insert.exec();
  CHECK(db.execAndGet("SELECT group_concat(id || ':' || coalesce(value, 'NULL'), ' ') FROM t").getString() ==
        "1:10 2:NULL");

  insert.bind(1, 1);  // that id is taken
  insert.bind(2, 30, true);
  try {
    insert.exec();
    FAIL("a duplicate key was inserted");
  } catch (const SQLite::Exception& e) {
    CHECK((e.getErrorCode() & 0xff) == SQLITE_CONSTRAINT);
    CHECK(std::string(e.what()).find("UNIQUE constraint failed: t.id") != std::string::npos);
  }
  insert.bind(1, 3);
  insert.exec();
  CHECK(db.execAndGet("SELECT count(*) FROM t").getInt() == 3);
}

TEST_CASE("ops table names every Op, as the program names it", "[database]") {
  TempDir dir;
  WriteDatabase database(dir.file("audit.db"));
  SQLite::Statement ops(database.db(), "SELECT op, name FROM ops ORDER BY op");
  int expected = 0;
  while (ops.executeStep()) {
    CHECK(ops.getColumn(0).getInt() == expected);
    CHECK(ops.getColumn(1).getString() == std::string(op_name(static_cast<Op>(expected))));
    ++expected;
  }
  CHECK(expected == op_count);
}

TEST_CASE("activity and hour_totals have a count column per Op and a bytes column where it sums bytes", "[database]") {
  TempDir dir;
  WriteDatabase database(dir.file("audit.db"));
  std::set<std::string> expected;
  for (const ActivityColumns& column : activity_columns) {
    expected.insert(column.count);
    if (column.bytes) expected.insert(column.bytes);
  }
  for (const char* table : {"activity", "hour_totals"}) {
    INFO(table);
    std::set<std::string> per_op;
    SQLite::Statement columns(database.db(), std::string("SELECT name FROM pragma_table_info('") + table + "')");
    while (columns.executeStep()) per_op.insert(columns.getColumn(0).getString());
    for (const char* other :
         {"segment_id", "hour", "process_id", "file_id", "events", "failed", "rows", "first_id", "last_id", "unsized"})
      per_op.erase(other);
    CHECK(per_op == expected);
  }
}

TEST_CASE("opening an up-to-date database again changes nothing", "[database]") {
  TempDir dir;
  const auto path = dir.file("audit.db");
  { WriteDatabase first(path); }
  { WriteDatabase second(path); }
  CHECK(user_version(path) == program_schema_version());
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  CHECK(db.execAndGet("SELECT count(*) FROM ops").getInt() == op_count);
}

TEST_CASE("a database newer than the program is refused, by writers and readers", "[database]") {
  TempDir dir;
  const auto path = dir.file("audit.db");
  { WriteDatabase database(path); }
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE);
    db.exec("PRAGMA user_version = 999");
  }
  CHECK_THAT(error_of([&] { WriteDatabase again(path); }),
             Catch::Contains("schema version 999") && Catch::Contains("newer than this etwaudit"));
  CHECK_THAT(error_of([&] { open_read_only(path); }), Catch::Contains("newer than this etwaudit"));
  CHECK(user_version(path) == 999);
}

TEST_CASE("an SQLite file of another program is not taken over", "[database]") {
  TempDir dir;
  const auto path = dir.file("other.db");
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec("CREATE TABLE recipes (name TEXT)");
  }
  CHECK_THAT(error_of([&] { WriteDatabase database(path); }), Catch::Contains("not an etwaudit database"));
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  CHECK_FALSE(db.tableExists("events"));
}

TEST_CASE("a file that is not a database is an error and stays as it was", "[database]") {
  TempDir dir;
  const auto path = dir.file("notes.txt");
  { std::ofstream(path) << "this is not a database, it is a text file with enough bytes in it to have a header\n"; }
  const auto size = fs::file_size(path);
  CHECK_THAT(error_of([&] { WriteDatabase database(path); }),
             Catch::Contains("cannot open database") && Catch::Contains("not a database"));
  CHECK(fs::file_size(path) == size);
}

TEST_CASE("a database that cannot be created is a clear error and leaves nothing behind", "[database]") {
  TempDir dir;
  const auto missing_dir = dir.file("no-such-dir/audit.db");
  CHECK_THAT(error_of([&] { WriteDatabase database(missing_dir); }), Catch::Contains("does not exist"));
  CHECK_FALSE(fs::exists(dir.file("no-such-dir")));

  const auto file_as_dir = dir.file("plain-file");
  { std::ofstream(file_as_dir) << "x"; }
  CHECK_THAT(error_of([&] { WriteDatabase database(file_as_dir + "/audit.db"); }), Catch::Contains("not a directory"));

#ifndef _WIN32
  // procfs refuses new files even to root: a read-only place for every user.
  CHECK_THAT(error_of([] { WriteDatabase database("/proc/self/etwaudit-test.db"); }),
             Catch::Contains("cannot open database '/proc/self/etwaudit-test.db'"));
#endif
  CHECK(fs::is_empty(dir.path()) == false);  // only plain-file
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 1);
}

TEST_CASE("a second writer on the same database is refused while the first runs", "[database]") {
  TempDir dir;
  const auto path = dir.file("audit.db");
  WriteDatabase first(path);
  CHECK_THAT(error_of([&] { WriteDatabase second(path); }), Catch::Contains("another etwaudit collector"));
  // Readers are welcome.
  auto reader = open_read_only(path);
  CHECK(reader->execAndGet("SELECT count(*) FROM events").getInt() == 0);
}

TEST_CASE("the writer lock goes away with the writer", "[database]") {
  TempDir dir;
  const auto path = dir.file("audit.db");
  { WriteDatabase first(path); }
  WriteDatabase second(path);
  CHECK(second.db().tableExists("events_00"));
}

TEST_CASE("a reader never creates a database", "[database]") {
  TempDir dir;
  const auto path = dir.file("missing.db");
  CHECK_THAT(error_of([&] { open_read_only(path); }), Catch::Contains("does not exist"));
  CHECK_FALSE(fs::exists(path));
}

TEST_CASE("a reader cannot write", "[database]") {
  TempDir dir;
  const auto path = dir.file("audit.db");
  { WriteDatabase database(path); }
  auto reader = open_read_only(path);
  CHECK_THROWS_WITH(reader->exec("DELETE FROM ops"), Catch::Contains("readonly"));
}

TEST_CASE("a schema v1 database gets minute totals computed from its events", "[database]") {
  TempDir dir;
  const auto path = dir.file("audit.db");
  {
    SQLite::Database v1(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    for (const auto& file : embedded_sql_files())
      if (file.name == "0001_initial.sql") v1.exec(std::string(file.text));
    v1.exec("PRAGMA user_version = 1");
    v1.exec(
        "INSERT INTO processes (process_id, pid) VALUES (1, 10); INSERT INTO files (file_id, path) VALUES (1, 'a')");
    // 10:00:30, 10:00:59.9 (read, 100 + 20 bytes); 10:01:00 (write); one before 1970 (open)
    v1.exec(
        "INSERT INTO events (id, ts, process_id, op, file_id, size) VALUES "
        "(1796205630000000000, NULL, 1, 0, 1, 100), (1796205660000000000, 1796205659900000000, 1, 0, 1, 20), "
        "(1796205660000000001, NULL, 1, 1, 1, NULL), (-30000000000, NULL, 1, 2, 1, NULL)");
  }
  { WriteDatabase upgraded(path); }
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  SQLite::Statement rows(db, "SELECT minute, op, events, bytes FROM minute_totals ORDER BY minute, op");
  std::vector<std::string> got;
  while (rows.executeStep())
    got.push_back(rows.getColumn(0).getString() + "|" + rows.getColumn(1).getString() + "|" +
                  rows.getColumn(2).getString() + "|" + rows.getColumn(3).getString());
  CHECK(got == std::vector<std::string>{"-1|2|1|0", "29936760|0|2|120", "29936761|1|1|0"});
}

#ifndef _WIN32

namespace {
mode_t mode_of(const std::string& path) {
  struct stat status {};
  REQUIRE(::lstat(path.c_str(), &status) == 0);
  return status.st_mode & 07777;
}

// Sets the process umask for one scope.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : m_previous(::umask(mask)) {}
  ~ScopedUmask() { ::umask(m_previous); }

 private:
  mode_t m_previous;
};

// A database another writer made and closed.
std::string existing_database(const TempDir& dir, const std::string& name = "audit.db") {
  const auto path = dir.file(name);
  { WriteDatabase database(path); }
  return path;
}

std::string contents_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
}  // namespace

TEST_CASE("a new database, its -wal and its -shm are 0600 whatever the umask", "[database][protection]") {
  for (mode_t mask : {0000, 0022, 0277}) {
    INFO("umask " << std::oct << mask);
    TempDir dir;  // made under the usual umask: 0277 would leave it unwritable
    ScopedUmask umask(mask);
    const auto path = dir.file("audit.db");
    WriteDatabase database(path);
    database.db().exec("CREATE TABLE scratch (x); INSERT INTO scratch VALUES (1)");
    CHECK(mode_of(path) == 0600);
    CHECK(mode_of(path + "-wal") == 0600);
    CHECK(mode_of(path + "-shm") == 0600);
  }
}

TEST_CASE("a database shared with its group on purpose keeps its mode", "[database][protection]") {
  TempDir dir;
  const auto path = existing_database(dir);
  REQUIRE(::chmod(path.c_str(), 0640) == 0);
  WriteDatabase database(path);
  CHECK(mode_of(path) == 0640);
  CHECK(mode_of(path + "-wal") == 0640);
}

TEST_CASE("a database others can write is refused, untouched, with the file and the reason", "[database][protection]") {
  TempDir dir;
  const auto path = existing_database(dir);
  const auto before = contents_of(path);
  REQUIRE(::chmod(path.c_str(), 0660) == 0);
  CHECK(error_of([&] { WriteDatabase database(path); }) ==
        "cannot open database '" + path + "': '" + path +
            "' is writable by its group (mode 0660), who could change or forge its records (remove that with chmod "
            "go-w)");
  REQUIRE(::chmod(path.c_str(), 0602) == 0);
  CHECK_THAT(error_of([&] { WriteDatabase database(path); }),
             Catch::Contains("'" + path + "' is writable by every user (mode 0602)"));
  REQUIRE(::chmod(path.c_str(), 0666) == 0);
  CHECK_THAT(error_of([&] { WriteDatabase database(path); }),
             Catch::Contains("'" + path + "' is writable by its group and every user (mode 0666)"));
  CHECK(contents_of(path) == before);
  CHECK(mode_of(path) == 0666);
  CHECK_FALSE(fs::exists(path + "-wal"));
  CHECK_FALSE(fs::exists(path + "-shm"));
}

TEST_CASE("a symbolic link at the database path is refused, even to a sound database", "[database][protection]") {
  TempDir dir;
  const auto target = existing_database(dir, "real.db");
  const auto before = contents_of(target);
  const auto link = dir.file("audit.db");
  fs::create_symlink(target, link);
  CHECK(error_of([&] { WriteDatabase database(link); }) ==
        "cannot open database '" + link + "': '" + link +
            "' is a symbolic link: etwaudit writes only to the file itself (give its real path)");
  CHECK(contents_of(target) == before);
  // A dangling link is not followed to create its target either.
  const auto dangling = dir.file("dangling.db");
  fs::create_symlink(dir.file("elsewhere.db"), dangling);
  CHECK_THAT(error_of([&] { WriteDatabase database(dangling); }), Catch::Contains("is a symbolic link"));
  CHECK_FALSE(fs::exists(dir.file("elsewhere.db")));
  CHECK(fs::is_symlink(dangling));
}

TEST_CASE("something other than a regular file at the database path is refused", "[database][protection]") {
  TempDir dir;
  const auto fifo = dir.file("audit.db");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(error_of([&] { WriteDatabase database(fifo); }) ==
        "cannot open database '" + fifo + "': '" + fifo + "' is not a regular file");
}

TEST_CASE("a -wal, -shm or -journal left beside the database must be as safe as the database",
          "[database][protection]") {
  TempDir dir;
  const auto path = existing_database(dir);
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    const auto side = path + suffix;
    INFO(side);
    { std::ofstream(side) << std::string(64, '\0'); }
    REQUIRE(::chmod(side.c_str(), 0602) == 0);
    CHECK_THAT(error_of([&] { WriteDatabase database(path); }),
               Catch::StartsWith("cannot open database '" + path + "': '" + side + "' is writable by every user"));
    fs::remove(side);
    fs::create_symlink(dir.file("elsewhere"), side);
    CHECK_THAT(error_of([&] { WriteDatabase database(path); }), Catch::Contains("'" + side + "' is a symbolic link"));
    CHECK_FALSE(fs::exists(dir.file("elsewhere")));
    fs::remove(side);
  }
}

TEST_CASE("a -wal or -shm readable by more users than the database is narrowed to its mode", "[database][protection]") {
  TempDir dir;
  const auto path = existing_database(dir);
  REQUIRE(mode_of(path) == 0600);
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    const auto side = path + suffix;
    { std::ofstream(side) << "left over by a crash"; }
    REQUIRE(::chmod(side.c_str(), 0644) == 0);
    check_database_files(path);
    CHECK(mode_of(side) == 0600);
    CHECK(contents_of(side) == "left over by a crash");
    fs::remove(side);
  }
}

TEST_CASE("a database file another user owns is refused, even to root", "[database][protection]") {
  if (::geteuid() != 0) {
    WARN("skipped: needs root to give a file to another user (chown)");
    return;
  }
  TempDir dir;
  const uid_t nobody = 65534;
  const auto path = existing_database(dir);
  const auto before = contents_of(path);
  REQUIRE(::chown(path.c_str(), nobody, nobody) == 0);
  CHECK_THAT(error_of([&] { WriteDatabase database(path); }),
             Catch::StartsWith("cannot open database '" + path + "': '" + path + "' belongs to ") &&
                 Catch::Contains("(65534), not to root (0) who runs etwaudit"));
  CHECK(contents_of(path) == before);

  REQUIRE(::chown(path.c_str(), 0, 0) == 0);
  const auto wal = path + "-wal";
  { std::ofstream(wal) << std::string(64, '\0'); }
  REQUIRE(::chmod(wal.c_str(), 0600) == 0);
  REQUIRE(::chown(wal.c_str(), nobody, nobody) == 0);
  CHECK_THAT(error_of([&] { WriteDatabase database(path); }), Catch::Contains("'" + wal + "' belongs to "));
}

#endif
