#include "pipeline/collection.h"

#include <atomic>
#include <exception>
#include <thread>

#include "sources/event_source.h"
#include "store/checkpointer.h"
#include "store/event_writer.h"

namespace etwaudit {

CollectionResult run_collection(EventSource& source, Catalog& catalog, EventWriter& writer, RunStats& stats,
                                const CollectionOptions& options) {
  using Clock = std::chrono::steady_clock;
  BoundedQueue<FileEvent> queue(options.queue_capacity);
  std::atomic<bool> source_done{false}, collector_done{false};
  std::exception_ptr source_failure, collector_failure;

  const StoreSizing sizing = sizing_for(options.retention);
  writer.set_segment_capacity(sizing.segment_events);
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
  const auto started = Clock::now();
  auto next_progress = started + std::chrono::seconds(1);
  while (!source_done && !collector_done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto now = Clock::now();
    if (std::string reason = options.stop_requested ? options.stop_requested() : ""; !reason.empty()) {
      result.exit_reason = "stopped by " + reason;
      break;
    }
    if (options.duration && now - started >= *options.duration) {
      result.exit_reason = "duration reached";
      break;
    }
    if (options.on_progress && now >= next_progress) {
      options.on_progress(stats);
      next_progress = now + std::chrono::seconds(1);
    }
  }

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

  auto describe = [](const std::exception_ptr& failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      return std::string(e.what());
    } catch (...) {
      return std::string("unknown error");
    }
  };
  if (collector_failure) {
    result.exit_reason = "write error: " + describe(collector_failure);
    result.failed = true;
  } else if (source_failure) {
    result.exit_reason = "source error: " + describe(source_failure);
    result.failed = true;
  } else if (std::string error = source.error(); !error.empty()) {
    result.exit_reason = "source error: " + error;
    result.failed = true;
  } else if (result.exit_reason.empty()) {
    result.exit_reason = "end of input";
  }
  // The run record waits for a locked database as the batches do.
  const auto stopping = Clock::now();
  for (;;) {
    try {
      writer.end_run(result.exit_reason, stats);
      break;
    } catch (const std::exception& e) {
      if (is_lock_error(e) && Clock::now() - stopping < collector.stop_grace) {
        std::this_thread::sleep_for(collector.retry_pause);
        continue;
      }
      if (!result.failed) throw;  // the write error already reported is the one that matters
      break;
    }
  }
  return result;
}

}  // namespace etwaudit
