#pragma once
// EtwLiveSource: `etwaudit collect` on Windows. Events come from a kernel ETW
// session (etw_session.h) as they happen.
//
//   ProcessTrace thread       etw_event_record_callback -> RawRecord -> a copy
//                             into the RecordBuffer (full: dropped, counted lost)
//   decoder thread            RecordBuffer -> EtwEventPipeline: EtwDecoder ->
//                             try_push (drops counted); RunningProcesses for
//                             processes the session lost, which may wait
//   run() thread              starts the ProcessTrace thread, asks for the
//                             file-name rundown, then once a second polls
//                             ControlTraceW(QUERY) for loss, re-anchors the
//                             event clock (etw_clock.h) and reloads the
//                             device map when the drives change (and each minute)
//   collector thread          DeviceMap::to_dos_path for every new path
//
// The session is started and the consumer opened by start(), which the
// collector calls once the database is open and migrated and the stop
// handlers are in place (a machine where ETW cannot work, no rights or
// Wine, then fails and the collector removes a database it had just made). stop() wakes run(), which stops the session,
// lets ProcessTrace deliver what the kernel still writes (its last buffers and the file-name rundown of a stopping
// session), then closes the consumer. The end of run() and the destructor both stop the session, so it ends on every
// way out: normal stop, Ctrl+C, console close and shutdown (the console handler waits for the collector), and errors. A
// session left by a killed process is replaced at the next start.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "core/device_map.h"
#include "sources/etw/decoder.h"
#include "sources/etw/record_buffer.h"
#include "sources/event_source.h"
#include "sources/live/etw_callback.h"
#include "sources/live/etw_clock.h"
#include "sources/live/etw_processes.h"
#include "sources/live/etw_session.h"

namespace etwaudit {

// Decodes records on the ProcessTrace thread and queues the events. Never
// blocks: a full queue drops the event (BoundedQueue counts it).
class EtwEventPipeline final : public EtwRecordHandler, private FileEventSink {
 public:
  // All must outlive the pipeline. processes, when given, names the
  // processes the session does not describe fully (decoder.h).
  EtwEventPipeline(BoundedQueue<FileEvent>& queue, Catalog& catalog, RunStats& stats,
                   ProcessLookup* processes = nullptr);

  void on_record(const RawRecord& record) noexcept override;
  // Once no more records arrive: delivers the operations still waiting for their OperationEnd.
  void flush() noexcept { m_decoder.flush(); }

  // Any thread: RTLostEvent/RTLostBuffer/RTLostFile markers seen so far.
  std::uint64_t lost_markers() const { return m_lost_markers.load(std::memory_order_relaxed); }
  // The decoder's counters; only once no more records arrive.
  const DecoderStats& decoder_stats() const { return m_decoder.stats(); }

 private:
  void deliver(const FileEvent& event) override;

  BoundedQueue<FileEvent>& m_queue;
  RunStats& m_stats;
  EtwDecoder m_decoder;
  std::uint64_t m_malformed_counted = 0;         // decoder's malformed already added to stats.bad_input
  std::atomic<std::uint64_t> m_lost_markers{0};  // published copy of the decoder's lost_markers
};

class EtwLiveSource final : public EventSource, private EtwRecordHandler {
 public:
  // Prepares the drive map; the session starts in start().
  explicit EtwLiveSource(EtwSessionOptions options);
  // The same with another session, and another ProcessLookup than the
  // running system's (tests).
  explicit EtwLiveSource(std::unique_ptr<TraceSession> session, std::unique_ptr<ProcessLookup> processes = nullptr);
  ~EtwLiveSource() override;

  // Starts the session and opens its consumer. Throws Error naming the
  // failing call.
  void start() override;
  // "qpc" (our conversion of the counter) or "etw" (ETW's), once started.
  std::string clock() const override;

  std::string description() const override { return "etw"; }
  bool is_live() const override { return true; }
  void run(BoundedQueue<FileEvent>& queue, Catalog& catalog, RunStats& stats) override;
  void stop() noexcept override;
  std::string error() const override;
  const DeviceMap* device_map() const override { return &m_device_map; }
  // Where warnings go, a line each (nowhere by default); set before run().
  void set_warnings(std::function<void(const std::string&)> warn) { m_warn = std::move(warn); }

 private:
  void on_record(const RawRecord& record) noexcept override;
  // stats.lost from the session's counters and the in-band markers.
  void update_lost(RunStats& stats, const std::optional<EtwLossCounters>& counters);
  // Asks the session for the names of files opened before it started; a
  // Windows that cannot is a warning. Throws Error if the session broke.
  void request_file_rundown();
  // Ends the run with message as its error, unless it already has one.
  void fail(const std::string& message);

  DeviceMap m_device_map;
  std::unique_ptr<ProcessLookup> m_processes;  // used by the pipeline on the decoder thread
  QpcClock m_clock;                            // event times; re-anchored by run() each poll
  bool m_qpc_timestamps = true;                // the session's timestamps are counter values
  bool m_started = false;                      // start() succeeded
  std::unique_ptr<TraceSession> m_session;     // never null
  RecordBuffer m_records;                      // from the ProcessTrace thread to the decoder's
  EtwEventPipeline* m_pipeline = nullptr;      // set by run() before ProcessTrace starts
  std::uint64_t m_session_lost = 0;            // events and buffers the session reported lost

  std::atomic<bool> m_stop{false};
  mutable std::mutex m_mutex;        // guards m_error and the wait in run()
  std::condition_variable m_wakeup;  // stop() or the end of ProcessTrace
  std::string m_error;
  std::function<void(const std::string&)> m_warn = [](const std::string&) {};
};

}  // namespace etwaudit
