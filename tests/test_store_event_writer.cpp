#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <catch2/catch.hpp>

#include "core/glob.h"
#include "core/time_format.h"
#include "store/activity_columns.h"
#include "store/database.h"
#include "store/event_writer.h"
#include "temp_dir.h"

using namespace etwaudit;
using etwaudit::test::TempDir;

namespace {

constexpr std::int64_t t0 = 1796206530LL * ns_per_second;  // 2026-12-02T10:15:30Z

struct Fixture {
  TempDir dir;
  std::string path = dir.file("audit.db");
  WriteDatabase database{path};
  Catalog catalog;
  RunStats stats;
  EventWriter writer{database.db(), catalog, SelfExclusion::for_database(path, 0)};

  Fixture() { writer.begin_run("test", "host"); }

  FileEvent event(std::int64_t time, Op op, const std::string& path, std::uint32_t pid = 100,
                  const std::string& image = "C:\\app.exe", std::int64_t offset = -1, std::int64_t size = -1) {
    FileEvent e;
    e.time = time;
    e.op = op;
    e.path = catalog.intern_path(path);
    e.process = catalog.intern_process(pid, 0, image);
    e.offset = offset;
    e.size = size;
    e.tid = pid + 1;
    return e;
  }
  void write(std::vector<FileEvent> batch) { writer.write_batch(batch, stats); }
  SQLite::Database& db() { return database.db(); }
  std::int64_t count(const std::string& sql) { return db().execAndGet(sql).getInt64(); }
};

}  // namespace

TEST_CASE("written events read back through v_events with names and ISO times", "[writer]") {
  Fixture f;
  f.write({f.event(t0 + 100, Op::open, "C:\\notes.txt"),
           f.event(t0 + 200, Op::write, "C:\\notes.txt", 100, "C:\\app.exe", 0, 512),
           f.event(t0 + 300, Op::remove, "C:\\old.txt", 200, "C:\\Windows\\explorer.exe")});
  SQLite::Statement rows(f.db(),
                         "SELECT time, pid, process, op, path, offset, size, tid FROM v_events ORDER BY event_id");
  REQUIRE(rows.executeStep());
  CHECK(rows.getColumn(0).getString() == "2026-12-02T10:15:30.0000001Z");
  CHECK(rows.getColumn(3).getString() == "open");
  CHECK(rows.getColumn(5).isNull());
  REQUIRE(rows.executeStep());
  CHECK(rows.getColumn(1).getInt() == 100);
  CHECK(rows.getColumn(2).getString() == "C:\\app.exe");
  CHECK(rows.getColumn(3).getString() == "write");
  CHECK(rows.getColumn(4).getString() == "C:\\notes.txt");
  CHECK(rows.getColumn(5).getInt() == 0);
  CHECK(rows.getColumn(6).getInt() == 512);
  CHECK(rows.getColumn(7).getInt() == 101);
  REQUIRE(rows.executeStep());
  CHECK(rows.getColumn(2).getString() == "C:\\Windows\\explorer.exe");
  CHECK(rows.getColumn(3).getString() == "delete");
  CHECK_FALSE(rows.executeStep());
  CHECK(f.stats.written == 3);
}

TEST_CASE("events with the same time or arriving late keep their exact time and a unique increasing id", "[writer]") {
  Fixture f;
  f.write({f.event(t0, Op::read, "a"), f.event(t0, Op::read, "b"), f.event(t0, Op::read, "c")});
  f.write({f.event(t0 - 5000, Op::write, "late")});
  SQLite::Statement rows(f.db(), "SELECT event_id, time_ns, path FROM v_events ORDER BY event_id");
  std::int64_t previous_id = 0;
  std::vector<std::int64_t> times;
  while (rows.executeStep()) {
    CHECK(rows.getColumn(0).getInt64() > previous_id);
    previous_id = rows.getColumn(0).getInt64();
    times.push_back(rows.getColumn(1).getInt64());
  }
  CHECK(times == std::vector<std::int64_t>{t0, t0, t0, t0 - 5000});
  // Only the events whose id is not their time store the time separately.
  CHECK(f.count("SELECT count(*) FROM events WHERE ts IS NOT NULL") == 3);
}

TEST_CASE("v_events finds a time range and the newest events through the key, with the rows of a plain scan",
          "[writer][views]") {
  Fixture f;
  // Shared times and late arrivals: their rows keep the exact time in ts.
  std::vector<FileEvent> batch;
  for (int i = 0; i < 300; ++i)
    batch.push_back(f.event(t0 + (i / 3) * 1000, i % 2 ? Op::read : Op::write, "C:\\f" + std::to_string(i % 7),
                            100 + i % 5, "C:\\app.exe", i * 10, 10));
  f.write(batch);
  f.write({f.event(t0 + 20500, Op::remove, "C:\\late"), f.event(t0 + 99000, Op::open, "C:\\last")});
  REQUIRE(f.count("SELECT count(*) FROM events WHERE ts IS NOT NULL") > 100);
  // The same rows as a scan of events that joins the names.
  auto rows = [&](const std::string& sql) {
    std::vector<std::string> out;
    SQLite::Statement query(f.db(), sql);
    while (query.executeStep()) {
      std::string row;
      for (int c = 0; c < query.getColumnCount(); ++c) row += query.getColumn(c).getString() + "|";
      out.push_back(row);
    }
    return out;
  };
  const std::string plain =
      "SELECT coalesce(e.ts, e.id), e.id, p.pid, p.image, o.name, fi.name, e.offset, e.size FROM events e "
      "JOIN processes p USING (process_id) JOIN ops o USING (op) JOIN v_files fi USING (file_id) ";
  const std::string view = "SELECT time_ns, event_id, pid, process, op, path, offset, size FROM v_events ";
  const std::string lo = std::to_string(t0 + 20000), hi = std::to_string(t0 + 40000);
  CHECK(rows(view + "ORDER BY event_id") == rows(plain + "ORDER BY e.id"));
  CHECK(rows(view + "WHERE time_ns BETWEEN " + lo + " AND " + hi + " ORDER BY time_ns, event_id") ==
        rows(plain + "WHERE coalesce(e.ts, e.id) BETWEEN " + lo + " AND " + hi + " ORDER BY 1, 2"));
  CHECK(rows(view + "ORDER BY time_ns DESC, event_id DESC LIMIT 5") == rows(plain + "ORDER BY 1 DESC, 2 DESC LIMIT 5"));
  CHECK(f.count("SELECT count(*) FROM v_events") == 302);
  // ...found through the key and the index of the late ones, not by reading every event.
  std::string plan;
  SQLite::Statement explain(f.db(),
                            "EXPLAIN QUERY PLAN SELECT * FROM v_events WHERE time_ns BETWEEN " + lo + " AND " + hi);
  while (explain.executeStep()) plan += explain.getColumn(3).getString() + "\n";
  INFO(plan);
  CHECK(plan.find("SEARCH e USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)") != std::string::npos);
  CHECK(plan.find("USING INDEX events_by_ts (ts>? AND ts<?)") != std::string::npos);
  CHECK(plan.find("SCAN e") == std::string::npos);
}

TEST_CASE("a batch is written in time order whatever order it arrived in", "[writer]") {
  Fixture f;
  f.write({f.event(t0 + 3, Op::read, "c"), f.event(t0 + 1, Op::read, "a"), f.event(t0 + 2, Op::read, "b")});
  SQLite::Statement rows(f.db(), "SELECT path FROM v_events ORDER BY event_id");
  std::string order;
  while (rows.executeStep()) order += rows.getColumn(0).getString();
  CHECK(order == "abc");
  CHECK(f.count("SELECT count(*) FROM events WHERE ts IS NOT NULL") == 0);
}

TEST_CASE("a failed operation is stored with its status, which v_events shows", "[writer]") {
  Fixture f;
  FileEvent failed = f.event(t0 + 1, Op::open, "C:\\missing.txt");
  failed.status = 0xC0000034;
  f.write({f.event(t0, Op::open, "C:\\x"), failed});
  CHECK(f.count("SELECT count(*) FROM events WHERE status IS NULL") == 1);
  CHECK(f.count("SELECT status FROM events WHERE status IS NOT NULL") == 0xC0000034);
  CHECK(f.db().execAndGet("SELECT status FROM v_events WHERE path = 'C:\\missing.txt'").getString() == "0xC0000034");
  CHECK(f.db().execAndGet("SELECT status IS NULL FROM v_events WHERE path = 'C:\\x'").getInt() == 1);
}

TEST_CASE("a process's parent and account are stored, and v_events shows the account", "[writer]") {
  Fixture f;
  ProcessInfo word;
  word.pid = 901;
  word.image = "C:\\Office\\WINWORD.EXE";
  word.parent_pid = 600;
  word.user = "WORKSTATION\\ada";
  FileEvent event = f.event(t0, Op::write, "C:\\report.docx");
  event.process = f.catalog.intern_process(word);
  f.write({event, f.event(t0 + 1, Op::read, "C:\\x")});
  CHECK(f.count("SELECT parent_pid FROM processes WHERE pid = 901") == 600);
  CHECK(f.db().execAndGet("SELECT user FROM v_events WHERE path = 'C:\\report.docx'").getString() ==
        "WORKSTATION\\ada");
  CHECK(f.count("SELECT count(*) FROM v_events WHERE user IS NULL") == 1);  // a process nobody named the account of
  CHECK(f.count("SELECT count(*) FROM processes WHERE uid IS NULL") == 2);  // no uid on Windows
}

TEST_CASE("v_events shows who ran each event's process: its row, parent pid and command line", "[writer]") {
  Fixture f;
  ProcessInfo sed;
  sed.pid = 4321;
  sed.image = "/usr/bin/sed";
  sed.parent_pid = 4000;
  FileEvent edit = f.event(t0, Op::write, "/etc/hosts");
  edit.process = f.catalog.intern_process(sed);
  f.write({edit});
  CHECK(f.count("SELECT count(*) FROM v_events WHERE command_line IS NULL AND parent_pid = 4000") == 1);
  // Its command line, learned once the exec took effect, reaches the row it
  // was written in with the next batch, and a second one never replaces it.
  f.catalog.learn_command_line(edit.process, "sed -i s/a/b/ /etc/hosts");
  f.catalog.learn_command_line(edit.process, "something else");
  f.write({f.event(t0 + 1, Op::read, "/etc/passwd")});
  CHECK(f.db().execAndGet("SELECT command_line FROM v_events WHERE path = '/etc/hosts'").getString() ==
        "sed -i s/a/b/ /etc/hosts");
  CHECK(f.count("SELECT process_id FROM v_events WHERE path = '/etc/hosts'") ==
        f.count("SELECT process_id FROM processes WHERE pid = 4321"));
  // A process learned about before it is written gets it with its row.
  ProcessInfo cat;
  cat.pid = 4322;
  cat.image = "/usr/bin/cat";
  const std::uint32_t cat_id = f.catalog.intern_process(cat);
  f.catalog.learn_command_line(cat_id, "cat /etc/hosts");
  FileEvent read = f.event(t0 + 2, Op::read, "/etc/hosts");
  read.process = cat_id;
  f.write({read});
  CHECK(f.db().execAndGet("SELECT command_line FROM processes WHERE pid = 4322").getString() == "cat /etc/hosts");
}

TEST_CASE("a Linux process's uid is stored beside its user name, root's 0 too", "[writer]") {
  Fixture f;
  FileEvent event = f.event(t0, Op::write, "/etc/hosts");
  ProcessInfo editor;
  editor.pid = 4242;
  editor.image = "/usr/bin/vi";
  editor.uid = 0;
  editor.user = "root";
  event.process = f.catalog.intern_process(editor);
  f.write({event});
  CHECK(f.count("SELECT count(*) FROM processes WHERE uid = 0 AND user = 'root'") == 1);
}

TEST_CASE("paths and processes are stored once, across batches and runs", "[writer]") {
  Fixture f;
  f.write({f.event(t0, Op::read, "C:\\x"), f.event(t0 + 1, Op::read, "C:\\x")});
  f.write({f.event(t0 + 2, Op::write, "C:\\x"), f.event(t0 + 3, Op::write, "C:\\y")});
  CHECK(f.count("SELECT count(*) FROM files") == 2);
  CHECK(f.count("SELECT count(*) FROM processes") == 1);

  // A later run (new catalog, new writer) finds the same rows.
  Catalog catalog;
  EventWriter writer(f.db(), catalog, SelfExclusion{});
  writer.begin_run("test", "host");
  std::vector<FileEvent> batch(1);
  batch[0].time = t0 + 10;
  batch[0].path = catalog.intern_path("C:\\x");
  batch[0].process = catalog.intern_process(100, 0, "C:\\app.exe");
  writer.write_batch(batch, f.stats);
  CHECK(f.count("SELECT count(*) FROM files") == 2);
  CHECK(f.count("SELECT count(*) FROM processes") == 1);
  CHECK(f.count("SELECT count(*) FROM events") == 5);
}

TEST_CASE("a file written without a name gets it back-filled when the name arrives", "[writer]") {
  Fixture f;
  FileEvent read;
  read.time = t0;
  read.op = Op::disk_read;
  read.path = f.catalog.intern_file_key(0xFFFF'8001'2345'6780);
  read.process = f.catalog.intern_process(100, 0, "C:\\app.exe");
  FileEvent never_named = read;
  never_named.path = f.catalog.intern_file_key(0xFFFF'8001'2345'9990);
  f.write({read, never_named, f.event(t0 + 1, Op::read, "C:\\named.txt"), f.event(t0 + 2, Op::read, "C:\\named.txt")});
  CHECK(f.db().execAndGet("SELECT path IS NULL FROM files WHERE file_key = 0xFFFF800123456780").getInt() == 1);
  CHECK(f.db()
            .execAndGet("SELECT path FROM v_events WHERE event_id = (SELECT min(event_id) FROM v_events)")
            .getString() == "<unresolved key 0xffff800123456780>");

  // The rundown at the end names it; the next commit fills in the row.
  f.catalog.resolve_file_key(0xFFFF'8001'2345'6780, "\\Device\\HarddiskVolume2\\Windows\\win.ini");
  f.writer.end_run("end of input", f.stats);
  CHECK(f.db()
            .execAndGet("SELECT path FROM v_events WHERE event_id = (SELECT min(event_id) FROM v_events)")
            .getString() == "\\Device\\HarddiskVolume2\\Windows\\win.ini");
  CHECK(f.db().execAndGet("SELECT name_source FROM files WHERE path LIKE '%win.ini'").getString() == "backfill");
  // One of four events never got a name: the run record says so.
  CHECK(f.db().execAndGet("SELECT unresolved FROM collector_runs").getInt() == 1);
  CHECK(f.db().execAndGet("SELECT resolved_pct FROM v_runs").getDouble() == 75.0);
}

TEST_CASE("a file named late that already has a row under that name ends up as one row", "[writer]") {
  Fixture f;
  const std::string name = "C:\\Users\\ada\\notes.txt";
  FileEvent by_key;  // read before its kernel key had a name
  by_key.time = t0;
  by_key.op = Op::read;
  by_key.size = 100;
  by_key.path = f.catalog.intern_file_key(0xFFFF'8001'0000'0010);
  by_key.process = f.catalog.intern_process(100, 0, "C:\\app.exe");
  FileEvent other_process = by_key;
  other_process.time = t0 + 1;
  other_process.process = f.catalog.intern_process(200, 0, "C:\\other.exe");
  // The same process reads the file under its name in the same hour.
  f.write({by_key, other_process, f.event(t0 + 2, Op::read, name, 100, "C:\\app.exe", 0, 50),
           f.event(t0 + 3, Op::write, name, 100, "C:\\app.exe", 0, 7)});
  REQUIRE(f.count("SELECT count(*) FROM files") == 2);

  f.catalog.resolve_file_key(0xFFFF'8001'0000'0010, name);
  FileEvent later = by_key;  // the entry's id keeps being used
  later.time = t0 + 4;
  f.write({later});
  f.writer.end_run("end of input", f.stats);

  CHECK(f.count("SELECT count(*) FROM files") == 1);
  CHECK(f.count("SELECT count(DISTINCT file_id) FROM events") == 1);
  CHECK(f.count("SELECT count(*) FROM v_events WHERE path = 'C:\\Users\\ada\\notes.txt'") == 5);
  // Activity rows merged: one per process, adding up as the events do.
  CHECK(f.count("SELECT count(*) FROM activity") == 2);
  CHECK(f.count("SELECT sum(events) FROM activity") == 5);
  CHECK(f.count("SELECT reads FROM activity a JOIN processes p USING (process_id) WHERE p.pid = 100") == 3);
  CHECK(f.count("SELECT read_bytes FROM activity a JOIN processes p USING (process_id) WHERE p.pid = 100") == 250);
  CHECK(f.count("SELECT writes FROM activity a JOIN processes p USING (process_id) WHERE p.pid = 100") == 1);
  CHECK(f.count(R"(
    SELECT count(*) FROM events e WHERE NOT EXISTS (
      SELECT 1 FROM activity a WHERE a.process_id = e.process_id AND a.file_id = e.file_id
        AND e.id BETWEEN a.first_id AND a.last_id))") == 0);
  CHECK(f.db().execAndGet("SELECT resolved_pct FROM v_runs").getDouble() == 100.0);
  // The browsing totals merged too: one file, read and written by two processes.
  CHECK(f.db()
            .execAndGet("SELECT path || ' ' || events || ' ' || processes || ' ' || read_bytes FROM v_file_totals")
            .getString() == "C:\\Users\\ada\\notes.txt 5 2 350");  // 250 by app.exe, 100 by other.exe
  CHECK(f.db().execAndGet("SELECT group_concat(files) FROM process_totals").getString() == "1,1");
  CHECK(f.count("SELECT count(*) FROM process_file_totals") == 2);
  CHECK(f.count("SELECT pairs FROM totals_folded") == 2);
}

TEST_CASE("the writer never records its own process or its own database files", "[writer]") {
  TempDir dir;
  const auto path = dir.file("audit.db");
  WriteDatabase database(path);
  Catalog catalog;
  RunStats stats;
  const std::uint32_t own_pid = 4711;
  SelfExclusion self = SelfExclusion::for_database(path, own_pid);
  EventWriter writer(database.db(), catalog, self);
  writer.begin_run("test", "host");
  auto event = [&](std::uint32_t pid, const std::string& file) {
    FileEvent e;
    e.time = t0;
    e.op = Op::write;
    e.path = catalog.intern_path(file);
    e.process = catalog.intern_process(pid, 0, "p.exe");
    return e;
  };
  const std::string absolute = self.paths.front();
  std::vector<FileEvent> batch = {event(own_pid, "C:\\other.txt"), event(1, absolute),
                                  event(1, absolute + "-wal"),     event(1, absolute + "-shm"),
                                  event(1, absolute + "-journal"), event(1, "C:\\kept.txt")};
  writer.write_batch(batch, stats);
  CHECK(database.db().execAndGet("SELECT group_concat(path) FROM v_events").getString() == "C:\\kept.txt");
  // They are its own, not what a user's filter left out.
  CHECK(stats.own == 5);
  CHECK(stats.excluded == 0);
  CHECK(stats.written == 1);
  CHECK(database.db().execAndGet("SELECT events_own || ' ' || events_excluded FROM v_runs").getString() == "5 0");
}

TEST_CASE("a record filter keeps only the chosen paths, processes and operations", "[writer]") {
  Fixture f;
  RecordFilter filter;
  std::string error;
  filter.include_paths.push_back(*PathGlob::compile("C:\\keep\\*", error));
  filter.exclude_paths.push_back(*PathGlob::compile("*.tmp", error));
  filter.exclude_processes.push_back(ProcessPattern::parse("--exclude-process", "noisy.exe"));
  filter.exclude_processes.push_back(ProcessPattern::parse("--exclude-process", "300"));
  filter.ops = {Op::read, Op::write};
  f.writer.set_filter(std::move(filter));
  f.write({f.event(t0 + 1, Op::read, "C:\\keep\\a.txt"),                             // kept
           f.event(t0 + 2, Op::write, "c:\\KEEP\\b.txt"),                            // kept: Windows paths ignore case
           f.event(t0 + 3, Op::open, "C:\\keep\\a.txt"),                             // not a chosen operation
           f.event(t0 + 4, Op::read, "C:\\other\\a.txt"),                            // not an included path
           f.event(t0 + 5, Op::read, "C:\\keep\\x.tmp"),                             // an excluded path
           f.event(t0 + 6, Op::read, "C:\\keep\\a.txt", 200, "C:\\bin\\noisy.exe"),  // an excluded image
           f.event(t0 + 7, Op::read, "C:\\keep\\a.txt", 300, "C:\\bin\\fine.exe"),   // an excluded pid
           f.event(t0 + 8, Op::read, "", 100)});                                     // no name yet: kept
  CHECK(f.count("SELECT count(*) FROM events") == 3);
  CHECK(f.stats.excluded == 5);
  CHECK(f.stats.own == 0);
  CHECK(f.count("SELECT count(*) FROM processes WHERE image LIKE '%noisy%' OR pid = 300") == 0);
}

TEST_CASE("the activity rollup equals a direct aggregate over the events", "[writer]") {
  Fixture f;
  std::vector<FileEvent> batch;
  const char* paths[] = {"C:\\a", "C:\\b", "C:\\c", "C:\\d"};
  for (int i = 0; i < 5000; ++i) {
    const Op op = static_cast<Op>(i % op_count);
    batch.push_back(f.event(t0 + i * 997'000'000LL, op, paths[i % 4], 100 + i % 3, "p.exe", i, (i % 7) * 100));
    if (batch.size() == 700) {
      f.write(batch);
      batch.clear();
    }
  }
  f.write(batch);
  for (int op = 0; op < op_count; ++op) {
    INFO(activity_columns[op].count);
    CHECK(f.count(std::string("SELECT sum(") + activity_columns[op].count + ") FROM activity") ==
          f.count("SELECT count(*) FROM events WHERE op = " + std::to_string(op)));
  }
  CHECK(f.count("SELECT sum(read_bytes) FROM activity") == f.count("SELECT sum(size) FROM events WHERE op = 0"));
  CHECK(f.count("SELECT sum(write_bytes) FROM activity") == f.count("SELECT sum(size) FROM events WHERE op = 1"));
  CHECK(f.count("SELECT sum(disk_read_bytes) FROM activity") == f.count("SELECT sum(size) FROM events WHERE op = 10"));
  CHECK(f.count("SELECT sum(events) FROM activity") == 5000);
  // Per process and file too, and every event lies in its row's id range.
  CHECK(f.count(R"(
    SELECT count(*) FROM (
      SELECT process_id, file_id, count(*) AS n FROM events GROUP BY 1, 2
      EXCEPT
      SELECT process_id, file_id, sum(events) FROM activity GROUP BY 1, 2))") == 0);
  CHECK(f.count(R"(
    SELECT count(*) FROM events e WHERE NOT EXISTS (
      SELECT 1 FROM activity a WHERE a.process_id = e.process_id AND a.file_id = e.file_id
        AND e.id BETWEEN a.first_id AND a.last_id))") == 0);
}

// minute_totals as a direct aggregate would give it: per minute of the exact time.
constexpr const char* minute_totals_mismatches = R"(
    SELECT count(*) FROM (
      SELECT * FROM (SELECT (coalesce(ts, id) - ((coalesce(ts, id) % 60000000000) + 60000000000) % 60000000000)
                            / 60000000000, op, count(*), sum(max(coalesce(size, 0), 0)) FROM events GROUP BY 1, 2)
      EXCEPT SELECT minute, op, events, bytes FROM minute_totals
      UNION ALL
      SELECT * FROM (SELECT minute, op, events, bytes FROM minute_totals
      EXCEPT SELECT (coalesce(ts, id) - ((coalesce(ts, id) % 60000000000) + 60000000000) % 60000000000)
                     / 60000000000, op, count(*), sum(max(coalesce(size, 0), 0)) FROM events GROUP BY 1, 2)))";

TEST_CASE("the minute totals equal a direct aggregate over the events, late events included", "[writer]") {
  Fixture f;
  std::vector<FileEvent> batch;
  for (int i = 0; i < 3000; ++i) {
    // 0.7 s apart over 35 minutes; every 50th event arrives 3 minutes late, in a later batch.
    const std::int64_t time = t0 + i * 700'000'000LL - (i % 50 == 0 ? 180 * ns_per_second : 0);
    batch.push_back(f.event(time, static_cast<Op>(i % op_count), i % 2 ? "C:\a" : "C:\b", 100, "p.exe", 0,
                            i % 5 ? (i % 9) * 10 : -1));
    if (batch.size() == 400) {
      f.write(batch);
      batch.clear();
    }
  }
  f.write(batch);
  REQUIRE(f.count("SELECT count(*) FROM events WHERE ts IS NOT NULL") > 0);
  CHECK(f.count("SELECT sum(events) FROM minute_totals") == 3000);
  CHECK(f.count("SELECT count(DISTINCT minute) FROM minute_totals") >= 35);
  CHECK(f.count(minute_totals_mismatches) == 0);
}

TEST_CASE("segments never cross an hour and hold at most segment_capacity events", "[writer]") {
  Fixture f;
  std::vector<FileEvent> batch;
  // 10:59:59 .. with segment_capacity + 10 events 1 us apart, then into 11:00.
  const std::int64_t start = parse_iso8601("2026-12-02T10:59:00Z").value();
  for (std::int64_t i = 0; i < segment_capacity + 10; ++i) batch.push_back(f.event(start + i * 1000, Op::read, "x"));
  batch.push_back(f.event(parse_iso8601("2026-12-02T11:00:00.5Z").value(), Op::read, "x"));
  f.write(batch);
  CHECK(f.count("SELECT count(*) FROM segments") == 3);
  CHECK(f.count("SELECT max(events) FROM segments") == segment_capacity);
  CHECK(f.count("SELECT sum(events) FROM segments") == segment_capacity + 11);
  CHECK(f.count("SELECT count(*) FROM segments WHERE min_time / 3600000000000 != hour "
                "OR max_time / 3600000000000 != hour") == 0);
  // Each segment's id range holds exactly its events.
  CHECK(f.count("SELECT count(*) FROM segments s WHERE events != "
                "(SELECT count(*) FROM events WHERE id BETWEEN s.first_id AND s.last_id)") == 0);
}

TEST_CASE("the run record counts what was written and how the run ended", "[writer]") {
  Fixture f;
  f.stats.received = 2;
  f.write({f.event(t0, Op::read, "x"), f.event(t0 + 1, Op::read, "")});
  f.writer.end_run("end of input", f.stats);
  SQLite::Statement run(
      f.db(), "SELECT events_received, events_written, unresolved, exit_reason, stopped_at FROM collector_runs");
  REQUIRE(run.executeStep());
  CHECK(run.getColumn(0).getInt() == 2);
  CHECK(run.getColumn(1).getInt() == 2);
  CHECK(run.getColumn(2).getInt() == 1);  // the event without a path
  CHECK(run.getColumn(3).getString() == "end of input");
  CHECK_FALSE(run.getColumn(4).isNull());
}

TEST_CASE("a run that died without closing its record is marked interrupted by the next", "[writer]") {
  TempDir dir;
  const auto path = dir.file("audit.db");
  WriteDatabase database(path);
  Catalog catalog;
  {
    EventWriter crashed(database.db(), catalog, SelfExclusion{});
    crashed.begin_run("first", "host");
  }
  EventWriter next(database.db(), catalog, SelfExclusion{});
  next.begin_run("second", "host");
  CHECK_THAT(database.db().execAndGet("SELECT exit_reason FROM collector_runs WHERE source = 'first'").getString(),
             Catch::Contains("interrupted"));
  CHECK(database.db().execAndGet("SELECT exit_reason IS NULL FROM collector_runs WHERE source = 'second'").getInt() ==
        1);
}
