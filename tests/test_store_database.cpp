#include <SQLiteCpp/Database.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "store/database.h"
#include "store/embedded_sql.h"
#include "temp_dir.h"

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
    for (const char* table : {"ops", "files", "processes", "events", "segments", "activity", "collector_runs"})
      CHECK(db.tableExists(table));
    CHECK(db.execAndGet("SELECT name FROM ops WHERE op = 1").getString() == "write");
    CHECK(db.execAndGet("SELECT count(*) FROM ops").getInt() == 13);
  }
  CHECK(user_version(path) == program_schema_version());
  CHECK(program_schema_version() >= 1);
}

TEST_CASE("opening an up-to-date database again changes nothing", "[database]") {
  TempDir dir;
  const auto path = dir.file("audit.db");
  { WriteDatabase first(path); }
  { WriteDatabase second(path); }
  CHECK(user_version(path) == program_schema_version());
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  CHECK(db.execAndGet("SELECT count(*) FROM ops").getInt() == 13);
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
  CHECK(second.db().tableExists("events"));
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
    v1.exec("INSERT INTO processes (process_id, pid) VALUES (1, 10); INSERT INTO files (file_id, path) VALUES (1, 'a')");
    // 10:00:30, 10:00:59.9 (read, 100 + 20 bytes); 10:01:00 (write); one before 1970 (open)
    v1.exec("INSERT INTO events (id, ts, process_id, op, file_id, size) VALUES "
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
