// libFuzzer target: the SQL the query filters become (filter_ctes,
// add_filter_params) and the read-only query connection, run by
// run_statements as `etwaudit query` runs them.
//
// The input is a query written as lines of name=value, the options of
// `etwaudit query`:
//
//   since=15m  until=2026-12-02T11:00:00+01:00   (or a raw ns value)
//   process=notepad.exe  path=*.docx  exclude=*.dll  op=write  limit=5  bucket=1h
//   param=name=value     an ad-hoc :name
//   report=top-files     one of the reports (else one picked by the input size)
//   sql=...              ad-hoc SQL instead of a report: the rest of the input
//
// Values are checked the way the command line checks them (a refused value is
// left out). The database is an in-memory one with the current schema and a
// few events of two runs, made once. The seeds are the README's query
// examples and statements the read-only guard must refuse.
//
// Error (UsageError included) is the expected way to fail; any other exception
// escapes and is reported. Also checked: nothing a query does changes the
// database (its change counter stays put) or leaves a transaction open.

#include <SQLiteCpp/Database.h>
#include <sqlite3.h>

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/catalog.h"
#include "core/error.h"
#include "core/run_stats.h"
#include "core/time_format.h"
#include "query/filters.h"
#include "query/report.h"
#include "store/database.h"
#include "store/event_writer.h"

namespace {

using namespace etwaudit;

// Virtual machine steps after which a query is interrupted: a recursive CTE
// may otherwise run (and fill the result table) without end.
constexpr int progress_interval = 1000;
constexpr int max_progress_calls = 20'000;
int g_progress_calls = 0;

[[noreturn]] void violated(const char* what) {
  std::fprintf(stderr, "fuzz_sql_filters: %s\n", what);
  std::abort();
}

SQLite::Database& database() {
  static const std::unique_ptr<SQLite::Database> db = [] {
    configure_sqlite();
    auto made = std::make_unique<SQLite::Database>(":memory:", SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    migrate(*made);
    Catalog catalog;
    RunStats stats;
    const auto notepad = catalog.intern_process(100, 0, "C:\\Windows\\System32\\notepad.exe");
    const auto cp = catalog.intern_process(300, 0, "/usr/bin/cp");
    const auto notes = catalog.intern_path("C:\\Users\\ada\\notes.txt");
    const auto report = catalog.intern_path("C:\\Users\\ada\\Report, \"Q4\".docx");
    const auto linux_notes = catalog.intern_path("/home/ada/Notes.txt");
    auto event = [](const char* time, std::uint32_t process, Op op, std::uint32_t path, std::int64_t size) {
      FileEvent e;
      e.time = parse_iso8601(time).value();
      e.process = process;
      e.op = op;
      e.path = path;
      e.size = size;
      e.offset = size < 0 ? -1 : 0;
      return e;
    };
    EventWriter first(*made, catalog, SelfExclusion{});
    first.begin_run("replay:first.jsonl", "host");
    std::vector<FileEvent> batch = {event("2026-12-02T10:00:01Z", notepad, Op::open, notes, -1),
                                    event("2026-12-02T10:00:02Z", notepad, Op::read, notes, 100),
                                    event("2026-12-02T10:00:59.999999999Z", notepad, Op::write, report, 150),
                                    event("2026-12-02T10:01:00Z", notepad, Op::close, notes, -1)};
    first.write_batch(batch, stats);
    first.end_run("end of input", stats);
    EventWriter second(*made, catalog, SelfExclusion{});
    second.begin_run("replay:second.jsonl", "host");
    batch = {event("2026-12-02T11:00:06Z", cp, Op::write, linux_notes, 10),
             event("2026-12-02T11:00:07Z", cp, Op::remove, linux_notes, -1)};
    second.write_batch(batch, stats);
    second.end_run("end of input", stats);
    prepare_read_connection(*made);
    sqlite3_progress_handler(
        made->getHandle(), progress_interval, [](void*) { return ++g_progress_calls > max_progress_calls ? 1 : 0; },
        nullptr);
    return made;
  }();
  return *db;
}

std::optional<std::int64_t> as_integer(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  SQLite::Database& db = database();
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::int64_t now = 1'796'206'530'000'000'000;  // 2026-12-02T10:15:30Z
  QueryFilters filters;
  Params params{{"bucket", std::to_string(ns_per_hour)}};
  std::vector<ReportSection> statements;
  const Report* report = nullptr;
  while (!input.empty()) {
    const std::size_t newline = input.find('\n');
    const std::string_view line = input.substr(0, newline);
    const std::size_t equals = line.find('=');
    const std::string_view name = line.substr(0, equals);
    const std::string value(equals == std::string_view::npos ? std::string_view() : line.substr(equals + 1));
    if (name == "sql") {
      statements = {{"result", std::string(input.substr(equals + 1))}};
      break;
    }
    try {
      if (name == "since" || name == "until") {
        std::optional<std::int64_t> time = as_integer(value);
        if (!time) time = parse_time_argument("--" + std::string(name), value, now);
        (name == "since" ? filters.since : filters.until) = time;
      } else if (name == "process" || name == "path") {
        check_glob_argument("--" + std::string(name), value);
        (name == "process" ? filters.process : filters.path) = value;
      } else if (name == "exclude") {
        check_glob_argument("--exclude-path", value);
        filters.exclude_paths.push_back(value);
      } else if (name == "op") {
        filters.ops.push_back(parse_op_argument(value));
      } else if (name == "limit") {
        if (auto limit = as_integer(value); limit && *limit > 0) params["limit"] = value;
      } else if (name == "bucket") {
        if (value == "1m" || value == "1h" || value == "1d")
          params["bucket"] = std::to_string(value == "1m"   ? ns_per_minute
                                            : value == "1h" ? ns_per_hour
                                                            : 24 * ns_per_hour);
      } else if (name == "param") {
        const std::size_t inner = value.find('=');
        if (inner != std::string::npos && inner != 0) params[value.substr(0, inner)] = value.substr(inner + 1);
      } else if (name == "report") {
        report = find_report(value);
      }
    } catch (const UsageError&) {
      // the command line refuses it; so do we
    }
    if (newline == std::string_view::npos) break;
    input.remove_prefix(newline + 1);
  }
  if (filters.since && filters.until && *filters.since > *filters.until) return 0;  // refused as a usage error
  if (statements.empty()) {
    if (!report) report = &reports()[size % reports().size()];
    statements = report->sections;
  }

  const auto changes = sqlite3_total_changes64(db.getHandle());
  g_progress_calls = 0;
  try {
    (void)run_statements(db, statements, filters, params);
  } catch (const Error&) {
  }
  if (sqlite3_total_changes64(db.getHandle()) != changes) violated("a query changed the database");
  if (!sqlite3_get_autocommit(db.getHandle())) violated("a query left a transaction open");
  return 0;
}
