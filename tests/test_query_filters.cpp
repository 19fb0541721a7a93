#include <catch2/catch.hpp>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "core/time_format.h"
#include "query/filters.h"
#include "query/sql_text.h"
#include "report_fixture.h"

using namespace etwaudit;
using etwaudit::test::ReportFixture;

namespace {
std::string usage_error(const std::function<void()>& action) {
  try {
    action();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}
std::string refusal(SQLite::Database& db, const std::string& sql) {
  try {
    run_sql(db, sql, {});
  } catch (const Error& e) {
    return e.what();
  }
  return "(allowed)";
}
}  // namespace

TEST_CASE("times for since and until: the forms journalctl takes, and a message for others", "[filters]") {
  const std::int64_t now = parse_iso8601("2026-12-02T12:00:00Z").value();
  CHECK(parse_time_argument("--since", "15m", now) == now - 15 * 60 * ns_per_second);
  CHECK(parse_time_argument("--since", "7d", now) == now - 7 * 24 * ns_per_hour);
  CHECK(parse_time_argument("--until", "2026-12-02T13:00:00+01:00", now) == now);
  CHECK(parse_time_argument("--since", "now", now) == now);
  CHECK(usage_error([&] { parse_time_argument("--since", "last tuesday", now); }) ==
        "--since 'last tuesday': expected a date or a time (2026-12-02, '2026-12-02 10:16', 10:16, local time; "
        "2026-12-02T10:16:00Z, ...+01:00), today, yesterday, now, or back from now (15m, 1h30m, -2h)");
  CHECK(usage_error([&] { parse_time_argument("--since", "90", now); }) ==
        "--since '90': a number needs its unit: 90m, 90h, 90d?");
}

TEST_CASE("bad globs and operations are usage errors that say which argument and why", "[filters]") {
  CHECK(usage_error([] { check_glob_argument("--path", "C:\\[abc"); }) ==
        "--path 'C:\\[abc': '[' at position 4 is never closed with ']'");
  CHECK(parse_op_argument("delete") == Op::remove);
  CHECK_THAT(usage_error([] { parse_op_argument("wrote"); }),
             Catch::StartsWith("--op 'wrote': unknown operation (expected one of: read, write, open"));
}

TEST_CASE("the query connection reads and refuses everything else, saying what", "[filters]") {
  ReportFixture fixture;
  auto& db = fixture.db();
  CHECK(run_sql(db, "SELECT count(*) FROM events", {}).rows[0][0].text == "12");
  CHECK(run_sql(db, "PRAGMA table_info(events)", {}).rows.size() == 11);
  CHECK(run_sql(db, "PRAGMA user_version", {}).rows[0][0].text == std::to_string(program_schema_version()));
  CHECK(refusal(db, "DELETE FROM events_00") ==
        "queries may only read the database: DELETE from 'events_00' is refused");
  CHECK(refusal(db, "DELETE FROM events") == "query failed: cannot modify events because it is a view");
  CHECK(refusal(db, "INSERT INTO ops VALUES (99, 'x', 'y')") ==
        "queries may only read the database: INSERT into 'ops' is refused");
  CHECK(refusal(db, "UPDATE files SET path = 'x'") ==
        "queries may only read the database: UPDATE of 'files' is refused");
  CHECK_THAT(refusal(db, "CREATE TABLE t (x)"), Catch::StartsWith("queries may only read the database: statements"));
  CHECK_THAT(refusal(db, "DROP VIEW v_events"), Catch::StartsWith("queries may only read the database: statements"));
  CHECK(refusal(db, "ATTACH DATABASE '/tmp/x.db' AS x") ==
        "queries may only read the database: ATTACH and VACUUM are refused");
  CHECK(refusal(db, "PRAGMA user_version = 5") ==
        "queries may only read the database: PRAGMA user_version = ... changes the database and is refused");
  CHECK(refusal(db, "PRAGMA writable_schema") ==
        "queries may only read the database: PRAGMA writable_schema is refused (only pragmas that read are allowed)");
  CHECK(refusal(db, "SELECT load_extension('/tmp/evil.so')") ==
        "queries may only read the database: load_extension() is refused");
  CHECK(refusal(db, "BEGIN") == "queries may only read the database: transactions are refused");
  CHECK(run_sql(db, "SELECT count(*) FROM events", {}).rows[0][0].text == "12");
}

TEST_CASE("ad-hoc SQL sees the filter tables and binds --param values", "[filters]") {
  ReportFixture fixture;
  QueryFilters filters;
  filters.path = "*.docx";
  auto results = run_statements(fixture.db(), {{"result", "SELECT count(*), :who FROM windowed_events"}}, filters,
                                {{"who", "ada"}});
  CHECK(results[0].rows[0][0].text == "3");
  CHECK(results[0].rows[0][1].text == "ada");
}

TEST_CASE("path_match and process_match take a pattern that changes from row to row", "[filters]") {
  ReportFixture fixture;
  // SQLite keeps a compiled pattern only for a constant argument; here it is a column.
  auto count = [&](const std::string& sql) { return run_sql(fixture.db(), sql, {}).rows.at(0).at(0).text; };
  CHECK(count("SELECT count(*) FROM (SELECT '*.txt' AS p UNION ALL SELECT '*.docx') t, files f "
              "WHERE path_match(t.p, f.path)") == "3");
  CHECK(count("SELECT count(*) FROM (SELECT '100' AS p UNION ALL SELECT 'cp') t, processes p "
              "WHERE process_match(t.p, p.pid, p.image)") == "2");
  CHECK_THAT(refusal(fixture.db(), "SELECT process_match('C:\\[abc', pid, image) FROM processes"),
             Catch::Contains("bad pattern 'C:\\[abc': '[' at position 4 is never closed"));
}

TEST_CASE("a path glob matching many files walks the window instead of each file and gets the same rows", "[filters]") {
  etwaudit::test::TempDir dir;
  const std::string path = dir.file("many.db");
  {
    WriteDatabase database(path);
    Catalog catalog;
    RunStats stats;
    EventWriter writer(database.db(), catalog, SelfExclusion{});
    writer.begin_run("test", "host");
    std::vector<FileEvent> batch;
    const auto process = catalog.intern_process(7, 0, "C:\\app.exe");
    for (int i = 0; i < broad_path_files + 200; ++i) {
      FileEvent event;
      event.time = etwaudit::test::at("10:00:00") + i * ns_per_second;
      event.process = process;
      event.path = catalog.intern_path("C:\\data\\f" + std::to_string(i) + (i % 2 ? ".txt" : ".bin"));
      event.op = Op::read;
      event.size = 10;
      batch.push_back(event);
    }
    writer.write_batch(batch, stats);
    writer.end_run("end of input", stats);
  }
  auto db = open_read_only(path);
  prepare_read_connection(*db);
  QueryFilters all, half;
  all.path = "*";
  half.path = "*.txt";
  judge_path_breadth(*db, all);
  judge_path_breadth(*db, half);
  CHECK(all.broad_path);
  CHECK_FALSE(half.broad_path);
  // Either walk gives the same answer.
  for (QueryFilters filters : {all, half}) {
    const std::string expected = filters.path == "*" ? "1200|12000" : "600|6000";
    for (bool broad : {false, true}) {
      filters.broad_path = broad;
      Params params;
      add_filter_params(filters, params);
      const Table table = run_sql(
          *db, "WITH " + filter_ctes(filters) + " SELECT sum(events), sum(read_bytes) FROM windowed_activity", params);
      CHECK(table.rows.at(0).at(0).text + "|" + table.rows.at(0).at(1).text == expected);
    }
  }
}

TEST_CASE("ad-hoc SQL cannot write, attach, load, set pragmas, make temp objects or vacuum into a file", "[filters]") {
  ReportFixture fixture;
  auto& db = fixture.db();
  etwaudit::test::TempDir dir;
  const std::string copy = dir.file("copy.db");
  const std::string refused = "queries may only read the database: ";
  CHECK(refusal(db, "VACUUM INTO '" + copy + "'") == refused + "ATTACH and VACUUM are refused");
  CHECK_FALSE(std::filesystem::exists(copy));
  CHECK(refusal(db, "VACUUM") == refused + "ATTACH and VACUUM are refused");
  CHECK(refusal(db, "ATTACH ':memory:' AS scratch") == refused + "ATTACH and VACUUM are refused");
  CHECK(refusal(db, "SELECT load_extension('/tmp/evil.so', 'entry')") == refused + "load_extension() is refused");
  for (const char* temp : {"CREATE TEMP TABLE t (x)", "CREATE TEMPORARY VIEW v AS SELECT 1",
                           "CREATE TEMP TRIGGER t AFTER INSERT ON events_00 BEGIN SELECT 1; END",
                           "CREATE TEMP TABLE t AS SELECT * FROM events", "CREATE INDEX i ON events_00 (op)",
                           "CREATE VIRTUAL TABLE temp.t USING json_each('[1]')"}) {
    CAPTURE(temp);
    CHECK_THAT(refusal(db, temp), Catch::StartsWith(refused));
  }
  for (const char* pragma :
       {"PRAGMA journal_mode = DELETE", "PRAGMA wal_checkpoint(TRUNCATE)", "PRAGMA optimize", "PRAGMA query_only = 0",
        "PRAGMA writable_schema = ON", "PRAGMA temp_store = FILE", "PRAGMA main.user_version = 3",
        "PRAGMA incremental_vacuum", "PRAGMA shrink_memory", "PRAGMA foreign_keys = ON", "PRAGMA cache_size = 1"}) {
    CAPTURE(pragma);
    CHECK_THAT(refusal(db, pragma), Catch::StartsWith(refused + "PRAGMA"));
  }
  for (const char* write : {"REPLACE INTO ops VALUES (99, 'x', 'y')", "INSERT OR IGNORE INTO ops SELECT * FROM ops",
                            "WITH gone AS (SELECT 1) DELETE FROM events_00", "ANALYZE", "REINDEX",
                            "ALTER TABLE events_00 RENAME TO e", "SAVEPOINT s", "DETACH main"}) {
    CAPTURE(write);
    CHECK_THAT(refusal(db, write), Catch::StartsWith(refused));
  }
  CHECK(run_sql(db, "SELECT count(*) FROM events", {}).rows[0][0].text == "12");
}

TEST_CASE("a second statement after the first is refused, not silently dropped", "[filters]") {
  ReportFixture fixture;
  auto& db = fixture.db();
  CHECK(refusal(db, "select 1; select 2") == "one statement at a time, please: found 'select 2' after the first one");
  CHECK(refusal(db, "SELECT 1;\n-- a comment\nDELETE FROM events;") ==
        "one statement at a time, please: found 'DELETE FROM events;' after the first one");
  CHECK_THAT(refusal(db, "SELECT 1; /* two */ SELECT 2"), Catch::Contains("found 'SELECT 2'"));
  CHECK(refusal(db, std::string("SELECT 1\0; DELETE FROM events", 30)) ==
        "the SQL holds a NUL byte (at byte 8), which would end it there");
  // Found by fuzzing: SQL without a statement made SQLiteCpp throw from a noexcept function.
  CHECK(refusal(db, "") == "the SQL holds no statement, only spaces or comments");
  CHECK(refusal(db, " -- nothing\n;") == "the SQL holds no statement, only spaces or comments");
  // What only ends the statement is fine: semicolons, spaces and comments.
  CHECK(run_sql(db, "SELECT 1;", {}).rows[0][0].text == "1");
  CHECK(run_sql(db, "SELECT 1 ; ;\n -- done\n /* really */", {}).rows[0][0].text == "1");
  // With the filter tables in front, as --sql runs it.
  const auto with_filters = [&](const std::string& sql) {
    try {
      run_statements(db, {{"result", sql}}, {}, {});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(allowed)");
  };
  CHECK_THAT(with_filters("SELECT count(*) FROM windowed_events; DELETE FROM events"),
             Catch::Contains("found 'DELETE FROM events' after the first one"));
  CHECK(run_sql(db, "SELECT count(*) FROM events", {}).rows[0][0].text == "12");
}

TEST_CASE("parameter values are bound as data, byte for byte, whatever they hold", "[filters]") {
  ReportFixture fixture;
  const std::vector<std::string> values = {"it's \"quoted\"",
                                           "100%",
                                           "a_b",
                                           "*",
                                           "[abc]",
                                           "C:\\Users\\ada\\",
                                           "line one\nline two\r\n",
                                           std::string("before\0after", 12),
                                           std::string(100 * 1024, 'x'),
                                           "\xFF\xFE not UTF-8 \xC3(",
                                           "x'; DELETE FROM events; --",
                                           "' OR 1=1 --"};
  for (const std::string& value : values) {
    CAPTURE(value.substr(0, 40));
    const auto results = run_statements(fixture.db(),
                                        {{"result",
                                          "SELECT :v, typeof(:v), length(CAST(:v AS BLOB)), "
                                          "(SELECT count(*) FROM v_events WHERE path = :v OR process = :v)"}},
                                        {}, {{"v", value}});
    const auto& row = results.at(0).rows.at(0);
    CHECK(row[0].text == value);
    CHECK(row[1].text == "text");
    CHECK(row[2].text == std::to_string(value.size()));
    CHECK(row[3].text == "0");
  }
  CHECK(run_sql(fixture.db(), "SELECT count(*) FROM events", {}).rows[0][0].text == "12");
}

TEST_CASE("a window at the ends of the 64-bit time range has no whole minutes past them", "[filters]") {
  // The first and last whole minutes overflowed when --since or --until lay
  // within a minute of the ends (2262-04-11T23:47:16Z, 1677-09-21T00:12:44Z).
  QueryFilters filters;
  filters.since = INT64_MAX - 1000;
  filters.until = INT64_MIN + 1000;
  Params params;
  add_filter_params(filters, params);
  CHECK(params["whole_minutes_from"] == std::to_string(INT64_MAX));
  CHECK(params["whole_minutes_to"] == std::to_string(INT64_MIN));
  ReportFixture fixture;
  const auto counts = [&](QueryFilters window) {
    const auto table = run_statements(
        fixture.db(),
        {{"result", "SELECT count(*) || '|' || (SELECT count(*) FROM windowed_minutes) FROM windowed_events"}}, window,
        {});
    return table.at(0).rows.at(0).at(0).text;
  };
  filters = QueryFilters{};
  filters.since = parse_iso8601("2262-04-11T23:47:16Z");
  CHECK(counts(filters) == "0|0");
  filters = QueryFilters{};
  filters.until = parse_iso8601("1677-09-21T00:12:44Z");
  CHECK(counts(filters) == "0|0");
  filters.until = INT64_MAX;
  CHECK(counts(filters) == "12|8");
}

TEST_CASE("a pattern with a NUL byte is matched as all of its bytes, and a bad one is an Error", "[filters]") {
  // Found by fuzzing: path_match read its pattern only up to a NUL byte, so
  // "\0\0no..." passed the check and then failed as an empty pattern, with an
  // exception run_statements let through unexplained.
  ReportFixture fixture;
  const auto match = [&](const std::string& pattern, const std::string& path) {
    return run_sql(fixture.db(), "SELECT path_match(:p, :s), process_match(:p, 0, :s)", {{"p", pattern}, {"s", path}})
        .rows.at(0);
  };
  CHECK(match(std::string("a\0*", 3), "a")[0].text == "0");
  CHECK(match(std::string("a\0*", 3), "a")[1].text == "0");
  CHECK(match(std::string("a\0*", 3), std::string("a\0b", 3))[0].text == "1");
  CHECK(match(std::string("a\0*", 3), std::string("a\0b", 3))[1].text == "1");
  QueryFilters filters;
  filters.path = std::string("\0\0no", 4);
  CHECK(fixture.rows("file-history", filters).empty());
  filters.path = "";
  CHECK_THROWS_MATCHES(fixture.rows("file-history", filters), Error,
                       Catch::Message("query failed: bad pattern: the pattern is empty"));
}

TEST_CASE("the filter CTEs go after WITH or WITH RECURSIVE, past comments before the statement", "[filters]") {
  CHECK(with_ctes("a AS (SELECT 1)", "SELECT * FROM a") == "WITH a AS (SELECT 1)\nSELECT * FROM a");
  CHECK(with_ctes("a AS (SELECT 1)", "  with b AS (SELECT 2) SELECT * FROM a, b") ==
        "  with a AS (SELECT 1),\n b AS (SELECT 2) SELECT * FROM a, b");
  CHECK(with_ctes("a AS (SELECT 1)", "/* x */ -- y\nWITH RECURSIVE c(n) AS (SELECT 1) SELECT * FROM c") ==
        "/* x */ -- y\nWITH RECURSIVE a AS (SELECT 1),\n c(n) AS (SELECT 1) SELECT * FROM c");
  CHECK(with_ctes("a AS (SELECT 1)", "-- WITH\nSELECT 1") == "WITH a AS (SELECT 1)\n-- WITH\nSELECT 1");
  CHECK(with_ctes("a AS (SELECT 1)", "WITHOUT") == "WITH a AS (SELECT 1)\nWITHOUT");
}

TEST_CASE("ad-hoc SQL with a comment first or WITH RECURSIVE reads the filter tables", "[filters]") {
  ReportFixture fixture;
  QueryFilters filters;
  filters.process = "notepad.exe";
  auto count = [&](const std::string& sql) {
    return run_statements(fixture.db(), {{"result", sql}}, filters, {}).front().rows.at(0).at(0).text;
  };
  CHECK(count("SELECT count(*) FROM windowed_events") == "5");
  CHECK(count("/* notepad */ SELECT count(*) FROM windowed_events") == "5");
  CHECK(count("-- notepad\nSELECT count(*) FROM windowed_events") == "5");
  CHECK(count("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3)\n"
              "SELECT count(*) FROM n, windowed_events") == "15");
  // With a filter, v_events holds what it picks, in the view's columns.
  CHECK(count("SELECT count(*) FROM v_events") == "5");
  const Table view =
      run_statements(fixture.db(), {{"view", "SELECT * FROM v_events ORDER BY time_ns"}}, {}, {}).front();
  const Table picked =
      run_statements(fixture.db(), {{"picked", "SELECT * FROM v_events ORDER BY time_ns"}}, filters, {}).front();
  CHECK(picked.columns == view.columns);
  REQUIRE(picked.rows.size() == 5);
  for (std::size_t c = 0; c < view.columns.size(); ++c) {
    CAPTURE(view.columns[c]);
    CHECK(picked.rows[0][c].text == view.rows[0][c].text);
    CHECK(picked.rows[0][c].type == view.rows[0][c].type);
  }
}

TEST_CASE("the words and parameters of SQL are read outside strings and comments", "[filters]") {
  const SqlNames names = sql_names(
      "SELECT \"Windowed_Events\".x, 'v_events' AS s, :Since, @p, $q -- bounds\n"
      "FROM [my table] /* windowed_activity */ JOIN `t``2` WHERE a = 'it''s :until' AND b=:x1");
  CHECK(names.words.count("windowed_events"));
  CHECK(names.words.count("my table"));
  CHECK(names.words.count("t`2"));
  CHECK_FALSE(names.words.count("v_events"));
  CHECK_FALSE(names.words.count("bounds"));
  CHECK_FALSE(names.words.count("windowed_activity"));
  CHECK(names.parameters == std::set<std::string>{":since", "@p", "$q", ":x1"});
  CHECK(first_sql_word("  /* a */ -- b\n select") == 16);
  CHECK(sql_word_at("with recursive", 0) == "WITH");
}
