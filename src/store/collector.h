#pragma once
// Collector: the thread between the queue and the database.
//
// It gathers events into a batch until the batch holds max_events or
// max_delay has passed since its first event, then has the EventWriter commit
// the batch in one transaction. On a quiet system a batch therefore still
// commits within max_delay, and under load batches are large, which is what
// makes the store fast. When the queue is closed it writes what is left and
// returns.
//
// Another program may hold the database's write lock for a while (the sqlite3
// shell in a transaction, a browser with an unsaved change). The collector
// then keeps its batch and writes it again until the lock is gone; meanwhile
// the source goes on filling the queue, and what does not fit is dropped and
// counted there. It says when it starts waiting and how long it waited. Once
// the queue is closed (the run is stopping) it waits at most stop_grace more,
// then counts the batch it could not write as dropped and fails. So at every
// stop: received = written + dropped + excluded + own.
//
// With a coalescing window, batches pass through a Coalescer first; what it
// still holds is written at the end (or counted as dropped if the run fails).
// With a retention policy, the collector prunes between batches (a bounded
// time each round, so pruning a large backlog never stalls the writing), and
// when the disk is full it prunes the oldest segments and tries again before
// giving up. It also treats the disk as a cap: when the free space of the
// database's filesystem runs low, it prunes so that the next batches fit in
// the file's free pages and the file stops growing.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/bounded_queue.h"
#include "core/file_event.h"
#include "core/run_stats.h"
#include "store/checkpointer.h"
#include "store/coalescer.h"
#include "store/retention.h"

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

// True for the errors that mean "another connection has the database now":
// SQLITE_BUSY, SQLITE_LOCKED and SQLITE_PROTOCOL (a lock race in WAL mode).
bool is_lock_error(const std::exception& error);

class Collector {
 public:
  // warn, when set, receives one-line warnings (waiting for a lock, resumed).
  Collector(BoundedQueue<FileEvent>& queue, EventWriter& writer, RunStats& stats, BatchPolicy policy,
            std::function<void(const std::string&)> warn = {});

  // Writes batches until the queue is closed and drained. Exceptions from the
  // writer (disk full, I/O error, a lock that outlasts the stop) propagate;
  // the batch in flight is then counted in abandoned().
  void run();

  // Events taken from the queue that were never written because run() failed.
  std::uint64_t abandoned() const { return m_abandoned; }

  // Coalesce events within this window (see Coalescer); none when unset.
  void set_coalescing(std::chrono::milliseconds window) { m_coalescer.emplace(window); }
  // Prune under policy between batches. Its keep is counted back from the
  // present for a live source, and from the newest event written for a file.
  // Under a small max_bytes the WAL is also cut back to sizing_for(policy)'s
  // limit between batches (see cut_wal).
  void set_retention(const RetentionPolicy& policy, bool live) {
    m_retention = policy;
    m_live = live;
    m_wal_limit = sizing_for(policy).wal_bytes;
    // A fold touches every page of the browsing totals it adds to: under a
    // cap, fold at most the pairs it allows; under a small cap keep none
    // (they would take much of it, sql/0021).
    if (policy.max_bytes && *policy.max_bytes < browsing_totals_min_cap)
      m_writer.stop_keeping_totals();
    else if (policy.max_bytes)
      m_writer.set_totals_hold_limit(
          static_cast<std::size_t>(std::clamp<std::int64_t>(browsing_pairs_allowed(*policy.max_bytes), 256, 32768)));
  }
  // The Checkpointer of the writer's connection, which cut_wal asks to cut the WAL back.
  void set_checkpointer(Checkpointer& checkpointer) { m_checkpointer = &checkpointer; }
  // Pruning done so far by this collector.
  const PruneResult& pruned() const { return m_pruned; }

  // How long a stopping collector still waits for a locked database.
  std::chrono::milliseconds stop_grace{10'000};
  // How long one attempt waits for a locked database inside SQLite (its busy
  // timeout) before the collector warns and tries again.
  std::chrono::milliseconds lock_attempt{1000};
  // The pause between two attempts.
  std::chrono::milliseconds retry_pause{100};

 private:
  // run() but for counting what the coalescer holds when it fails.
  void collect();
  // Writes rows, waiting out a locked database as described above.
  void write(std::vector<FileEvent>& rows);
  // When the disk is short of room: gives the WAL file's room back.
  void truncate_wal() noexcept;
  // Under a small cap: Checkpointer::cut_back.
  void cut_wal() noexcept;
  // The Pruner, made on first use.
  Pruner& pruner();
  // One round of pruning, at most budget long.
  void prune(std::chrono::milliseconds budget);
  // Folds the browsing totals held (store/browsing_totals.h), then prunes.
  void fold_totals();

  BoundedQueue<FileEvent>& m_queue;
  EventWriter& m_writer;
  RunStats& m_stats;
  BatchPolicy m_policy;
  std::function<void(const std::string&)> m_warn;
  std::uint64_t m_abandoned = 0;
  std::optional<Coalescer> m_coalescer;
  RetentionPolicy m_retention;
  bool m_live = true;
  std::optional<Pruner> m_pruner;  // see pruner()
  PruneResult m_pruned;
  int m_over_size_rounds = 0;  // rounds in a row that ended over the cap
  bool m_warned_held = false;  // said that --keep waits for a destination
  bool m_warned_disk_low = false;
  std::uint64_t m_batch_growth = 0;  // bytes the last batch added to the pages in use
  std::int64_t m_wal_limit = wal_size_limit;
  Checkpointer* m_checkpointer = nullptr;
};

}  // namespace etwaudit
