#include <catch2/catch.hpp>

#include "store/coalescer.h"

using namespace etwaudit;
using namespace std::chrono_literals;

namespace {

constexpr std::int64_t ms = 1'000'000;

FileEvent io(std::int64_t time, Op op, std::uint32_t path, std::int64_t offset, std::int64_t size,
             std::uint32_t process = 1) {
  FileEvent event;
  event.time = time;
  event.op = op;
  event.path = path;
  event.process = process;
  event.offset = offset;
  event.size = size;
  return event;
}

std::uint64_t events_in(const std::vector<FileEvent>& rows) {
  std::uint64_t events = 0;
  for (const FileEvent& row : rows) events += row.count;
  return events;
}

}  // namespace

TEST_CASE("sequential reads of one file within the window become one row with exact bytes and range", "[coalescer]") {
  Coalescer coalescer(100ms);
  std::vector<FileEvent> batch, rows;
  for (int i = 0; i < 10; ++i) batch.push_back(io(i * ms, Op::read, 7, i * 4096, 4096));
  coalescer.add(batch, rows);
  CHECK(rows.empty());  // the window is still open
  CHECK(coalescer.held_events() == 10);
  coalescer.flush(rows);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].count == 10);
  CHECK(rows[0].time == 0);
  CHECK(rows[0].offset == 0);
  CHECK(rows[0].size == 40960);
  CHECK(rows[0].end_offset == 40960);
  CHECK(coalescer.held_events() == 0);
}

TEST_CASE("events of other operations, files or processes, or past the window, stay apart", "[coalescer]") {
  Coalescer coalescer(10ms);
  std::vector<FileEvent> batch{io(0, Op::read, 1, 0, 10),       io(1 * ms, Op::write, 1, 0, 10),
                               io(2 * ms, Op::read, 2, 0, 10),  io(3 * ms, Op::read, 1, 10, 10, 2),
                               io(4 * ms, Op::read, 1, 10, 10), io(11 * ms, Op::read, 1, 20, 10)};
  std::vector<FileEvent> rows;
  coalescer.add(batch, rows);
  coalescer.flush(rows);
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].count == 2);  // reads at 0 and 4 ms
  CHECK(rows[0].size == 20);
  CHECK(rows[4].time == 11 * ms);  // 11 ms after the group's first event: a new row
  CHECK(events_in(rows) == 6);
}

TEST_CASE("rows come out in time order across batches and a late event goes alone", "[coalescer]") {
  Coalescer coalescer(5ms);
  std::vector<FileEvent> rows;
  std::vector<FileEvent> first{io(0, Op::read, 1, 0, 1), io(1 * ms, Op::write, 2, 0, 1)};
  coalescer.add(first, rows);
  std::vector<FileEvent> second{io(2 * ms, Op::read, 1, 1, 1), io(20 * ms, Op::read, 3, 0, 1)};
  coalescer.add(second, rows);
  REQUIRE(rows.size() == 2);  // both groups that began before 15 ms are closed
  CHECK(rows[0].time == 0);
  CHECK(rows[0].count == 2);
  CHECK(rows[1].time == 1 * ms);
  std::vector<FileEvent> late{io(3 * ms, Op::read, 1, 2, 1)};
  coalescer.add(late, rows);
  REQUIRE(rows.size() == 3);
  CHECK(rows[2].time == 3 * ms);
  CHECK(rows[2].count == 1);
  coalescer.flush(rows);
  CHECK(events_in(rows) == 5);
}

TEST_CASE("an event without a size is not merged with sized ones, so byte totals stay exact", "[coalescer]") {
  Coalescer coalescer(100ms);
  std::vector<FileEvent> batch{io(0, Op::read, 1, 0, 100), io(1 * ms, Op::read, 1, -1, -1),
                               io(2 * ms, Op::read, 1, 100, 50)};
  std::vector<FileEvent> rows;
  coalescer.add(batch, rows);
  coalescer.flush(rows);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].size == 150);
  CHECK(rows[0].count == 2);
  CHECK(rows[1].size == -1);
}

TEST_CASE("a failed operation is never merged with successful ones of the same kind", "[coalescer]") {
  Coalescer coalescer(100ms);
  std::vector<FileEvent> batch{io(0, Op::open, 1, -1, -1), io(1 * ms, Op::open, 1, -1, -1),
                               io(2 * ms, Op::open, 1, -1, -1)};
  batch[1].status = 0xC0000034;  // STATUS_OBJECT_NAME_NOT_FOUND
  std::vector<FileEvent> rows;
  coalescer.add(batch, rows);
  coalescer.flush(rows);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].count == 2);
  CHECK(rows[0].status == 0);
  CHECK(rows[1].count == 1);
  CHECK(rows[1].status == 0xC0000034);
}
