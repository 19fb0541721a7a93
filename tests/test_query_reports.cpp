#include <catch2/catch.hpp>

#include "report_fixture.h"
#include "store/activity_columns.h"
#include "store/retention.h"

using namespace etwaudit;
using etwaudit::test::at;
using etwaudit::test::ReportFixture;
using etwaudit::test::TempDir;
using Rows = std::vector<std::string>;

namespace {
QueryFilters window(const char* since, const char* until) {
  QueryFilters filters;
  filters.since = at(since);
  filters.until = at(until);
  return filters;
}
}  // namespace

TEST_CASE("every embedded report parses and names itself", "[reports]") {
  std::vector<std::string> names;
  for (const Report& report : reports()) names.push_back(report.name);
  CHECK(names == std::vector<std::string>{"file-history", "gaps", "process-activity", "recent", "summary", "timeline",
                                          "top-files", "top-processes", "unresolved"});
  CHECK(find_report("file-history")->argument == "path");
  CHECK(find_report("process-activity")->argument == "process");
  CHECK(closest_report_name("top-file") == std::optional<std::string>("top-files"));
  CHECK(closest_report_name("sumary") == std::optional<std::string>("summary"));
  CHECK(closest_report_name("top") == std::optional<std::string>("top-files"));  // the start of one
  CHECK_FALSE(closest_report_name("hello"));                                     // nothing like it
}

TEST_CASE("summary counts operations, totals and coverage", "[reports]") {
  ReportFixture fixture;
  auto sections = fixture.run("summary");
  REQUIRE(sections.size() == 3);
  CHECK(sections[0] == Rows{"read|6|10904", "write|3|1160", "close|1|NULL", "delete|1|NULL", "open|1|NULL"});
  CHECK(sections[1] == Rows{"12|10904|1160|3|5|0"});
  CHECK(sections[2] == Rows{"2|2026-12-02T10:00:01.0000000Z|2026-12-02T11:00:08.0000000Z|1|3535.0|0|0|0"});
}

TEST_CASE("a window that cuts through a segment counts exactly the events inside it", "[reports]") {
  ReportFixture fixture;
  auto sections = fixture.run("summary", window("10:00:02", "10:00:11"));
  CHECK(sections[0] == Rows{"read|3|8292", "close|1|NULL", "write|1|150"});
  CHECK(sections[1] == Rows{"5|8292|150|2|2|0"});
  CHECK(fixture.run("summary", window("10:30:00", "10:40:00"))[0].empty());
}

TEST_CASE("an op filter keeps only the chosen operations", "[reports]") {
  ReportFixture fixture;
  QueryFilters filters;
  filters.ops = {Op::write, Op::remove};
  auto sections = fixture.run("summary", filters);
  CHECK(sections[0] == Rows{"write|3|1160", "delete|1|NULL"});
  CHECK(sections[1] == Rows{"4|0|1160|3|3|NULL"});
  CHECK(fixture.rows("top-files", filters) == Rows{"C:\\Users\\ada\\Report, \"Q4\".docx|0|1000|0|1|1|NULL",
                                                   "C:\\Users\\ada\\notes.txt|0|150|0|1|1|NULL",
                                                   "/home/ada/Notes.txt|0|10|0|2|1|NULL"});
}

TEST_CASE("top-files ranks files by bytes moved", "[reports]") {
  ReportFixture fixture;
  CHECK(fixture.rows("top-files") == Rows{"C:\\Users\\ada\\Report, \"Q4\".docx|8192|1000|0|3|1|0",
                                          "C:\\Users\\ada\\\xC3\x84gypten\\bild.jpg|2000|0|0|1|1|0",
                                          "<unknown>|512|0|0|1|1|0", "C:\\Users\\ada\\notes.txt|200|150|0|5|1|0",
                                          "/home/ada/Notes.txt|0|10|0|2|1|0"});
  CHECK(fixture.rows("top-files", {}, {{"limit", "2"}}).size() == 2);
}

TEST_CASE("bytes of events without a size are empty, not 0; where runs mix, the known bytes count", "[reports]") {
  // The second run records no sizes, as fanotify does; the first does.
  ReportFixture fixture(true, etwaudit::test::FixtureSizes::first_run);
  CHECK(fixture.rows("top-files") == Rows{"C:\\Users\\ada\\Report, \"Q4\".docx|8192|1000|0|3|1|0",
                                          "C:\\Users\\ada\\\xC3\x84gypten\\bild.jpg|2000|0|0|1|1|0",
                                          "C:\\Users\\ada\\notes.txt|100|150|0|5|1|0",  // its second read has no size
                                          "/home/ada/Notes.txt|0|NULL|0|2|1|0",         // by events, after the others
                                          "<unknown>|NULL|0|0|1|1|0"});
  auto summary = fixture.run("summary");
  CHECK(summary[0] == Rows{"read|6|10292", "write|3|1150", "close|1|NULL", "delete|1|NULL", "open|1|NULL"});
  CHECK(summary[1] == Rows{"12|10292|1150|3|5|0"});
  // The second run's hour alone: nothing known, and no 0 for it.
  const QueryFilters hour_eleven = window("11:00:00", "11:59:59");
  summary = fixture.run("summary", hour_eleven);
  CHECK(summary[0] == Rows{"read|2|NULL", "delete|1|NULL", "write|1|NULL"});
  CHECK(summary[1] == Rows{"4|NULL|NULL|3|3|0"});
  CHECK(fixture.rows("timeline", hour_eleven) == Rows{"2026-12-02T11:00:00.0000000Z|read|2|NULL",
                                                      "2026-12-02T11:00:00.0000000Z|write|1|NULL",
                                                      "2026-12-02T11:00:00.0000000Z|delete|1|NULL"});
  QueryFilters cp;
  cp.process = "300";
  CHECK(fixture.rows("process-activity", cp) ==
        Rows{"/usr/bin/cp|300|NULL|/home/ada/Notes.txt|0|0|1|NULL|2|0|NULL|NULL|NULL"});
  QueryFilters notes;
  notes.path = "*otes.txt";
  CHECK(fixture.rows("top-processes", notes) ==
        Rows{"C:\\Windows\\System32\\notepad.exe|100|WORKSTATION\\ada|NULL|100|150|0|5|1|0",
             "/usr/bin/cp|300|NULL|NULL|0|NULL|0|2|1|0"});

  // The same from the hourly totals once the events are pruned (all but the
  // newest segment's two, which pruning keeps).
  const std::vector<std::pair<std::string, QueryFilters>> asked = {
      {"top-files", {}}, {"summary", {}}, {"summary", hour_eleven}, {"timeline", {}}, {"top-processes", notes}};
  std::vector<std::vector<Rows>> before;
  for (const auto& [report, filters] : asked) before.push_back(fixture.run(report, filters));
  {
    WriteDatabase database(fixture.path());
    Pruner pruner(database.db());
    REQUIRE(pruner.prune(RetentionPolicy{ns_per_minute, std::nullopt}, at("13:00:00")).events == 10);
  }
  for (std::size_t i = 0; i < asked.size(); ++i) {
    INFO(asked[i].first);
    auto after = fixture.run(asked[i].first, asked[i].second);
    if (asked[i].first == "summary") {  // coverage says nothing of pruning
      after.pop_back();
      before[i].pop_back();
    }
    CHECK(after == before[i]);
  }
}

TEST_CASE("a database written before sizes were counted learns which events of fanotify's runs had none",
          "[reports][migration]") {
  ReportFixture fixture(true, etwaudit::test::FixtureSizes::none);
  const auto before = fixture.rows("top-files");
  CHECK(before.front() == "C:\\Users\\ada\\notes.txt|NULL|NULL|0|5|1|0");
  {
    SQLite::Database db(fixture.path(), SQLite::OPEN_READWRITE);
    db.exec("UPDATE collector_runs SET source = 'fanotify'");  // what such a database holds
    for (const char* table : {"file_totals", "process_totals", "process_file_totals"})
      db.exec(std::string("UPDATE ") + table + " SET unsized = 0");
    db.exec("DROP INDEX minute_totals_unsized");
    for (const char* table : {"activity", "hour_totals", "minute_totals"})
      db.exec(std::string("ALTER TABLE ") + table + " DROP COLUMN unsized");
    db.exec("PRAGMA user_version = 21");
  }
  { WriteDatabase migrated(fixture.path()); }
  CHECK(fixture.rows("top-files") == before);
  CHECK(fixture.run("summary")[1] == Rows{"12|NULL|NULL|3|5|0"});
  for (const char* view : {"v_file_totals", "v_process_totals", "v_process_file_totals"}) {
    INFO(view);
    CHECK(fixture.db().execAndGet(std::string("SELECT count(*) FROM ") + view + " WHERE read_bytes = 0").getInt() == 0);
    CHECK(fixture.db().execAndGet(std::string("SELECT count(*) FROM ") + view + " WHERE read_bytes IS NULL").getInt() >
          0);
  }
}

TEST_CASE("top-processes ranks processes by bytes moved", "[reports]") {
  ReportFixture fixture;
  CHECK(fixture.rows("top-processes") ==
        Rows{"C:\\Program Files\\Office\\WINWORD.EXE|200|WORKSTATION\\bob|NULL|10704|1000|0|5|3|0",
             "C:\\Windows\\System32\\notepad.exe|100|WORKSTATION\\ada|NULL|200|150|0|5|1|0",
             "/usr/bin/cp|300|NULL|NULL|0|10|0|2|1|0"});
}

TEST_CASE("file-history lists who touched a path, in time order", "[reports]") {
  ReportFixture fixture;
  QueryFilters docx;
  docx.path = "*.docx";
  // Who ran it: the parent pid, the parent's image and the command line.
  const std::string word = "C:\\Program Files\\Office\\WINWORD.EXE|200|WORKSTATION\\bob|";
  const std::string who = "|NULL|100|C:\\Windows\\System32\\notepad.exe|\"WINWORD.EXE\" /n";
  CHECK(fixture.rows("file-history", docx) ==
        Rows{"2026-12-02T10:00:10.0000000Z|" + word + "read|C:\\Users\\ada\\Report, \"Q4\".docx|0|4096|1|NULL" + who,
             "2026-12-02T10:00:11.0000000Z|" + word + "read|C:\\Users\\ada\\Report, \"Q4\".docx|4096|4096|1|NULL" + who,
             "2026-12-02T10:00:12.0000000Z|" + word + "write|C:\\Users\\ada\\Report, \"Q4\".docx|0|1000|1|NULL" + who});
  QueryFilters notes;
  notes.path = "C:\\Users\\ada\\notes.txt";
  CHECK_THAT(fixture.rows("file-history", notes).at(0), Catch::EndsWith("|NULL|NULL|NULL|NULL"));  // none known
}

TEST_CASE("paths match without regard to case on Windows and exactly on POSIX", "[reports]") {
  ReportFixture fixture;
  QueryFilters filters;
  filters.path = "NOTES.TXT";
  auto upper = fixture.rows("file-history", filters);
  CHECK(upper.size() == 5);  // only C:\Users\ada\notes.txt
  CHECK_THAT(
      upper.back(),
      Catch::StartsWith("2026-12-02T11:00:05.0000000Z|C:\\Windows\\System32\\notepad.exe|100|WORKSTATION\\ada|read"));
  filters.path = "Notes.txt";
  CHECK(fixture.rows("file-history", filters).size() == 7);  // and /home/ada/Notes.txt
  filters.path = "c:/users/*/notes.txt";
  CHECK(fixture.rows("file-history", filters).size() == 5);
}

TEST_CASE("process-activity shows what a process read and wrote, by image or pid", "[reports]") {
  ReportFixture fixture;
  QueryFilters filters;
  filters.process = "winword.exe";
  const std::string who = "|100|C:\\Windows\\System32\\notepad.exe|\"WINWORD.EXE\" /n";
  CHECK(fixture.rows("process-activity", filters) ==
        Rows{"C:\\Program Files\\Office\\WINWORD.EXE|200|WORKSTATION\\bob|C:\\Users\\ada\\Report, "
             "\"Q4\".docx|2|8192|1|1000|3|0" +
                 who,
             "C:\\Program "
             "Files\\Office\\WINWORD.EXE|200|WORKSTATION\\bob|C:\\Users\\ada\\\xC3\x84gypten\\bild.jpg|1|2000|0|0|1|0" +
                 who,
             "C:\\Program Files\\Office\\WINWORD.EXE|200|WORKSTATION\\bob|<unknown>|1|512|0|0|1|0" + who});
  filters.process = "300";
  CHECK(fixture.rows("process-activity", filters) ==
        Rows{"/usr/bin/cp|300|NULL|/home/ada/Notes.txt|0|0|1|10|2|0|NULL|NULL|NULL"});
}

TEST_CASE("a --user filter keeps the processes of one account, named with its domain or alone", "[reports]") {
  ReportFixture fixture;
  QueryFilters filters;
  filters.user = "ada";
  CHECK(fixture.run("summary", filters)[0] == Rows{"read|2|200", "close|1|NULL", "open|1|NULL", "write|1|150"});
  filters.user = "workstation\\BOB";  // Windows accounts ignore case
  CHECK(fixture.rows("process-activity", filters).size() == 3);
  filters.process = "notepad.exe";  // and --process narrows it further: nobody
  CHECK(fixture.rows("process-activity", filters).empty());
}

TEST_CASE("a process and a window narrow each other", "[reports]") {
  ReportFixture fixture;
  QueryFilters filters = window("10:00:02", "10:00:11");
  filters.process = "notepad.exe";
  CHECK(fixture.run("summary", filters)[0] == Rows{"close|1|NULL", "read|1|100", "write|1|150"});
}

TEST_CASE("timeline counts events and bytes per bucket and operation", "[reports]") {
  ReportFixture fixture;
  CHECK(fixture.rows("timeline") ==
        Rows{"2026-12-02T10:00:00.0000000Z|read|4|10292", "2026-12-02T10:00:00.0000000Z|write|2|1150",
             "2026-12-02T10:00:00.0000000Z|open|1|NULL", "2026-12-02T10:00:00.0000000Z|close|1|NULL",
             "2026-12-02T11:00:00.0000000Z|read|2|612", "2026-12-02T11:00:00.0000000Z|write|1|10",
             "2026-12-02T11:00:00.0000000Z|delete|1|NULL"});
  CHECK(fixture.rows("timeline", {}, {{"bucket", std::to_string(60 * ns_per_second)}}) ==
        Rows{"2026-12-02T10:00:00.0000000Z|read|3|8292", "2026-12-02T10:00:00.0000000Z|write|2|1150",
             "2026-12-02T10:00:00.0000000Z|open|1|NULL", "2026-12-02T10:00:00.0000000Z|close|1|NULL",
             "2026-12-02T10:01:00.0000000Z|read|1|2000", "2026-12-02T11:00:00.0000000Z|read|2|612",
             "2026-12-02T11:00:00.0000000Z|write|1|10", "2026-12-02T11:00:00.0000000Z|delete|1|NULL"});
  CHECK(fixture.rows("timeline", {}, {{"bucket", std::to_string(24 * ns_per_hour)}}).size() == 5);
}

TEST_CASE("a minute timeline over a window that cuts minutes counts exactly the events inside", "[reports]") {
  ReportFixture fixture;
  const Params minutes{{"bucket", std::to_string(60 * ns_per_second)}};
  // 10:00:03 .. 10:01:10 cuts the minute 10:00 (events 3-7 in it) and ends at the last ns of 10:01:10.
  CHECK(fixture.rows("timeline", window("10:00:03", "10:01:10"), minutes) ==
        Rows{"2026-12-02T10:00:00.0000000Z|read|2|8192", "2026-12-02T10:00:00.0000000Z|write|2|1150",
             "2026-12-02T10:00:00.0000000Z|close|1|NULL", "2026-12-02T10:01:00.0000000Z|read|1|2000"});
  // A window of whole minutes reads the totals alone, and agrees.
  CHECK(fixture.rows("timeline", window("10:00:00", "10:59:59.999999999"), minutes) ==
        fixture.rows("timeline", window("09:00:00", "10:30:00"), minutes));
  // Inside one minute, and with an op filter.
  QueryFilters reads = window("10:00:05", "10:00:11");
  reads.ops = {Op::read};
  CHECK(fixture.rows("timeline", reads, minutes) == Rows{"2026-12-02T10:00:00.0000000Z|read|2|8192"});
  // Per hour without a process or path, the same totals.
  CHECK(fixture.rows("timeline", window("10:00:03", "10:01:10")) == Rows{"2026-12-02T10:00:00.0000000Z|read|3|10192",
                                                                         "2026-12-02T10:00:00.0000000Z|write|2|1150",
                                                                         "2026-12-02T10:00:00.0000000Z|close|1|NULL"});
}

TEST_CASE("recent lists the newest events first", "[reports]") {
  ReportFixture fixture;
  CHECK(fixture.rows("recent", {}, {{"limit", "2"}}) ==
        Rows{"2026-12-02T11:00:08.0000000Z|200|C:\\Program Files\\Office\\WINWORD.EXE|read|<unknown>|0|512|1|NULL|NULL",
             "2026-12-02T11:00:07.0000000Z|300|/usr/bin/cp|delete|/home/ada/Notes.txt|NULL|NULL|1|NULL|NULL"});
  CHECK(fixture.rows("recent", window("10:00:02", "10:00:04")).size() == 3);
}

TEST_CASE("recent of one process or path reads only its newest ranges and misses none", "[reports]") {
  ReportFixture fixture;
  QueryFilters word;
  word.process = "WINWORD.EXE";
  const auto all = fixture.rows("recent", word, {{"limit", "100"}});
  REQUIRE(all.size() == 5);
  CHECK_THAT(all[0], Catch::StartsWith("2026-12-02T11:00:08.0000000Z|200|"));
  CHECK_THAT(all[1], Catch::StartsWith("2026-12-02T10:01:10.0000000Z|200|"));
  for (std::size_t limit = 1; limit <= 5; ++limit)
    CHECK(fixture.rows("recent", word, {{"limit", std::to_string(limit)}}) ==
          std::vector<std::string>(all.begin(), all.begin() + static_cast<long>(limit)));
  QueryFilters writes = word;
  writes.ops = {Op::write};
  CHECK(fixture.rows("recent", writes, {{"limit", "1"}}) ==
        Rows{"2026-12-02T10:00:12.0000000Z|200|C:\\Program Files\\Office\\WINWORD.EXE|write|"
             "C:\\Users\\ada\\Report, \"Q4\".docx|0|1000|1|NULL|NULL"});
  QueryFilters notes;
  notes.path = "*notes.txt";
  CHECK(fixture.rows("recent", notes, {{"limit", "2"}}).size() == 2);
  CHECK_THAT(fixture.rows("recent", notes, {{"limit", "2"}})[0],
             Catch::StartsWith("2026-12-02T11:00:05.0000000Z|100|"));
}

TEST_CASE("file-history reads only the oldest segments it needs and misses none", "[reports]") {
  ReportFixture fixture;
  for (const QueryFilters& filters : {QueryFilters{}, window("10:00:03", "11:00:07")}) {
    QueryFilters windows_files = filters;
    windows_files.path = "C:\\Users\\*";
    for (const QueryFilters& picked : {filters, windows_files}) {
      const auto all = fixture.rows("file-history", picked, {{"limit", "100"}});
      REQUIRE(all.size() >= 5);
      for (std::size_t limit = 1; limit <= all.size(); ++limit)
        CHECK(fixture.rows("file-history", picked, {{"limit", std::to_string(limit)}}) ==
              std::vector<std::string>(all.begin(), all.begin() + static_cast<long>(limit)));
    }
  }
  CHECK(fixture.rows("file-history", {}, {{"limit", "100"}}).size() == 12);
  CHECK_THAT(fixture.rows("file-history", {}, {{"limit", "1"}})[0], Catch::StartsWith("2026-12-02T10:00:01.0000000Z|"));
}

TEST_CASE("unresolved counts events without a file name, by process", "[reports]") {
  ReportFixture fixture;
  CHECK(fixture.rows("unresolved") == Rows{"C:\\Program Files\\Office\\WINWORD.EXE|200|1|1"});
}

TEST_CASE("gaps shows uncovered time and each run's losses", "[reports]") {
  ReportFixture fixture;
  auto sections = fixture.run("gaps");
  CHECK(sections[0] == Rows{"2026-12-02T10:01:10.0000000Z|2026-12-02T11:00:05.0000000Z|3535.0"});
  REQUIRE(sections[1].size() == 2);
  CHECK_THAT(sections[1][0], Catch::StartsWith("1|replay:first.jsonl|host|2026-12-02T10:00:01.0000000Z|"
                                               "2026-12-02T10:01:10.0000000Z|8|0|0|0|0|0|0|end of input"));
  // The asked window's edges count: before the second run began, after it ended.
  CHECK(fixture.run("gaps", window("11:00:00", "12:00:00"))[0] ==
        Rows{"2026-12-02T11:00:00.0000000Z|2026-12-02T11:00:05.0000000Z|5.0",
             "2026-12-02T11:00:08.0000000Z|2026-12-02T12:00:00.0000000Z|3592.0"});
}

TEST_CASE("reports over pruned hours answer from the hourly totals, listings keep only what is left",
          "[reports][retention]") {
  ReportFixture fixture;
  const QueryFilters hour_ten = window("10:00:00", "10:59:59");
  QueryFilters notepad;
  notepad.process = "notepad.exe";
  QueryFilters docx;
  docx.path = "*.docx";
  const std::vector<std::pair<std::string, QueryFilters>> asked = {{"top-files", {}},
                                                                   {"top-files", hour_ten},
                                                                   {"top-processes", {}},
                                                                   {"top-processes", docx},
                                                                   {"process-activity", notepad},
                                                                   {"timeline", {}},
                                                                   {"timeline", notepad},
                                                                   {"summary", {}},
                                                                   {"summary", docx}};
  std::vector<std::vector<std::vector<std::string>>> before;
  for (const auto& [report, filters] : asked) before.push_back(fixture.run(report, filters));
  {
    WriteDatabase database(fixture.path());
    Pruner pruner(database.db());
    const PruneResult pruned = pruner.prune(RetentionPolicy{30 * ns_per_minute, std::nullopt}, at("11:00:08"));
    REQUIRE(pruned.segments == 4);  // hour 10, in 4 segments and 2 slots; hour 11's are newer
    CHECK(pruned.events == 8);
    CHECK(pruned.folded_segments == 4);
  }
  for (std::size_t i = 0; i < asked.size(); ++i) {
    INFO(asked[i].first);
    auto after = fixture.run(asked[i].first, asked[i].second);
    if (asked[i].first == "summary") {  // coverage says nothing of pruning; the rest must agree
      after.pop_back();
      before[i].pop_back();
    }
    CHECK(after == before[i]);
  }
  CHECK(fixture.rows("file-history", docx).empty());
  CHECK(fixture.rows("recent", {}, {{"limit", "100"}}).size() == 4);
}

TEST_CASE("a pruned segment alone in its hour answers the reports as its hourly totals would", "[reports][retention]") {
  ReportFixture fixture(false);  // one segment an hour
  {
    WriteDatabase database(fixture.path());
    Pruner pruner(database.db());
    REQUIRE(pruner.prune(RetentionPolicy{30 * ns_per_minute, std::nullopt}, at("11:00:08")).segments == 1);
    auto& db = database.db();
    // Its events went; its activity rows stayed, not copied into hour_totals.
    CHECK(db.execAndGet("SELECT count(*) FROM segments WHERE pruned = 1 AND hour = "
                        "(SELECT min(hour) FROM segments)")
              .getInt() == 1);
    CHECK(db.execAndGet("SELECT count(*) FROM activity a JOIN segments s USING (segment_id) WHERE s.pruned").getInt() >
          0);
    CHECK(db.execAndGet("SELECT count(*) FROM hour_totals").getInt() == 0);
    CHECK(
        db.execAndGet("SELECT count(*) FROM events WHERE id <= (SELECT last_id FROM segments WHERE pruned)").getInt() ==
        0);
  }
  QueryFilters notepad;
  notepad.process = "notepad.exe";
  QueryFilters docx = window("10:00:30", "11:00:06");  // cuts into the pruned hour and into the kept segment
  docx.path = "*.docx";
  const std::vector<std::pair<std::string, QueryFilters>> asked = {{"top-files", window("10:00:30", "10:59:59")},
                                                                   {"top-files", window("10:00:05", "11:00:06")},
                                                                   {"top-processes", docx},
                                                                   {"process-activity", notepad},
                                                                   {"timeline", window("10:30:00", "11:00:06")},
                                                                   {"summary", window("10:00:30", "11:00:06")},
                                                                   {"top-processes", {}}};
  std::vector<std::vector<std::vector<std::string>>> unfolded;
  for (const auto& [report, filters] : asked) unfolded.push_back(fixture.run(report, filters));
  {
    // The same totals the other way: added into hour_totals, as a busy hour's are.
    SQLite::Database db(fixture.path(), SQLite::OPEN_READWRITE);
    std::string columns = "events, failed", selected = "a.events, a.failed";
    for (const ActivityColumns& column : activity_columns)
      for (const char* name : {column.count, column.bytes})
        if (name) {
          columns += std::string(", ") + name;
          selected += std::string(", a.") + name;
        }
    db.exec("INSERT INTO hour_totals (hour, process_id, file_id, " + columns +
            ") SELECT s.hour, a.process_id, a.file_id, " + selected +
            " FROM activity a JOIN segments s USING (segment_id) WHERE s.pruned");
    db.exec("DELETE FROM activity WHERE segment_id IN (SELECT segment_id FROM segments WHERE pruned)");
    db.exec("DELETE FROM segments WHERE pruned");
  }
  for (std::size_t i = 0; i < asked.size(); ++i) {
    INFO(asked[i].first << " #" << i);
    CHECK(fixture.run(asked[i].first, asked[i].second) == unfolded[i]);
  }
  // And the whole pruned hour counts, as hourly totals do, in a window that cuts it.
  CHECK(fixture.rows("top-processes", window("10:00:30", "10:59:59")) ==
        fixture.rows("top-processes", window("10:00:00", "10:59:59")));
}

TEST_CASE("a coalesced row counts all its events and bytes in the reports", "[reports]") {
  TempDir dir;
  const std::string path = dir.file("audit.db");
  {
    WriteDatabase database(path);
    Catalog catalog;
    RunStats stats;
    EventWriter writer(database.db(), catalog, SelfExclusion{});
    writer.begin_run("test", "host");
    FileEvent copy;
    copy.time = at("10:00:00");
    copy.process = catalog.intern_process(7, 0, "/usr/bin/cp");
    copy.path = catalog.intern_path("/big.iso");
    copy.op = Op::read;
    copy.offset = 0;
    copy.size = 5 * 65536;
    copy.end_offset = 5 * 65536;
    copy.count = 5;
    std::vector<FileEvent> batch{copy};
    writer.write_batch(batch, stats);
    CHECK(stats.written == 5);
    writer.end_run("end of input", stats);
  }
  auto db = open_read_only(path);
  prepare_read_connection(*db);
  auto first_row = [&](const std::string& report) {
    const auto tables = run_statements(*db, find_report(report)->sections, QueryFilters{}, {{"bucket", "60000000000"}});
    std::string line;
    for (const Cell& cell : tables.front().rows.at(0)) line += (line.empty() ? "" : "|") + cell.text;
    return line;
  };
  CHECK(first_row("top-files") == "/big.iso|327680|0|0|5|1|0");
  CHECK(first_row("timeline") == "2026-12-02T10:00:00.0000000Z|read|5|327680");
  CHECK(first_row("recent") == "2026-12-02T10:00:00.0000000Z|7|/usr/bin/cp|read|/big.iso|0|327680|5||");
  CHECK(db->execAndGet("SELECT count || ' ' || end_offset FROM v_events").getString() == "5 327680");
}

TEST_CASE("a report cut by its limit counts the rows it left out, exactly, through every filter", "[reports]") {
  for (const bool small_slots : {true, false}) {
    CAPTURE(small_slots);
    ReportFixture fixture(small_slots);
    std::vector<QueryFilters> cases = {QueryFilters{}, window("10:00:03", "11:00:06"), window("10:00:11", "10:00:11")};
    for (const QueryFilters& base : std::vector<QueryFilters>(cases)) {
      QueryFilters by_process = base, by_path = base, by_op = base, failed = base;
      by_process.process = "notepad.exe";
      by_path.path = "C:\\Users\\*";
      by_op.ops = {Op::read};
      failed.failed_only = true;
      cases.insert(cases.end(), {by_process, by_path, by_op, failed});
    }
    for (const Report& report : reports()) {
      if (!report.default_limit) continue;
      for (const QueryFilters& filters : cases) {
        CAPTURE(report.name, filters.since.value_or(0), filters.process.value_or(""), filters.path.value_or(""),
                filters.ops.size(), filters.failed_only);
        Params params{{"bucket", std::to_string(ns_per_hour)}};
        if (report.argument == "process" && !filters.process) continue;  // it needs one
        const std::size_t rows = fixture.rows(report.name, filters, params).size();
        // As when the table was cut after one row.
        Params one = params;
        one["limit"] = "1";
        const Table first = run_statements(fixture.db(), report.sections, filters, one).front();
        const RowCount count = count_report_rows(fixture.db(), report, first, filters, params);
        CHECK(first.columns.size() ==
              run_statements(fixture.db(), report.sections, filters, params).front().columns.size());
        CHECK(std::find(first.columns.begin(), first.columns.end(), "total_rows") == first.columns.end());
        if (count.exact)
          CHECK(count.rows == static_cast<std::int64_t>(rows));
        else
          CHECK(count.rows <= static_cast<std::int64_t>(rows));
        // Without --op and --failed, the listings count exactly too.
        CHECK(count.exact == ((filters.ops.empty() && !filters.failed_only) || !report.lists_events));
      }
    }
  }
}

TEST_CASE("a report with a default limit says how to count its rows; one without takes no limit", "[reports]") {
  for (const char* name : {"file-history", "recent", "top-files", "top-processes", "process-activity", "unresolved"}) {
    CAPTURE(name);
    CHECK(find_report(name)->default_limit.has_value());
    CHECK((!find_report(name)->count_sql.empty() || !find_report(name)->sections[0].total_column.empty()));
  }
  CHECK(find_report("file-history")->default_limit == 1000);
  CHECK(find_report("timeline")->takes_limit);
  CHECK_FALSE(find_report("timeline")->default_limit);
  CHECK_FALSE(find_report("summary")->takes_limit);
  CHECK_THROWS_WITH(parse_report("x.sql", "-- name: x\n-- limit: 5\nSELECT 1"),
                    Catch::Contains("needs LIMIT :limit in the SQL and a '-- count:' header"));
  CHECK_THROWS_WITH(parse_report("x.sql", "-- name: x\n-- limit: many\nSELECT 1 LIMIT :limit"),
                    Catch::Contains("needs a positive number, not 'many'"));
}

TEST_CASE("excluded paths are left out of the totals and the listings", "[reports]") {
  ReportFixture fixture;
  QueryFilters no_text;
  no_text.exclude_paths = {"*.txt"};
  const auto history = fixture.rows("file-history", no_text);
  CHECK(history.size() == 5);  // 12 events, 6 of them on notes.txt / Notes.txt, 1 without a name stays
  for (const std::string& row : history) CHECK_THAT(row, !Catch::Contains(".txt"));
  QueryFilters two = no_text;
  two.exclude_paths.push_back("*.jpg");
  CHECK(fixture.rows("file-history", two).size() == 4);
  QueryFilters notepad = no_text;
  notepad.process = "notepad.exe";
  CHECK(fixture.rows("process-activity", notepad).empty());
  CHECK(fixture.rows("top-files", two) ==
        Rows{"C:\\Users\\ada\\Report, \"Q4\".docx|8192|1000|0|3|1|0", "<unknown>|512|0|0|1|1|0"});
}

TEST_CASE("a folder given as a path is found below with a separator, and hinted at without one", "[reports]") {
  ReportFixture fixture;
  CHECK(path_argument("/home/ada/") == "/home/ada/*");
  CHECK(path_argument("C:\\Users\\ada\\") == "C:\\Users\\ada\\*");
  CHECK(path_argument("/") == "/");
  CHECK(path_argument("notes.txt") == "notes.txt");
  CHECK(below_folder("C:\\Users\\ada") == "C:\\Users\\ada\\*");
  CHECK(below_folder("/home/ada") == "/home/ada/*");
  CHECK(files_below_folder(fixture.db(), "C:\\Users\\ada", 100) == 3);
  CHECK(files_below_folder(fixture.db(), "c:\\users", 2) == 2);  // at most the limit
  CHECK(files_below_folder(fixture.db(), "/home/ada", 100) == 1);
  CHECK(files_below_folder(fixture.db(), "/home/ada/Notes.txt", 100) == 0);  // a file
  CHECK(files_below_folder(fixture.db(), "/home/ada/*", 100) == 0);          // a glob already
  CHECK(files_below_folder(fixture.db(), "notes.txt", 100) == 0);
  QueryFilters below;
  below.path = path_argument("C:\\Users\\ada\\");
  CHECK(fixture.rows("file-history", below).size() == 9);
}
