// etwaudit import: .etl trace files into a database, one run per file.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cxxopts.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "core/ascii.h"
#include "core/device_map.h"
#include "core/error.h"
#include "core/fingerprint.h"
#include "core/human_format.h"
#include "core/time_format.h"
#include "core/utf8_path.h"
#include "pipeline/collection.h"
#include "platform/platform.h"
#include "sources/etl/etl_source.h"
#include "store/database.h"
#include "store/event_writer.h"

namespace etwaudit {
namespace {

// The run that already imported this fingerprint completely, or 0.
std::int64_t earlier_import(SQLite::Database& db, const std::string& fingerprint, std::string& when) {
  SQLite::Statement find(db,
                         "SELECT run_id, started_at FROM collector_runs WHERE input_hash = ? "
                         "AND exit_reason = 'end of input' ORDER BY run_id LIMIT 1");
  find.bind(1, fingerprint);
  if (!find.executeStep()) return 0;
  when = format_iso8601(find.getColumn(1).getInt64()).substr(0, 19) + "Z";
  return find.getColumn(0).getInt64();
}

std::string percent(std::uint64_t part, std::uint64_t whole) {
  char text[16];
  std::snprintf(text, sizeof text, "%.1f%%", whole ? 100.0 * static_cast<double>(part) / whole : 100.0);
  return text;
}

void print_summary(std::ostream& out, const std::string& file, const CollectionResult& result, const EtlSource& source,
                   const RunStats& stats, std::uint64_t resolved) {
  const auto& decoded = source.decoder_stats();
  out << "etwaudit import: " << file << ": " << result.exit_reason << "\n"
      << "  records " << with_thousands(source.reader_counters().records) << ": file operations "
      << with_thousands(decoded.file_events) << ", disk I/O " << with_thousands(decoded.disk_events) << ", names "
      << with_thousands(decoded.names) << " (from a rundown " << with_thousands(decoded.rundown_names)
      << "), processes " << with_thousands(decoded.processes) << ", threads " << with_thousands(decoded.threads)
      << ", malformed " << with_thousands(decoded.malformed) << "\n"
      << "  written " << with_thousands(stats.written) << " events; named " << with_thousands(resolved) << " ("
      << percent(resolved, stats.written) << "); lost by the logger " << with_thousands(stats.lost) << "; bad input "
      << with_thousands(stats.bad_input) << "\n";
  if (decoded.completed + decoded.never_completed > 0)
    out << "  operations with their end (status, bytes moved) " << with_thousands(decoded.completed)
        << ", of which failed " << with_thousands(decoded.failed_operations) << "; without it "
        << with_thousands(decoded.never_completed)
        << (decoded.early_ends ? "; the end before the start " + with_thousands(decoded.early_ends) : "") << "\n";
  if (decoded.deletes_on_close)
    out << "  files deleted on close (FILE_DELETE_ON_CLOSE, no delete event of their own) "
        << with_thousands(decoded.deletes_on_close) << "\n";
  if (decoded.paging_io)
    out << "  paging I/O (the cache's and memory manager's reads and writes, kept apart as paging_read and "
           "paging_write) "
        << with_thousands(decoded.paging_io) << "\n";
  const auto& skipped = source.skipped_kinds();
  if (skipped.empty()) return;
  std::vector<std::pair<std::uint64_t, std::string>> kinds;
  for (const auto& [kind, count] : skipped) kinds.emplace_back(count, kind.describe());
  std::sort(kinds.rbegin(), kinds.rend());
  out << "  not file activity, skipped: " << with_thousands(decoded.unknown) << " records of " << kinds.size()
      << " kinds, most:";
  for (std::size_t i = 0; i < kinds.size() && i < 5; ++i)
    out << (i ? "," : "") << " " << kinds[i].second << " (" << with_thousands(kinds[i].first) << ")";
  out << "\n";
}

// What import was asked to do.
struct ImportRequest {
  std::string db_path;
  std::vector<std::string> files;
  DeviceMap device_map;
  OnBadInput on_bad_input = OnBadInput::stop;
  std::uint64_t total_bytes = 0;  // of all the files: one progress line for them all
  bool force = false;
  bool quiet = false;
};

cxxopts::Options import_options() {
  cxxopts::Options options("etwaudit import",
                           "Read .etl trace files (wpr, xperf, PerfView, logman, etwaudit) into a database: their "
                           "file, disk and process events, with names completed from the trace's rundown.");
  // clang-format off
  options.add_options()
    ("d,db", "database to write (created if missing) (default: $ETWAUDIT_DB, else audit.db)", cxxopts::value<std::string>(), "FILE")
    ("device-map", "turn NT paths into drive paths: DRIVE=TARGET as QueryDosDevice reports it on the recording "
                   "machine (C:=\\Device\\HarddiskVolume3), or FOLDER=TARGET for a volume mounted on a folder; "
                   "repeatable. Without it paths stay as the kernel gave them",
      cxxopts::value<std::vector<std::string>>(), "DRIVE=TARGET")
    ("on-error", "a broken buffer: stop (exit 1) or skip (count it and go on)",
      cxxopts::value<std::string>()->default_value("stop"), "stop|skip")
    ("force", "import a file even if this database already holds it")
    ("quiet", "no progress line while importing")
    ("files", "trace files, or folders of them", cxxopts::value<std::vector<std::string>>());
  // clang-format on
  options.parse_positional({"files"});
  options.positional_help("TRACE.etl|FOLDER ...");
  return options;
}

// Checked up front, before the database is touched: a FIFO would block the
// reader, and a device such as /dev/zero would never end.
void check_trace_file(const std::string& file) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(utf8_path(file), error);
  if (!std::filesystem::exists(status)) {
    if (error && error != std::errc::no_such_file_or_directory)
      throw Error("cannot read trace file '" + file + "': " + error.message());
    throw Error("trace file '" + file + "' does not exist");
  }
  if (!std::filesystem::is_regular_file(status))
    throw Error("trace file '" + file + "' is not a regular file (a FIFO, device or socket); name an .etl file");
  // JSON lines are collect's replay input, not a trace.
  const std::string extension = utf8_name(utf8_path(file).extension());
  char first = 0;
  std::ifstream(utf8_path(file), std::ios::binary).get(first);
  if (equal_ignoring_ascii_case(extension, ".jsonl") || equal_ignoring_ascii_case(extension, ".json") ||
      equal_ignoring_ascii_case(extension, ".ndjson") || first == '{')
    throw UsageError("'" + file +
                     "' holds JSON lines, not an ETW trace: replay it with 'etwaudit collect --source replay:" + file +
                     "'");
}

// The files named, a folder standing for the .etl files in it (by name).
std::vector<std::string> trace_files(const std::vector<std::string>& named) {
  std::vector<std::string> files;
  for (const std::string& name : named) {
    std::error_code error;
    if (!std::filesystem::is_directory(utf8_path(name), error)) {
      files.push_back(name);
      continue;
    }
    std::vector<std::string> inside;
    for (const auto& entry : std::filesystem::directory_iterator(utf8_path(name), error)) {
      if (equal_ignoring_ascii_case(utf8_name(entry.path().extension()), ".etl") && entry.is_regular_file(error))
        inside.push_back(utf8_name(entry.path()));
    }
    if (error) throw Error("cannot read folder '" + name + "': " + error.message());
    if (inside.empty()) throw Error("folder '" + name + "' holds no .etl files");
    std::sort(inside.begin(), inside.end());
    files.insert(files.end(), inside.begin(), inside.end());
  }
  return files;
}

ImportRequest parse_import(const cxxopts::ParseResult& args) {
  ImportRequest request;
  if (!args.count("files")) throw UsageError("name at least one .etl file");
  const std::string on_error = args["on-error"].as<std::string>();
  if (on_error != "stop" && on_error != "skip")
    throw UsageError("--on-error must be stop or skip, not '" + on_error + "'");
  request.on_bad_input = on_error == "skip" ? OnBadInput::skip : OnBadInput::stop;
  if (args.count("device-map"))
    for (const auto& mapping : args["device-map"].as<std::vector<std::string>>())
      request.device_map.add_mapping(mapping);
  request.files = trace_files(values_as_given(args, "files"));
  for (const auto& file : request.files) {
    check_trace_file(file);
    std::error_code error;
    request.total_bytes += std::filesystem::file_size(utf8_path(file), error);
  }
  request.db_path = database_argument(args, DatabaseUse::create);
  request.force = args.count("force") > 0;
  request.quiet = args.count("quiet") > 0;
  return request;
}

// Where an import of several files is: the bytes of the files before this
// one, and which one it is.
struct Progress {
  bool show = false;
  std::uint64_t bytes_before = 0;
  std::size_t file_number = 1;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

// One file into the database as one run; false when the run failed.
bool import_file(const ImportRequest& request, SQLite::Database& db, const std::string& file,
                 const std::string& fingerprint, const Progress& progress) {
  Catalog catalog;
  RunStats stats;
  EtlSource source(file, request.on_bad_input);
  EventWriter writer(db, catalog, SelfExclusion::for_database(request.db_path, 0),
                     request.device_map.empty() ? nullptr : &request.device_map);
  writer.begin_run(source.description(), std::string(), current_pid(), false, fingerprint);
  CollectionOptions collection;
  collection.stop_requested = stop_requested;
  const auto started = std::chrono::steady_clock::now();
  if (progress.show) {
    collection.on_progress = [&](const RunStats&) {
      const auto now = std::chrono::steady_clock::now();
      const double seconds = std::chrono::duration<double>(now - started).count();
      const double all_seconds = std::chrono::duration<double>(now - progress.started).count();
      // One line for all the files: their bytes together.
      const std::uint64_t done_bytes = progress.bytes_before + source.bytes_done();
      const double done = static_cast<double>(done_bytes), total = static_cast<double>(request.total_bytes);
      const double eta = done > 0 && total > done ? all_seconds * (total - done) / done : 0;
      const std::string which = request.files.size() > 1 ? " (file " + std::to_string(progress.file_number) + " of " +
                                                               std::to_string(request.files.size()) + ")"
                                                         : "";
      char line[300];
      std::snprintf(line, sizeof line, "\r\033[K%s%s: %s of %s, %s records/s, %.0f s left", file.c_str(), which.c_str(),
                    human_bytes(done_bytes).c_str(), human_bytes(request.total_bytes).c_str(),
                    with_thousands(static_cast<std::uint64_t>(source.records_done() / seconds)).c_str(), eta);
      std::cerr << line << std::flush;
    };
  }
  CollectionResult result = run_collection(source, catalog, writer, stats, collection);
  if (progress.show) std::cerr << "\r\033[K";
  print_summary(std::cerr, file, result, source, stats, writer.resolved_events());
  if (!result.failed && source.decoder_stats().file_events == 0)
    std::cerr << "etwaudit import: warning: " << file
              << " holds no file events: it was recorded without the kernel's file I/O events (the skipped kinds "
                 "above are what it holds); record with them, e.g. 'wpr -start FileIO' or 'xperf -on "
                 "PROC_THREAD+LOADER+FILE_IO+FILE_IO_INIT+DISK_IO'\n";
  return !result.failed;
}

int run_import(const ImportRequest& request) {
  WriteDatabase database(request.db_path);
  install_stop_handlers();
  Progress progress;
  progress.show = !request.quiet && stderr_is_terminal();
  bool failed = false;
  for (const auto& file : request.files) {
    const std::string fingerprint = file_fingerprint(file);
    std::string when;
    std::error_code error;
    const std::uint64_t bytes = std::filesystem::file_size(utf8_path(file), error);
    if (const auto run = earlier_import(database.db(), fingerprint, when); run != 0 && !request.force) {
      // Nothing to do is no failure: importing a folder again imports what is new in it.
      std::cerr << "etwaudit import: " << file << ": already imported as run " << run << " on " << when
                << ", skipped (--force imports it again)\n";
    } else if (!import_file(request, database.db(), file, fingerprint, progress)) {
      failed = true;
    }
    progress.bytes_before += bytes;
    progress.file_number += 1;
    if (!stop_requested().empty()) break;
  }
  return failed ? 1 : 0;
}

}  // namespace

int import_command(int argc, const char* const* argv) {
  cxxopts::Options options = import_options();
  const auto parsed = parse_options(options, argc, argv);
  if (!parsed) return 0;
  return run_import(parse_import(*parsed));
}

}  // namespace etwaudit
