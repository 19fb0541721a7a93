// etwaudit collect: run a source into a database until it ends or is stopped.

#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <chrono>
#include <cxxopts.hpp>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/shipping.h"
#include "cli/status_line.h"
#include "core/error.h"
#include "core/glob.h"
#include "core/human_format.h"
#include "core/time_format.h"
#include "core/utf8_path.h"
#include "pipeline/collection.h"
#include "platform/platform.h"
#include "sources/live/live_source.h"
#include "sources/replay_source.h"
#include "store/database.h"
#include "store/destinations.h"
#include "store/event_writer.h"
#include "store/open_run.h"
#include "store/retention.h"

namespace etwaudit {
namespace {

// "ebpf (live, the default where it loads), fanotify (live) or ": the live
// sources for --help.
std::string live_sources_help() {
  std::string text;
  const std::vector<std::string> names = live_source_names();
  for (const std::string& name : names)
    text += name + (!text.empty()      ? " (live), "
                    : names.size() > 1 ? " (live, the default where it loads), "
                                       : " (live, the default), ");
  if (text.size() > 2) text.replace(text.size() - 2, 2, " or ");
  return text;
}

// The live source's settings as options of collect (group "live source").
void add_live_source_options(cxxopts::Options& options) {
  std::string names;
  for (const std::string& name : live_source_names()) names += (names.empty() ? "" : ", ") + name;
  auto group = options.add_options("live source (" + names + ")");
  for (const LiveSourceSetting& setting : live_source_settings()) {
    if (setting.repeatable)
      group(setting.name, setting.help, cxxopts::value<std::vector<std::string>>(), setting.value_help);
    else if (setting.default_value.empty())
      group(setting.name, setting.help, cxxopts::value<std::string>(), setting.value_help);
    else
      group(setting.name, setting.help, cxxopts::value<std::string>()->default_value(setting.default_value),
            setting.value_help);
  }
}

std::unique_ptr<EventSource> make_source(const cxxopts::ParseResult& args, LiveSourceRequest request) {
  const std::string spec = args.count("source") ? args["source"].as<std::string>() : std::string();
  const OnBadInput on_bad_input = args["on-error"].as<std::string>() == "skip" ? OnBadInput::skip : OnBadInput::stop;
  if (spec.rfind("replay:", 0) == 0) {
    std::string path = spec.substr(7);
    if (path.empty()) throw UsageError("--source replay: needs a file, e.g. --source replay:events.jsonl");
    if (path != "-" && !std::filesystem::exists(utf8_path(path)))
      throw Error("replay file '" + path + "' does not exist");
    return std::make_unique<ReplaySource>(path, on_bad_input, std::cerr);
  }
  const std::vector<std::string> live = live_source_names();
  if (spec.empty() || std::find(live.begin(), live.end(), spec) != live.end()) {
    request.source = spec;
    for (const LiveSourceSetting& setting : live_source_settings()) {
      if (!args.count(setting.name)) continue;
      request.settings[setting.name] = setting.repeatable ? args[setting.name].as<std::vector<std::string>>()
                                                          : std::vector{args[setting.name].as<std::string>()};
    }
    request.note = [](const std::string& line) { std::cerr << "etwaudit collect: " << line << "\n"; };
    return make_live_source(request);
  }
  std::string names;
  for (const std::string& name : live) names += ", " + name;
  throw UsageError("unknown source '" + spec + "' (expected replay:FILE.jsonl" + names + ")");
}

RecordFilter record_filter(const cxxopts::ParseResult& args) {
  RecordFilter filter;
  // Globs as given, each whole: a comma is a character of a file name
  // (C:\Users\ada\Belege, 2025\*), not a list. --ops takes a list.
  for (const auto& pattern : values_as_given(args, "include-path"))
    filter.include_paths.push_back(glob_argument("--include-path", pattern));
  for (const auto& pattern : values_as_given(args, "exclude-path"))
    filter.exclude_paths.push_back(glob_argument("--exclude-path", pattern));
  for (const auto& pattern : values_as_given(args, "include-process"))
    filter.include_processes.push_back(ProcessPattern::parse("--include-process", pattern));
  for (const auto& pattern : values_as_given(args, "exclude-process"))
    filter.exclude_processes.push_back(ProcessPattern::parse("--exclude-process", pattern));
  if (args.count("op"))
    for (const auto& name : args["op"].as<std::vector<std::string>>()) filter.ops.push_back(op_argument("--ops", name));
  return filter;
}

// The path filters as a live source may apply them (the eBPF source: in the kernel).
SourcePathFilter source_path_filter(const RecordFilter& filter) {
  SourcePathFilter paths;
  if (filter.include_paths.empty() && filter.exclude_paths.empty()) return paths;
  paths.keeps = [filter](const std::string& path) { return filter.keeps_path(path); };
  for (const PathGlob& glob : filter.include_paths) {
    const auto prefix = glob.literal_prefix();
    if (!prefix) {
      paths.include_prefixes.clear();  // the kernel cannot tell what is included
      break;
    }
    paths.include_prefixes.push_back(*prefix);
  }
  for (const PathGlob& glob : filter.exclude_paths)
    if (const auto prefix = glob.literal_prefix()) paths.exclude_prefixes.push_back(*prefix);
  return paths;
}

std::uint64_t database_bytes(const std::string& path) {
  std::uint64_t total = 0;
  std::error_code error;
  for (const char* suffix : {"", "-wal"}) {
    auto size = std::filesystem::file_size(utf8_path(path + suffix), error);
    if (!error) total += size;
  }
  return total;
}

// The default coalescing window (see README: measured on the benchmark stream
// and on Linux workloads).
constexpr long default_coalesce_ms = 100;

// What collect was asked to do.
struct CollectRequest {
  std::string db_path;
  CollectionOptions collection;
  RecordFilter filter;
  bool quiet = false;
  std::unique_ptr<EventSource> source;
  std::optional<ShipRequest> ship;  // --ship: also send the events to ClickHouse
};

cxxopts::Options collect_options() {
  cxxopts::Options options("etwaudit collect",
                           "Record file activity into a database until the source ends, "
                           "Ctrl+C/SIGTERM, or --duration.");
  // clang-format off
  options.add_options()
    ("source", std::string("where events come from: ") + live_sources_help() +
               "replay:FILE.jsonl (JSON lines, see README; replay:- reads standard input)",
      cxxopts::value<std::string>(), "SOURCE")
    ("d,db", "database to write (created if missing) (default: $ETWAUDIT_DB, else audit.db)", cxxopts::value<std::string>(), "FILE")
    ("duration", "stop after this long: 90s, 15m, 2h", cxxopts::value<std::string>(), "DURATION")
    ("batch-size", "commit a batch at this many events", cxxopts::value<std::size_t>()->default_value("100000"), "N")
    ("flush-ms", "...or this many ms after its first event", cxxopts::value<long>()->default_value("1000"), "MS")
    ("queue-size", "events held between source and writer; more are dropped and counted",
      cxxopts::value<std::size_t>()->default_value("262144"), "N")
    ("on-error", "a bad input record: stop (exit 1) or skip (count it and go on)",
      cxxopts::value<std::string>()->default_value("stop"), "stop|skip")
    ("include-path", "record only paths matching this glob; repeatable", cxxopts::value<std::vector<std::string>>(), "GLOB")
    ("exclude-path", "never record paths matching this glob; repeatable", cxxopts::value<std::vector<std::string>>(), "GLOB")
    ("include-process", "record only these processes (image glob or pid); repeatable",
      cxxopts::value<std::vector<std::string>>(), "PROCESS")
    ("exclude-process", "never record these processes (image glob or pid); repeatable",
      cxxopts::value<std::vector<std::string>>(), "PROCESS")
    ("op,ops", "record only these operations: a list, or the option repeated (--ops is the same)", cxxopts::value<std::vector<std::string>>(), "OP[,OP...]")
    ("keep", "prune raw events older than this (30d, 12h) while collecting; their hourly totals stay",
      cxxopts::value<std::string>(), "AGE")
    ("max-size", "prune the oldest raw events to keep the database under this size (500MB, 2GB)",
      cxxopts::value<std::string>(), "SIZE")
    ("coalesce-ms", "a process's events of one operation on one file within this many ms become one row with a "
                    "count (0: a row each)",
      cxxopts::value<long>()->default_value(std::to_string(default_coalesce_ms)), "MS")
    ("ship", "also send the events to this ClickHouse server: http://HOST:8123/?database=NAME (see etwaudit ship)",
      cxxopts::value<std::string>(), "URL")
    ("ship-interval", "with --ship: send once the oldest event waited this long",
      cxxopts::value<std::string>()->default_value("30s"), "DURATION")
    ("ship-credentials-file", "with --ship: a file with the user and the password, a line each",
      cxxopts::value<std::string>(), "FILE")
    ("ship-ca-file", "with --ship https://: trust the certificate authorities in this PEM file (Linux)",
      cxxopts::value<std::string>(), "FILE")
    ("quiet", "no live status line on the terminal (the notes at the start and the summary at the end stay)");
  // clang-format on
  add_live_source_options(options);
  return options;
}

// The command line as a request; throws UsageError (or Error, for a source
// that cannot start) before anything is written.
CollectRequest parse_collect(const cxxopts::ParseResult& args) {
  CollectRequest request;
  CollectionOptions& collection = request.collection;
  collection.batch.max_events = args["batch-size"].as<std::size_t>();
  if (collection.batch.max_events == 0) throw UsageError("--batch-size must be at least 1");
  long flush_ms = args["flush-ms"].as<long>();
  if (flush_ms <= 0) throw UsageError("--flush-ms must be positive");
  collection.batch.max_delay = std::chrono::milliseconds(flush_ms);
  collection.queue_capacity = args["queue-size"].as<std::size_t>();
  if (collection.queue_capacity < 16) throw UsageError("--queue-size must be at least 16");
  if (args.count("duration")) {
    const std::int64_t ns = duration_argument("--duration", args["duration"].as<std::string>(), "90s, 1m30s, 2h");
    collection.duration = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::nanoseconds(ns));
  }
  collection.retention = retention_arguments(args, "keep");
  const long coalesce_ms = args["coalesce-ms"].as<long>();
  if (coalesce_ms < 0 || coalesce_ms > 60'000) throw UsageError("--coalesce-ms must be from 0 to 60000");
  if (coalesce_ms > 0) collection.coalesce = std::chrono::milliseconds(coalesce_ms);
  const std::string on_error = args["on-error"].as<std::string>();
  if (on_error != "stop" && on_error != "skip")
    throw UsageError("--on-error must be stop or skip, not '" + on_error + "'");

  request.db_path = database_argument(args, DatabaseUse::create);
  if (args.count("ship")) {
    ShipRequest ship;
    ship.db_path = request.db_path;
    ship.target = parse_clickhouse_url(args["ship"].as<std::string>());
    ship.login = clickhouse_credentials(optional_argument(args, "ship-credentials-file"),
                                        optional_argument(args, "ship-ca-file"));
    ship.name = clickhouse_destination_name(ship.target);
    ship.follow = true;
    ship.interval = interval_argument(args, "ship-interval");
    request.ship = std::move(ship);
  }
  request.filter = record_filter(args);
  request.quiet = args.count("quiet") > 0;
  // A second collector is refused before its source says what it watches.
  refuse_if_collector_running(request.db_path);
  LiveSourceRequest live;
  live.database_path = request.db_path;
  live.own_pid = current_pid();
  live.ops = request.filter.ops;
  live.paths = source_path_filter(request.filter);
  request.source = make_source(args, std::move(live));
  return request;
}

// What the run did, on stderr.
void print_summary(SQLite::Database& db, std::int64_t run_id, const std::string& description,
                   const std::string& db_path, const RunStats& stats, const CollectionResult& result, double seconds) {
  char elapsed[32];
  std::snprintf(elapsed, sizeof elapsed, "%.1f s", seconds);
  // Names can arrive after the events (ETW): the run record has the count after back-fill.
  std::uint64_t unresolved = stats.unresolved;
  try {
    SQLite::Statement run(db, "SELECT unresolved FROM collector_runs WHERE run_id = ?");
    run.bind(1, run_id);
    if (run.executeStep()) unresolved = static_cast<std::uint64_t>(run.getColumn(0).getInt64());
  } catch (const std::exception&) {
    // the database failed during the run: the run's own count stands
  }
  std::cerr << "etwaudit collect: run " << run_id << " from " << description << " ended after " << elapsed << ": "
            << result.exit_reason << "\n"
            << "  received " << with_thousands(stats.received) << ", written " << with_thousands(stats.written)
            << ", dropped " << with_thousands(stats.dropped) << ", lost by source " << with_thousands(stats.lost)
            << ", excluded " << with_thousands(stats.excluded) << ", own " << with_thousands(stats.own)
            << ", unresolved " << with_thousands(unresolved) << ", bad input " << with_thousands(stats.bad_input)
            << "\n";
  if (description == "etw")
    std::cerr << "  names of files open before the start, from the kernel's rundown: "
              << with_thousands(stats.rundown_names) << "\n";
  std::cerr << "  database " << db_path << " (" << human_bytes(database_bytes(db_path)) << ")\n";
  if (result.pruned.segments > 0) {
    char longest[32];
    std::snprintf(longest, sizeof longest, "%.1f ms", result.pruned.longest_transaction.count() / 1000.0);
    std::cerr << "  pruned " << with_thousands(result.pruned.events) << " old events in "
              << with_thousands(result.pruned.transactions) << " transactions (the longest " << longest << ")\n";
    if (result.pruned.unshipped_rows > 0)
      std::cerr << "  --max-size pruned " << with_thousands(result.pruned.unshipped_rows)
                << " event rows before a destination had them (etwaudit status: pruned_unshipped)\n";
  }
}

int run_collect(CollectRequest& request) {
  const std::string& db_path = request.db_path;
  CollectionOptions& collection = request.collection;
  EventSource& source = *request.source;
  // The database is opened (and migrated) and the stop handlers installed
  // before the source starts: a live session that waited for a migration
  // would lose events, and Ctrl+C before the handlers would leave it running.
  WriteDatabase database(db_path);
  install_stop_handlers();
  try {
    source.start();
  } catch (...) {
    database.close_and_remove_if_created();  // a source that cannot start leaves nothing behind
    throw;
  }
  Catalog catalog;
  RunStats stats;
  EventWriter writer(database.db(), catalog, SelfExclusion::for_database(db_path, source.is_live() ? current_pid() : 0),
                     source.device_map());
  writer.set_filter(std::move(request.filter));
  writer.begin_run(source.description(), host_name(), current_pid(), source.is_live());
  if (const std::string clock = source.clock(); !clock.empty()) writer.set_run_clock(clock);
  if (collection.retention.enabled()) Pruner(database.db()).record_policy(collection.retention);
  // The destination's cursor exists before the first prune: --keep waits for it.
  if (request.ship) open_destination(database.db(), request.ship->name);

  collection.stop_requested = stop_requested;
  const bool show_status = !request.quiet && stderr_is_terminal();
  std::uint64_t last_received = 0;
  if (show_status) {
    collection.on_progress = [&](const RunStats& s) {
      const std::uint64_t received = s.received.load();
      StatusLine line;
      line.events_per_second = received - last_received;
      line.written = s.written;
      line.dropped = s.dropped;
      line.lost = s.lost;
      line.excluded = s.excluded;
      line.unresolved = s.unresolved;
      line.database_bytes = database_bytes(db_path);
      std::cerr << "\r\033[K" << status_line(line, stderr_columns()) << std::flush;
      last_received = received;
    };
  }
  collection.on_warning = [&](const std::string& warning) {
    std::cerr << (show_status ? "\r\033[K" : "") << "etwaudit collect: warning: " << warning << std::endl;
  };
  // --ship: a thread of its own sends what the writer commits (ShipperThread).
  std::optional<ShipperThread> shipper;
  if (request.ship)
    shipper.emplace(
        *request.ship, [&](const std::string& line) { collection.on_warning("shipping: " + line); },
        [&](const std::string& error) {
          collection.on_warning("shipping stopped: " + error + " (the events stay in the database)");
        });
  const auto started = std::chrono::steady_clock::now();
  CollectionResult result = run_collection(source, catalog, writer, stats, collection);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const ShipResult* shipped = shipper && shipper->finish() ? &*shipper->finish() : nullptr;
  if (show_status) std::cerr << "\r\033[K";

  print_summary(database.db(), writer.run_id(), source.description(), db_path, stats, result, seconds);
  if (shipped)
    std::cerr << "  shipped " << with_thousands(shipped->rows) << " event rows and "
              << with_thousands(shipped->run_rows) << " run records to " << request.ship->target.base << " database "
              << request.ship->target.database
              << (shipped->renamed_rows > 0
                      ? ", and " + with_thousands(shipped->renamed_rows) + " again with a name learned after they went"
                      : std::string())
              << "\n";
  return result.failed ? 1 : 0;
}

}  // namespace

int collect_command(int argc, const char* const* argv) {
  cxxopts::Options options = collect_options();
  const auto parsed = parse_options(options, argc, argv);
  if (!parsed) return 0;
  CollectRequest request = parse_collect(*parsed);
  return run_collect(request);
}

}  // namespace etwaudit
