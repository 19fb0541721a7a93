#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/catalog.h"
#include "core/run_stats.h"
#include "query/event_feed.h"
#include "query/event_lines.h"
#include "query/late_names.h"
#include "query/run_lines.h"
#include "store/database.h"
#include "store/destinations.h"
#include "store/event_writer.h"
#include "temp_dir.h"

using namespace etwaudit;
using etwaudit::test::TempDir;

TEST_CASE("an event line is the JSON nlohmann would write, whatever bytes the names hold", "[event_lines]") {
  TempDir dir;
  WriteDatabase database(dir.file("audit.db"));
  Catalog catalog;
  RunStats stats;
  EventWriter writer(database.db(), catalog, SelfExclusion{});
  writer.begin_run("test", "host");
  const std::vector<std::string> paths = {
      "C:\\Users\\ada\\\"quoted\" name.txt", "C:\\Users\\Jürgen\\αβ 日本.docx", "/tmp/bad\xff\xfe utf8",
      "/tmp/tab\there\nnewline\x01\x1f",     std::string("/tmp/nul\0byte", 13), "/tmp/emoji \xF0\x9F\x93\x84"};
  ProcessInfo process;
  process.pid = 42;
  process.image = "C:\\Program Files\\Ünïcode\\app.exe";
  process.command_line = "app.exe \"C:\\x y\" --flag=\xc3";
  process.user = "WORKSTATION\\ada";
  process.start_time = 1796206000000000000;
  const std::uint32_t who = catalog.intern_process(process);
  std::vector<FileEvent> batch;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    FileEvent event;
    event.time = 1796206530000000000 + static_cast<std::int64_t>(i);
    event.process = who;
    event.path = catalog.intern_path(paths[i]);
    event.op = i % 2 ? Op::write : Op::read;
    event.offset = 4096 * static_cast<std::int64_t>(i);
    event.size = i == 3 ? -1 : 512;
    event.status = i == 4 ? 0xC0000022 : 0;
    batch.push_back(event);
  }
  writer.write_batch(batch, stats);

  EventFeed feed(database.db());
  const auto events = feed.next(0, 100);
  REQUIRE(events.size() == paths.size());
  std::string lines;
  const EventOrigin origin{"3d1219c7", "vm\\host \"1\"", "f742666d-f49f"};
  event_lines(lines, feed, events, origin);
  std::istringstream in(lines);
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    REQUIRE(n < events.size());
    const FeedEvent& event = events[n++];
    const auto parsed = nlohmann::json::parse(line);
    CHECK(parsed["event_uid"] == origin.db_uuid + ":" + std::to_string(event.event_id));
    CHECK(parsed["host"] == origin.host);
    CHECK(
        parsed["path"].get<std::string>() ==
        nlohmann::json::parse(nlohmann::json(event.path).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
            .get<std::string>());
    // The path's bytes as nlohmann writes them.
    CHECK(line.find(nlohmann::json(event.path).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) !=
          std::string::npos);
    CHECK(parsed["process"] == process.image);
    CHECK(parsed["command_line"] == "app.exe \"C:\\x y\" --flag=\xEF\xBF\xBD");
    CHECK(parsed["offset"] == event.offset.value_or(-1));
    CHECK(parsed["pid"] == 42);
    CHECK(parsed["process_start"] == "2026-12-02T10:06:40.0000000Z");
    if (event.status)
      CHECK(parsed["status"] == "0xC0000022");
    else
      CHECK(parsed["status"].is_null());
  }
  CHECK(n == paths.size());
  CHECK(lines.find("/tmp/bad\xEF\xBF\xBD\xEF\xBF\xBD utf8") != std::string::npos);  // each bad byte replaced
  CHECK(lines.find("tab\\there\\nnewline\\u0001\\u001f") != std::string::npos);
  CHECK(lines.find("nul\\u0000byte") != std::string::npos);
}

TEST_CASE("run records are written when they changed since they last arrived, with the destination's losses",
          "[event_lines]") {
  TempDir dir;
  WriteDatabase database(dir.file("audit.db"));
  auto& db = database.db();
  Catalog catalog;
  RunStats stats;
  EventWriter writer(db, catalog, SelfExclusion{});
  writer.begin_run("replay:a.jsonl", "host");
  std::vector<FileEvent> batch(3);
  for (auto& event : batch) {
    event.time = 1796206530000000000;
    event.process = catalog.intern_process(1, 0, "/bin/a");
    event.path = catalog.intern_path("/a");
  }
  writer.write_batch(batch, stats);
  writer.end_run("end of input", stats);
  open_destination(db, "central");
  const EventOrigin origin{"id", "vm", "uuid"};
  RunLines runs(db, "central");
  std::string lines;

  REQUIRE(runs.changed(lines, origin));
  auto row = nlohmann::json::parse(lines);
  CHECK(row["run_id"] == 1);
  CHECK(row["source"] == "replay:a.jsonl");
  CHECK(row["events_written"] == 3);
  CHECK(row["exit_reason"] == "end of input");
  CHECK(row["stopped_ns"].is_number());
  CHECK(row["pruned_unshipped"] == 0);
  // Not arrived: written again. Arrived: not until something changes.
  CHECK(runs.changed(lines, origin));
  runs.sent();
  CHECK_FALSE(runs.changed(lines, origin));
  CHECK(lines.empty());

  // A second run, and losses to this destination: both runs again, the first for its new count.
  writer.begin_run("replay:b.jsonl", "host");
  db.exec("UPDATE destinations SET pruned_unshipped = 7");
  REQUIRE(runs.changed(lines, origin));
  std::istringstream in(lines);
  std::string line;
  std::vector<nlohmann::json> rows;
  while (std::getline(in, line)) rows.push_back(nlohmann::json::parse(line));
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["pruned_unshipped"] == 7);
  CHECK(rows[1]["run_id"] == 2);
  CHECK(rows[1]["stopped_ns"].is_null());
  CHECK(rows[1]["exit_reason"].is_null());
  runs.sent();
  CHECK_FALSE(runs.changed(lines, origin));
}

TEST_CASE("a name learned after its events went is logged for the destinations, and the feed finds those events",
          "[event_lines][destinations]") {
  TempDir dir;
  WriteDatabase database(dir.file("audit.db"));
  auto& db = database.db();
  Catalog catalog;
  RunStats stats;
  EventWriter writer(db, catalog, SelfExclusion{});
  writer.begin_run("test", "host");
  const std::uint32_t early = catalog.intern_process(10, 0, "/usr/bin/early");
  const std::uint32_t other = catalog.intern_process(11, 0, "/usr/bin/other");
  const std::uint32_t log = catalog.intern_path("/var/log/app.log");
  auto batch_of = [&](std::int64_t from, int n) {
    std::vector<FileEvent> batch;
    for (int i = 0; i < n; ++i) {
      FileEvent event;
      event.time = 1796206530000000000 + from + i;
      event.process = i % 2 ? early : other;
      event.path = log;
      event.op = Op::write;
      event.size = 10;
      batch.push_back(event);
    }
    return batch;
  };
  auto first = batch_of(0, 10);
  writer.write_batch(first, stats);
  catalog.learn_command_line(early, "early --now");
  auto second = batch_of(100, 2);
  writer.write_batch(second, stats);
  // No destination: nothing to send again, nothing logged.
  CHECK(db.execAndGet("SELECT count(*) FROM name_changes").getInt64() == 0);

  open_destination(db, "central");
  const std::uint32_t late = catalog.intern_process(12, 0, "/usr/bin/late");
  std::vector<FileEvent> third = batch_of(200, 4);
  for (auto& event : third) event.process = late;
  writer.write_batch(third, stats);
  catalog.learn_command_line(late, "late --flag");
  auto fourth = batch_of(300, 2);
  writer.write_batch(fourth, stats);
  const auto changes = name_changes_after(db, 0);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].file_id == 0);
  CHECK(changes[0].process_id == db.execAndGet("SELECT process_id FROM processes WHERE pid = 12").getInt64());
  CHECK(name_changes_after(db, changes[0].seq).empty());

  EventFeed feed(db);
  // The process's events up to a cursor, in id order.
  const std::int64_t cursor = db.execAndGet("SELECT max(id) FROM events").getInt64();
  auto of_late = feed.of(0, changes[0].process_id, 0, cursor, 100);
  CHECK(of_late.size() == 4);
  CHECK(feed.process(of_late[0].process_id).command_line == "late --flag");
  // The file's, each once though two processes wrote it in the same segment; paged.
  const std::int64_t file = db.execAndGet("SELECT file_id FROM files WHERE path = '/var/log/app.log'").getInt64();
  std::vector<std::int64_t> ids;
  for (std::int64_t after = 0;;) {
    const auto page = feed.of(file, 0, after, cursor, 3);
    if (page.empty()) break;
    for (const auto& event : page) ids.push_back(event.event_id);
    after = page.back().event_id;
  }
  CHECK(ids.size() == 18);
  CHECK(std::is_sorted(ids.begin(), ids.end()));
  CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
  // Not past the cursor.
  CHECK(feed.of(file, 0, 0, ids[4], 100).size() == 5);

  // Sent again: a refusal keeps the change for the next time; a delivery
  // moves names_through, and what every destination dealt with goes.
  DestinationState central = open_destination(db, "central");
  central.shipped_through = cursor;
  CHECK_FALSE(resend_late_names(db, feed, central, 3, [](const auto&) { return false; }).has_value());
  CHECK(central.names_through == 0);
  std::vector<std::string> command_lines;
  const auto rows = resend_late_names(db, feed, central, 3, [&](const std::vector<FeedEvent>& events) {
    for (const auto& event : events) command_lines.push_back(feed.process(event.process_id).command_line.value_or(""));
    return true;
  });
  CHECK(rows == 4);
  CHECK(command_lines == std::vector<std::string>(4, "late --flag"));
  CHECK(central.names_through == changes[0].seq);
  CHECK(open_destination(db, "central").names_through == changes[0].seq);
  CHECK(db.execAndGet("SELECT count(*) FROM name_changes").getInt64() == 0);
  CHECK(resend_late_names(db, feed, central, 3, [](const auto&) { return false; }) == 0);
}
