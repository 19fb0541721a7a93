// RecordBuffer: records handed from ETW's callback thread to the decoder's.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "sources/etw/record_buffer.h"

using namespace etwaudit;
using namespace std::chrono_literals;

namespace {

RawRecord record_with(std::uint32_t tid, const std::vector<std::uint8_t>& payload) {
  RawRecord record;
  record.tid = tid;
  record.opcode = 67;
  record.payload = payload.empty() ? nullptr : payload.data();
  record.payload_size = static_cast<std::uint32_t>(payload.size());
  return record;
}

std::vector<std::uint8_t> bytes(std::size_t size, std::uint8_t first) {
  std::vector<std::uint8_t> out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<std::uint8_t>(first + i);
  return out;
}

}  // namespace

TEST_CASE("records and their payloads come out whole and in order, drain after drain", "[record_buffer]") {
  RecordBuffer buffer(1 << 20);
  std::vector<std::string> seen;
  const auto keep = [&](const RawRecord& record) {
    std::string text = std::to_string(record.tid) + ":" + std::to_string(record.opcode) + ":";
    for (std::uint32_t i = 0; i < record.payload_size; ++i) text += std::to_string(record.payload[i]) + ",";
    seen.push_back(text);
  };
  for (std::uint32_t round = 0; round < 3; ++round) {
    // Payloads of odd sizes, and none: each record stays aligned.
    for (std::uint32_t size : {0u, 1u, 7u, 13u}) {
      const auto payload = bytes(size, static_cast<std::uint8_t>(round * 10));
      CHECK(buffer.push(record_with(round * 100 + size, payload)));
    }
    CHECK(buffer.drain(keep, 0ms) == 4);
  }
  REQUIRE(seen.size() == 12);
  CHECK(seen[0] == "0:67:");
  CHECK(seen[2] == "7:67:0,1,2,3,4,5,6,");
  CHECK(seen[11] == "213:67:20,21,22,23,24,25,26,27,28,29,30,31,32,");
  CHECK(buffer.dropped() == 0);
}

TEST_CASE("a full buffer drops what comes and counts it, and takes records again once drained", "[record_buffer]") {
  const auto payload = bytes(100, 1);
  RecordBuffer buffer(4096);
  std::size_t pushed = 0;
  while (buffer.push(record_with(1, payload))) ++pushed;
  CHECK(pushed > 10);
  CHECK_FALSE(buffer.push(record_with(1, payload)));
  CHECK(buffer.dropped() == 2);
  CHECK(buffer.peak_bytes() <= 4096);
  CHECK(buffer.drain([](const RawRecord&) {}, 0ms) == pushed);
  CHECK(buffer.push(record_with(1, payload)));
}

TEST_CASE("an empty drain waits as long as asked, and close ends the wait at once", "[record_buffer]") {
  RecordBuffer buffer(4096);
  auto started = std::chrono::steady_clock::now();
  CHECK(buffer.drain([](const RawRecord&) {}, 50ms) == 0);
  CHECK(std::chrono::steady_clock::now() - started >= 45ms);

  std::thread closer([&] {
    std::this_thread::sleep_for(50ms);
    buffer.close();
  });
  started = std::chrono::steady_clock::now();
  CHECK(buffer.drain([](const RawRecord&) {}, 10s) == 0);
  CHECK(std::chrono::steady_clock::now() - started < 5s);
  closer.join();
  // A push wakes a waiting drain too.
  RecordBuffer woken(4096);
  std::thread pusher([&] {
    std::this_thread::sleep_for(50ms);
    woken.push(record_with(5, {}));
  });
  started = std::chrono::steady_clock::now();
  CHECK(woken.drain([](const RawRecord&) {}, 10s) == 1);
  CHECK(std::chrono::steady_clock::now() - started < 5s);
  pusher.join();
}

TEST_CASE("a decoder that waits never holds up the thread that pushes", "[record_buffer]") {
  // The decoder stops for a second at its first record (a slow account or
  // process lookup); the pushing thread, ETW's, goes on meanwhile.
  RecordBuffer buffer(8 << 20);
  const auto payload = bytes(64, 0);
  std::atomic<bool> done{false};
  std::size_t decoded = 0;
  std::thread decoder([&] {
    bool waited = false;
    while (true) {
      const bool last = done.load();
      buffer.drain(
          [&](const RawRecord&) {
            if (!waited) std::this_thread::sleep_for(1s);
            waited = true;
            ++decoded;
          },
          10ms);
      if (last) break;
    }
  });
  std::this_thread::sleep_for(20ms);
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < 20000; ++i) REQUIRE(buffer.push(record_with(1, payload)));
  const auto pushing = std::chrono::steady_clock::now() - started;
  done = true;
  decoder.join();
  CHECK(pushing < 500ms);  // not the decoder's second
  CHECK(decoded == 20000);
  CHECK(buffer.dropped() == 0);
}
