#include "store/collector.h"

#include <SQLiteCpp/Exception.h>
#include <sqlite3.h>

#include <optional>
#include <thread>

#include "core/human_format.h"
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

bool is_lock_error(const std::exception& error) {
  const auto* sqlite = dynamic_cast<const SQLite::Exception*>(&error);
  if (!sqlite) return false;
  const int code = sqlite->getErrorCode() & 0xff;
  return code == SQLITE_BUSY || code == SQLITE_LOCKED || code == SQLITE_PROTOCOL;
}

Collector::Collector(BoundedQueue<FileEvent>& queue, EventWriter& writer, RunStats& stats, BatchPolicy policy,
                     std::function<void(const std::string&)> warn)
    : m_queue(queue), m_writer(writer), m_stats(stats), m_policy(policy), m_warn(std::move(warn)) {}

void Collector::write(std::vector<FileEvent>& batch) {
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> waiting_since, stopping_since;
  const std::uint64_t dropped_before = m_queue.dropped();
  for (;;) {
    try {
      m_writer.write_batch(batch, m_stats);
      break;
    } catch (const std::exception& e) {
      if (!is_lock_error(e)) {
        m_abandoned += batch.size();
        throw;
      }
      const auto now = Clock::now();
      if (!waiting_since) {
        waiting_since = now;
        if (m_warn)
          m_warn("the database is locked by another connection (" + std::string(e.what()) +
                 "): waiting; events are held in the queue meanwhile (" + with_thousands(m_queue.capacity()) +
                 " at most, more are dropped and counted)");
      }
      if (m_queue.closed() && !stopping_since) stopping_since = now;
      if (stopping_since && now - *stopping_since >= stop_grace) {
        m_abandoned += batch.size();
        throw std::runtime_error("the database was still locked by another connection " + seconds_text(now - *waiting_since) +
                                 " after the collector began waiting, and the run is stopping: " +
                                 with_thousands(batch.size()) + " events of the last batch were dropped");
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
  m_writer.database().exec("PRAGMA busy_timeout = " + std::to_string(lock_attempt.count()));
  std::vector<FileEvent> batch;
  batch.reserve(m_policy.max_events);
  auto last_commit = std::chrono::steady_clock::now();
  while (gather_batch(m_queue, batch, m_policy, m_policy.max_delay)) {
    m_stats.dropped = m_queue.dropped() + m_abandoned;
    const auto now = std::chrono::steady_clock::now();
    if (!batch.empty()) {
      write(batch);
      last_commit = now;
    } else if (now - last_commit >= heartbeat_interval) {
      try {
        m_writer.heartbeat(m_stats);
      } catch (const std::exception& e) {
        if (!is_lock_error(e)) throw;  // locked: the next batch or heartbeat says it
      }
      last_commit = now;
    }
  }
  m_stats.dropped = m_queue.dropped() + m_abandoned;
}

}  // namespace etwaudit
