#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <catch2/catch.hpp>
#include <random>

#include "core/time_format.h"
#include "store/activity_columns.h"
#include "store/database.h"
#include "store/event_writer.h"
#include "store/retention.h"
#include "temp_dir.h"

using namespace etwaudit;
using etwaudit::test::TempDir;

namespace {

constexpr std::int64_t t0 = 1796206530LL * ns_per_second;  // 2026-12-02T10:15:30Z

struct Fixture {
  TempDir dir;
  WriteDatabase database{dir.file("audit.db")};
  SQLite::Database& db = database.db();
  Catalog catalog;
  RunStats stats;
  EventWriter writer{db, catalog, SelfExclusion{}};
  std::mt19937_64 random{2026};
  std::int64_t time = t0;

  Fixture() {
    writer.set_segment_capacity(64);                    // a batch crosses segments
    writer.set_totals_interval(std::chrono::hours(1));  // folded when asked (fold_totals, end_run)
    writer.begin_run("test", "host");
  }

  // count events of 6 processes on 30 files, over hours; process 5 gives no
  // sizes (as fanotify), and the files only it touches have no bytes.
  void write(int batches, int count) {
    for (int b = 0; b < batches; ++b) {
      std::vector<FileEvent> batch;
      for (int i = 0; i < count; ++i) {
        time += static_cast<std::int64_t>(random() % (4 * ns_per_second));
        FileEvent event;
        event.time = time;
        const int process = static_cast<int>(random() % 6);
        const int file = process == 5 ? 30 + static_cast<int>(random() % 3) : static_cast<int>(random() % 30);
        ProcessInfo info;
        info.pid = 1000 + process;
        info.start_time = t0 - ns_per_hour + process;
        info.image = "/usr/bin/p" + std::to_string(process);
        info.parent_pid = process == 0 ? 1 : 1000;  // p0 started the others
        event.process = catalog.intern_process(info);
        event.path = catalog.intern_path("/data/f" + std::to_string(file));
        event.op = static_cast<Op>(random() % op_count);
        const bool moves_bytes = activity_columns[static_cast<int>(event.op)].bytes != nullptr;
        event.size = moves_bytes && process != 5 ? static_cast<std::int64_t>(random() % 100000) : -1;
        event.count = random() % 4 == 0 ? 1 + static_cast<std::uint32_t>(random() % 20) : 1;
        if (random() % 10 == 0) event.status = 0xC0000022;
        batch.push_back(event);
      }
      writer.write_batch(batch, stats);
    }
  }

  std::int64_t count(const std::string& sql) { return db.execAndGet(sql).getInt64(); }
  // Rows of a that b lacks and of b that a lacks.
  std::int64_t differences(const std::string& a, const std::string& b) {
    return count("SELECT count(*) FROM (SELECT * FROM (" + a + " EXCEPT " + b + ") UNION ALL SELECT * FROM (" + b +
                 " EXCEPT " + a + "))");
  }
  std::string text(const std::string& sql) {
    SQLite::Statement query(db, sql);
    std::string all;
    while (query.executeStep()) {
      for (int i = 0; i < query.getColumnCount(); ++i) all += query.getColumn(i).getString() + "|";
      all += "\n";
    }
    return all;
  }
};

// The view's counting columns and what a plain aggregate over the events
// says each one is: events that did not fail, per operation; bytes only where
// some read or write of the group had a size (or none needed one).
struct Columns {
  std::string view, plain;
};
Columns counting_columns() {
  const std::string ok = "e.status IS NULL";
  const std::string n = "coalesce(e.count, 1)";
  std::string moving = "e.op IN (";
  for (const ActivityColumns& c : activity_columns)
    if (c.bytes) moving += std::to_string(static_cast<int>(c.op)) + ",";
  moving.back() = ')';
  const std::string known = "(sum(" + ok + " AND " + moving + " AND e.size IS NULL) = 0 OR sum(" + ok + " AND " +
                            moving + " AND e.size IS NOT NULL) > 0)";
  Columns columns{"events, failed", "sum(CASE WHEN " + ok + " THEN " + n + " ELSE 0 END), sum(CASE WHEN NOT (" + ok +
                                        ") THEN " + n + " ELSE 0 END)"};
  for (const ActivityColumns& c : activity_columns) {
    const std::string op = std::to_string(static_cast<int>(c.op));
    columns.view += std::string(", ") + c.count;
    columns.plain += ", sum(CASE WHEN " + ok + " AND e.op = " + op + " THEN " + n + " ELSE 0 END)";
    if (!c.bytes) continue;
    columns.view += std::string(", ") + c.bytes;
    columns.plain += ", CASE WHEN " + known + " THEN sum(CASE WHEN " + ok + " AND e.op = " + op +
                     " THEN coalesce(e.size, 0) ELSE 0 END) END";
  }
  const auto iso = [](const std::string& ns) {
    return "strftime('%Y-%m-%dT%H:%M:%S', " + ns + " / 1000000000, 'unixepoch') || printf('.%07dZ', (" + ns +
           " % 1000000000) / 100)";
  };
  columns.view += ", first_seen, last_seen";
  columns.plain += ", " + iso("min(e.id)") + ", " + iso("max(e.id)");
  return columns;
}

}  // namespace

TEST_CASE("the browsing views equal a plain query over the events, per file, process and pair", "[browsing]") {
  Fixture f;
  f.write(12, 500);
  // Held in memory until the interval passes...
  CHECK(f.count("SELECT count(*) FROM v_file_totals") == 0);
  f.writer.fold_totals();
  const Columns c = counting_columns();
  REQUIRE(f.count("SELECT count(*) FROM v_file_totals") == 33);
  CHECK(f.differences("SELECT path, processes, " + c.view + " FROM v_file_totals",
                      "SELECT f.path, count(DISTINCT e.process_id), " + c.plain +
                          " FROM events e JOIN files f USING (file_id) GROUP BY e.file_id") == 0);
  REQUIRE(f.count("SELECT count(*) FROM v_process_totals") == 6);
  CHECK(f.differences("SELECT process, pid, started, files, " + c.view + " FROM v_process_totals",
                      "SELECT p.image, p.pid, strftime('%Y-%m-%dT%H:%M:%S', p.start_time / 1000000000, 'unixepoch') "
                      "|| printf('.%07dZ', (p.start_time % 1000000000) / 100), count(DISTINCT e.file_id), " +
                          c.plain + " FROM events e JOIN processes p USING (process_id) GROUP BY e.process_id") == 0);
  CHECK(f.count("SELECT count(*) FROM v_process_file_totals") ==
        f.count("SELECT count(*) FROM (SELECT DISTINCT process_id, file_id FROM events)"));
  CHECK(f.differences("SELECT process, pid, path, " + c.view + " FROM v_process_file_totals",
                      "SELECT p.image, p.pid, f.path, " + c.plain +
                          " FROM events e JOIN processes p USING (process_id) JOIN files f USING (file_id) "
                          "GROUP BY e.process_id, e.file_id") == 0);

  // What a user sees: no bytes for what was recorded without sizes, the
  // parent's program by its pid.
  CHECK(f.text("SELECT DISTINCT read_bytes IS NULL, write_bytes IS NULL FROM v_file_totals WHERE path IN ('/data/f30', "
               "'/data/f31', '/data/f32')") == "1|1|\n");
  CHECK(f.count("SELECT count(*) FROM v_file_totals WHERE read_bytes IS NULL") == 3);
  CHECK(f.text("SELECT DISTINCT parent FROM v_process_totals WHERE process <> '/usr/bin/p0'") == "/usr/bin/p0|\n");
}

TEST_CASE("pruning leaves the browsing totals whole: they cover the hours pruned", "[browsing][retention]") {
  Fixture f;
  f.write(12, 500);  // about 3 hours
  f.writer.fold_totals();
  std::string before;
  for (const char* view :
       {"v_file_totals ORDER BY path", "v_process_totals ORDER BY pid", "v_process_file_totals ORDER BY pid, path"})
    before += f.text(std::string("SELECT * FROM ") + view);
  const std::int64_t events = f.count("SELECT count(*) FROM events");
  Pruner pruner(f.db);
  pruner.prune(RetentionPolicy{30 * ns_per_minute, std::nullopt}, f.writer.last_event_time());
  REQUIRE(f.count("SELECT count(*) FROM events") < events / 2);
  std::string after;
  for (const char* view :
       {"v_file_totals ORDER BY path", "v_process_totals ORDER BY pid", "v_process_file_totals ORDER BY pid, path"})
    after += f.text(std::string("SELECT * FROM ") + view);
  CHECK(after == before);
}

TEST_CASE("events a collector wrote and died before folding are folded by the next writer", "[browsing]") {
  Fixture f;
  f.write(4, 500);
  f.writer.fold_totals();
  f.write(4, 500);  // written, then the collector died
  REQUIRE(f.count("SELECT sum(events + failed) FROM file_totals") <
          f.count("SELECT sum(coalesce(count, 1)) FROM events"));
  EventWriter next(f.db, f.catalog, SelfExclusion{});
  next.begin_run("test", "host");
  const Columns c = counting_columns();
  CHECK(f.differences("SELECT path, processes, " + c.view + " FROM v_file_totals",
                      "SELECT f.path, count(DISTINCT e.process_id), " + c.plain +
                          " FROM events e JOIN files f USING (file_id) GROUP BY e.file_id") == 0);
  CHECK(f.differences("SELECT process, pid, path, " + c.view + " FROM v_process_file_totals",
                      "SELECT p.image, p.pid, f.path, " + c.plain +
                          " FROM events e JOIN processes p USING (process_id) JOIN files f USING (file_id) "
                          "GROUP BY e.process_id, e.file_id") == 0);
  CHECK(f.count("SELECT through_id FROM totals_folded") == f.count("SELECT max(id) FROM events"));
}

TEST_CASE("a batch folds the totals once the interval has passed", "[browsing]") {
  Fixture f;
  f.writer.set_totals_interval(std::chrono::milliseconds(0));
  f.write(1, 100);
  CHECK(f.count("SELECT sum(events + failed) FROM file_totals") ==
        f.count("SELECT sum(coalesce(count, 1)) FROM events"));
}

TEST_CASE("under a size cap the pairs seen longest ago leave the browsing totals; files and processes keep theirs",
          "[browsing][retention]") {
  Fixture f;
  f.write(12, 500);
  f.writer.fold_totals();
  const std::int64_t pairs = f.count("SELECT count(*) FROM process_file_totals");
  REQUIRE(f.count("SELECT pairs FROM totals_folded") == pairs);
  const std::string files_before = f.text("SELECT * FROM file_totals ORDER BY file_id");
  const std::string processes_before = f.text("SELECT * FROM process_totals ORDER BY process_id");
  // A cap that allows a third of them (one pair in 4 KiB), and the last of
  // the pairs that must go.
  const std::uint64_t cap = static_cast<std::uint64_t>(pairs / 3) * 4096;
  REQUIRE(browsing_pairs_allowed(cap) == pairs / 3);
  const std::string cutoff = f.text("SELECT last_seen FROM process_file_totals ORDER BY last_seen LIMIT 1 OFFSET " +
                                    std::to_string(pairs - pairs / 3 - 1));
  Pruner pruner(f.db);
  pruner.prune(RetentionPolicy{std::nullopt, cap}, f.writer.last_event_time());
  CHECK(f.count("SELECT count(*) FROM process_file_totals") == pairs / 3);
  CHECK(f.count("SELECT pairs FROM totals_folded") == pairs / 3);
  CHECK(f.text("SELECT min(last_seen) FROM process_file_totals") >= cutoff);
  CHECK(f.text("SELECT * FROM file_totals ORDER BY file_id") == files_before);
  CHECK(f.text("SELECT * FROM process_totals ORDER BY process_id") == processes_before);
}

TEST_CASE("a writer told to keep no browsing totals (a database capped small) adds nothing to them", "[browsing]") {
  Fixture f;
  f.writer.stop_keeping_totals();
  f.writer.set_totals_interval(std::chrono::milliseconds(0));
  f.write(2, 100);
  f.writer.fold_totals();
  f.writer.end_run("end of input", f.stats);
  CHECK(f.count("SELECT count(*) FROM events") > 0);
  CHECK(f.count("SELECT count(*) FROM file_totals") == 0);
  CHECK(f.count("SELECT count(*) FROM process_file_totals") == 0);
}
