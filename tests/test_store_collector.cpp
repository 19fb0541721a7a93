#include <SQLiteCpp/Database.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "pipeline/collection.h"
#include "sources/event_source.h"
#include "store/checkpointer.h"
#include "store/collector.h"
#include "store/database.h"
#include "store/event_writer.h"
#include "temp_dir.h"

using namespace etwaudit;
using namespace std::chrono_literals;
using etwaudit::test::TempDir;
using Clock = std::chrono::steady_clock;

namespace {

FileEvent event_at(std::int64_t time) {
  FileEvent event;
  event.time = time;
  return event;
}

// A source that delivers `count` events, then either ends or keeps waiting.
class CountingSource final : public EventSource {
 public:
  CountingSource(int count, bool wait_after) : m_count(count), m_wait_after(wait_after) {}
  std::string description() const override { return "counting"; }
  bool is_live() const override { return false; }
  void run(BoundedQueue<FileEvent>& queue, Catalog& catalog, RunStats& stats) override {
    const auto path = catalog.intern_path("C:\\file.txt");
    const auto process = catalog.intern_process(42, 0, "app.exe");
    for (int i = 0; i < m_count; ++i) {
      FileEvent event = event_at(1'000'000'000 + i);
      event.path = path;
      event.process = process;
      stats.received += 1;
      queue.push_waiting(event);
    }
    while (m_wait_after && !m_stop) std::this_thread::sleep_for(5ms);
  }
  void stop() noexcept override { m_stop = true; }
  std::string error() const override { return m_error; }
  std::string m_error;

 private:
  int m_count;
  bool m_wait_after;
  std::atomic<bool> m_stop{false};
};

struct Store {
  TempDir dir;
  std::string path = dir.file("audit.db");
  WriteDatabase database{path};
  Catalog catalog;
  RunStats stats;
  EventWriter writer{database.db(), catalog, SelfExclusion{}};
  Store() { writer.begin_run("counting", "host"); }
  std::string run_field(const char* column) {
    return database.db().execAndGet(std::string("SELECT ") + column + " FROM collector_runs").getString();
  }
};

// Holds the database's write lock from a second connection, as the sqlite3
// shell inside BEGIN IMMEDIATE or a browser with an unsaved change does.
struct LockHolder {
  SQLite::Database connection;
  explicit LockHolder(const std::string& path) : connection(path, SQLite::OPEN_READWRITE) {
    connection.exec("BEGIN IMMEDIATE");
  }
  void release() { connection.exec("ROLLBACK"); }
};

}  // namespace

TEST_CASE("a batch closes when it reaches its size", "[collector]") {
  BoundedQueue<FileEvent> queue(64);
  for (int i = 0; i < 10; ++i) queue.try_push(event_at(i));
  std::vector<FileEvent> batch;
  BatchPolicy policy{4, std::chrono::milliseconds(60'000)};
  const auto started = Clock::now();
  REQUIRE(gather_batch(queue, batch, policy, 1ms));
  CHECK(batch.size() == 4);
  CHECK(Clock::now() - started < 30s);  // did not wait for max_delay
  REQUIRE(gather_batch(queue, batch, policy, 1ms));
  CHECK(batch.front().time == 4);
}

TEST_CASE("a batch closes max_delay after its first event even when small", "[collector]") {
  BoundedQueue<FileEvent> queue(64);
  queue.try_push(event_at(1));
  std::vector<FileEvent> batch;
  BatchPolicy policy{1000, std::chrono::milliseconds(100)};
  std::thread late([&] {
    std::this_thread::sleep_for(20ms);
    queue.try_push(event_at(2));
  });
  const auto started = Clock::now();
  REQUIRE(gather_batch(queue, batch, policy, 1ms));
  const auto waited = Clock::now() - started;
  late.join();
  CHECK(batch.size() == 2);  // the late event joined the open batch
  CHECK(waited >= 100ms);
  CHECK(waited < 30s);
}

TEST_CASE("an idle queue yields an empty batch and a closed, drained one ends the loop", "[collector]") {
  BoundedQueue<FileEvent> queue(64);
  std::vector<FileEvent> batch;
  BatchPolicy policy;
  CHECK(gather_batch(queue, batch, policy, 10ms));
  CHECK(batch.empty());
  queue.try_push(event_at(1));
  queue.close();
  CHECK(gather_batch(queue, batch, policy, 10ms));
  CHECK(batch.size() == 1);
  CHECK_FALSE(gather_batch(queue, batch, policy, 10ms));
}

TEST_CASE("the collector writes everything queued before close, in batches", "[collector]") {
  Store store;
  BoundedQueue<FileEvent> queue(4096);
  const auto path = store.catalog.intern_path("x");
  const auto process = store.catalog.intern_process(1, 0, "p");
  for (int i = 0; i < 2500; ++i) {
    FileEvent event = event_at(1'000'000 + i);
    event.path = path;
    event.process = process;
    queue.try_push(event);
  }
  queue.close();
  Collector(queue, store.writer, store.stats, BatchPolicy{1000, std::chrono::milliseconds(1000)}).run();
  CHECK(store.stats.written == 2500);
  CHECK(store.stats.batches == 3);
  CHECK(store.database.db().execAndGet("SELECT count(*) FROM events").getInt() == 2500);
}

TEST_CASE("a run ends at the end of input with every event written and the run closed", "[collector]") {
  Store store;
  CountingSource source(3000, false);
  CollectionOptions options;
  options.batch.max_events = 500;
  auto result = run_collection(source, store.catalog, store.writer, store.stats, options);
  CHECK_FALSE(result.failed);
  CHECK(result.exit_reason == "end of input");
  CHECK(store.stats.written == 3000);
  CHECK(store.run_field("events_written") == "3000");
  CHECK(store.run_field("exit_reason") == "end of input");
}

TEST_CASE("a stop request drains the queue, commits and records why the run ended", "[collector]") {
  Store store;
  CountingSource source(1000, true);
  CollectionOptions options;
  options.batch.max_delay = std::chrono::milliseconds(60'000);  // only the stop can close the batch
  const auto started = Clock::now();
  options.stop_requested = [&] { return Clock::now() - started > 300ms ? std::string("SIGTERM") : std::string(); };
  auto result = run_collection(source, store.catalog, store.writer, store.stats, options);
  CHECK(result.exit_reason == "stopped by SIGTERM");
  CHECK(store.stats.written == 1000);
  CHECK(store.run_field("exit_reason") == "stopped by SIGTERM");
  CHECK(store.run_field("stopped_at IS NOT NULL") == "1");
}

TEST_CASE("a run with --duration stops by itself", "[collector]") {
  Store store;
  CountingSource source(10, true);
  CollectionOptions options;
  options.duration = 200ms;
  auto result = run_collection(source, store.catalog, store.writer, store.stats, options);
  CHECK(result.exit_reason == "duration reached");
  CHECK(store.stats.written == 10);
}

TEST_CASE("a source error ends the run as failed, keeping what came before it", "[collector]") {
  Store store;
  CountingSource source(5, false);
  source.m_error = "events.jsonl:6: missing field 'op'";
  auto result = run_collection(source, store.catalog, store.writer, store.stats, CollectionOptions{});
  CHECK(result.failed);
  CHECK(result.exit_reason == "source error: events.jsonl:6: missing field 'op'");
  CHECK(store.stats.written == 5);
  CHECK(store.run_field("exit_reason") == "source error: events.jsonl:6: missing field 'op'");
}

TEST_CASE("a write error ends the run as failed instead of losing events silently", "[collector]") {
  Store store;
  // Make every insert fail, as a full disk would.
  store.database.db().exec(
      "CREATE TRIGGER no_room BEFORE INSERT ON events_00 BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END");
  CountingSource source(100, false);
  auto result = run_collection(source, store.catalog, store.writer, store.stats, CollectionOptions{});
  CHECK(result.failed);
  CHECK_THAT(result.exit_reason, Catch::StartsWith("write error:") && Catch::Contains("disk is full"));
  CHECK(store.stats.written == 0);
}

TEST_CASE("a collector waits for another connection's write lock and then writes everything", "[collector]") {
  Store store;
  LockHolder holder(store.path);
  CountingSource source(5000, false);
  CollectionOptions options;
  options.lock_attempt = 50ms;  // each attempt gives up quickly
  options.batch.max_events = 1000;
  std::vector<std::string> warnings;
  std::mutex warnings_mutex;
  options.on_warning = [&](const std::string& warning) {
    std::lock_guard lock(warnings_mutex);
    warnings.push_back(warning);
  };
  std::thread releaser([&] {
    std::this_thread::sleep_for(700ms);
    holder.release();
  });
  auto result = run_collection(source, store.catalog, store.writer, store.stats, options);
  releaser.join();
  CHECK_FALSE(result.failed);
  CHECK(store.stats.written == 5000);
  CHECK(store.stats.dropped == 0);
  CHECK(store.database.db().execAndGet("SELECT count(*) FROM events").getInt() == 5000);
  CHECK(store.run_field("exit_reason") == "end of input");
  REQUIRE(warnings.size() == 2);
  CHECK_THAT(warnings[0], Catch::StartsWith("the database is locked by another connection"));
  CHECK_THAT(warnings[1], Catch::StartsWith("the database was locked for "));
}

TEST_CASE("a lock that outlasts the stop fails the run but every received event is counted", "[collector]") {
  Store store;
  LockHolder holder(store.path);
  CountingSource source(3000, true);
  CollectionOptions options;
  options.lock_attempt = 50ms;
  options.batch.max_events = 1000;
  options.lock_wait_at_stop = 200ms;
  const auto started = Clock::now();
  options.stop_requested = [&] { return Clock::now() - started > 300ms ? std::string("SIGTERM") : std::string(); };
  auto result = run_collection(source, store.catalog, store.writer, store.stats, options);
  CHECK(result.failed);
  CHECK_THAT(result.exit_reason, Catch::Contains("still locked"));
  CHECK(store.stats.received == 3000);
  CHECK(store.stats.written == 0);
  CHECK(store.stats.received == store.stats.written + store.stats.dropped + store.stats.excluded + store.stats.own);
  holder.release();
  // The run record could not be closed; the next run will mark it interrupted.
  CHECK(store.run_field("stopped_at IS NULL") == "1");
}

TEST_CASE("the WAL grows while a reader holds a snapshot and is cut back once it lets go", "[collector][wal]") {
  Store store;
  auto wal_bytes = [&] { return std::filesystem::file_size(store.path + "-wal"); };
  const auto path = store.catalog.intern_path("/data/file");
  std::int64_t time = 1'000'000'000;
  auto ingest = [&](int batches) {
    for (int b = 0; b < batches; ++b) {
      std::vector<FileEvent> batch;
      for (int i = 0; i < 20000; ++i) {
        FileEvent event = event_at(time += 1000);
        event.path = path;
        event.process = store.catalog.intern_process(1 + i % 50, 0, "/bin/p" + std::to_string(i % 50));
        event.size = i;
        batch.push_back(event);
      }
      store.writer.write_batch(batch, store.stats);
    }
  };
  Checkpointer checkpointer(store.database.db(), 20ms, 1 << 20);  // cut back to 1 MiB, to be quick
  {
    SQLite::Database reader(store.path, SQLite::OPEN_READONLY);
    reader.exec("BEGIN");
    CHECK(reader.execAndGet("SELECT count(*) FROM events").getInt() == 0);  // the snapshot is taken
    ingest(15);
    CHECK(wal_bytes() > 4u << 20);
    CHECK(reader.execAndGet("SELECT count(*) FROM events").getInt() == 0);  // still its snapshot
    reader.exec("COMMIT");
  }
  const auto deadline = Clock::now() + 10s;
  while (wal_bytes() > 1u << 20 && Clock::now() < deadline) {
    ingest(1);  // the collector goes on meanwhile
    std::this_thread::sleep_for(50ms);
  }
  CHECK(wal_bytes() <= 1u << 20);
  CHECK(store.database.db().execAndGet("SELECT count(*) FROM events").getInt() >= 320000);
}

namespace {
// Events of 50 processes, each on 80 files of its own, in no order, as a busy
// machine's are; notes the largest WAL file seen while it delivers them.
class ScatteredSource final : public EventSource {
 public:
  ScatteredSource(std::string wal_path, int count) : m_wal_path(std::move(wal_path)), m_count(count) {}
  std::string description() const override { return "scattered"; }
  bool is_live() const override { return false; }
  void run(BoundedQueue<FileEvent>& queue, Catalog& catalog, RunStats& stats) override {
    std::uint64_t random = 12345;
    for (int i = 0; i < m_count && !m_stop; ++i) {
      random = random * 6364136223846793005ull + 1442695040888963407ull;
      FileEvent event = event_at(1'000'000'000'000'000'000 + i * 10'000ll);
      const auto pid = static_cast<std::uint32_t>(1000 + (random >> 40) % 50);
      event.path = catalog.intern_path("/srv/data/d" + std::to_string(pid) + "/f" +
                                       std::to_string((random >> 20) % 80) + ".dat");
      event.process = catalog.intern_process(pid, 0, "/usr/bin/worker" + std::to_string(pid));
      event.op = (random >> 33) % 3 ? Op::read : Op::write;
      event.size = static_cast<std::int64_t>((random >> 8) % 65536);
      event.offset = static_cast<std::int64_t>(random % 1000) * 65536;
      stats.received += 1;
      queue.push_waiting(event);
      if (i % 500 == 0) {
        std::error_code error;
        const auto wal = std::filesystem::file_size(m_wal_path, error);
        if (!error) largest_wal = std::max<std::uintmax_t>(largest_wal, wal);
      }
    }
  }
  void stop() noexcept override { m_stop = true; }
  std::string error() const override { return {}; }
  std::uintmax_t largest_wal = 0;

 private:
  std::string m_wal_path;
  int m_count;
  std::atomic<bool> m_stop{false};
};
}  // namespace

TEST_CASE("under a small --max-size segments are small and the WAL is cut back, so a small disk holds it",
          "[collector][retention][wal]") {
  Store store;
  CollectionOptions options;
  options.batch.max_events = 10000;
  options.retention.max_bytes = 4u << 20;
  const StoreSizing sizing = sizing_for(options.retention);
  CHECK(sizing.segment_events == 2048);
  CHECK(sizing.wal_bytes == 1 << 20);
  ScatteredSource source(store.path + "-wal", 300000);
  auto result = run_collection(source, store.catalog, store.writer, store.stats, options);
  CHECK_FALSE(result.failed);
  CHECK(store.stats.written == 300000);
  CHECK(result.pruned.segments > 50);
  CHECK(store.database.db().execAndGet("SELECT max(events) FROM segments").getInt64() <= sizing.segment_events);
  CHECK(used_bytes(store.database.db()) <= 4u << 20);
  // A batch or a prune transaction adds about a MiB here; without the cuts the
  // WAL grows to tens of MiB.
  CHECK(source.largest_wal < 4u << 20);
}
