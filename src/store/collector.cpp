#include "store/collector.h"

#include <SQLiteCpp/Exception.h>
#include <sqlite3.h>

#include <filesystem>
#include <optional>
#include <thread>

#include "core/human_format.h"
#include "core/time_format.h"
#include "core/utf8_path.h"
#include "store/event_writer.h"

namespace etwaudit {
namespace {
// A run with no events still commits its counters this often, so that its
// record shows how long it was alive.
constexpr auto heartbeat_interval = std::chrono::seconds(30);

std::string seconds_text(std::chrono::steady_clock::duration duration) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", std::chrono::duration<double>(duration).count());
  return text;
}
}  // namespace

bool gather_batch(BoundedQueue<FileEvent>& queue, std::vector<FileEvent>& batch, const BatchPolicy& policy,
                  std::chrono::milliseconds idle_wait) {
  using Clock = std::chrono::steady_clock;
  batch.clear();
  queue.pop_until(batch, policy.max_events, Clock::now() + idle_wait);
  if (batch.empty()) return !queue.finished();
  const auto deadline = Clock::now() + policy.max_delay;
  // The batch is open: sleep until it can be filled or must be committed,
  // rather than waking for every burst of a slow source.
  while (batch.size() < policy.max_events && !queue.finished() && Clock::now() < deadline)
    queue.pop_until(batch, policy.max_events - batch.size(), deadline, policy.max_events - batch.size());
  return true;
}

namespace {
// SQLite's primary result code of error; 0 when it is not an SQLite error.
int sqlite_code(const std::exception& error) {
  const auto* sqlite = dynamic_cast<const SQLite::Exception*>(&error);
  return sqlite ? sqlite->getErrorCode() & 0xff : 0;
}
}  // namespace

bool is_lock_error(const std::exception& error) {
  const int code = sqlite_code(error);
  return code == SQLITE_BUSY || code == SQLITE_LOCKED || code == SQLITE_PROTOCOL;
}

Collector::Collector(BoundedQueue<FileEvent>& queue, EventWriter& writer, RunStats& stats, BatchPolicy policy,
                     std::function<void(const std::string&)> warn)
    : m_queue(queue), m_writer(writer), m_stats(stats), m_policy(policy), m_warn(std::move(warn)) {}

namespace {
std::uint64_t events_in(const std::vector<FileEvent>& rows) {
  std::uint64_t events = 0;
  for (const FileEvent& row : rows) events += row.count;
  return events;
}

bool is_disk_full(const std::exception& error) {
  return sqlite_code(error) == SQLITE_FULL;
}
}  // namespace

void Collector::truncate_wal() noexcept {
  // Copies the WAL back and cuts its file to nothing; gives up at once (busy)
  // when a reader still needs it.
  try {
    m_writer.database().exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } catch (const std::exception&) {
  }
}

void Collector::cut_wal() noexcept {
  // Under a small cap the WAL is cut back after every batch and every prune
  // transaction: each can add MiBs to it (a prune rewrites pages all over the
  // indexes of a small database), and SQLite starts the WAL over only when a
  // transaction begins with all of it copied back, which a run of them seldom
  // allows, so the WAL would outgrow a small disk. Otherwise the
  // Checkpointer's own rounds are enough.
  if (m_checkpointer && m_wal_limit < wal_size_limit) m_checkpointer->cut_back();
}

Pruner& Collector::pruner() {
  if (!m_pruner) {
    m_pruner.emplace(m_writer.database());
    m_pruner->after_transaction = [this] { cut_wal(); };
  }
  return *m_pruner;
}

void Collector::prune(std::chrono::milliseconds budget) {
  if (!m_retention.enabled()) return;
  const std::int64_t newest = m_writer.last_event_time();
  const std::int64_t now = newest == INT64_MIN ? now_ns() : m_live ? std::max(newest, now_ns()) : newest;
  RetentionPolicy policy = m_retention;
  // The disk itself is a cap: when its free space runs low, keep enough free
  // pages inside the file for the next batches, so the file stops growing.
  std::error_code error;
  const auto space = std::filesystem::space(utf8_path(m_writer.database().getFilename()), error);
  if (!error) {
    const std::uint64_t reserve =
        std::min<std::uint64_t>(space.capacity / 4, std::max<std::uint64_t>(4 * m_batch_growth, 64 << 20));
    if (space.available < reserve) {
      const std::uint64_t used = used_bytes(m_writer.database());
      const std::uint64_t target = used - std::min(used, reserve - space.available);
      truncate_wal();
      if (!policy.max_bytes || target < policy.limit()) {
        policy.max_bytes = target;
        policy.headroom = 0;
        if (!m_warned_disk_low && m_warn)
          m_warn("the disk holding the database has " + human_bytes(space.available) +
                 " free: pruning the oldest events to make room, and going on");
        m_warned_disk_low = true;
      }
    }
  }
  // Over the cap itself, pruning must catch up before more is written.
  if (policy.max_bytes && used_bytes(m_writer.database()) > policy.limit()) budget = std::chrono::milliseconds::max();
  PruneResult round;
  try {
    round = pruner().prune(policy, now, budget);
  } catch (const std::exception& e) {
    // A full disk or a lock: recording comes first; the next round tries again.
    if (!is_lock_error(e) && !is_disk_full(e)) throw;
    truncate_wal();
  }
  if (m_warned_disk_low && round.transactions) truncate_wal();
  // Still over with only the newest segment left: close it, so that the next
  // round can prune it.
  if (policy.max_bytes && used_bytes(m_writer.database()) > policy.limit()) m_writer.close_segment();
  m_pruned.add(round);
  // Over with nothing to prune for several rounds in a row (closing the
  // newest segment, above, gives the next round something): say so once.
  m_over_size_rounds = round.over_size ? m_over_size_rounds + 1 : 0;
  if (round.held_segments > 0 && !m_warned_held && m_warn) {
    m_warn("--keep: " + with_thousands(round.held_segments) +
           " segments past their age are kept until every destination has their events (etwaudit status shows "
           "the backlog; etwaudit ship --forget NAME lets a destination that is gone for good go)");
    m_warned_held = true;
  }
  cut_wal();
  if (m_over_size_rounds == 5 && m_warn)
    m_warn("--max-size: nothing more can be pruned, and names, runs and long-term totals alone take " +
           human_bytes(used_bytes(m_writer.database())) + "; recording goes on above the cap");
}

void Collector::write(std::vector<FileEvent>& rows) {
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> waiting_since, stopping_since;
  const std::uint64_t dropped_before = m_queue.dropped();
  bool retried_without_fold = false;
  for (;;) {
    // The wait starts with the attempt that found the database locked.
    const auto attempt_started = Clock::now();
    try {
      m_writer.write_batch(rows, m_stats);
      break;
    } catch (const std::exception& e) {
      if (is_disk_full(e) && m_retention.enabled()) {
        // Make room by pruning what the policy would prune next, then retry.
        // The WAL's file gives its room back first (pruning writes to the
        // WAL too), then the oldest events make room inside the database.
        RetentionPolicy make_room = m_retention;
        make_room.max_bytes = used_bytes(m_writer.database()) / 10 * 8;
        make_room.headroom = 0;
        PruneResult freed;
        try {
          truncate_wal();
          freed = pruner().prune(make_room, now_ns(), std::chrono::milliseconds(2000));
          truncate_wal();
        } catch (const std::exception&) {
          // pruning needs a little room too; nothing freed
        }
        if (freed.segments > 0) {
          if (m_warn)
            m_warn("the disk is full: pruned the oldest " + with_thousands(freed.events) +
                   " events to make room, and went on");
          continue;
        }
        // The WAL's room back, try once more without folding the browsing
        // totals (they wait for a later batch).
        if (!retried_without_fold) {
          retried_without_fold = true;
          m_writer.postpone_totals_fold();
          continue;
        }
      }
      if (!is_lock_error(e)) {
        m_abandoned += events_in(rows);
        throw;
      }
      const auto now = Clock::now();
      if (!waiting_since) {
        waiting_since = attempt_started;
        if (m_warn)
          m_warn("the database is locked by another connection (" + std::string(e.what()) +
                 "): waiting; events are held in the queue meanwhile (" + with_thousands(m_queue.capacity()) +
                 " at most, more are dropped and counted)");
      }
      if (m_queue.closed() && !stopping_since) stopping_since = now;
      if (stopping_since && now - *stopping_since >= stop_grace) {
        m_abandoned += events_in(rows);
        throw std::runtime_error(
            "the database was still locked by another connection " + seconds_text(now - *waiting_since) +
            " after the collector began waiting, and the run is stopping: " + with_thousands(events_in(rows)) +
            " events of the last batch were dropped");
      }
      m_stats.dropped = m_queue.dropped() + m_abandoned;
      std::this_thread::sleep_for(retry_pause);
    }
  }
  if (waiting_since && m_warn)
    m_warn("the database was locked for " + seconds_text(Clock::now() - *waiting_since) + "; writing resumed (" +
           with_thousands(m_queue.dropped() - dropped_before) + " events dropped meanwhile)");
}

void Collector::run() {
  try {
    collect();
  } catch (...) {
    // What the coalescer holds is part of the batch in flight.
    if (m_coalescer) m_abandoned += m_coalescer->held_events();
    throw;
  }
}

void Collector::collect() {
  m_writer.database().exec("PRAGMA busy_timeout = " + std::to_string(lock_attempt.count()));
  std::vector<FileEvent> batch, rows;
  batch.reserve(m_policy.max_events);
  auto last_commit = std::chrono::steady_clock::now();
  auto write_rows = [&] { write(rows); };
  prune(std::chrono::milliseconds(500));
  while (gather_batch(m_queue, batch, m_policy, m_policy.max_delay)) {
    m_stats.dropped = m_queue.dropped() + m_abandoned;
    const auto now = std::chrono::steady_clock::now();
    rows.clear();
    if (m_coalescer) {
      m_coalescer->add(batch, rows);
      if (batch.empty()) m_coalescer->flush(rows);  // idle: nothing more will join
    } else {
      rows.swap(batch);
    }
    if (!rows.empty()) {
      // With retention, leave room for two batches like this one.
      const std::uint64_t used_before = m_retention.enabled() ? used_bytes(m_writer.database()) : 0;
      write_rows();
      if (m_retention.enabled()) {
        const std::uint64_t used_after = used_bytes(m_writer.database());
        if (used_after > used_before) m_batch_growth = used_after - used_before;
        // And for the browsing totals the next fold may add.
        m_retention.headroom = 2 * m_batch_growth + m_writer.totals_fold_bytes();
      }
      last_commit = now;
      prune(std::chrono::milliseconds(500));
    } else if (m_writer.totals_waiting()) {  // idle: fold what the last batches left
      fold_totals();
    } else if (now - last_commit >= heartbeat_interval) {
      try {
        m_writer.heartbeat(m_stats);
      } catch (const std::exception& e) {
        if (!is_lock_error(e)) throw;  // locked: the next batch or heartbeat says it
      }
      last_commit = now;
      prune(std::chrono::milliseconds(500));
    }
  }
  if (m_coalescer) {
    rows.clear();
    m_coalescer->flush(rows);
    if (!rows.empty()) write_rows();
  }
  // The totals held would otherwise be folded by end_run, past the last
  // prune: under --max-size, fold them while there is a prune to follow.
  if (m_retention.enabled()) fold_totals();
  m_stats.dropped = m_queue.dropped() + m_abandoned;
}

void Collector::fold_totals() {
  try {
    m_writer.fold_totals();
  } catch (const std::exception& e) {
    // Locked, or the disk is full: the totals stay held, and the next batch,
    // the heartbeat, the run's end or the next run folds them; pruning makes
    // room meanwhile.
    if (!is_lock_error(e) && !is_disk_full(e)) throw;
    if (is_disk_full(e)) truncate_wal();
  }
  prune(std::chrono::milliseconds(500));
}

}  // namespace etwaudit
