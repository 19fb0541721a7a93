// etwaudit-bench: how fast the store is, against the bare SQLite limit of this
// machine, measured in one run on one event stream (see stream.h).
//
//   (a) bare    plain INSERT loop into a table without indexes: the practical
//               limit of SQLite on this machine
//   (b) naive   the same loop into the same table with the three B-tree indexes
//               a first design would add: (process, ts), (file, ts), (ts)
//   (c) etwaudit the real pipeline: a source thread interning paths and
//               processes, the bounded queue, the collector thread and the
//               EventWriter into the real schema
//
//   (d) retention  (c) with collect's --keep and --max-size pruning as it goes
//   (e) coalescing (c) with collect's --coalesce-ms: fewer rows than events
//   (f) both       (d) and (e) together: collect's defaults with --keep and --max-size
//   (g) shipping   (c) with a shipper beside it sending to a ClickHouse server
//                  (--ship-to), as collect --ship does: timed until the run's
//                  end, as (c), and until the shipper had every event
//
// (a) and (b) time only the database work; (c), (d), (e) time the whole run,
// wall clock, from opening the database to the run's closed record (not the
// last checkpoint at close, which (a) leaves out too). (a) runs before and
// after each pipeline, and each ratio is against the mean of the two beside
// it: the speed of a shared host drifts
// during a run, by as much as half between one phase and the next. Bytes per
// event are the database's size over the events it stands for (for (d), over
// the events it still keeps).

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cxxopts.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#ifndef _WIN32
#include <sys/resource.h>
#include <unistd.h>
#endif

#include "cli/shipping.h"
#include "core/catalog.h"
#include "core/human_format.h"
#include "core/time_format.h"
#include "decoder_bench.h"
#include "pipeline/collection.h"
#include "query/filters.h"
#include "query/report.h"
#include "sources/etl/etl_reader.h"
#include "sources/etl/etl_source.h"
#include "sources/etw/decoder.h"
#include "sources/event_source.h"
#include "store/database.h"
#include "store/destinations.h"
#include "store/event_writer.h"
#include "stream.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double cpu_seconds() {
#ifndef _WIN32
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
#else
  return 0;
#endif
}

double peak_rss_mb() {
#ifndef _WIN32
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;
#else
  return 0;
#endif
}

double current_rss_mb() {
  std::ifstream statm("/proc/self/statm");
  long pages_total = 0, pages_resident = 0;
  if (!(statm >> pages_total >> pages_resident)) return 0;
  return pages_resident * (sysconf(_SC_PAGESIZE) / 1048576.0);
}

std::uint64_t database_bytes(const std::string& path) {
  std::uint64_t total = 0;
  std::error_code error;
  for (const char* suffix : {"", "-wal"}) {
    auto size = fs::file_size(path + suffix, error);
    if (!error) total += size;
  }
  return total;
}

// Moves the WAL into the database file so that its size is the size on disk.
void checkpoint(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READWRITE);
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
}

struct PhaseResult {
  double seconds = 0;
  double cpu = 0;
  double ship_seconds = 0;  // (g): from the start until the shipper had every event
  double ship_cpu = 0;      // (g): the process's CPU until then
  std::uint64_t shipped = 0;
  std::uint64_t bytes = 0;        // database file after a checkpoint
  std::uint64_t rows = 0;         // event rows in the database ((c), (d), (e))
  std::uint64_t kept_events = 0;  // events those rows stand for
  etwaudit::PruneResult pruned;   // (d)
};

// (a) and (b): the same rows, integer ids for files and processes.
PhaseResult bare_insert(const std::string& path, const bench::StreamShape& shape, std::uint64_t events,
                        std::size_t batch_size, bool with_indexes) {
  fs::remove(path);
  etwaudit::configure_sqlite();  // the same process-wide settings as etwaudit's own connections
  SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE | SQLite::OPEN_NOMUTEX);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA cache_size = -32768");
  db.exec(
      "CREATE TABLE ev (ts INTEGER, process_id INTEGER, tid INTEGER, op INTEGER, file_id INTEGER, "
      "offset INTEGER, size INTEGER)");
  if (with_indexes) {
    db.exec("CREATE INDEX ev_process ON ev (process_id, ts)");
    db.exec("CREATE INDEX ev_file ON ev (file_id, ts)");
    db.exec("CREATE INDEX ev_ts ON ev (ts)");
  }
  SQLite::Statement insert(db, "INSERT INTO ev VALUES (?, ?, ?, ?, ?, ?, ?)");
  bench::Stream stream(shape);
  std::vector<bench::StreamEvent> batch;
  PhaseResult result;
  for (std::uint64_t done = 0; done < events;) {
    batch.clear();
    for (; batch.size() < batch_size && done < events; ++done) batch.push_back(stream.next());
    const auto started = Clock::now();
    const double cpu_started = cpu_seconds();
    SQLite::Transaction transaction(db);
    for (const auto& event : batch) {
      insert.bind(1, static_cast<std::int64_t>(event.time));
      insert.bind(2, static_cast<std::int64_t>(event.process + 1));
      insert.bind(3, static_cast<std::int64_t>(event.tid));
      insert.bind(4, static_cast<int>(event.op));
      insert.bind(5, static_cast<std::int64_t>(event.file + 1));
      if (event.offset >= 0)
        insert.bind(6, static_cast<std::int64_t>(event.offset));
      else
        insert.bind(6);
      if (event.size >= 0)
        insert.bind(7, static_cast<std::int64_t>(event.size));
      else
        insert.bind(7);
      insert.exec();
      insert.reset();
    }
    transaction.commit();
    result.seconds += std::chrono::duration<double>(Clock::now() - started).count();
    result.cpu += cpu_seconds() - cpu_started;
  }
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  result.bytes = database_bytes(path);
  return result;
}

// (c): the stream as an EventSource, interning strings like a real source.
class StreamSource final : public etwaudit::EventSource {
 public:
  StreamSource(const bench::StreamShape& shape, std::uint64_t events) : m_stream(shape), m_events(events) {}
  std::string description() const override { return "benchmark"; }
  bool is_live() const override { return false; }
  void run(etwaudit::BoundedQueue<etwaudit::FileEvent>& queue, etwaudit::Catalog& catalog,
           etwaudit::RunStats& stats) override {
    const auto& paths = m_stream.paths();
    const auto& processes = m_stream.processes();
    for (std::uint64_t i = 0; i < m_events && !m_stop; ++i) {
      const bench::StreamEvent next = m_stream.next();
      const bench::StreamProcess& process = processes[next.process];
      etwaudit::FileEvent event;
      event.time = next.time;
      event.offset = next.offset;
      event.size = next.size;
      event.tid = next.tid;
      event.op = static_cast<etwaudit::Op>(next.op);
      if (next.size > 0 && (event.op == etwaudit::Op::read || event.op == etwaudit::Op::write))
        m_bytes.fetch_add(static_cast<std::uint64_t>(next.size), std::memory_order_relaxed);
      event.path = catalog.intern_path(paths[next.file]);
      event.process = catalog.intern_process(process.pid, process.start_time, process.image);
      stats.received.fetch_add(1, std::memory_order_relaxed);
      if (!queue.push_waiting(event)) break;
      if ((i & 0xFFFF) == 0) m_progress = i;
    }
  }
  void stop() noexcept override { m_stop = true; }
  std::string error() const override { return {}; }
  std::uint64_t progress() const { return m_progress; }
  std::uint64_t read_write_bytes() const { return m_bytes; }

 private:
  bench::Stream m_stream;
  std::uint64_t m_events;
  std::atomic<bool> m_stop{false};
  std::atomic<std::uint64_t> m_progress{0};
  std::atomic<std::uint64_t> m_bytes{0};  // bytes of the reads and writes delivered
};

// How a pipeline run is set up beyond (c)'s defaults.
struct PipelineSetup {
  etwaudit::RetentionPolicy retention;                // (d)
  std::optional<std::chrono::milliseconds> coalesce;  // (e)
  std::optional<etwaudit::ShipRequest> ship;          // (g): a shipper beside the collector, as collect --ship runs
};

PhaseResult pipeline(const std::string& path, const bench::StreamShape& shape, std::uint64_t events,
                     std::size_t batch_size, std::vector<double>& rss_samples, std::uint64_t& max_wal_bytes,
                     const PipelineSetup& setup = {}) {
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix);
  PhaseResult result;
  const auto started = Clock::now();
  const double cpu_started = cpu_seconds();
  {
    etwaudit::WriteDatabase database(path);
    etwaudit::Catalog catalog;
    etwaudit::RunStats stats;
    etwaudit::EventWriter writer(database.db(), catalog, etwaudit::SelfExclusion::for_database(path, 0));
    writer.begin_run("benchmark", "");
    StreamSource source(shape, events);
    etwaudit::CollectionOptions options;
    options.batch.max_events = batch_size;
    options.retention = setup.retention;
    options.coalesce = setup.coalesce;
    std::uint64_t next_sample = events / 4;
    options.on_progress = [&](const etwaudit::RunStats& s) {
      std::error_code error;
      const auto wal = fs::file_size(path + "-wal", error);
      if (!error) max_wal_bytes = std::max<std::uint64_t>(max_wal_bytes, wal);
      if (s.written >= next_sample) {
        rss_samples.push_back(current_rss_mb());
        next_sample += events / 4;
      }
    };
    // (g): the shipper's thread, as collect --ship starts it.
    std::optional<etwaudit::ShipperThread> shipper;
    std::string ship_error;
    if (setup.ship) {
      etwaudit::open_destination(database.db(), setup.ship->name);
      shipper.emplace(
          *setup.ship, [](const std::string&) {}, [&](const std::string& error) { ship_error = error; });
    }
    auto outcome = etwaudit::run_collection(source, catalog, writer, stats, options);
    // The run is over with its record closed; counting the rows and the
    // last checkpoint at close are left out, as for (a).
    result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    result.cpu = cpu_seconds() - cpu_started;
    if (shipper) {
      const std::optional<etwaudit::ShipResult>& shipped = shipper->finish();
      result.ship_seconds = std::chrono::duration<double>(Clock::now() - started).count();
      result.ship_cpu = cpu_seconds() - cpu_started;
      if (!shipped) throw std::runtime_error("shipping failed: " + ship_error);
      result.shipped = shipped->rows;
    }
    if (outcome.failed) throw std::runtime_error(outcome.exit_reason);
    result.rows = static_cast<std::uint64_t>(database.db().execAndGet("SELECT count(*) FROM events").getInt64());
    result.kept_events = static_cast<std::uint64_t>(
        database.db()
            .execAndGet("SELECT coalesce(sum(a.events), 0) FROM activity a JOIN segments s USING (segment_id) "
                        "WHERE s.pruned IS NULL")
            .getInt64());  // (the activity rows of pruned segments are totals)
    result.pruned = outcome.pruned;
    if (stats.written != events)
      throw std::runtime_error("pipeline wrote " + std::to_string(stats.written.load()) + " events");
    rss_samples.push_back(current_rss_mb());
  }
  checkpoint(path);
  result.bytes = database_bytes(path);
  return result;
}

void print_phase(const char* name, const PhaseResult& result, std::uint64_t events) {
  const double stored = result.kept_events ? static_cast<double>(result.kept_events) : static_cast<double>(events);
  std::printf("%-15s %10.0f events/s  %7.2f s  cpu %5.2f us/event  %6.1f bytes/event", name, events / result.seconds,
              result.seconds, result.cpu * 1e6 / events, static_cast<double>(result.bytes) / stored);
  if (result.rows) std::printf("  %5.3f rows/event", result.rows / stored);
  if (result.pruned.transactions)
    std::printf(
        "\n%15s pruned %llu events in %llu transactions, %.2f s in all, the longest %.1f ms (%s); %.0f MB on disk", "",
        static_cast<unsigned long long>(result.pruned.events),
        static_cast<unsigned long long>(result.pruned.transactions), result.pruned.total_time.count() / 1e6,
        result.pruned.longest_transaction.count() / 1000.0, result.pruned.longest_work, result.bytes / 1048576.0);
  std::printf("\n");
}

// Times reading one .etl file three ways: the reader alone, reader and
// decoder, and the whole import into a new database. Best of three each.
void import_benchmark(const std::string& trace, const fs::path& dir) {
  struct Sink final : etwaudit::FileEventSink {
    std::uint64_t events = 0;
    void deliver(const etwaudit::FileEvent&) override { ++events; }
  };
  std::uint64_t records = 0, bytes = 0, events = 0;
  auto best_of_three = [](auto&& run) {
    double best = 1e9;
    for (int attempt = 0; attempt < 3; ++attempt) {
      const auto started = Clock::now();
      run();
      best = std::min(best, std::chrono::duration<double>(Clock::now() - started).count());
    }
    return best;
  };
  const double parse = best_of_three([&] {
    etwaudit::EtlReader reader(trace);
    etwaudit::RawRecord record;
    std::uint64_t payload = 0;
    while (reader.next(record)) payload += record.payload_size;
    records = reader.counters().records;
    // Buffers as the logger filled them: decompressed, or read as they are.
    const auto& counters = reader.counters();
    bytes =
        counters.bytes_decompressed + (counters.buffers - counters.compressed_buffers) * reader.header().buffer_size;
    (void)payload;
  });
  const double decode = best_of_three([&] {
    etwaudit::EtlReader reader(trace);
    etwaudit::Catalog catalog;
    Sink sink;
    etwaudit::EtwDecoder decoder(catalog, sink);
    etwaudit::RawRecord record;
    while (reader.next(record)) decoder.decode(record);
    events = sink.events;
  });
  const std::string db = (dir / "import.db").string();
  const double import = best_of_three([&] {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db + suffix);
    etwaudit::WriteDatabase database(db);
    etwaudit::Catalog catalog;
    etwaudit::RunStats stats;
    etwaudit::EtlSource source(trace, etwaudit::OnBadInput::stop);
    etwaudit::EventWriter writer(database.db(), catalog, etwaudit::SelfExclusion{});
    writer.begin_run(source.description(), "");
    auto result = etwaudit::run_collection(source, catalog, writer, stats, etwaudit::CollectionOptions{});
    if (result.failed) throw std::runtime_error(result.exit_reason);
  });
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db + suffix);
  const double mb = bytes / 1048576.0;
  std::printf("%s: %llu records, %.1f MB of buffers, %llu file and disk events\n", trace.c_str(),
              static_cast<unsigned long long>(records), mb, static_cast<unsigned long long>(events));
  std::printf("%-22s %8.1f ms %12.0f records/s %8.0f MB/s\n", "parse only", parse * 1e3, records / parse, mb / parse);
  std::printf("%-22s %8.1f ms %12.0f records/s %8.0f MB/s\n", "parse and decode", decode * 1e3, records / decode,
              mb / decode);
  std::printf("%-22s %8.1f ms %12.0f records/s %8.0f MB/s\n", "import into a database", import * 1e3, records / import,
              mb / import);
}

// Times every report on an existing database: over all of it, and over one
// hour with one path or one process, as people ask.
// The files and the process both query benchmarks ask about: the busiest
// file, one of middling popularity (a tenth of the way down the files by
// events) and the busiest process (its process_id).
struct Landmarks {
  std::string busy_path, typical_path, busy_process_id;
};
Landmarks find_landmarks(SQLite::Database& db) {
  auto text = [&](const std::string& sql) { return db.execAndGet(sql).getString(); };
  Landmarks found;
  found.busy_path = text(
      "SELECT path FROM files WHERE file_id = (SELECT file_id FROM activity GROUP BY file_id ORDER BY sum(events) DESC "
      "LIMIT 1)");
  found.typical_path = text(
      "SELECT path FROM files WHERE file_id = (SELECT file_id FROM activity GROUP BY file_id ORDER BY sum(events) DESC "
      "LIMIT 1 OFFSET (SELECT count(DISTINCT file_id) / 10 FROM activity))");
  found.busy_process_id = text("SELECT process_id FROM activity GROUP BY process_id ORDER BY sum(events) DESC LIMIT 1");
  return found;
}

void query_benchmark(const std::string& path) {
  auto db = etwaudit::open_read_only(path);
  etwaudit::prepare_read_connection(*db);
  auto text = [&](const std::string& sql) { return db->execAndGet(sql).getString(); };
  auto number = [&](const std::string& sql) { return db->execAndGet(sql).getInt64(); };
  const std::int64_t events = number("SELECT count(*) FROM events");
  const std::int64_t first_hour = number("SELECT min(hour) FROM segments");
  const std::int64_t last_hour = number("SELECT max(hour) FROM segments");
  // An hour in the middle, not aligned to the hour, as "--since 1h" would give.
  const std::int64_t hour = (first_hour + last_hour) / 2;
  const std::int64_t since = hour * etwaudit::ns_per_hour + 1397 * etwaudit::ns_per_second + 123456789;
  const std::int64_t until = since + etwaudit::ns_per_hour;
  const Landmarks landmarks = find_landmarks(*db);
  const std::string& busy_path = landmarks.busy_path;
  const std::string& typical_path = landmarks.typical_path;
  const std::string busy_pid = text("SELECT pid FROM processes WHERE process_id = " + landmarks.busy_process_id);
  std::printf("database %s: %lld events, hours %s .. %s\n", path.c_str(), static_cast<long long>(events),
              etwaudit::format_iso8601(first_hour * etwaudit::ns_per_hour).c_str(),
              etwaudit::format_iso8601(last_hour * etwaudit::ns_per_hour).c_str());
  std::printf("one hour: %s; busy path %s; typical path %s; busy pid %s\n\n", etwaudit::format_iso8601(since).c_str(),
              busy_path.c_str(), typical_path.c_str(), busy_pid.c_str());

  struct Case {
    std::string report;
    std::string scope;
    etwaudit::QueryFilters filters;
    etwaudit::Params params;
  };
  auto windowed = [&](etwaudit::QueryFilters filters) {
    filters.since = since;
    filters.until = until;
    return filters;
  };
  etwaudit::QueryFilters all, busy_file, typical_file, busy_process;
  busy_file.path = busy_path;
  typical_file.path = typical_path;
  busy_process.process = busy_pid;
  std::vector<Case> cases;
  for (const char* report : {"summary", "top-files", "top-processes", "timeline"})
    cases.push_back({report, "whole database", all, {}});
  cases.push_back(
      {"timeline", "whole database, --bucket 1d", all, {{"bucket", std::to_string(24 * etwaudit::ns_per_hour)}}});
  for (const etwaudit::Report& report : etwaudit::reports()) {
    cases.push_back({report.name, "1 hour", windowed(all), {}});
    if (report.argument != "process") {
      cases.push_back({report.name, "1 hour, busy path", windowed(busy_file), {}});
      cases.push_back({report.name, "1 hour, typical path", windowed(typical_file), {}});
    }
    if (report.argument != "path") cases.push_back({report.name, "1 hour, busy process", windowed(busy_process), {}});
  }
  cases.push_back(
      {"timeline", "1 hour, --bucket 1m", windowed(all), {{"bucket", std::to_string(60 * etwaudit::ns_per_second)}}});
  cases.push_back({"file-history", "whole database, typical path", typical_file, {}});
  cases.push_back({"process-activity", "whole database, busy process", busy_process, {}});

  std::printf("%-18s %-32s %9s %7s\n", "report", "scope", "ms", "rows");
  for (Case& c : cases) {
    const etwaudit::Report* report = etwaudit::find_report(c.report);
    if (c.params.count("bucket") == 0) c.params["bucket"] = std::to_string(etwaudit::ns_per_hour);
    double best = 1e9;
    std::size_t rows = 0;
    for (int attempt = 0; attempt < 3; ++attempt) {
      const auto started = Clock::now();
      auto results = etwaudit::run_statements(*db, report->sections, c.filters, c.params);
      best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - started).count());
      rows = 0;
      for (const auto& table : results) rows += table.rows.size();
    }
    std::printf("%-18s %-32s %9.1f %7zu\n", c.report.c_str(), c.scope.c_str(), best, rows);
  }
}

// Replays what DB Browser for SQLite 3.12 sends for each thing its user does
// (read from its source, tag v3.12.2): opening a table or view runs
//   SELECT COUNT(*) FROM "main"."v"  and  SELECT "_rowid_",* FROM "main"."v" LIMIT 0, 49999;
// (the first chunk, every row of it stepped); a filter box or a header click
// runs both again with its WHERE or ORDER BY. Each action against its goal
// (doc/performance.md, "Browsing in a SQLite browser").
void views_benchmark(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  auto text = [&](const std::string& sql) { return db.execAndGet(sql).getString(); };
  auto quoted = [](std::string value) {
    for (std::size_t at = value.find('\''); at != std::string::npos; at = value.find('\'', at + 2))
      value.insert(at, 1, '\'');
    return "'" + value + "'";
  };
  // A contains filter as DB4S writes it: its escape character is '\'.
  auto contains = [&](const std::string& column, std::string fragment) {
    for (std::size_t at = fragment.find_first_of("\\%_"); at != std::string::npos;
         at = fragment.find_first_of("\\%_", at + 2))
      fragment.insert(at, 1, '\\');
    return "\"" + column + "\" LIKE " + quoted("%" + fragment + "%") + " ESCAPE '\\'";
  };
  const Landmarks landmarks = find_landmarks(db);
  const std::string image = text("SELECT image FROM processes WHERE process_id = " + landmarks.busy_process_id);
  const std::string pid = text("SELECT pid FROM processes WHERE process_id = " + landmarks.busy_process_id);
  const std::string name = landmarks.typical_path.substr(landmarks.typical_path.find_last_of("\\/") + 1);
  const std::string program = image.substr(image.find_last_of("\\/") + 1);
  const std::string minute = text("SELECT (min(id) + max(id)) / 2 / 60000000000 * 60000000000 FROM events");
  const std::string minute_end = std::to_string(std::stoll(minute) + 60 * etwaudit::ns_per_second - 1);
  const std::string hour_text = text("SELECT strftime('%Y-%m-%dT%H', " + minute + " / 1000000000, 'unixepoch')");
  std::printf("database %s\nbusy path %s; typical path %s; busy process %s (pid %s)\n\n", path.c_str(),
              landmarks.busy_path.c_str(), landmarks.typical_path.c_str(), image.c_str(), pid.c_str());
  struct Action {
    std::string view, what, where, order;
    double goal_ms;
  };
  const std::vector<Action> actions = {
      {"v_file_totals", "open", "", "", 300},
      {"v_file_totals", "path contains '" + name + "'", contains("path", name), "", 300},
      {"v_file_totals", "sort by write_bytes", "", "\"write_bytes\" DESC", 300},
      {"v_file_totals", "sort by last_seen", "", "\"last_seen\" DESC", 300},
      {"v_process_totals", "open", "", "", 300},
      {"v_process_totals", "process contains '" + program + "'", contains("process", program), "", 300},
      {"v_process_totals", "sort by read_bytes", "", "\"read_bytes\" DESC", 300},
      {"v_process_file_totals", "open", "", "", 300},
      {"v_process_file_totals", "path contains '" + name + "'", contains("path", name), "", 300},
      {"v_process_file_totals", "process contains '" + program + "'", contains("process", program), "", 300},
      {"v_process_file_totals", "sort by events", "", "\"events\" DESC", 300},
      {"v_runs", "open", "", "", 300},
      {"v_events", "open", "", "", 1000},
      {"v_events", "path = typical", "\"path\" = " + quoted(landmarks.typical_path), "", 1000},
      {"v_events", "path = busiest", "\"path\" = " + quoted(landmarks.busy_path), "", 1000},
      {"v_events", "process = busiest", "\"process\" = " + quoted(image), "", 1000},
      {"v_events", "pid = busiest", "\"pid\" = " + quoted(pid), "", 1000},
      {"v_events", "time like '" + hour_text + "%'", "\"time\" LIKE " + quoted(hour_text + "%") + " ESCAPE '\\'", "",
       100},
      {"v_events", "time_ns a minute (a~b)", "\"time_ns\" >= " + minute + " AND \"time_ns\" <= " + minute_end, "", 100},
      {"v_events", "sort by time_ns, newest first", "", "\"time_ns\" DESC", 1000},
  };
  std::printf("%-22s %-34s %9s %9s %9s %8s %10s\n", "view", "action", "count ms", "chunk ms", "total ms", "goal ms",
              "rows");
  for (const Action& action : actions) {
    const std::string from =
        "FROM \"main\".\"" + action.view + "\"" + (action.where.empty() ? "" : " WHERE " + action.where);
    auto started = Clock::now();
    const std::int64_t rows = db.execAndGet("SELECT COUNT(*) " + from).getInt64();
    const double count_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    started = Clock::now();
    SQLite::Statement chunk(db, "SELECT \"_rowid_\",* " + from +
                                    (action.order.empty() ? "" : " ORDER BY " + action.order) + " LIMIT 0, 49999;");
    while (chunk.executeStep()) {
    }
    const double chunk_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    const double total = count_ms + chunk_ms;
    std::printf("%-22s %-34s %9.1f %9.1f %9.1f %8.0f %10lld%s\n", action.view.c_str(),
                action.what.substr(0, 34).c_str(), count_ms, chunk_ms, total, action.goal_ms,
                static_cast<long long>(rows), total <= action.goal_ms ? "" : "  over");
  }
}

}  // namespace

// ---- soak: weeks of activity compressed in time --------------------------

struct SoakSetup {
  double days = 60;                     // simulated time
  etwaudit::RetentionPolicy retention;  // the run with retention on
  long coalesce_ms = 100;
};

struct SoakRun {
  double seconds = 0;
  std::uint64_t events = 0;
  std::uint64_t read_write_bytes = 0;
  std::vector<std::pair<double, std::uint64_t>> sizes;  // (simulated day, database file bytes)
  std::uint64_t max_file_bytes = 0;
  std::uint64_t queries = 0, query_errors = 0;
  double slowest_query_ms = 0;
  double longest_lock_wait_ms = 0;  // another connection's wait for the write lock
  std::string first_error;
  etwaudit::PruneResult pruned;
};

// Runs the stream into path with queries and a write-lock probe beside it.
SoakRun soak_run(const std::string& path, bench::StreamShape shape, std::uint64_t events, const SoakSetup& setup,
                 bool retention) {
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix);
  SoakRun run;
  std::atomic<bool> done{false};
  std::mutex mutex;  // guards run's reader figures
  etwaudit::WriteDatabase database(path);
  // Readers: the reports people run, over and over, each on its own connection.
  auto reader = [&](int which) {
    const char* reports[] = {"top-files", "top-processes", "timeline", "summary", "recent", "process-activity"};
    for (int round = 0; !done; ++round) {
      const char* name = reports[(round + which) % 6];
      const auto started = Clock::now();
      try {
        auto db = etwaudit::open_read_only(path);
        etwaudit::prepare_read_connection(*db);
        etwaudit::QueryFilters filters;
        if (std::string(name) == "process-activity") filters.process = "*";
        etwaudit::Params params{{"bucket", std::to_string(etwaudit::ns_per_hour)}, {"limit", "20"}};
        etwaudit::run_statements(*db, etwaudit::find_report(name)->sections, filters, params);
        std::lock_guard lock(mutex);
        ++run.queries;
        run.slowest_query_ms =
            std::max(run.slowest_query_ms, std::chrono::duration<double, std::milli>(Clock::now() - started).count());
      } catch (const std::exception& e) {
        std::lock_guard lock(mutex);
        ++run.query_errors;
        if (run.first_error.empty()) run.first_error = std::string(name) + ": " + e.what();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  };
  // What another program waiting for the write lock sees.
  auto probe = [&] {
    SQLite::Database db(path, SQLite::OPEN_READWRITE);
    db.exec("PRAGMA busy_timeout = 60000");
    while (!done) {
      const auto started = Clock::now();
      db.exec("BEGIN IMMEDIATE");
      const double waited = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
      db.exec("ROLLBACK");
      {
        std::lock_guard lock(mutex);
        run.longest_lock_wait_ms = std::max(run.longest_lock_wait_ms, waited);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  };
  std::vector<std::thread> helpers;
  helpers.emplace_back(reader, 0);
  helpers.emplace_back(reader, 3);
  helpers.emplace_back(probe);

  shape.daily_cycle = true;
  StreamSource source(shape, events);
  etwaudit::Catalog catalog;
  etwaudit::RunStats stats;
  etwaudit::EventWriter writer(database.db(), catalog, etwaudit::SelfExclusion::for_database(path, 0));
  writer.begin_run("soak", "");
  etwaudit::CollectionOptions options;
  options.coalesce = std::chrono::milliseconds(setup.coalesce_ms);
  if (retention) options.retention = setup.retention;
  std::int64_t first_time = 0;
  options.on_progress = [&](const etwaudit::RunStats&) {
    const std::int64_t newest = writer.last_event_time();
    if (newest == INT64_MIN) return;
    if (first_time == 0) first_time = newest;
    std::error_code error;
    const auto bytes = fs::file_size(path, error);
    if (error) return;
    run.sizes.emplace_back(static_cast<double>(newest - first_time) / (86'400 * 1e9), bytes);
    run.max_file_bytes = std::max<std::uint64_t>(run.max_file_bytes, bytes);
  };
  const auto started = Clock::now();
  auto outcome = etwaudit::run_collection(source, catalog, writer, stats, options);
  run.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  done = true;
  for (auto& helper : helpers) helper.join();
  if (outcome.failed) throw std::runtime_error(outcome.exit_reason);
  run.events = stats.written;
  run.read_write_bytes = source.read_write_bytes();
  run.pruned = outcome.pruned;
  run.max_file_bytes = std::max<std::uint64_t>(run.max_file_bytes, fs::file_size(path));
  return run;
}

// Checks that the totals of what was written, kept and pruned agree with a
// recount. Returns the lines that disagree (none: all agree).
std::vector<std::string> soak_recount(const std::string& path, const SoakRun& run) {
  auto db = etwaudit::open_read_only(path);
  auto number = [&](const std::string& sql) { return db->execAndGet(sql).getInt64(); };
  std::vector<std::string> wrong;
  auto expect = [&](const char* what, std::int64_t got, std::int64_t expected) {
    std::printf("  %-58s %14lld %s\n", what, static_cast<long long>(got), got == expected ? "ok" : "WRONG");
    if (got != expected)
      wrong.push_back(std::string(what) + ": " + std::to_string(got) + ", expected " + std::to_string(expected));
  };
  const auto events = static_cast<std::int64_t>(run.events);
  expect("events written (run record)", number("SELECT events_written FROM collector_runs"), events);
  expect("events in minute_totals", number("SELECT sum(events) FROM minute_totals"), events);
  expect("events in hour_totals + kept activity + totals dropped for the cap",
         number("SELECT (SELECT coalesce(sum(events), 0) FROM hour_totals) + (SELECT coalesce(sum(events), 0) FROM "
                "activity) + (SELECT totals_pruned_events FROM retention)"),
         events);
  expect("read+write bytes in minute_totals",
         number("SELECT coalesce(sum(bytes), 0) FROM minute_totals WHERE op IN (0, 1)"),
         static_cast<std::int64_t>(run.read_write_bytes));
  if (number("SELECT totals_pruned_before IS NULL FROM retention"))
    expect("read+write bytes in hour_totals + kept activity",
           number("SELECT (SELECT coalesce(sum(read_bytes + write_bytes), 0) FROM hour_totals) + "
                  "(SELECT coalesce(sum(read_bytes + write_bytes), 0) FROM activity)"),
           static_cast<std::int64_t>(run.read_write_bytes));
  // (The activity rows of pruned segments alone in their hour are totals too.)
  const std::int64_t kept_events = number(
      "SELECT coalesce(sum(a.events), 0) FROM segments s JOIN activity a ON a.segment_id = s.segment_id "
      "WHERE s.pruned IS NULL");
  expect("kept events recounted from the events table",
         number("SELECT coalesce(sum(coalesce(count, 1)), 0) FROM events"), kept_events);
  expect("kept rows recounted from the events table", number("SELECT count(*) FROM events"),
         number("SELECT coalesce(sum(events), 0) FROM segments WHERE pruned IS NULL"));
  expect("pruned + kept events", number("SELECT pruned_events FROM retention") + kept_events, events);
  return wrong;
}

int soak(const bench::StreamShape& shape, const SoakSetup& setup, const fs::path& dir) {
  const auto events = static_cast<std::uint64_t>(setup.days * 86'400 * shape.rate);
  std::printf(
      "soak: %.0f days at a mean %.1f events/s with a daily cycle = %llu events, coalescing %ld ms; "
      "retention --keep %.0fh --max-size %s\n",
      setup.days, shape.rate, static_cast<unsigned long long>(events), setup.coalesce_ms,
      static_cast<double>(*setup.retention.keep_ns) / etwaudit::ns_per_hour,
      etwaudit::human_bytes(*setup.retention.max_bytes).c_str());
  const std::string on_path = (dir / "soak-retention.db").string(), off_path = (dir / "soak-plain.db").string();
  const SoakRun on = soak_run(on_path, shape, events, setup, true);
  const SoakRun off = soak_run(off_path, shape, events, setup, false);
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(off_path + suffix);

  std::printf("\ndatabase file by simulated day (retention on | off):\n");
  const std::size_t rows = 12;
  for (std::size_t i = 1; i <= rows; ++i) {
    auto at = [&](const SoakRun& run) {
      return run.sizes.empty() ? std::pair<double, std::uint64_t>{0, 0} : run.sizes[(run.sizes.size() - 1) * i / rows];
    };
    std::printf("  day %5.1f  %9.1f MB | day %5.1f  %9.1f MB\n", at(on).first, at(on).second / 1048576.0, at(off).first,
                at(off).second / 1048576.0);
  }
  const double ratio = (on.events / on.seconds) / (off.events / off.seconds);
  std::printf("\nevents/s: retention on %.0f, off %.0f, ratio %.2f (goal >= 0.90)\n", on.events / on.seconds,
              off.events / off.seconds, ratio);
  std::printf("largest database file: %.1f MB with a cap of %.1f MB%s\n", on.max_file_bytes / 1048576.0,
              *setup.retention.max_bytes / 1048576.0,
              on.max_file_bytes <= *setup.retention.max_bytes ? "" : " (OVER THE CAP)");
  std::printf(
      "pruned %llu events in %llu transactions, %.1f s in all; longest prune transaction %.1f ms (%s), longest "
      "checkpoint after one %.1f ms (without the lock); longest wait of another connection for the write lock "
      "%.1f ms\n",
      static_cast<unsigned long long>(on.pruned.events), static_cast<unsigned long long>(on.pruned.transactions),
      on.pruned.total_time.count() / 1e6, on.pruned.longest_transaction.count() / 1000.0, on.pruned.longest_work,
      on.pruned.longest_checkpoint.count() / 1000.0, on.longest_lock_wait_ms);
  std::printf("queries during the run: %llu, errors %llu%s%s, slowest %.0f ms\n",
              static_cast<unsigned long long>(on.queries), static_cast<unsigned long long>(on.query_errors),
              on.first_error.empty() ? "" : ": ", on.first_error.c_str(), on.slowest_query_ms);

  std::printf("\nreports over the whole database at the end (best of 3):\n");
  {
    auto db = etwaudit::open_read_only(on_path);
    etwaudit::prepare_read_connection(*db);
    for (const char* name : {"top-files", "top-processes", "timeline", "summary", "recent", "gaps"}) {
      double best = 1e9;
      for (int attempt = 0; attempt < 3; ++attempt) {
        const auto started = Clock::now();
        etwaudit::run_statements(*db, etwaudit::find_report(name)->sections, {},
                                 {{"bucket", std::to_string(24 * etwaudit::ns_per_hour)}});
        best = std::min(best, std::chrono::duration<double, std::milli>(Clock::now() - started).count());
      }
      std::printf("  %-16s %8.1f ms\n", name, best);
    }
  }
  std::printf("\ntotals against a recount:\n");
  const auto wrong = soak_recount(on_path, on);
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(on_path + suffix);

  bool held = wrong.empty() && on.query_errors == 0 && on.max_file_bytes <= *setup.retention.max_bytes;
  std::printf("\nsoak: %s\n", held ? "held" : "FAILED");
  if (ratio < 0.9) std::printf("soak: note: the ratio is below its goal of 0.90\n");
  return held ? 0 : 1;
}

int main(int argc, char** argv) {
  cxxopts::Options options("etwaudit-bench",
                           "Measures the etwaudit store against bare SQLite on one synthetic stream.\n\n"
                           "The stream models a busy machine: a few hundred processes with Zipf activity working\n"
                           "in bursts, each on its own Zipf-popular files plus files all share (DLLs, fonts), in\n"
                           "runs of sequential reads or writes framed by open/close; time only moves forward.");
  options.set_width(110);
  // clang-format off
  options.add_options()
    ("events", "events in the stream", cxxopts::value<std::uint64_t>()->default_value("10000000"), "N")
    ("processes", "distinct processes", cxxopts::value<std::size_t>()->default_value("300"), "N")
    ("files", "distinct paths", cxxopts::value<std::size_t>()->default_value("50000"), "N")
    ("rate", "events per simulated second", cxxopts::value<double>()->default_value("2000"), "N")
    ("batch-size", "events per transaction, in all three runs", cxxopts::value<std::size_t>()->default_value("100000"), "N")
    ("db", "keep the database of the etwaudit run here (for query benchmarks)", cxxopts::value<std::string>(), "FILE")
    ("dir", "directory for the benchmark databases", cxxopts::value<std::string>(), "DIR")
    ("skip-naive", "skip (b), the slow indexed insert")
    ("keep", "(d): prune events older than this much simulated time", cxxopts::value<std::string>()->default_value("30m"), "AGE")
    ("max-size", "(d): and keep the database under this size", cxxopts::value<std::string>()->default_value("200MB"), "SIZE")
    ("coalesce-ms", "(e): the coalescing window", cxxopts::value<long>()->default_value("100"), "MS")
    ("soak", "simulate DAYS of activity compressed in time, with retention (--keep, --max-size) and queries; "
             "--rate is then the mean events per simulated second", cxxopts::value<double>(), "DAYS")
    ("only", "run only these of a,b,c,d,e,f,g", cxxopts::value<std::string>()->default_value("abcdefg"), "RUNS")
    ("ship-to", "(g): ship to this ClickHouse server while collecting, as collect --ship does: "
                "http://HOST:PORT/?database=NAME (tools/bench-shipping.sh starts one)", cxxopts::value<std::string>(), "URL")
    ("ship-max-rate", "(g): the shipper's --max-rate (0: as fast as it goes, the most it takes from the collector)",
      cxxopts::value<std::uint64_t>()->default_value("0"), "EVENTS/S")
    ("queries", "time every report on the --db database (made first, by (c), if it does not exist)")
    ("views", "replay what DB Browser for SQLite sends to open, filter and sort the views of the --db database "
              "(made first, as for --queries)")
    ("import", "time reading, decoding and importing this .etl file instead", cxxopts::value<std::string>(), "FILE")
    ("decoder", "time the ETW decoder on N synthetic FileIo operations, with and without their OperationEnd",
      cxxopts::value<std::uint64_t>(), "N")
    ("h,help", "show this help");
  // clang-format on
  try {
    auto args = options.parse(argc, argv);
    if (args.count("help")) {
      std::cout << options.help();
      return 0;
    }
    bench::StreamShape shape;
    shape.processes = args["processes"].as<std::size_t>();
    shape.files = args["files"].as<std::size_t>();
    shape.rate = args["rate"].as<double>();
    const std::uint64_t events = args["events"].as<std::uint64_t>();
    const std::size_t batch_size = args["batch-size"].as<std::size_t>();
    if (events == 0 || batch_size == 0 || shape.processes == 0 || shape.files < shape.processes || shape.rate <= 0) {
      std::cerr << "etwaudit-bench: --events and --batch-size must be positive, --files >= --processes > 0\n";
      return 2;
    }
    if (args.count("soak")) {
      SoakSetup setup;
      setup.days = args["soak"].as<double>();
      setup.retention.keep_ns = etwaudit::parse_duration(args["keep"].as<std::string>());
      setup.retention.max_bytes = etwaudit::parse_byte_size(args["max-size"].as<std::string>());
      setup.coalesce_ms = args["coalesce-ms"].as<long>();
      if (!setup.retention.keep_ns || !setup.retention.max_bytes || setup.days <= 0) {
        std::cerr << "etwaudit-bench: --soak needs positive DAYS, a --keep duration and a --max-size\n";
        return 2;
      }
      const fs::path dir = args.count("dir")
                               ? fs::path(args["dir"].as<std::string>())
                               : fs::temp_directory_path() / ("etwaudit-soak-" + std::to_string(getpid()));
      fs::create_directories(dir);
      const int status = soak(shape, setup, dir);
      if (!args.count("dir")) fs::remove_all(dir);
      return status;
    }
    if (args.count("decoder")) return bench::decoder_benchmark(args["decoder"].as<std::uint64_t>());
    if (args.count("import")) {
      const fs::path dir = fs::temp_directory_path() / ("etwaudit-bench-" + std::to_string(getpid()));
      fs::create_directories(dir);
      import_benchmark(args["import"].as<std::string>(), dir);
      fs::remove_all(dir);
      return 0;
    }
    if (args.count("queries") || args.count("views")) {
      if (!args.count("db")) {
        std::cerr << "etwaudit-bench: --queries and --views need --db\n";
        return 2;
      }
      const std::string db = args["db"].as<std::string>();
      if (!fs::exists(db)) {
        std::vector<double> rss;
        std::uint64_t wal = 0;
        std::printf("making %s: %llu events at %.0f events/s simulated\n", db.c_str(),
                    static_cast<unsigned long long>(events), shape.rate);
        pipeline(db, shape, events, batch_size, rss, wal);
      }
      if (args.count("views"))
        views_benchmark(db);
      else
        query_benchmark(db);
      return 0;
    }
    const fs::path dir = args.count("dir") ? fs::path(args["dir"].as<std::string>())
                                           : fs::temp_directory_path() / ("etwaudit-bench-" + std::to_string(getpid()));
    fs::create_directories(dir);
    const std::string pipeline_db = args.count("db") ? args["db"].as<std::string>() : (dir / "etwaudit.db").string();

    std::printf("stream: %llu events, %zu processes, %zu files, %.0f events/s simulated, batches of %zu\n",
                static_cast<unsigned long long>(events), shape.processes, shape.files, shape.rate, batch_size);
    const std::string only = args["only"].as<std::string>();
    auto runs = [&](char phase) { return only.find(phase) != std::string::npos; };
    if (!runs('a') || !runs('c')) {
      std::cerr << "etwaudit-bench: --only needs a and c (the ratios are against them)\n";
      return 2;
    }
    PipelineSetup with_retention, with_coalescing;
    with_retention.retention.keep_ns = etwaudit::parse_duration(args["keep"].as<std::string>());
    with_retention.retention.max_bytes = etwaudit::parse_byte_size(args["max-size"].as<std::string>());
    if (!with_retention.retention.keep_ns || !with_retention.retention.max_bytes) {
      std::cerr << "etwaudit-bench: --keep or --max-size is not a duration or a size\n";
      return 2;
    }
    with_coalescing.coalesce = std::chrono::milliseconds(args["coalesce-ms"].as<long>());
    PipelineSetup with_both = with_retention;
    with_both.coalesce = with_coalescing.coalesce;
    PipelineSetup with_shipping;
    const bool shipping = args.count("ship-to") && runs('g');
    if (shipping) {
      etwaudit::ShipRequest ship;
      ship.db_path = (dir / "shipping.db").string();
      ship.target = etwaudit::parse_clickhouse_url(args["ship-to"].as<std::string>());
      ship.name = etwaudit::clickhouse_destination_name(ship.target);
      ship.follow = true;
      ship.max_rate = args["ship-max-rate"].as<std::uint64_t>();
      etwaudit::create_clickhouse_tables(ship.target, ship.login);
      with_shipping.ship = ship;
    }
    // The cap of (d) holds far more coalesced rows: scale it so that (f) prunes as much.
    with_both.retention.max_bytes = *with_retention.retention.max_bytes / 3;

    std::vector<double> rss_samples, unused_rss;
    std::uint64_t max_wal_bytes = 0, unused_wal = 0;
    // The host's speed drifts during a run: (a) runs before and after each
    // pipeline, and each ratio is against the mean of the two beside it.
    std::vector<PhaseResult> bare;
    auto bare_run = [&] { bare.push_back(bare_insert((dir / "bare.db").string(), shape, events, batch_size, false)); };
    auto bare_eps = [&](std::size_t i) { return events / bare[i].seconds; };
    // events/s of a pipeline against the bare runs before (i) and after it.
    auto ratio = [&](const PhaseResult& p, std::size_t i) {
      return events / p.seconds / ((bare_eps(i) + bare_eps(i + 1)) / 2);
    };
    bare_run();
    const PhaseResult c = pipeline(pipeline_db, shape, events, batch_size, rss_samples, max_wal_bytes);
    const double peak_rss = peak_rss_mb();
    bare_run();
    PhaseResult d, e, f;
    std::size_t d_at = 0, e_at = 0, f_at = 0;  // the bare run before each
    // A pipeline between two bare runs; before: the index of the first.
    auto beside_bare = [&](const char* file, const PipelineSetup& setup, std::size_t& before) {
      before = bare.size() - 1;
      const PhaseResult result =
          pipeline((dir / file).string(), shape, events, batch_size, unused_rss, unused_wal, setup);
      bare_run();
      return result;
    };
    if (runs('d')) d = beside_bare("retention.db", with_retention, d_at);
    if (runs('e')) e = beside_bare("coalescing.db", with_coalescing, e_at);
    if (runs('f')) f = beside_bare("both.db", with_both, f_at);
    PhaseResult g;
    std::size_t g_at = 0;
    if (shipping) g = beside_bare("shipping.db", with_shipping, g_at);
    PhaseResult a = bare.front();  // the figures of the bare runs together
    a.seconds = a.cpu = 0;
    double slowest = 1e300, fastest = 0;
    for (std::size_t i = 0; i < bare.size(); ++i) {
      a.seconds += bare[i].seconds / bare.size();
      a.cpu += bare[i].cpu / bare.size();
      slowest = std::min(slowest, bare_eps(i));
      fastest = std::max(fastest, bare_eps(i));
    }
    PhaseResult b;
    const bool naive = runs('b') && !args.count("skip-naive");
    if (naive) b = bare_insert((dir / "naive.db").string(), shape, events, batch_size, true);

    print_phase("(a) bare", a, events);
    std::printf("%15s mean of %zu runs, one before and after each pipeline: %.0f to %.0f events/s\n", "", bare.size(),
                slowest, fastest);
    if (naive) print_phase("(b) naive", b, events);
    print_phase("(c) etwaudit", c, events);
    if (runs('d')) print_phase("(d) retention", d, events);
    if (runs('e')) print_phase("(e) coalescing", e, events);
    if (runs('f')) print_phase("(f) both", f, events);
    if (shipping) {
      print_phase("(g) shipping", g, events);
      std::printf("%15s shipped %llu rows in %.2f s from the start (%.0f rows/s); cpu %+.2f us/event over (c)\n", "",
                  static_cast<unsigned long long>(g.shipped), g.ship_seconds, g.shipped / g.ship_seconds,
                  (g.ship_cpu - c.cpu) * 1e6 / events);
    }
    const double c_eps = events / c.seconds;
    std::printf("ratio c/a %.2f", ratio(c, 0));
    if (naive) std::printf("   ratio c/b %.2f", c_eps / (events / b.seconds));
    if (runs('d')) std::printf("   ratio d/a %.2f", ratio(d, d_at));
    if (runs('e')) std::printf("   ratio e/a %.2f", ratio(e, e_at));
    if (runs('f')) std::printf("   ratio f/a %.2f", ratio(f, f_at));
    if (shipping) std::printf("   ratio g/a %.2f   ratio g/c %.2f", ratio(g, g_at), ratio(g, g_at) / ratio(c, 0));
    std::printf("\nrss during (c) at 25/50/75/100%%:");
    for (double mb : rss_samples) std::printf(" %.0f", mb);
    std::printf(" MB; peak %.0f MB; largest WAL seen %.1f MB\n", peak_rss, max_wal_bytes / 1048576.0);
    std::printf("pipeline_eps=%.0f ratio_vs_bare=%.2f bytes_per_event=%.1f peak_rss_mb=%.0f\n", c_eps, ratio(c, 0),
                static_cast<double>(c.bytes) / events, peak_rss);

    // (d) and (e) stay in a --dir given, to be looked at.
    for (const char* name : {"bare.db", "naive.db", "retention.db", "coalescing.db", "both.db", "shipping.db"}) {
      if (args.count("dir") && name[0] != 'b' && name[0] != 'n') continue;
      for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(dir / (std::string(name) + suffix));
    }
    if (!args.count("db")) {
      for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(pipeline_db + suffix);
    }
    if (!args.count("dir")) fs::remove(dir);
  } catch (const std::exception& e) {
    std::cerr << "etwaudit-bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
