// etwaudit status: what a database holds, how big it is, and whether its
// collector is alive. Read-only; safe beside a running collector.

#include <algorithm>
#include <cxxopts.hpp>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "core/error.h"
#include "core/human_format.h"
#include "core/time_format.h"
#include "core/utf8_path.h"
#include "platform/platform.h"
#include "query/filters.h"
#include "query/output.h"
#include "query/report.h"
#include "store/database.h"
#include "store/open_run.h"
#include "store/retention.h"

namespace etwaudit {
namespace {

// A run that has committed nothing for this long while its collector holds
// the database is probably stuck: a live collector commits at least every
// 30 s (its heartbeat).
constexpr std::int64_t stale_after_ns = 5 * 60 * ns_per_second;

const Report& status_report() {
  return embedded_report("status.sql");
}

std::uint64_t file_bytes(const std::string& path) {
  std::error_code error;
  const auto size = std::filesystem::file_size(utf8_path(path), error);
  return error ? 0 : size;
}

// One row with many columns, shown as "column  value" lines.
Table transposed(const Table& table) {
  Table result{table.name, {"item", "value"}, {}};
  for (const auto& row : table.rows)
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
      Cell value = row[c];
      // Sizes as every other table shows them (the value column mixes kinds).
      if (value.type == Cell::Type::integer && is_bytes_column(table.columns[c]))
        value = Cell{Cell::Type::text, human_bytes(static_cast<std::uint64_t>(std::max(0LL, std::stoll(value.text))))};
      result.rows.push_back({Cell{Cell::Type::text, table.columns[c]}, value});
    }
  return result;
}

// Whether a collector writes the database: the writer lock says whether one
// runs, the open run record which. One row: collector (in words), running
// (1 or 0), pid, run_id.
Table collector_table(bool running, const OpenRun& run) {
  std::string words = running ? "running" : "not running";
  if (running && run.run_id)
    words += " (pid " + std::to_string(run.pid) + ", run " + std::to_string(run.run_id) + ")";
  else if (run.run_id)
    words += " (run " + std::to_string(run.run_id) + " was left open: its collector is gone)";
  auto integer = [](std::int64_t value) { return Cell{Cell::Type::integer, std::to_string(value)}; };
  Table table{"collector", {"collector", "running", "pid", "run_id"}, {}};
  table.rows.push_back({Cell{Cell::Type::text, words}, integer(running ? 1 : 0),
                        running && run.run_id ? integer(run.pid) : Cell{}, run.run_id ? integer(run.run_id) : Cell{}});
  return table;
}

}  // namespace

int status_command(int argc, const char* const* argv) {
  cxxopts::Options options("etwaudit status",
                           "Show a database's size, the events and long-term totals it keeps, its retention, and "
                           "its last collector run (with a warning when that collector seems to have died).");
  // clang-format off
  options.add_options()
    ("d,db", "database to read (default: $ETWAUDIT_DB, else audit.db)", cxxopts::value<std::string>(), "FILE")
    ("f,format", "table, json or jsonl", cxxopts::value<std::string>()->default_value("table"), "FORMAT")
    ("local", "show times on this machine's clock, with its offset; default: UTC");
  // clang-format on
  const auto parsed = parse_options(options, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& args = *parsed;
  const OutputFormat format = parse_output_format(args["format"].as<std::string>());
  if (format == OutputFormat::csv)
    throw UsageError(
        "status is several tables, and CSV holds one: use --format json (an array per table) or jsonl (each row names "
        "its table)");
  const std::string path = database_argument(args, DatabaseUse::existing);

  // The probe first: closing its descriptor would drop the read
  // connection's locks (store/open_run.h).
  if (std::error_code error; !is_sqlite_uri(path) && !std::filesystem::exists(utf8_path(path), error))
    throw Error("database '" + path + "' does not exist");
  bool running = false;
  try {
    running = !is_sqlite_uri(path) && collector_running(path);
  } catch (const Error&) {
    // a file that cannot be opened to lock it (a read-only medium): no collector writes it
  }
  std::string note;
  auto db = open_read_only(path, &note);
  if (!note.empty()) std::cerr << "etwaudit status: note: " << note << "\n";
  const OpenRun run = open_run(*db);
  const std::uint64_t used = used_bytes(*db);
  const std::int64_t page_size = db->execAndGet("PRAGMA page_size").getInt64();
  const std::int64_t free_pages = db->execAndGet("PRAGMA freelist_count").getInt64();
  prepare_read_connection(*db);
  const Params params{{"path", path},
                      {"used_bytes", std::to_string(used)},
                      {"reusable_bytes", std::to_string(free_pages * page_size)},
                      {"schema_version", std::to_string(program_schema_version())},
                      {"file_bytes", std::to_string(file_bytes(path))},
                      {"wal_bytes", std::to_string(file_bytes(path + "-wal"))},
                      {"now", std::to_string(now_ns())},
                      {"stale_after", std::to_string(stale_after_ns)},
                      {"running", running ? "1" : "0"}};
  std::vector<Table> results{collector_table(running, run)};
  for (const ReportSection& section : status_report().sections)
    results.push_back(run_sql(*db, section.sql, params, section.name));

  if (args.count("local")) show_local_times(results, utc_offset_seconds);
  for (const Table& table : results) {
    if (table.name != "last_run" || table.rows.empty()) continue;
    const Cell& warning = table.rows[0].back();
    if (warning.type != Cell::Type::null) std::cerr << "etwaudit status: warning: " << warning.text << "\n";
  }
  if (format == OutputFormat::table) {
    // "collector: running (pid 4242, run 3)" above the tables.
    std::cout << "collector: " << results.front().rows[0][0].text << "\n\n";
    results.erase(results.begin());
    // (A table of destinations, one row each, when there are any.)
    std::erase_if(results, [](const Table& table) { return table.name == "destinations" && table.rows.empty(); });
    for (Table& table : results)
      if (table.name != "destinations") table = transposed(table);
  }
  if (format == OutputFormat::csv) stdout_bytes_as_written();  // CSV ends lines in \r\n
  write_results(std::cout, results, format, stdout_is_terminal());
  return 0;
}

}  // namespace etwaudit
