#include "sources/live/etw_live_source.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "core/error.h"
#include "platform/platform.h"
#include "platform/win32.h"
#include "sources/live/etw_dos_devices.h"
#include "sources/live/live_source.h"

namespace etwaudit {
namespace {

// A \Device\ path that no drive matches reloads the drives at most this often.
constexpr std::chrono::seconds device_map_miss_interval{10};
// How often run() polls the session's loss counters and the drive letters.
constexpr std::chrono::seconds poll_interval{1};
// How often run() reloads the drives even when no letter came or went: a
// volume can move to another folder or letter without changing the set.
constexpr std::chrono::seconds device_map_reload_interval{60};
// The records waiting for the decoder, at most (sources/etw/record_buffer.h):
// a few hundred thousand, seconds of a busy machine's events.
constexpr std::size_t record_buffer_bytes = std::size_t{32} << 20;
// How long the decoder waits for records before it looks again.
constexpr std::chrono::milliseconds decode_wait{100};
// How long run() lets ProcessTrace deliver what the stopped session still
// writes before it closes the consumer: ProcessTrace returns a few seconds
// after the session stops, at most.
constexpr std::chrono::seconds drain_timeout{10};

}  // namespace

EtwEventPipeline::EtwEventPipeline(BoundedQueue<FileEvent>& queue, Catalog& catalog, RunStats& stats,
                                   ProcessLookup* processes)
    : m_queue(queue), m_stats(stats), m_decoder(catalog, *this) {
  m_decoder.set_process_lookup(processes);
}

void EtwEventPipeline::on_record(const RawRecord& record) noexcept {
  m_decoder.decode(record);
  const DecoderStats& decoded = m_decoder.stats();
  if (decoded.malformed != m_malformed_counted) {
    m_stats.bad_input.fetch_add(decoded.malformed - m_malformed_counted, std::memory_order_relaxed);
    m_malformed_counted = decoded.malformed;
  }
  m_stats.rundown_names.store(decoded.rundown_names, std::memory_order_relaxed);
  if (decoded.lost_markers != m_lost_markers.load(std::memory_order_relaxed))
    m_lost_markers.store(decoded.lost_markers, std::memory_order_relaxed);
}

void EtwEventPipeline::deliver(const FileEvent& event) {
  m_stats.received.fetch_add(1, std::memory_order_relaxed);
  m_queue.try_push(event);
}

EtwLiveSource::EtwLiveSource(EtwSessionOptions options)
    : EtwLiveSource(std::make_unique<EtwSession>(std::move(options))) {}

EtwLiveSource::EtwLiveSource(std::unique_ptr<TraceSession> session, std::unique_ptr<ProcessLookup> processes)
    : m_processes(processes ? std::move(processes) : std::make_unique<RunningProcesses>()),
      m_session(std::move(session)),
      m_records(record_buffer_bytes) {
  m_device_map.set_loader(query_dos_devices, device_map_miss_interval);
}

void EtwLiveSource::start() {
  m_session->start();
  m_session->open(etw_event_record_callback, static_cast<EtwRecordHandler*>(this));
  m_qpc_timestamps = m_session->raw_qpc_timestamps();
  m_started = true;
  std::string buffers;
  if (const auto counters = m_session->query(); counters && counters->buffers > 0)
    buffers =
        ", " + std::to_string(counters->buffers) + " buffers of " + std::to_string(counters->buffer_size_kb) + " KB";
  m_warn("ETW session '" + to_utf8(m_session->name()) + "'" + buffers + ", event times from " +
         (m_qpc_timestamps ? "the performance counter" : "ETW's clock conversion"));
}

std::string EtwLiveSource::clock() const {
  return !m_started ? "" : m_qpc_timestamps ? "qpc" : "etw";
}

EtwLiveSource::~EtwLiveSource() {
  m_session->stop();
}

void EtwLiveSource::on_record(const RawRecord& record) noexcept {
  // ProcessTrace's thread: a copy for the decoder, and nothing else.
  RawRecord timed = record;
  if (m_qpc_timestamps) timed.time = m_clock.unix_ns(static_cast<std::int64_t>(record.raw_timestamp));
  m_records.push(timed);
}

void EtwLiveSource::update_lost(RunStats& stats, const std::optional<EtwLossCounters>& counters) {
  // A lost buffer counts as one event: how many it held is unknown, so this
  // is a lower bound. The in-band markers report the same losses again, so
  // the larger of the two counts, not their sum.
  if (counters) m_session_lost = counters->events_lost + counters->realtime_buffers_lost + counters->log_buffers_lost;
  const std::uint64_t markers = m_pipeline ? m_pipeline->lost_markers() : 0;
  // And the records the decoder could not keep up with.
  stats.lost.store(std::max(m_session_lost, markers) + m_records.dropped(), std::memory_order_relaxed);
}

void EtwLiveSource::run(BoundedQueue<FileEvent>& queue, Catalog& catalog, RunStats& stats) {
  if (!m_started) {
    fail("the ETW session was never started");
    return;
  }
  EtwEventPipeline pipeline(queue, catalog, stats, m_processes.get());
  m_pipeline = &pipeline;
  // The decoder's thread: what it waits for (naming processes and accounts)
  // never holds up ProcessTrace's (record_buffer.h).
  std::atomic<bool> receiving{true};
  std::thread decoder([&] {
    const auto decode = [&](const RawRecord& record) { pipeline.on_record(record); };
    for (;;) {
      const bool last = !receiving.load();  // then this drain takes what the consumer left
      m_records.drain(decode, decode_wait);
      if (last) break;
    }
  });
  std::atomic<bool> consumer_done{false};
  unsigned long process_status = ERROR_SUCCESS;
  std::thread consumer([&] {
    // ETW drops what this thread does not take in time: it comes before the collector's work.
    SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_ABOVE_NORMAL);
    process_status = m_session->process();
    consumer_done = true;
    { std::lock_guard lock(m_mutex); }
    m_wakeup.notify_all();
  });

  try {
    request_file_rundown();
    std::uint32_t drives = logical_drive_mask();
    auto drives_loaded = std::chrono::steady_clock::now();
    while (!m_stop && !consumer_done) {
      {
        std::unique_lock lock(m_mutex);
        m_wakeup.wait_for(lock, poll_interval, [&] { return m_stop.load() || consumer_done.load(); });
      }
      update_lost(stats, m_session->query());
      m_clock.reanchor();
      const std::uint32_t now_drives = logical_drive_mask();
      const auto now = std::chrono::steady_clock::now();
      if (now_drives != drives || now - drives_loaded >= device_map_reload_interval) {
        drives = now_drives;
        drives_loaded = now;
        m_device_map.refresh();
      }
    }
  } catch (const std::exception& e) {
    fail(e.what());
  }

  // Stop the session first and let ProcessTrace deliver what the kernel
  // still writes (the last buffers, the end-of-session file-name rundown);
  // close the consumer only after that, or when it takes too long.
  m_session->stop_session();
  {
    std::unique_lock lock(m_mutex);
    m_wakeup.wait_for(lock, drain_timeout, [&] { return consumer_done.load(); });
  }
  m_session->close_consumer();
  consumer.join();
  receiving = false;
  m_records.close();
  decoder.join();
  pipeline.flush();
  update_lost(stats, m_session->final_counters());
  m_pipeline = nullptr;

  std::lock_guard lock(m_mutex);
  if (m_error.empty() && !m_stop) {
    // The session ended without us: stopped from outside, or ProcessTrace failed.
    // ERROR_WMI_INSTANCE_NOT_FOUND: the session it read is gone (logman stop).
    m_error = process_status == ERROR_SUCCESS || process_status == ERROR_WMI_INSTANCE_NOT_FOUND
                  ? "the ETW session '" + to_utf8(m_session->name()) + "' was stopped by another program"
                  : "reading the ETW session '" + to_utf8(m_session->name()) +
                        "' failed: " + win32_failure("ProcessTrace", process_status);
  }
}

void EtwLiveSource::request_file_rundown() {
  if (m_stop) return;
  // Never the end of the run: without the rundown the files opened before
  // the start are named by the rundown at the end, or stay unnamed.
  std::string refused;
  try {
    refused = m_session->request_file_rundown();
  } catch (const std::exception& e) {
    refused = e.what();
  }
  if (refused.empty()) return;
  m_warn("warning: no names for files opened before the start (" + refused +
         "); their events stay unresolved until the rundown at the end");
}

void EtwLiveSource::fail(const std::string& message) {
  std::lock_guard lock(m_mutex);
  if (m_error.empty()) m_error = message;
  m_stop = true;
}

void EtwLiveSource::stop() noexcept {
  m_stop = true;
  { std::lock_guard lock(m_mutex); }
  m_wakeup.notify_all();
}

std::string EtwLiveSource::error() const {
  std::lock_guard lock(m_mutex);
  return m_error;
}

// The live-source hooks of sources/live/live_source.h.

std::vector<std::string> live_source_names() {
  return {"etw"};
}

namespace {
// A whole number setting, from..to; UsageError naming the option otherwise.
unsigned number_setting(const LiveSourceRequest& request, const std::string& name, unsigned fallback, unsigned from,
                        unsigned to, const char* unit) {
  auto found = request.settings.find(name);
  if (found == request.settings.end() || found->second.empty()) return fallback;
  const std::string& text = found->second.back();
  unsigned long value = 0;
  std::size_t used = 0;
  try {
    value = std::stoul(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || text[0] == '-')
    throw UsageError("--" + name + " '" + text + "' is not a whole number");
  if (value < from || value > to)
    throw UsageError("--" + name + " must be " + std::to_string(from) + " to " + std::to_string(to) + unit + ", not " +
                     text);
  return static_cast<unsigned>(value);
}
}  // namespace

std::vector<LiveSourceSetting> live_source_settings() {
  const EtwSessionOptions defaults = default_session_options();
  return {
      {"etw-session", "name of the ETW session (Windows 8 and later; Windows 7 uses the NT Kernel Logger)",
       to_utf8(defaults.name), false, "NAME"},
      {"etw-buffer-size", "size of each ETW buffer in KB (4-16384)", std::to_string(defaults.buffer_size_kb), false,
       "KB"},
      {"etw-min-buffers", "ETW buffers allocated at start", std::to_string(defaults.minimum_buffers), false, "N"},
      {"etw-max-buffers", "most ETW buffers; when all are full, ETW loses events",
       std::to_string(defaults.maximum_buffers), false, "N"},
      {"etw-flush-timer", "seconds before ETW delivers a partly filled buffer (1-60)",
       std::to_string(defaults.flush_timer_seconds), false, "SECONDS"},
  };
}

std::unique_ptr<EventSource> make_live_source(const LiveSourceRequest& request) {
  const EtwSessionOptions defaults = default_session_options();
  EtwSessionOptions options = defaults;
  if (auto name = request.settings.find("etw-session"); name != request.settings.end() && !name->second.empty())
    options.name = to_wide(name->second.back());
  if (options.name.empty() || options.name.size() > 1024)
    throw UsageError("--etw-session must have 1 to 1024 characters");
  options.buffer_size_kb = number_setting(request, "etw-buffer-size", defaults.buffer_size_kb, 4, 16384, " (KB)");
  options.minimum_buffers = number_setting(request, "etw-min-buffers", defaults.minimum_buffers, 0, 1u << 20, "");
  options.maximum_buffers = number_setting(request, "etw-max-buffers", defaults.maximum_buffers, 0, 1u << 20, "");
  options.flush_timer_seconds =
      number_setting(request, "etw-flush-timer", defaults.flush_timer_seconds, 1, 60, " (seconds)");
  if (options.minimum_buffers < 2 || options.maximum_buffers < options.minimum_buffers)
    throw UsageError("--etw-min-buffers must be at least 2 and at most --etw-max-buffers (" +
                     std::to_string(options.minimum_buffers) + " > " + std::to_string(options.maximum_buffers) + ")");

  if (!is_elevated()) throw Error("etwaudit collect needs administrator rights (run elevated or as SYSTEM)");
  auto source = std::make_unique<EtwLiveSource>(std::move(options));
  source->set_warnings(request.note);
  return source;
}

}  // namespace etwaudit
