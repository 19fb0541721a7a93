#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "core/bounded_queue.h"

using etwaudit::BoundedQueue;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST_CASE("a full queue refuses pushes and counts each one as dropped", "[queue]") {
  BoundedQueue<int> queue(4);
  for (int i = 0; i < 4; ++i) REQUIRE(queue.try_push(i));
  CHECK_FALSE(queue.try_push(99));
  CHECK_FALSE(queue.try_push(100));
  CHECK(queue.dropped() == 2);
  CHECK(queue.size() == 4);
}

TEST_CASE("items come out in the order they went in, in bulk and up to the limit asked", "[queue]") {
  BoundedQueue<int> queue(8);
  for (int i = 0; i < 6; ++i) queue.try_push(i);
  std::vector<int> out;
  CHECK(queue.pop_until(out, 4, Clock::now()) == 4);
  CHECK(queue.pop_until(out, 4, Clock::now()) == 2);
  CHECK(out == std::vector<int>{0, 1, 2, 3, 4, 5});
  // The ring wraps around.
  for (int i = 6; i < 14; ++i) REQUIRE(queue.try_push(i));
  out.clear();
  queue.pop_until(out, 100, Clock::now());
  CHECK(out == std::vector<int>{6, 7, 8, 9, 10, 11, 12, 13});
}

TEST_CASE("capacity is rounded up to a power of two", "[queue]") {
  CHECK(BoundedQueue<int>(5).capacity() == 8);
  CHECK(BoundedQueue<int>(1024).capacity() == 1024);
}

TEST_CASE("closing the queue wakes a consumer waiting for items", "[queue]") {
  BoundedQueue<int> queue(8);
  std::vector<int> out;
  auto waited = Clock::duration{};
  std::thread consumer([&] {
    const auto start = Clock::now();
    queue.pop_until(out, 8, Clock::now() + 60s);
    waited = Clock::now() - start;
  });
  std::this_thread::sleep_for(50ms);
  queue.close();
  consumer.join();
  CHECK(waited < 30s);
  CHECK(out.empty());
  CHECK(queue.finished());
}

TEST_CASE("a push wakes a consumer waiting for items", "[queue]") {
  BoundedQueue<int> queue(8);
  std::vector<int> out;
  std::thread consumer([&] { queue.pop_until(out, 8, Clock::now() + 60s); });
  std::this_thread::sleep_for(50ms);
  queue.try_push(7);
  consumer.join();
  CHECK(out == std::vector<int>{7});
}

TEST_CASE("a consumer waiting for enough items sleeps through smaller pushes", "[queue]") {
  BoundedQueue<int> queue(256);
  std::vector<int> out;
  std::atomic<bool> returned{false};
  std::thread consumer([&] {
    queue.pop_until(out, 1000, Clock::now() + 60s, 100);
    returned = true;
  });
  for (int i = 0; i < 99; ++i) queue.try_push(i);
  std::this_thread::sleep_for(100ms);
  CHECK_FALSE(returned);
  queue.try_push(99);  // the hundredth wakes it
  consumer.join();
  CHECK(out.size() == 100);
  // Enough is capped at half the ring: a producer never fills it waiting for us.
  BoundedQueue<int> small(8);
  std::vector<int> few;
  std::thread waiter([&] { small.pop_until(few, 1000, Clock::now() + 60s, 1000); });
  for (int i = 0; i < 4; ++i) small.try_push(i);
  waiter.join();
  CHECK(few.size() == 4);
}

TEST_CASE("a closed queue refuses pushes but still hands out what it holds", "[queue]") {
  BoundedQueue<int> queue(8);
  queue.try_push(1);
  queue.close();
  CHECK_FALSE(queue.try_push(2));
  CHECK_FALSE(queue.push_waiting(3));
  CHECK(queue.dropped() == 2);  // both refusals count: their sources counted them received
  CHECK_FALSE(queue.finished());
  std::vector<int> out;
  queue.pop_until(out, 8, Clock::now());
  CHECK(out == std::vector<int>{1});
  CHECK(queue.finished());
}

TEST_CASE("push_waiting waits for room instead of dropping", "[queue]") {
  BoundedQueue<int> queue(2);
  queue.try_push(1);
  queue.try_push(2);
  std::thread producer([&] { CHECK(queue.push_waiting(3)); });
  std::this_thread::sleep_for(20ms);
  std::vector<int> out;
  queue.pop_until(out, 1, Clock::now());
  producer.join();
  queue.pop_until(out, 8, Clock::now());
  CHECK(out == std::vector<int>{1, 2, 3});
  CHECK(queue.dropped() == 0);
}

TEST_CASE("one producer and one consumer pass a million items without loss or reordering", "[queue]") {
  BoundedQueue<std::uint64_t> queue(1024);
  constexpr std::uint64_t count = 1'000'000;
  std::thread producer([&] {
    for (std::uint64_t i = 0; i < count; ++i) queue.push_waiting(i);
    queue.close();
  });
  std::vector<std::uint64_t> out;
  std::uint64_t expected = 0;
  bool in_order = true;
  while (!queue.finished()) {
    out.clear();
    queue.pop_until(out, 4096, Clock::now() + 100ms);
    for (auto value : out) in_order = in_order && value == expected++;
  }
  producer.join();
  CHECK(in_order);
  CHECK(expected == count);
}
