#pragma once
// BoundedQueue: the hand-over between one source thread and the collector.
//
// A fixed ring of slots allocated once. The producer never waits: try_push
// either copies the item into a free slot or, when the ring is full, counts a
// drop and returns false. The consumer takes items in bulk and sleeps on a
// condition variable when the ring is empty; the producer only touches the
// mutex when the consumer has said it is asleep, so in steady state a push is
// two atomic operations and a copy.
//
// Exactly one thread may push and one thread may pop at a time.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace etwaudit {

template <typename T>
class BoundedQueue {
 public:
  // capacity is rounded up to a power of two.
  explicit BoundedQueue(std::size_t capacity) : m_slots(round_up_to_power_of_two(capacity)) {
    m_mask = m_slots.size() - 1;
  }

  BoundedQueue(const BoundedQueue&) = delete;
  BoundedQueue& operator=(const BoundedQueue&) = delete;

  std::size_t capacity() const noexcept { return m_slots.size(); }

  // Copies item in; false (and one more drop counted) when full or closed.
  bool try_push(const T& item) noexcept {
    if (m_closed.load(std::memory_order_relaxed) || !store(item)) {
      m_dropped.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    return true;
  }

  // For sources that read a file: instead of dropping, waits while the queue
  // is full (nothing is lost by slowing a file reader down). False only when
  // the queue is closed (the collector failed); the item then counts as a
  // drop, as in try_push, since its source has already counted it received.
  bool push_waiting(const T& item) {
    auto pause = std::chrono::microseconds(20);
    while (!m_closed.load(std::memory_order_relaxed)) {
      if (store(item)) return true;
      std::this_thread::sleep_for(pause);
      if (pause < std::chrono::milliseconds(1)) pause *= 2;
    }
    m_dropped.fetch_add(1, std::memory_order_relaxed);
    return false;
  }

  // Moves up to max_items into out (appending). When fewer than `enough`
  // items are there, first sleeps until there are, the deadline passes or the
  // queue is closed; the producer wakes it only then, not for every item.
  // enough is capped at max_items and at half the ring, so that the producer
  // never fills the ring while the consumer sleeps. Returns how many it took.
  std::size_t pop_until(std::vector<T>& out, std::size_t max_items, std::chrono::steady_clock::time_point deadline,
                        std::size_t enough = 1) {
    if (max_items == 0) return 0;
    enough = std::max<std::size_t>(1, std::min({enough, max_items, m_slots.size() / 2}));
    if (size() < enough && !closed()) {
      std::unique_lock lock(m_mutex);
      m_wake_at.store(enough, std::memory_order_relaxed);
      m_consumer_waiting.store(true, std::memory_order_seq_cst);
      m_wakeup.wait_until(lock, deadline, [this, enough] {
        return m_tail.load(std::memory_order_seq_cst) - m_head.load(std::memory_order_relaxed) >= enough ||
               m_closed.load(std::memory_order_relaxed);
      });
      m_consumer_waiting.store(false, std::memory_order_relaxed);
    }
    return take(out, max_items);
  }

  // No more pushes are accepted; a waiting consumer wakes up. Items already in
  // the queue can still be popped.
  void close() {
    m_closed.store(true, std::memory_order_seq_cst);
    wake_consumer();
  }

  bool closed() const noexcept { return m_closed.load(std::memory_order_relaxed); }
  // True once closed and every item has been taken.
  bool finished() const noexcept {
    return closed() && m_tail.load(std::memory_order_acquire) == m_head.load(std::memory_order_relaxed);
  }
  std::size_t size() const noexcept {
    return m_tail.load(std::memory_order_acquire) - m_head.load(std::memory_order_acquire);
  }
  std::uint64_t dropped() const noexcept { return m_dropped.load(std::memory_order_relaxed); }

 private:
  static std::size_t round_up_to_power_of_two(std::size_t n) {
    std::size_t size = 1;
    while (size < n) size <<= 1;
    return size;
  }

  bool store(const T& item) noexcept {
    const auto tail = m_tail.load(std::memory_order_relaxed);
    if (tail - m_head.load(std::memory_order_acquire) == m_slots.size()) return false;
    m_slots[tail & m_mask] = item;
    m_tail.store(tail + 1, std::memory_order_seq_cst);
    if (m_consumer_waiting.load(std::memory_order_seq_cst) &&
        tail + 1 - m_head.load(std::memory_order_relaxed) >= m_wake_at.load(std::memory_order_relaxed))
      wake_consumer();
    return true;
  }

  std::size_t take(std::vector<T>& out, std::size_t max_items) {
    const auto head = m_head.load(std::memory_order_relaxed);
    const auto tail = m_tail.load(std::memory_order_acquire);
    std::size_t count = tail - head;
    if (count > max_items) count = max_items;
    for (std::size_t i = 0; i < count; ++i) out.push_back(m_slots[(head + i) & m_mask]);
    m_head.store(head + count, std::memory_order_release);
    return count;
  }

  void wake_consumer() {
    { std::lock_guard lock(m_mutex); }
    m_wakeup.notify_one();
  }

  std::vector<T> m_slots;                               // the ring, allocated once
  std::size_t m_mask = 0;                               // capacity - 1
  alignas(64) std::atomic<std::size_t> m_head{0};       // next slot to pop (consumer-owned)
  alignas(64) std::atomic<std::size_t> m_tail{0};       // next slot to fill (producer-owned)
  alignas(64) std::atomic<std::uint64_t> m_dropped{0};  // pushes refused because full or closed
  std::atomic<bool> m_closed{false};                    // close() was called
  std::atomic<bool> m_consumer_waiting{false};          // consumer sleeps on m_wakeup
  std::atomic<std::size_t> m_wake_at{1};                // ...until the ring holds this many
  std::mutex m_mutex;                                   // only guards the sleep
  std::condition_variable m_wakeup;
};

}  // namespace etwaudit
