#pragma once
// Collector: the thread between the queue and the database.
//
// It gathers events into a batch until the batch holds max_events or
// max_delay has passed since its first event, then has the EventWriter commit
// the batch in one transaction. On a quiet system a batch therefore still
// commits within max_delay, and under load batches are large, which is what
// makes the store fast. When the queue is closed it writes what is left and
// returns.

#include <chrono>
#include <cstddef>
#include <vector>

#include "core/bounded_queue.h"
#include "core/file_event.h"
#include "core/run_stats.h"

namespace etwaudit {

class EventWriter;

struct BatchPolicy {
  std::size_t max_events = 100000;            // a batch closes at this many events...
  std::chrono::milliseconds max_delay{1000};  // ...or this long after its first event
};

// Fills batch (cleared first) from queue under policy. Returns false when the
// queue is closed and empty and batch stayed empty; true otherwise, possibly
// with an empty batch when idle_wait passed without an event.
bool gather_batch(BoundedQueue<FileEvent>& queue, std::vector<FileEvent>& batch, const BatchPolicy& policy,
                  std::chrono::milliseconds idle_wait);

class Collector {
 public:
  Collector(BoundedQueue<FileEvent>& queue, EventWriter& writer, RunStats& stats, BatchPolicy policy);

  // Writes batches until the queue is closed and drained. Exceptions from the
  // writer (disk full, I/O error) propagate; the batch in flight is then lost.
  void run();

 private:
  BoundedQueue<FileEvent>& m_queue;
  EventWriter& m_writer;
  RunStats& m_stats;
  BatchPolicy m_policy;
};

}  // namespace etwaudit
