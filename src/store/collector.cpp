#include "store/collector.h"

#include "store/event_writer.h"

namespace etwaudit {
namespace {
// A run with no events still commits its counters this often, so that its
// record shows how long it was alive.
constexpr auto heartbeat_interval = std::chrono::seconds(30);
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

Collector::Collector(BoundedQueue<FileEvent>& queue, EventWriter& writer, RunStats& stats, BatchPolicy policy)
    : m_queue(queue), m_writer(writer), m_stats(stats), m_policy(policy) {}

void Collector::run() {
  std::vector<FileEvent> batch;
  batch.reserve(m_policy.max_events);
  auto last_commit = std::chrono::steady_clock::now();
  while (gather_batch(m_queue, batch, m_policy, m_policy.max_delay)) {
    m_stats.dropped = m_queue.dropped();
    const auto now = std::chrono::steady_clock::now();
    if (!batch.empty()) {
      m_writer.write_batch(batch, m_stats);
      last_commit = now;
    } else if (now - last_commit >= heartbeat_interval) {
      m_writer.heartbeat(m_stats);
      last_commit = now;
    }
  }
  m_stats.dropped = m_queue.dropped();
}

}  // namespace etwaudit
