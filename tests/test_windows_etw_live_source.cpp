// EtwLiveSource::run() with a stand-in session: Wine has no ETW, but the
// live source's own work (its ProcessTrace thread, the file-name rundown, the
// loss polling, stopping, and the messages when a session ends by itself) can
// be driven through the TraceSession interface.
#include <windows.h>
// clang-format off: evntcons.h needs windows.h first.
#include <evntcons.h>
// clang-format on

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/bounded_queue.h"
#include "core/catalog.h"
#include "core/error.h"
#include "core/file_event.h"
#include "core/run_stats.h"
#include "core/time_format.h"
#include "sources/live/etw_live_source.h"
#include "sources/live/etw_session.h"
#include "windows_etw_records.h"

using namespace etwaudit;
using namespace etwaudit::test;
using namespace std::chrono_literals;

namespace {

// What the stand-in session was told, and what it is to answer.
struct Script {
  std::mutex mutex;
  std::condition_variable stopped_changed;
  bool stopped = false;
  bool started = false;
  int rundowns = 0;
  std::string rundown_refused;  // what request_file_rundown() says; "" when it could ask
  bool rundown_throws = false;
  bool ends_by_itself = false;  // process() returns without stop_session()
  bool name_at_end = false;     // the file's name comes in the rundown of the stopping session
  unsigned long process_status = ERROR_SUCCESS;
  bool raw_qpc = true;                           // false: the session's timestamps are FILETIMEs
  std::vector<std::string> calls;                // stop_session, close_consumer, in order
  std::optional<EtwLossCounters> counters;       // what query() and final_counters() say
  std::chrono::nanoseconds longest_callback{0};  // the longest the callback took
};

// A ProcessLookup as slow as a far domain controller or a busy system.
class SlowLookup final : public ProcessLookup {
 public:
  explicit SlowLookup(std::atomic<int>& calls) : m_calls(calls) {}
  bool lookup(std::uint32_t, ProcessInfo&) noexcept override { return wait(); }
  std::uint32_t process_of_thread(std::uint32_t) noexcept override { return wait() ? 1 : 0; }
  std::string account_name(const std::string&) noexcept override { return wait() ? "" : ""; }

 private:
  bool wait() {
    ++m_calls;
    std::this_thread::sleep_for(std::chrono::seconds(1));
    return false;
  }
  std::atomic<int>& m_calls;
};

class ScriptedSession final : public TraceSession {
 public:
  explicit ScriptedSession(std::shared_ptr<Script> script) : m_script(std::move(script)) {}
  void start() override { m_script->started = true; }
  const std::wstring& name() const override { return m_name; }
  void open(PEVENT_RECORD_CALLBACK callback, void* context) override {
    m_callback = callback;
    m_context = context;
  }
  // As ProcessTrace: a name and a read, then wait for the session to stop;
  // a stopping session may still deliver its file-name rundown.
  bool raw_qpc_timestamps() const override { return m_script->raw_qpc; }
  unsigned long process() noexcept override {
    Payload name = name_payload(L"\\Device\\HarddiskVolume1\\data\\a.txt");
    EVENT_RECORD name_record = kernel_record(file_io_class, opcode_name, 2, name, m_context);
    if (!m_script->name_at_end) timed_callback(&name_record);
    Payload read = read_write_payload(0, 4096, tid);
    EVENT_RECORD read_record = kernel_record(file_io_class, opcode_read, 2, read, m_context);
    // Raw counter values (etw_clock.h), or ETW's FILETIMEs for another clock.
    if (m_script->raw_qpc) {
      QueryPerformanceCounter(&read_record.EventHeader.TimeStamp);
    } else {
      FILETIME now;
      GetSystemTimeAsFileTime(&now);
      read_record.EventHeader.TimeStamp.QuadPart =
          static_cast<LONGLONG>(ULARGE_INTEGER{{now.dwLowDateTime, now.dwHighDateTime}}.QuadPart);
    }
    timed_callback(&read_record);
    // More reads, of other pids: each would make a decoder on this thread
    // wait for the lookup.
    for (ULONG other = 1; other <= 3; ++other) {
      read_record.EventHeader.ProcessId = pid + other;
      read_record.EventHeader.ThreadId = tid + other;
      timed_callback(&read_record);
    }
    {
      std::unique_lock lock(m_script->mutex);
      if (!m_script->ends_by_itself) m_script->stopped_changed.wait(lock, [&] { return m_script->stopped; });
    }
    if (m_script->name_at_end) {
      name_record.EventHeader.EventDescriptor.Opcode = opcode_file_rundown;
      timed_callback(&name_record);
    }
    return m_script->process_status;
  }
  std::string request_file_rundown() override {
    std::lock_guard lock(m_script->mutex);
    ++m_script->rundowns;
    if (m_script->rundown_throws) throw Error("cannot re-enable the kernel events (scripted)");
    return m_script->rundown_refused;
  }
  std::optional<EtwLossCounters> query() noexcept override {
    std::lock_guard lock(m_script->mutex);
    return m_script->counters;
  }
  std::optional<EtwLossCounters> final_counters() const override {
    std::lock_guard lock(m_script->mutex);
    return m_script->counters;
  }
  void stop_session() noexcept override {
    {
      std::lock_guard lock(m_script->mutex);
      m_script->calls.push_back("stop_session");
      m_script->stopped = true;
    }
    m_script->stopped_changed.notify_all();
  }
  void close_consumer() noexcept override {
    std::lock_guard lock(m_script->mutex);
    m_script->calls.push_back("close_consumer");
  }

 private:
  void timed_callback(EVENT_RECORD* record) {
    const auto started = std::chrono::steady_clock::now();
    m_callback(record);
    const auto took = std::chrono::steady_clock::now() - started;
    std::lock_guard lock(m_script->mutex);
    m_script->longest_callback = std::max<std::chrono::nanoseconds>(m_script->longest_callback, took);
  }

  std::shared_ptr<Script> m_script;
  std::wstring m_name = L"scripted";
  PEVENT_RECORD_CALLBACK m_callback = nullptr;
  void* m_context = nullptr;
};

// A source on a scripted session, run on its own thread as the collector does.
struct Run {
  std::shared_ptr<Script> script = std::make_shared<Script>();
  BoundedQueue<FileEvent> queue{64};
  Catalog catalog;
  RunStats stats;
  std::unique_ptr<EtwLiveSource> source;
  std::thread thread;
  std::string warnings;  // what the source warned of, a line each

  std::unique_ptr<ProcessLookup> lookup;  // the running system's when null

  void start() {
    source = std::make_unique<EtwLiveSource>(std::make_unique<ScriptedSession>(script), std::move(lookup));
    source->start();
    source->set_warnings([this](const std::string& line) { warnings += line + "\n"; });
    thread = std::thread([this] { source->run(queue, catalog, stats); });
  }
  // Waits (at most 10 s) until the source has asked for the file-name rundown.
  bool rundown_requested() {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard lock(script->mutex);
        if (script->rundowns > 0) return true;
      }
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }
  // Waits (at most 10 s) until count events are queued; returns them.
  std::vector<FileEvent> events(std::size_t count) {
    std::vector<FileEvent> out;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (out.size() < count && std::chrono::steady_clock::now() < deadline)
      queue.pop_until(out, count - out.size(), std::chrono::steady_clock::now() + 50ms);
    return out;
  }
  ~Run() {
    if (thread.joinable()) {
      source->stop();
      thread.join();
    }
  }
};

}  // namespace

TEST_CASE("the live source delivers the session's events, asks for the rundown and ends cleanly on stop",
          "[windows][etw]") {
  Run run;
  run.script->counters = EtwLossCounters{5, 2, 0};
  run.start();
  CHECK(run.script->started);
  CHECK(run.source->clock() == "qpc");  // what the run records
  const auto events = run.events(1);
  REQUIRE(events.size() == 1);
  CHECK(events[0].op == Op::read);
  CHECK(events[0].size == 4096);
  CHECK(run.catalog.path(events[0].path) == "\\Device\\HarddiskVolume1\\data\\a.txt");
  // Stamped with the counter a moment ago: the event happened a moment ago.
  const std::int64_t now = now_ns();
  CHECK(events[0].time <= now);
  CHECK(events[0].time > now - 10'000'000'000);
  REQUIRE(run.rundown_requested());

  run.source->stop();
  run.thread.join();
  CHECK(run.source->error().empty());
  CHECK(run.script->stopped);
  CHECK(run.script->rundowns == 1);
  CHECK(run.stats.received == 4);  // the reads the session delivered
  CHECK(run.stats.lost == 7);      // events lost + buffers lost
  // The consumer is closed only after the stopped session has delivered all.
  REQUIRE(run.script->calls.size() >= 2);
  CHECK(run.script->calls[0] == "stop_session");
  CHECK(run.script->calls.back() == "close_consumer");
}

TEST_CASE("a decoder that waits for a process lookup never holds up ProcessTrace's callback", "[windows][etw]") {
  Run run;
  std::atomic<int> lookups{0};
  run.lookup = std::make_unique<SlowLookup>(lookups);
  run.start();
  const auto events = run.events(4);  // each waited a second for its process in the decoder
  CHECK(events.size() == 4);
  CHECK(lookups > 0);
  run.source->stop();
  run.thread.join();
  std::lock_guard lock(run.script->mutex);
  CHECK(run.script->longest_callback < std::chrono::milliseconds(200));  // not the lookup's second
}

TEST_CASE("a session whose timestamps are not the counter's has its FILETIMEs used as they are", "[windows][etw]") {
  Run run;
  run.script->raw_qpc = false;
  run.start();
  CHECK(run.source->clock() == "etw");
  const auto events = run.events(1);
  REQUIRE(events.size() == 1);
  const std::int64_t now = now_ns();
  CHECK(events[0].time <= now);
  CHECK(events[0].time > now - 10'000'000'000);
}

TEST_CASE("a source is started apart from being made, and a run without a start says so", "[windows][etw]") {
  auto script = std::make_shared<Script>();
  EtwLiveSource source(std::make_unique<ScriptedSession>(script));
  CHECK_FALSE(script->started);  // made: nothing started yet (the collector opens its database first)
  CHECK(source.clock().empty());
  BoundedQueue<FileEvent> queue{4};
  Catalog catalog;
  RunStats stats;
  source.run(queue, catalog, stats);
  CHECK(source.error() == "the ETW session was never started");
}

TEST_CASE("names from the rundown of the stopping session still reach the events read before", "[windows][etw]") {
  Run run;
  run.script->name_at_end = true;
  run.start();
  const auto events = run.events(1);
  REQUIRE(events.size() == 1);
  CHECK(run.catalog.path(events[0].path).empty());  // unresolved while the session runs
  run.source->stop();
  run.thread.join();
  CHECK(run.source->error().empty());
  CHECK(run.catalog.path(events[0].path) == "\\Device\\HarddiskVolume1\\data\\a.txt");
  const auto resolutions = run.catalog.take_resolutions();
  REQUIRE(resolutions.size() == 1);
  CHECK(resolutions[0].path_id == events[0].path);
}

TEST_CASE("a session that ends without being asked to is reported as the reason the run ended", "[windows][etw]") {
  Run run;
  run.script->ends_by_itself = true;
  SECTION("stopped from outside") {
    run.start();
    run.thread.join();
    CHECK(run.source->error() == "the ETW session 'scripted' was stopped by another program");
  }
  SECTION("stopped from outside, ProcessTrace saying the session is gone (logman stop)") {
    run.script->process_status = ERROR_WMI_INSTANCE_NOT_FOUND;
    run.start();
    run.thread.join();
    CHECK(run.source->error() == "the ETW session 'scripted' was stopped by another program");
  }
  SECTION("ProcessTrace failed") {
    run.script->process_status = ERROR_CALL_NOT_IMPLEMENTED;
    run.start();
    run.thread.join();
    CHECK_THAT(run.source->error(),
               Catch::StartsWith("reading the ETW session 'scripted' failed: ProcessTrace failed with error 120"));
  }
  CHECK(run.script->stopped);
  CHECK(run.stats.received == 4);  // the reads the session delivered
}

TEST_CASE("a file-name rundown Windows cannot give is a warning, never the end of the run", "[windows][etw]") {
  Run run;
  const auto warning_for = [&](std::string refused) {
    run.script->rundown_refused = std::move(refused);
    run.start();
    CHECK(run.events(1).size() == 1);
    REQUIRE(run.rundown_requested());
    run.source->stop();
    run.thread.join();
    CHECK(run.source->error().empty());
    CHECK_THAT(run.warnings, Catch::StartsWith("warning: no names for files opened before the start ("));
    return run.warnings;
  };
  const auto warning_for_throw = [&] {
    run.script->rundown_throws = true;
    return warning_for("");
  };
  SECTION("the calls failed") {
    CHECK_THAT(warning_for("EnableTraceEx2(KernelRundown) failed with error 5"),
               Catch::Contains("start (EnableTraceEx2(KernelRundown) failed with error 5); their events stay "
                               "unresolved until the rundown at the end"));
  }
  SECTION("asking failed with an error: still a warning, never the end of the run") {
    CHECK_THAT(warning_for_throw(), Catch::Contains("start (cannot re-enable the kernel events (scripted)); their "
                                                    "events stay unresolved until the rundown at the end"));
  }
}
