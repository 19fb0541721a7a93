#pragma once
// run_collection: one collector run from start to stop.
//
// The source runs on one thread and the Collector on another; the calling
// thread watches for the end (input exhausted, a stop request, the duration,
// a failure), reports progress about once a second, then shuts down in order:
// stop the source, close the queue, let the collector drain and commit what is
// queued, and write the run record with the reason the run ended. Events the
// collector could not write (it failed) are counted as dropped, so the record
// always adds up: received = written + dropped + excluded + own.

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "core/catalog.h"
#include "core/run_stats.h"
#include "store/collector.h"
#include "store/retention.h"

namespace etwaudit {

class EventSource;
class EventWriter;

struct CollectionOptions {
  BatchPolicy batch;                                    // when batches commit
  std::size_t queue_capacity = 1 << 18;                 // events the queue holds before dropping
  std::optional<std::chrono::milliseconds> duration;    // stop after this long
  std::function<std::string()> stop_requested;          // non-empty: why to stop now
  std::function<void(const RunStats&)> on_progress;     // called about once a second
  std::function<void(const std::string&)> on_warning;   // one-line warnings (a locked database)
  std::chrono::milliseconds lock_wait_at_stop{10'000};  // how long a stopping run waits for a locked database
  std::chrono::milliseconds lock_attempt{1000};         // one wait inside SQLite before warning and retrying
  std::optional<std::chrono::milliseconds> coalesce;    // coalescing window (Coalescer); none when unset
  RetentionPolicy retention;                            // pruning between batches (Pruner)
};

struct CollectionResult {
  std::string exit_reason;  // as stored in collector_runs.exit_reason
  bool failed = false;      // the run ended because of an error
  PruneResult pruned;       // what retention pruned during the run
};

// writer must have begun its run. Never throws for source or write errors:
// they end the run and are reported in the result.
CollectionResult run_collection(EventSource& source, Catalog& catalog, EventWriter& writer, RunStats& stats,
                                const CollectionOptions& options);

}  // namespace etwaudit
