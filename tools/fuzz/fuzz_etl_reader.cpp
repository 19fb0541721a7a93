// libFuzzer target: EtlReader over arbitrary bytes.
//
// The input is read as an .etl trace from memory, once with
// OnMalformedBuffer::stop and once with skip. Every record is delivered in
// full: each RawRecord field, every payload and extended data byte, and what
// the reader says about the record's buffer, folded into a checksum the
// compiler cannot drop. The seeds (make_seeds.cpp) are the .etl fixtures and
// prefixes of them.
//
// Error is the expected way to refuse a broken trace. Also checked, from the
// contract in etl_reader.h: under skip, next() never throws; records() counts
// what next() delivered; extended data ends where the payload starts; a
// record's time is to_unix_ns of its raw timestamp.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <span>

#include "core/error.h"
#include "sources/etl/etl_reader.h"
#include "sources/etw/raw_record.h"

namespace {

using namespace etwaudit;

volatile std::uint64_t g_sink;

[[noreturn]] void violated(const char* mode, const char* what) {
  std::fprintf(stderr, "fuzz_etl_reader (%s): %s\n", mode, what);
  std::abort();
}

std::uint64_t checksum(std::span<const std::uint8_t> bytes) {
  std::uint64_t sum = 0;
  for (const std::uint8_t byte : bytes) sum = sum * 31 + byte;
  return sum;
}

std::uint64_t checksum(const Guid& guid) {
  std::uint64_t sum = guid.data1 ^ std::uint64_t{guid.data2} << 32 ^ std::uint64_t{guid.data3} << 48;
  for (const std::uint8_t byte : guid.data4) sum = sum * 31 + byte;
  return sum;
}

std::uint64_t checksum(const RawRecord& record) {
  std::uint64_t sum = checksum(record.provider);
  sum += static_cast<std::uint64_t>(record.time) ^ record.raw_timestamp ^ record.keyword;
  sum += std::uint64_t{record.pid} << 32 | record.tid;
  sum += std::uint64_t{record.processor} ^ record.event_id ^ std::uint64_t{record.hook_id} << 16 ^
         std::uint64_t{record.task} << 32 ^ std::uint64_t{record.flags} << 48;
  sum += std::uint64_t{record.opcode} | std::uint64_t{record.version} << 8 | std::uint64_t{record.level} << 16 |
         std::uint64_t{record.channel} << 24 | std::uint64_t{static_cast<std::uint8_t>(record.header_type)} << 32;
  sum += record.pointer_size() + (record.is_classic() ? 1 : 0) + record.hook_group();
  sum += checksum({record.payload, record.payload_size});
  return sum;
}

std::uint64_t checksum(const EtlLogfileHeader& header) {
  std::uint64_t sum = header.buffer_size ^ header.version ^ header.provider_version ^ header.number_of_processors;
  sum += header.timer_resolution ^ header.maximum_file_size ^ header.log_file_mode ^ header.buffers_written;
  sum += header.pointer_size ^ header.events_lost ^ header.cpu_speed_mhz ^ header.clock_type ^ header.buffers_lost;
  sum += header.perf_freq ^ header.start_timestamp_raw;
  sum += static_cast<std::uint64_t>(header.start_time ^ header.end_time ^ header.boot_time);
  for (const char c : header.logger_name) sum = sum * 31 + static_cast<std::uint8_t>(c);
  for (const char c : header.log_file_name) sum = sum * 31 + static_cast<std::uint8_t>(c);
  return sum;
}

void read_all(std::span<const std::uint8_t> bytes, OnMalformedBuffer on_malformed) {
  const char* mode = on_malformed == OnMalformedBuffer::stop ? "stop" : "skip";
  std::optional<EtlReader> reader;
  try {
    reader.emplace(bytes, "fuzz-input.etl", on_malformed);
  } catch (const Error&) {
    return;
  }
  std::uint64_t sum = checksum(reader->header());
  std::uint64_t delivered = 0;
  RawRecord record;
  try {
    while (reader->next(record)) {
      ++delivered;
      sum += checksum(record);
      const auto extended = reader->extended_data();
      if (!extended.empty() && extended.data() + extended.size() != record.payload) {
        violated(mode, "the extended data does not end where the payload starts");
      }
      sum += checksum(extended);
      if (reader->buffer_offset() >= bytes.size()) violated(mode, "a buffer offset lies past the input");
      sum += reader->buffer_index() ^ reader->buffer_offset();
      if (record.time != reader->to_unix_ns(record.raw_timestamp)) {
        violated(mode, "a record's time is not to_unix_ns of its raw timestamp");
      }
    }
  } catch (const Error& error) {
    if (on_malformed == OnMalformedBuffer::skip) {
      std::fprintf(stderr, "%s\n", error.what());
      violated(mode, "next() threw under OnMalformedBuffer::skip");
    }
  }
  const EtlReaderCounters& counters = reader->counters();
  if (counters.records != delivered) violated(mode, "counters().records differs from the records delivered");
  if (on_malformed == OnMalformedBuffer::stop && counters.malformed != 0) {
    violated(mode, "counters().malformed is not 0 under OnMalformedBuffer::stop");
  }
  sum += counters.buffers ^ counters.compressed_buffers ^ counters.buffers_with_lost_events ^ counters.bytes_read ^
         counters.bytes_decompressed ^ counters.records_skipped ^ counters.malformed;
  for (std::size_t type = 0; type < trace_header_type_count; ++type) {
    sum += counters.of_type(static_cast<TraceHeaderType>(type));
  }
  sum += reader->last_error().size();
  g_sink = g_sink + sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  read_all(bytes, OnMalformedBuffer::stop);
  read_all(bytes, OnMalformedBuffer::skip);
  return 0;
}
