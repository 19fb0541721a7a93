#pragma once
// A small database whose every row was worked out by hand, for report tests.
//
// 2026-12-02, run 1 (events 1-8), then run 2 (events 9-12) after a gap:
// notepad.exe runs as WORKSTATION\ada, WINWORD.EXE ("WINWORD.EXE" /n, parent pid 100: notepad.exe)
// as WORKSTATION\bob, cp as nobody known.
//  #  time      process                  op      file                              offset  size
//  1  10:00:01  notepad.exe   pid 100    open    C:\Users\ada\notes.txt
//  2  10:00:02  notepad.exe   pid 100    read    C:\Users\ada\notes.txt            0       100
//  3  10:00:03  notepad.exe   pid 100    write   C:\Users\ada\notes.txt            0       150
//  4  10:00:04  notepad.exe   pid 100    close   C:\Users\ada\notes.txt
//  5  10:00:10  WINWORD.EXE   pid 200    read    C:\Users\ada\Report, "Q4".docx    0       4096
//  6  10:00:11  WINWORD.EXE   pid 200    read    C:\Users\ada\Report, "Q4".docx    4096    4096
//  7  10:00:12  WINWORD.EXE   pid 200    write   C:\Users\ada\Report, "Q4".docx    0       1000
//  8  10:01:10  WINWORD.EXE   pid 200    read    C:\Users\ada\Ägypten\bild.jpg     0       2000
//  9  11:00:05  notepad.exe   pid 100    read    C:\Users\ada\notes.txt            0       100
// 10  11:00:06  cp            pid 300    write   /home/ada/Notes.txt               0       10
// 11  11:00:07  cp            pid 300    delete  /home/ada/Notes.txt
// 12  11:00:08  WINWORD.EXE   pid 200    read    (name unknown)                    0       512

#include <SQLiteCpp/Database.h>

#include "core/time_format.h"
#include "query/filters.h"
#include "query/report.h"
#include "store/database.h"
#include "store/event_writer.h"
#include "temp_dir.h"

namespace etwaudit::test {

inline std::int64_t at(const char* clock) {  // "10:00:01" on 2026-12-02, UTC
  return parse_iso8601(std::string("2026-12-02T") + clock + "Z").value();
}

// Which runs of the fixture record sizes: as fanotify records them (none)
// or as the other sources do.
enum class FixtureSizes { both_runs, first_run, none };

class ReportFixture {
 public:
  // small_slots: two events a segment and two segments a slot, so that the
  // reports read events across several slot tables and segment edges;
  // otherwise one segment an hour, all in the first slot.
  explicit ReportFixture(bool small_slots = true, FixtureSizes sizes = FixtureSizes::both_runs) {
    {
      WriteDatabase database(m_path);
      Catalog catalog;
      RunStats stats;
      ProcessInfo notepad_info, word_info;
      notepad_info.pid = 100;
      notepad_info.image = "C:\\Windows\\System32\\notepad.exe";
      notepad_info.user = "WORKSTATION\\ada";
      word_info.pid = 200;
      word_info.image = "C:\\Program Files\\Office\\WINWORD.EXE";
      word_info.user = "WORKSTATION\\bob";
      word_info.parent_pid = 100;  // started from notepad, so that its parent is known
      word_info.command_line = "\"WINWORD.EXE\" /n";
      const auto notepad = catalog.intern_process(notepad_info);
      const auto word = catalog.intern_process(word_info);
      const auto cp = catalog.intern_process(300, 0, "/usr/bin/cp");
      const auto notes = catalog.intern_path("C:\\Users\\ada\\notes.txt");
      const auto report = catalog.intern_path("C:\\Users\\ada\\Report, \"Q4\".docx");
      const auto picture = catalog.intern_path("C:\\Users\\ada\\\xC3\x84gypten\\bild.jpg");
      const auto linux_notes = catalog.intern_path("/home/ada/Notes.txt");
      const auto unknown = catalog.intern_path("");
      bool sized_run = sizes != FixtureSizes::none;
      auto event = [&sized_run](const char* clock, std::uint32_t process, Op op, std::uint32_t path,
                                std::int64_t offset = -1, std::int64_t size = -1) {
        FileEvent e;
        e.time = at(clock);
        e.process = process;
        e.op = op;
        e.path = path;
        e.offset = offset;
        e.size = sized_run ? size : -1;
        return e;
      };
      auto sized = [small_slots](EventWriter& writer) {
        if (!small_slots) return;
        writer.set_segment_capacity(2);
        writer.set_slot_rows(4);
      };
      EventWriter first(database.db(), catalog, SelfExclusion{});
      sized(first);
      first.begin_run("replay:first.jsonl", "host");
      std::vector<FileEvent> batch = {
          event("10:00:01", notepad, Op::open, notes),          event("10:00:02", notepad, Op::read, notes, 0, 100),
          event("10:00:03", notepad, Op::write, notes, 0, 150), event("10:00:04", notepad, Op::close, notes),
          event("10:00:10", word, Op::read, report, 0, 4096),   event("10:00:11", word, Op::read, report, 4096, 4096),
          event("10:00:12", word, Op::write, report, 0, 1000),  event("10:01:10", word, Op::read, picture, 0, 2000)};
      first.write_batch(batch, stats);
      first.end_run("end of input", stats);
      sized_run = sizes == FixtureSizes::both_runs;
      EventWriter second(database.db(), catalog, SelfExclusion{});
      sized(second);
      second.begin_run("replay:second.jsonl", "host");
      batch = {event("11:00:05", notepad, Op::read, notes, 0, 100),
               event("11:00:06", cp, Op::write, linux_notes, 0, 10), event("11:00:07", cp, Op::remove, linux_notes),
               event("11:00:08", word, Op::read, unknown, 0, 512)};
      second.write_batch(batch, stats);
      second.end_run("end of input", stats);
    }
    m_db = open_read_only(m_path);
    prepare_read_connection(*m_db);
  }

  // Runs a report; each row as its cells joined with '|', NULL as "NULL".
  std::vector<std::vector<std::string>> run(const std::string& report, QueryFilters filters = {}, Params params = {}) {
    const Report* found = find_report(report);
    if (!found) throw std::runtime_error("no report " + report);
    if (!params.count("bucket")) params["bucket"] = std::to_string(ns_per_hour);
    std::vector<std::vector<std::string>> sections;
    for (const Table& table : run_statements(*m_db, found->sections, filters, params)) {
      auto& rows = sections.emplace_back();
      for (const auto& row : table.rows) {
        std::string line;
        for (std::size_t c = 0; c < row.size(); ++c)
          line += (c ? "|" : "") + (row[c].type == Cell::Type::null ? std::string("NULL") : row[c].text);
        rows.push_back(line);
      }
    }
    return sections;
  }
  std::vector<std::string> rows(const std::string& report, QueryFilters filters = {}, Params params = {}) {
    return run(report, std::move(filters), std::move(params)).front();
  }
  SQLite::Database& db() { return *m_db; }
  const std::string& path() const { return m_path; }

 private:
  TempDir m_dir;
  std::string m_path = m_dir.file("fixture.db");
  std::unique_ptr<SQLite::Database> m_db;
};

}  // namespace etwaudit::test
