#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "core/time_format.h"
#include "pipeline/collection.h"
#include "store/activity_columns.h"
#include "store/database.h"
#include "store/destinations.h"
#include "store/event_writer.h"
#include "store/retention.h"
#include "temp_dir.h"

using namespace etwaudit;
using etwaudit::test::TempDir;

namespace {

constexpr std::int64_t t0 = 1796206530LL * ns_per_second;  // 2026-12-02T10:15:30Z

// (hour, image, path, op) -> events, bytes; op -1: the failed events, bytes 0
using Totals = std::map<std::tuple<std::int64_t, std::string, std::string, int>, std::pair<std::int64_t, std::int64_t>>;

// What the database says it holds, kept and pruned together: hour_totals plus
// the activity of the segments still there, per hour, process, file and op.
Totals stored_totals(SQLite::Database& db) {
  Totals totals;
  for (int op = -1; op < op_count; ++op) {
    const std::string count = op < 0 ? "failed" : activity_columns[op].count;
    const bool sized = op >= 0 && activity_columns[op].bytes != nullptr;
    const std::string bytes = sized ? activity_columns[op].bytes : "0";
    SQLite::Statement query(db, "SELECT t.hour, p.image, f.path, sum(t." + count +
                                    "), sum(t.b) FROM ("
                                    "  SELECT hour, process_id, file_id, " +
                                    count + ", " + bytes +
                                    " AS b FROM hour_totals"
                                    "  UNION ALL SELECT s.hour, a.process_id, a.file_id, a." +
                                    count + ", " + (sized ? "a." + bytes : "0") +
                                    "  FROM activity a JOIN segments s USING (segment_id)) t"
                                    " JOIN processes p USING (process_id) JOIN files f USING (file_id)"
                                    " GROUP BY 1, 2, 3 HAVING sum(t." +
                                    count + ") > 0");
    while (query.executeStep())
      totals[{query.getColumn(0).getInt64(), query.getColumn(1).getString(), query.getColumn(2).getString(), op}] = {
          query.getColumn(3).getInt64(), query.getColumn(4).getInt64()};
  }
  return totals;
}

struct RandomEvents {
  std::mt19937_64 random{12345};
  std::int64_t time = t0;
  Totals expected;
  std::int64_t events = 0;  // all of them, failed ones too
  std::int64_t failed = 0;
  std::int64_t step = 2 * ns_per_second;  // mean time between events: 2 s is about 1,000 events an hour
  int ops = op_count;                     // the operations drawn: the first this many

  std::vector<FileEvent> batch(Catalog& catalog, int size) {
    std::vector<FileEvent> batch;
    for (int i = 0; i < size; ++i) {
      time += static_cast<std::int64_t>(random() % static_cast<std::uint64_t>(2 * step));
      FileEvent event;
      event.time = time;
      const int process = static_cast<int>(random() % 5);
      const std::string image = "/usr/bin/p" + std::to_string(process);
      const std::string path = "/data/f" + std::to_string(random() % 40);
      event.process = catalog.intern_process(1000 + process, 0, image);
      event.path = catalog.intern_path(path);
      event.op = static_cast<Op>(random() % static_cast<std::uint64_t>(ops));
      const bool sized = event.op == Op::read || event.op == Op::write;
      event.size = sized ? static_cast<std::int64_t>(random() % 100000) : -1;
      event.count = random() % 4 == 0 ? 1 + static_cast<std::uint32_t>(random() % 50) : 1;  // some coalesced rows
      if (random() % 8 == 0) {                                                              // failed, counted apart
        event.status = 0xC0000034;
        event.size = sized ? 0 : -1;
      }
      const int op = event.status ? -1 : static_cast<int>(event.op);
      auto& [count, bytes] = expected[{floor_div(event.time, ns_per_hour), image, path, op}];
      count += event.count;
      bytes += sized ? event.size : 0;
      events += event.count;
      failed += event.status ? event.count : 0;
      batch.push_back(event);
    }
    return batch;
  }
};

// A writer on a new database, its segments segment_events long.
struct WriterFixture {
  TempDir dir;
  WriteDatabase database{dir.file("audit.db")};
  SQLite::Database& db = database.db();
  Catalog catalog;
  RunStats stats;
  EventWriter writer{db, catalog, SelfExclusion{}};

  explicit WriterFixture(std::int64_t segment_events) {
    writer.set_segment_capacity(segment_events);
    writer.begin_run("test", "host");
  }
};

}  // namespace

TEST_CASE("hourly totals and kept activity always add up to every event, through batches, prunes and restarts",
          "[retention]") {
  TempDir dir;
  const std::string path = dir.file("audit.db");
  RandomEvents input;
  for (int restart = 0; restart < 3; ++restart) {
    WriteDatabase database(path);
    Catalog catalog;
    RunStats stats;
    EventWriter writer(database.db(), catalog, SelfExclusion{});
    writer.begin_run("test", "host");
    Pruner pruner(database.db());
    for (int round = 0; round < 8; ++round) {
      auto batch = input.batch(catalog, 1000 + round * 300);
      writer.write_batch(batch, stats);
      // Keep the last two hours of raw events.
      pruner.prune(RetentionPolicy{2 * ns_per_hour, std::nullopt}, writer.last_event_time());
      REQUIRE(stored_totals(database.db()) == input.expected);
    }
    writer.end_run("end of input", stats);
  }
  WriteDatabase database(path);
  auto& db = database.db();
  CHECK(db.execAndGet("SELECT count(*) FROM hour_totals").getInt64() > 0);
  CHECK(db.execAndGet("SELECT pruned_segments FROM retention").getInt64() > 0);
  // Every kept event is after pruned_before, and minute totals still count everything.
  CHECK(db.execAndGet("SELECT count(*) FROM events WHERE coalesce(ts, id) < (SELECT pruned_before FROM retention)")
            .getInt64() == 0);
  CHECK(db.execAndGet("SELECT sum(events) FROM minute_totals").getInt64() == input.events - input.failed);
  CHECK(input.failed > 0);
  CHECK(db.execAndGet("SELECT sum(events_written) FROM collector_runs").getInt64() == input.events);
  CHECK(db.execAndGet("PRAGMA integrity_check").getString() == "ok");
}

TEST_CASE("a file named after its events were added into the hourly totals keeps them under its name", "[retention]") {
  WriterFixture f(10);
  const std::string name = "C:\\Users\\ada\\notes.txt";
  const std::uint32_t process = f.catalog.intern_process(100, 0, "C:\\app.exe");
  auto read = [&](std::int64_t time, std::uint32_t path) {
    FileEvent event;
    event.time = time;
    event.op = Op::read;
    event.size = 10;
    event.path = path;
    event.process = process;
    return event;
  };
  // 30 reads by kernel key and 5 under the name in one hour: four segments.
  const std::uint32_t by_key = f.catalog.intern_file_key(0xFFFF'8001'0000'0010);
  std::vector<FileEvent> batch;
  for (int i = 0; i < 30; ++i) batch.push_back(read(t0 + i, by_key));
  for (int i = 0; i < 5; ++i) batch.push_back(read(t0 + 100 + i, f.catalog.intern_path(name)));
  batch.push_back(read(t0 + 5 * ns_per_hour, f.catalog.intern_path("C:\\later.txt")));
  f.writer.write_batch(batch, f.stats);
  Pruner pruner(f.db);
  pruner.prune(RetentionPolicy{ns_per_hour, std::nullopt}, f.writer.last_event_time());
  REQUIRE(f.db.execAndGet("SELECT count(*) FROM hour_totals WHERE file_id = (SELECT file_id FROM files WHERE path IS "
                          "NULL)")
              .getInt64() == 1);

  // The name comes with the next batch, the rundown's say.
  f.catalog.resolve_file_key(0xFFFF'8001'0000'0010, name);
  std::vector<FileEvent> next{read(t0 + 5 * ns_per_hour + 1, by_key)};
  f.writer.write_batch(next, f.stats);

  CHECK(f.db.execAndGet("SELECT count(*) FROM files WHERE path IS NULL").getInt64() == 0);
  CHECK(
      f.db.execAndGet("SELECT count(*) FROM hour_totals WHERE file_id NOT IN (SELECT file_id FROM files)").getInt64() ==
      0);
  CHECK(f.db.execAndGet("SELECT reads || ' ' || read_bytes FROM hour_totals JOIN files USING (file_id) WHERE path = '" +
                        name + "'")
            .getString() == "35 350");
  CHECK(f.db.execAndGet("SELECT sum(events) FROM hour_totals").getInt64() +
            f.db.execAndGet("SELECT sum(events) FROM activity").getInt64() ==
        37);
}

TEST_CASE("a rename's names go with its events when they are pruned", "[retention]") {
  WriterFixture f(10);
  const std::uint32_t process = f.catalog.intern_process(100, 0, "/usr/bin/mv");
  const std::uint32_t from = f.catalog.intern_path("/srv/a.txt"), to = f.catalog.intern_path("/srv/b.txt");
  auto rename = [&](std::int64_t time, std::uint32_t path) {
    FileEvent event;
    event.time = time;
    event.op = Op::rename;
    event.path = path;
    event.process = process;
    event.renamed_from = from;
    event.renamed_to = to;
    return event;
  };
  std::vector<FileEvent> batch{rename(t0, from), rename(t0, to), rename(t0 + 5 * ns_per_hour, from),
                               rename(t0 + 5 * ns_per_hour, to)};
  f.writer.write_batch(batch, f.stats);
  REQUIRE(f.db.execAndGet("SELECT count(*) FROM renames").getInt64() == 4);
  Pruner pruner(f.db);
  pruner.prune(RetentionPolicy{ns_per_hour, std::nullopt}, f.writer.last_event_time());
  CHECK(f.db.execAndGet("SELECT count(*) FROM renames").getInt64() == 2);
  CHECK(f.db.execAndGet("SELECT count(*) FROM v_events WHERE renamed_to = '/srv/b.txt'").getInt64() == 2);
}

TEST_CASE("under --keep a segment waits until every destination has its events", "[retention][destinations]") {
  WriterFixture f(100);
  RandomEvents input;
  auto batch = input.batch(f.catalog, 1000);  // ten segments
  f.writer.write_batch(batch, f.stats);
  const std::int64_t rows = f.db.execAndGet("SELECT count(*) FROM events").getInt64();
  const DestinationState jsonl = open_destination(f.db, "jsonl:/var/log/etwaudit");
  open_destination(f.db, "clickhouse:http://central:8123/?database=fleet");
  REQUIRE(jsonl.shipped_through == 0);
  Pruner pruner(f.db);
  const RetentionPolicy keep{1, std::nullopt};  // everything is past its age
  const std::int64_t later = f.writer.last_event_time() + ns_per_hour;

  // An outage longer than --keep: nothing goes, and the prune says why.
  PruneResult pruned = pruner.prune(keep, later);
  CHECK(pruned.segments == 0);
  CHECK(pruned.held_segments == 9);
  CHECK(f.db.execAndGet("SELECT count(*) FROM events").getInt64() == rows);

  // One destination has the first half, the other everything: the first half goes.
  const std::int64_t half =
      f.db.execAndGet("SELECT last_id FROM segments ORDER BY segment_id LIMIT 1 OFFSET 4").getInt64();
  advance_destination(f.db, "jsonl:/var/log/etwaudit", half, 0);
  advance_destination(f.db, "clickhouse:http://central:8123/?database=fleet", INT64_MAX, 0);
  pruned = pruner.prune(keep, later);
  CHECK(pruned.segments == 5);
  CHECK(pruned.held_segments == 4);
  CHECK(pruned.unshipped_rows == 0);
  CHECK(f.db.execAndGet("SELECT min(id) FROM events").getInt64() > half);

  // The lagging destination let go: the rest but the newest goes.
  forget_destination(f.db, "jsonl:/var/log/etwaudit");
  pruned = pruner.prune(keep, later);
  CHECK(pruned.segments == 4);
  CHECK(pruned.held_segments == 0);
  CHECK_THROWS_WITH(forget_destination(f.db, "jsonl:-"),
                    Catch::Contains("no destination 'jsonl:-'") &&
                        Catch::Contains("'clickhouse:http://central:8123/?database=fleet'"));
  CHECK(stored_totals(f.db) == input.expected);
}

TEST_CASE("under --max-size segments go all the same, and each destination counts the rows it never had",
          "[retention][destinations]") {
  WriterFixture f(100);
  RandomEvents input;
  auto batch = input.batch(f.catalog, 1000);
  f.writer.write_batch(batch, f.stats);
  open_destination(f.db, "behind");
  open_destination(f.db, "partway");
  open_destination(f.db, "ahead");
  // partway has 150 rows: the first segment and half the second (ids grow by time).
  advance_destination(f.db, "partway",
                      f.db.execAndGet("SELECT id FROM events ORDER BY id LIMIT 1 OFFSET 149").getInt64(), 150);
  advance_destination(f.db, "ahead", INT64_MAX, 0);
  Pruner pruner(f.db);
  const PruneResult pruned = pruner.prune(RetentionPolicy{std::nullopt, 1}, f.writer.last_event_time());
  REQUIRE(pruned.segments == 9);
  const std::int64_t gone = static_cast<std::int64_t>(pruned.rows);
  auto unshipped = [&](const char* name) {
    SQLite::Statement query(f.db, "SELECT pruned_unshipped FROM destinations WHERE name = ?");
    query.bind(1, name);
    REQUIRE(query.executeStep());
    return query.getColumn(0).getInt64();
  };
  CHECK(unshipped("behind") == gone);
  CHECK(unshipped("partway") == gone - 150);
  CHECK(unshipped("ahead") == 0);
  CHECK(pruned.unshipped_rows == static_cast<std::uint64_t>(gone));
}

TEST_CASE("pruning times SQLite's checkpoint after a commit apart from the lock, and leaves it as it was",
          "[retention]") {
  WriterFixture f(100);
  RandomEvents input;
  auto batch = input.batch(f.catalog, 2000);
  f.writer.write_batch(batch, f.stats);
  f.db.exec("PRAGMA wal_autocheckpoint = 1");  // a checkpoint after every commit
  Pruner pruner(f.db);
  const PruneResult pruned = pruner.prune(RetentionPolicy{1, std::nullopt}, f.writer.last_event_time());
  REQUIRE(pruned.transactions > 1);
  CHECK(pruned.longest_checkpoint.count() > 0);
  CHECK(f.db.execAndGet("PRAGMA wal_autocheckpoint").getInt() == 1);
  CHECK(stored_totals(f.db) == input.expected);
}

TEST_CASE("a size cap prunes the oldest segments, the file stops growing, and recording goes on", "[retention]") {
  TempDir dir;
  const std::string path = dir.file("audit.db");
  WriteDatabase database(path);
  Catalog catalog;
  RunStats stats;
  EventWriter writer(database.db(), catalog, SelfExclusion{});
  writer.begin_run("test", "host");
  Pruner pruner(database.db());
  RandomEvents input;
  input.step = ns_per_second / 1000;  // a busy machine: the totals stay small beside the events
  const std::uint64_t cap = 4 << 20;
  std::vector<std::uint64_t> sizes;
  for (int round = 0; round < 60; ++round) {
    auto batch = input.batch(catalog, 20000);
    writer.write_batch(batch, stats);
    const PruneResult pruned = pruner.prune(RetentionPolicy{std::nullopt, cap}, writer.last_event_time());
    CHECK_FALSE(pruned.over_size);
    CHECK(used_bytes(database.db()) <= cap);
    database.db().exec("PRAGMA wal_checkpoint(TRUNCATE)");
    sizes.push_back(std::filesystem::file_size(path));
  }
  CHECK(stats.written == static_cast<std::uint64_t>(input.events));
  CHECK(database.db().execAndGet("SELECT pruned_segments FROM retention").getInt64() > 10);
  // The last half of the run reused freed pages: the file grew only by what
  // the long-term totals and names added (the events tripled meanwhile).
  CHECK(sizes.back() <= sizes[sizes.size() / 2] * 102 / 100);
  CHECK(sizes.back() <= cap + (1 << 20));
  CHECK(stored_totals(database.db()) == input.expected);
}

TEST_CASE("the newest segment is never pruned, whatever the policy", "[retention]") {
  TempDir dir;
  WriteDatabase database(dir.file("audit.db"));
  Catalog catalog;
  RunStats stats;
  EventWriter writer(database.db(), catalog, SelfExclusion{});
  writer.begin_run("test", "host");
  RandomEvents input;
  auto batch = input.batch(catalog, 100);
  writer.write_batch(batch, stats);
  Pruner pruner(database.db());
  pruner.prune(RetentionPolicy{1, 1}, writer.last_event_time() + 100 * ns_per_hour);
  auto& db = database.db();
  CHECK(db.execAndGet("SELECT count(*) FROM segments").getInt64() == 1);
  CHECK(db.execAndGet("SELECT count(*) FROM events WHERE id >= (SELECT first_id FROM segments)").getInt64() ==
        db.execAndGet("SELECT events FROM segments").getInt64());
  CHECK(stored_totals(db) == input.expected);
}

TEST_CASE("a database written by schema version 2 migrates in place and keeps its data", "[retention][migration]") {
  TempDir dir;
  const std::string path = dir.file("v2.db");
  std::filesystem::copy_file(ETWAUDIT_TEST_FIXTURES "/schema-v2.db", path);
  {
    SQLite::Database before(path, SQLite::OPEN_READONLY);
    REQUIRE(before.execAndGet("PRAGMA user_version").getInt() == 2);
  }
  WriteDatabase database(path);
  auto& db = database.db();
  CHECK(db.execAndGet("PRAGMA user_version").getInt() == program_schema_version());
  CHECK(db.execAndGet("SELECT count(*) FROM events").getInt() == 163);
  CHECK(db.execAndGet("SELECT count(*) FROM v_events WHERE count = 1 AND end_offset IS NULL").getInt() == 163);
  // v_events says who ran each event's process (schema v11).
  CHECK(db.execAndGet("SELECT count(*) FROM v_events v JOIN processes p USING (process_id) "
                      "WHERE v.pid = p.pid AND v.command_line IS p.command_line AND v.parent_pid IS p.parent_pid")
            .getInt() == 163);
  CHECK(db.execAndGet("SELECT sum(events) FROM activity").getInt() == 163);
  CHECK(db.execAndGet("SELECT sum(events) FROM minute_totals").getInt() == 163);
  CHECK(db.execAndGet("SELECT count(*) FROM hour_totals").getInt() == 0);
  CHECK(db.execAndGet("SELECT pruned_before IS NULL FROM retention").getInt() == 1);
  CHECK(db.execAndGet("SELECT events_written FROM collector_runs").getInt() == 163);
  CHECK(db.execAndGet("PRAGMA integrity_check").getString() == "ok");
}

TEST_CASE("a schema v4 database, which counted failed operations as the others, migrates to counting them apart",
          "[retention][migration]") {
  TempDir dir;
  const std::string path = dir.file("audit.db");
  auto snapshot = [](SQLite::Database& db) {
    std::string text;
    for (const char* sql : {"SELECT * FROM activity ORDER BY segment_id, process_id, file_id",
                            "SELECT * FROM minute_totals ORDER BY minute, op"}) {
      SQLite::Statement query(db, sql);
      while (query.executeStep()) {
        for (int i = 0; i < query.getColumnCount(); ++i) text += query.getColumn(i).getString() + ",";
        text += "\n";
      }
    }
    return text;
  };
  std::string written;
  {
    WriteDatabase database(path);
    Catalog catalog;
    RunStats stats;
    EventWriter writer(database.db(), catalog, SelfExclusion{});
    writer.set_segment_capacity(1024);
    writer.begin_run("test", "host");
    RandomEvents input;
    input.ops = static_cast<int>(Op::overwrite);  // the operations a v4 writer knew
    for (int round = 0; round < 3; ++round) {
      auto batch = input.batch(catalog, 1500);
      writer.write_batch(batch, stats);
    }
    writer.end_run("end of input", stats);
    REQUIRE(database.db().execAndGet("SELECT sum(failed) FROM activity").getInt64() == input.failed);
    // A v4 writer counted no events without a size; the migration knows
    // them only in fanotify's runs (tested with the reports).
    database.db().exec("UPDATE activity SET unsized = 0; UPDATE minute_totals SET unsized = 0");
    written = snapshot(database.db());
  }
  {
    // Back to what a v4 writer stored: the failed events in events, their
    // operation's column and minute_totals, and no failed columns.
    SQLite::Database db(path, SQLite::OPEN_READWRITE);
    // (schema v9: one events table)
    db.exec("DROP VIEW v_events; DROP VIEW events; CREATE VIEW v_events AS SELECT 1");
    for (int slot = 1; slot < event_slot_count; ++slot) db.exec("DROP TABLE " + event_table(slot));
    db.exec("DROP TABLE event_slots; ALTER TABLE segments DROP COLUMN slot; ALTER TABLE events_00 RENAME TO events");
    std::string per_op;
    for (const ActivityColumns& column : activity_columns)
      per_op += std::string(", ") + column.count + " = " + column.count +
                " + (SELECT coalesce(sum(coalesce(e.count, 1)), 0) FROM events e WHERE e.id BETWEEN "
                "activity.first_id AND activity.last_id AND e.process_id = activity.process_id AND "
                "e.file_id = activity.file_id AND e.status IS NOT NULL AND e.op = " +
                std::to_string(static_cast<int>(column.op)) + ")";
    db.exec("UPDATE activity SET rows = nullif(coalesce(rows, events), events + failed), events = events + failed" +
            per_op);
    db.exec(
        "INSERT INTO minute_totals (minute, op, events, bytes) "
        "SELECT coalesce(ts, id) / 60000000000, op, sum(coalesce(count, 1)), 0 FROM events WHERE status IS NOT NULL "
        "GROUP BY 1, 2 ON CONFLICT (minute, op) DO UPDATE SET events = events + excluded.events");
    db.exec("ALTER TABLE activity DROP COLUMN failed");
    db.exec("ALTER TABLE hour_totals DROP COLUMN failed");
    db.exec("ALTER TABLE processes DROP COLUMN uid");                            // (schema v6)
    db.exec("ALTER TABLE segments DROP COLUMN pruned");                          // (schema v7)
    db.exec("DROP INDEX events_by_ts");                                          // (schema v8)
    db.exec("CREATE INDEX hour_totals_by_file ON hour_totals (file_id, hour)");  // (schema v10)
    db.exec("DROP INDEX activity_by_segment_file; CREATE INDEX activity_by_file ON activity (file_id, segment_id)");
    db.exec(
        "DELETE FROM ops WHERE op = 13; ALTER TABLE activity DROP COLUMN overwrites; "
        "ALTER TABLE hour_totals DROP COLUMN overwrites");  // (schema v12)
    db.exec("DROP TABLE renames");                          // (schema v13)
    db.exec("DELETE FROM ops WHERE op IN (14, 15)");        // (schema v14)
    db.exec(
        "DROP VIEW v_runs; ALTER TABLE collector_runs DROP COLUMN clock; "
        "ALTER TABLE collector_runs DROP COLUMN events_own; CREATE VIEW v_runs AS SELECT 1");  // (v15, v20)
    db.exec(
        "DROP VIEW v_file_totals; DROP VIEW v_process_totals; DROP VIEW v_process_file_totals; "
        "DROP TABLE file_totals; DROP TABLE process_totals; DROP TABLE process_file_totals; "
        "DROP TABLE totals_folded");                                                   // (v21)
    db.exec("DROP TABLE identity; DROP TABLE destinations; DROP TABLE name_changes");  // (schema v16, v18)
    db.exec("DROP INDEX minute_totals_unsized");
    for (const char* table : {"activity", "hour_totals", "minute_totals"})
      db.exec(std::string("ALTER TABLE ") + table + " DROP COLUMN unsized");  // (schema v22)
    for (const char* table : {"activity", "hour_totals"})
      for (const char* column : {"paging_reads", "paging_read_bytes", "paging_writes", "paging_write_bytes"})
        db.exec(std::string("ALTER TABLE ") + table + " DROP COLUMN " + column);
    db.exec("PRAGMA user_version = 4");
    REQUIRE(db.execAndGet("SELECT sum(events) FROM activity").getInt64() ==
            db.execAndGet("SELECT sum(coalesce(count, 1)) FROM events").getInt64());
  }
  WriteDatabase database(path);
  CHECK(database.db().execAndGet("PRAGMA user_version").getInt() == program_schema_version());
  CHECK(snapshot(database.db()) == written);
  CHECK(database.db().execAndGet("PRAGMA integrity_check").getString() == "ok");
  // The browsing totals were made from what the database held.
  CHECK(database.db().execAndGet("SELECT sum(events) || ' ' || sum(failed) FROM file_totals").getString() ==
        database.db().execAndGet("SELECT sum(events) || ' ' || sum(failed) FROM activity").getString());
}

TEST_CASE("events go round the ring of slot tables, and pruning empties whole slots", "[retention][slots]") {
  TempDir dir;
  const std::string path = dir.file("audit.db");
  RandomEvents input;
  input.step = ns_per_second / 20;  // 72,000 events an hour
  auto count = [](SQLite::Database& db, const std::string& sql) { return db.execAndGet(sql).getInt64(); };
  std::set<int> slots_seen;
  int wraps = 0, last_slot = 0;
  std::int64_t emptied = 0;  // slots found empty after having held events
  for (int restart = 0; restart < 2; ++restart) {
    WriteDatabase database(path);
    auto& db = database.db();
    Catalog catalog;
    RunStats stats;
    EventWriter writer(db, catalog, SelfExclusion{});
    writer.set_segment_capacity(512);
    writer.set_slot_rows(2048);
    writer.begin_run("test", "host");
    Pruner pruner(db);
    for (int round = 0; round < 40; ++round) {
      auto batch = input.batch(catalog, 2500);
      writer.write_batch(batch, stats);
      const int slot = static_cast<int>(count(db, "SELECT slot FROM segments ORDER BY segment_id DESC LIMIT 1"));
      wraps += slot < last_slot;
      last_slot = slot;
      slots_seen.insert(slot);
      // Ten minutes of raw events: about six slots of the sixteen.
      pruner.prune(RetentionPolicy{10 * ns_per_minute, std::nullopt}, writer.last_event_time());
      if (round % 8 == 7) REQUIRE(stored_totals(db) == input.expected);
      // The views show the kept segments' rows, and each slot holds those and
      // the rows pruned segments left below its kept_from, no more.
      REQUIRE(count(db, "SELECT count(*) FROM events") ==
              count(db, "SELECT coalesce(sum(events), 0) FROM segments WHERE pruned IS NULL"));
      REQUIRE(count(db, "SELECT count(*) FROM v_events") == count(db, "SELECT count(*) FROM events"));
      for (int k = 0; k < event_slot_count; ++k) {
        const std::string n = std::to_string(k);
        const std::int64_t kept =
            count(db, "SELECT coalesce(sum(events), 0) FROM segments WHERE pruned IS NULL AND slot = " + n);
        const std::int64_t left = count(db, "SELECT pruned_rows FROM event_slots WHERE slot = " + n);
        INFO("slot " << k);
        REQUIRE(count(db, "SELECT count(*) FROM " + event_table(k)) == kept + left);
        REQUIRE(left <= slot_rows_limit);
        emptied += slots_seen.count(k) && kept + left == 0;
      }
      REQUIRE(count(db,
                    "SELECT count(*) FROM events WHERE coalesce(ts, id) < (SELECT coalesce(pruned_before, 0) "
                    "FROM retention)") == 0);
    }
    writer.end_run("end of input", stats);
  }
  WriteDatabase database(path);
  auto& db = database.db();
  CHECK(slots_seen.size() == static_cast<std::size_t>(event_slot_count));
  CHECK(wraps >= 1);
  CHECK(emptied > 0);
  CHECK(count(db, "SELECT count(*) FROM hour_totals") > 0);  // busy hours were folded
  CHECK(count(db, "SELECT sum(events) FROM minute_totals") == input.events - input.failed);
  CHECK(db.execAndGet("PRAGMA integrity_check").getString() == "ok");
}
