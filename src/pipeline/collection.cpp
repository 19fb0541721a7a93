#include "pipeline/collection.h"

#include <atomic>
#include <exception>
#include <thread>

#include "sources/event_source.h"
#include "store/checkpointer.h"
#include "store/event_writer.h"

namespace etwaudit {

namespace {

using Clock = std::chrono::steady_clock;

// Waits until the source or the collector is done, a stop is asked for or
// the duration is reached; reports progress once a second. Returns why it
// stopped waiting ("" when a thread ended by itself).
std::string wait_for_end(const std::atomic<bool>& source_done, const std::atomic<bool>& collector_done,
                         const CollectionOptions& options, const RunStats& stats) {
  const auto started = Clock::now();
  auto next_progress = started + std::chrono::seconds(1);
  while (!source_done && !collector_done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto now = Clock::now();
    if (std::string reason = options.stop_requested ? options.stop_requested() : ""; !reason.empty())
      return "stopped by " + reason;
    if (options.duration && now - started >= *options.duration) return "duration reached";
    if (options.on_progress && now >= next_progress) {
      options.on_progress(stats);
      next_progress = now + std::chrono::seconds(1);
    }
  }
  return "";
}

std::string describe(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

// Why the run ended: a write error first, then the source's, then what
// stopped the wait, else the end of the input.
void settle_exit_reason(CollectionResult& result, const std::exception_ptr& collector_failure,
                        const std::exception_ptr& source_failure, const std::string& source_error) {
  if (collector_failure) {
    result.exit_reason = "write error: " + describe(collector_failure);
    result.failed = true;
  } else if (source_failure) {
    result.exit_reason = "source error: " + describe(source_failure);
    result.failed = true;
  } else if (!source_error.empty()) {
    result.exit_reason = "source error: " + source_error;
    result.failed = true;
  } else if (result.exit_reason.empty()) {
    result.exit_reason = "end of input";
  }
}

// The run record waits for a locked database as the batches do.
void end_run(EventWriter& writer, const CollectionResult& result, const RunStats& stats, const Collector& collector) {
  const auto stopping = Clock::now();
  for (;;) {
    try {
      writer.end_run(result.exit_reason, stats);
      return;
    } catch (const std::exception& e) {
      if (is_lock_error(e) && Clock::now() - stopping < collector.stop_grace) {
        std::this_thread::sleep_for(collector.retry_pause);
        continue;
      }
      if (!result.failed) throw;  // the write error already reported is the one that matters
      return;
    }
  }
}

}  // namespace

CollectionResult run_collection(EventSource& source, Catalog& catalog, EventWriter& writer, RunStats& stats,
                                const CollectionOptions& options) {
  BoundedQueue<FileEvent> queue(options.queue_capacity);
  std::atomic<bool> source_done{false}, collector_done{false};
  std::exception_ptr source_failure, collector_failure;

  const StoreSizing sizing = sizing_for(options.retention);
  writer.set_segment_capacity(sizing.segment_events);
  writer.set_slot_rows(sizing.slot_rows);
  Checkpointer checkpointer(writer.database(), std::chrono::milliseconds(200), sizing.wal_bytes);
  std::thread source_thread([&] {
    try {
      source.run(queue, catalog, stats);
    } catch (...) {
      source_failure = std::current_exception();
    }
    source_done = true;
  });
  Collector collector(queue, writer, stats, options.batch, options.on_warning);
  collector.stop_grace = options.lock_wait_at_stop;
  collector.lock_attempt = options.lock_attempt;
  if (options.coalesce) collector.set_coalescing(*options.coalesce);
  collector.set_retention(options.retention, source.is_live());
  collector.set_checkpointer(checkpointer);
  std::thread collector_thread([&] {
    try {
      collector.run();
    } catch (...) {
      collector_failure = std::current_exception();
      queue.close();  // unblocks a source waiting for room
    }
    collector_done = true;
  });

  CollectionResult result;
  result.exit_reason = wait_for_end(source_done, collector_done, options, stats);
  source.stop();
  source_thread.join();
  queue.close();
  collector_thread.join();
  // A failed collector leaves events in the queue: they were received and
  // will never be written.
  std::vector<FileEvent> unwritten;
  queue.pop_until(unwritten, queue.capacity(), Clock::now());
  stats.dropped = queue.dropped() + collector.abandoned() + unwritten.size();
  result.pruned = collector.pruned();
  settle_exit_reason(result, collector_failure, source_failure, source.error());
  end_run(writer, result, stats, collector);
  return result;
}

}  // namespace etwaudit
