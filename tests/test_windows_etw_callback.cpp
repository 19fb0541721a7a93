// The live collector's ETW callback, fed EVENT_RECORDs built in memory with
// the real Windows types, as ProcessTrace would hand them over: the records
// must come out of the queue as the right FileEvents. (Wine has no working
// ETW, so this is as close to a live session as the tests get.)
#include <windows.h>
// clang-format off: evntcons.h needs windows.h first.
#include <evntcons.h>
// clang-format on

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/bounded_queue.h"
#include "core/catalog.h"
#include "core/file_event.h"
#include "core/run_stats.h"
#include "sources/live/etw_callback.h"
#include "sources/live/etw_live_source.h"
#include "windows_etw_records.h"

using namespace etwaudit;
using namespace etwaudit::test;

namespace {

// What the pipeline queued.
std::vector<FileEvent> drain(BoundedQueue<FileEvent>& queue) {
  std::vector<FileEvent> events;
  queue.pop_until(events, 1000, std::chrono::steady_clock::now());
  return events;
}

struct Pipeline {
  BoundedQueue<FileEvent> queue{64};
  Catalog catalog;
  RunStats stats;
  EtwEventPipeline pipeline{queue, catalog, stats};
  void* context() { return static_cast<EtwRecordHandler*>(&pipeline); }
};

}  // namespace

TEST_CASE("a kernel name event and a read go through the callback and come out as a read of that file",
          "[windows][etw]") {
  Pipeline p;
  Payload name = name_payload(L"\\Device\\HarddiskVolume1\\data\\report.txt");
  EVENT_RECORD name_record = kernel_record(file_io_class, opcode_name, 2, name, p.context());
  etw_event_record_callback(&name_record);

  Payload read = read_write_payload(4096, 512, tid);
  EVENT_RECORD read_record = kernel_record(file_io_class, opcode_read, 2, read, p.context());
  etw_event_record_callback(&read_record);

  const auto events = drain(p.queue);
  REQUIRE(events.size() == 1);
  const FileEvent& event = events[0];
  CHECK(event.op == Op::read);
  CHECK(event.offset == 4096);
  CHECK(event.size == 512);
  CHECK(event.tid == tid);
  CHECK(event.time == event_unix_ns);
  CHECK(p.catalog.path(event.path) == "\\Device\\HarddiskVolume1\\data\\report.txt");
  CHECK(p.catalog.process(event.process).pid == pid);
  CHECK(p.stats.received == 1);
  CHECK(p.pipeline.decoder_stats().names == 1);
}

TEST_CASE("a write whose name never came is queued with its file unresolved", "[windows][etw]") {
  Pipeline p;
  Payload write = read_write_payload(0, 100, tid);
  EVENT_RECORD record = kernel_record(file_io_class, opcode_write, 2, write, p.context());
  etw_event_record_callback(&record);

  const auto events = drain(p.queue);
  REQUIRE(events.size() == 1);
  CHECK(events[0].op == Op::write);
  CHECK(p.catalog.path(events[0].path).empty());
  CHECK(p.catalog.file_key(events[0].path) == file_key);
}

TEST_CASE("when the queue is full the callback drops the event and returns", "[windows][etw]") {
  BoundedQueue<FileEvent> queue(1);
  Catalog catalog;
  RunStats stats;
  EtwEventPipeline pipeline(queue, catalog, stats);
  Payload read = read_write_payload(0, 1, tid);
  EVENT_RECORD record = kernel_record(file_io_class, opcode_read, 2, read, static_cast<EtwRecordHandler*>(&pipeline));
  for (int i = 0; i < 3; ++i) etw_event_record_callback(&record);
  CHECK(stats.received == 3);
  CHECK(queue.size() == 1);
  CHECK(queue.dropped() == 2);
}

TEST_CASE("a record that is too short is counted as bad input, not queued", "[windows][etw]") {
  Pipeline p;
  Payload read;
  read.u64(0).u64(irp);  // cut off after the Irp
  EVENT_RECORD record = kernel_record(file_io_class, opcode_read, 2, read, p.context());
  etw_event_record_callback(&record);
  CHECK(drain(p.queue).empty());
  CHECK(p.stats.bad_input == 1);
}

TEST_CASE("records without a handler in UserContext are ignored", "[windows][etw]") {
  Payload read = read_write_payload(0, 1, tid);
  EVENT_RECORD record = kernel_record(file_io_class, opcode_read, 2, read, nullptr);
  etw_event_record_callback(&record);  // must not crash
  etw_event_record_callback(nullptr);
  SUCCEED();
}

TEST_CASE("the raw record keeps what the decoder dispatches on", "[windows][etw]") {
  Payload read = read_write_payload(8, 16, tid);
  EVENT_RECORD classic = kernel_record(file_io_class, opcode_read, 3, read, nullptr);
  RawRecord raw = to_raw_record(classic);
  CHECK(raw.provider == known_guid::file_io);
  CHECK(raw.opcode == opcode_read);
  CHECK(raw.version == 3);
  CHECK(raw.is_classic());
  CHECK(raw.event_id == 0);  // a classic event's Id means nothing
  CHECK(raw.pointer_size() == 8);
  CHECK(raw.pid == pid);
  CHECK(raw.tid == tid);
  CHECK(raw.processor == 3);
  CHECK(raw.time == event_unix_ns);
  // A raw counter value is no FILETIME: its time is left to the clock, without overflowing.
  EVENT_RECORD counted = classic;
  counted.EventHeader.TimeStamp.QuadPart = 123'456'789;
  CHECK(to_raw_record(counted).time == 0);
  CHECK(to_raw_record(counted).raw_timestamp == 123'456'789);
  CHECK(raw.raw_timestamp == static_cast<std::uint64_t>(event_filetime));
  CHECK(raw.payload == read.bytes.data());
  CHECK(raw.payload_size == read.bytes.size());

  // A manifest event (Microsoft-Windows-Kernel-File Read) from a 32-bit
  // system: dispatched on its id, with 4-byte pointers.
  constexpr GUID kernel_file = {0xedd08927, 0x9cc4, 0x4e65, {0xb9, 0x70, 0xc2, 0x56, 0x0f, 0xb5, 0xc2, 0x89}};
  EVENT_RECORD manifest = kernel_record(kernel_file, 0, 1, read, nullptr);
  manifest.EventHeader.Flags = EVENT_HEADER_FLAG_32_BIT_HEADER | EVENT_HEADER_FLAG_PROCESSOR_INDEX;
  manifest.EventHeader.EventDescriptor.Id = 15;
  manifest.EventHeader.EventDescriptor.Task = 15;
  manifest.EventHeader.EventDescriptor.Keyword = 0x100;
  manifest.BufferContext.ProcessorIndex = 300;
  raw = to_raw_record(manifest);
  CHECK(raw.provider == known_guid::kernel_file);
  CHECK_FALSE(raw.is_classic());
  CHECK(raw.event_id == 15);
  CHECK(raw.task == 15);
  CHECK(raw.keyword == 0x100);
  CHECK(raw.pointer_size() == 4);
  CHECK(raw.processor == 300);
}
