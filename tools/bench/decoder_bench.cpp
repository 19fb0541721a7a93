// etwaudit-bench --decoder N: what the decoder costs per file operation, and
// what holding each operation until its OperationEnd adds (sessions with
// EVENT_TRACE_FLAG_FILE_IO). The public traces have no OperationEnd records,
// so the records are made here, x64 FileIo v3 as a live session delivers them:
//
//   plain      N FileIo Read records (opcode 67)
//   with ends  each Read followed by its OperationEnd (76): the decoder holds
//              the Read by IRP and delivers it when the end comes
//   in flight  the same, with 64 operations outstanding before their ends
//              come, in a shuffled order, as on a busy machine
//
// 512 files, named once by FileIo Name records before the timing starts.

#include "decoder_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "core/catalog.h"
#include "sources/etw/decoder.h"
#include "sources/etw/raw_record.h"

namespace bench {
namespace {

using etwaudit::RawRecord;

struct Record {
  RawRecord raw;
  std::vector<std::uint8_t> payload;
};

struct Payload {
  std::vector<std::uint8_t> bytes;
  Payload& put(std::uint64_t value, int size) {
    for (int i = 0; i < size; ++i) bytes.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
    return *this;
  }
};

Record file_io(std::uint8_t opcode, std::int64_t time, std::vector<std::uint8_t> payload) {
  Record record;
  record.raw.provider = etwaudit::known_guid::file_io;
  record.raw.opcode = opcode;
  record.raw.version = 3;
  record.raw.flags = etwaudit::event_header_flag::classic_header | etwaudit::event_header_flag::header_64_bit;
  record.raw.pid = 4242;
  record.raw.tid = 4250;
  record.raw.time = time;
  record.payload = std::move(payload);
  return record;
}

constexpr std::uint64_t file_object_base = 0xFFFF'A000'0000'0000;
constexpr std::uint64_t irp_base = 0xFFFF'C000'0000'0000;
constexpr int files = 512;

// FileIo_ReadWrite v3: Offset, IrpPtr, FileObject, FileKey, IssuingThreadId, IoSize, IoFlags.
Record read(std::int64_t time, std::uint64_t irp, int file) {
  const std::uint64_t object = file_object_base + 0x100 * static_cast<std::uint64_t>(file);
  Payload p;
  p.put(4096, 8).put(irp, 8).put(object, 8).put(object, 8).put(4250, 4).put(4096, 4).put(0x60900, 4);
  return file_io(67, time, std::move(p.bytes));
}

// FileIo_OpEnd: IrpPtr, ExtraInfo (bytes moved), NtStatus.
Record op_end(std::int64_t time, std::uint64_t irp) {
  Payload p;
  p.put(irp, 8).put(4096, 8).put(0, 4);
  return file_io(76, time, std::move(p.bytes));
}

// FileIo_Name: FileObject, FileName (UTF-16, NUL-terminated).
Record name(int file) {
  Payload p;
  p.put(file_object_base + 0x100 * static_cast<std::uint64_t>(file), 8);
  const std::string path = "\\Device\\HarddiskVolume2\\data\\file" + std::to_string(file) + ".bin";
  for (char c : path) p.put(static_cast<unsigned char>(c), 2);
  p.put(0, 2);
  return file_io(0, 0, std::move(p.bytes));
}

struct CountingSink final : etwaudit::FileEventSink {
  std::uint64_t events = 0;
  std::uint64_t bytes = 0;
  void deliver(const etwaudit::FileEvent& event) override {
    ++events;
    bytes += static_cast<std::uint64_t>(event.size);
  }
};

// The records of one run: N reads, with or without ends, `in_flight` outstanding.
std::vector<Record> make_records(std::uint64_t operations, bool ends, int in_flight) {
  std::mt19937_64 random(42);
  std::vector<Record> records;
  records.reserve(operations * (ends ? 2 : 1));
  std::vector<std::uint64_t> pending;
  std::int64_t time = 1'700'000'000'000'000'000;
  for (std::uint64_t i = 0; i < operations; ++i) {
    const std::uint64_t irp = irp_base + 0x10 * (i % 100'000);
    records.push_back(read(time += 1000, irp, static_cast<int>(random() % files)));
    if (!ends) continue;
    pending.push_back(irp);
    if (static_cast<int>(pending.size()) > in_flight) {
      std::swap(pending[random() % pending.size()], pending.back());
      records.push_back(op_end(time += 1000, pending.back()));
      pending.pop_back();
    }
  }
  for (std::uint64_t irp : pending) records.push_back(op_end(time += 1000, irp));
  return records;
}

struct Timing {
  double ns_per_operation = 0;
  etwaudit::DecoderStats stats;
  std::uint64_t delivered = 0, bytes = 0;
};

Timing time_decoder(std::vector<Record>& records, std::uint64_t operations) {
  std::vector<Record> names;
  for (int file = 0; file < files; ++file) names.push_back(name(file));
  Timing best;
  best.ns_per_operation = 1e18;
  for (int attempt = 0; attempt < 3; ++attempt) {
    etwaudit::Catalog catalog;
    CountingSink sink;
    etwaudit::EtwDecoder decoder(catalog, sink);
    for (Record& record : names) {
      record.raw.payload = record.payload.data();
      record.raw.payload_size = static_cast<std::uint32_t>(record.payload.size());
      decoder.decode(record.raw);
    }
    const auto started = std::chrono::steady_clock::now();
    for (Record& record : records) {
      record.raw.payload = record.payload.data();
      record.raw.payload_size = static_cast<std::uint32_t>(record.payload.size());
      decoder.decode(record.raw);
    }
    decoder.flush();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const double per_operation = seconds * 1e9 / static_cast<double>(operations);
    if (per_operation < best.ns_per_operation) {
      best.ns_per_operation = per_operation;
      best.stats = decoder.stats();
      best.delivered = sink.events;
      best.bytes = sink.bytes;
    }
  }
  return best;
}

}  // namespace

int decoder_benchmark(std::uint64_t operations) {
  struct Case {
    const char* name;
    bool ends;
    int in_flight;
  };
  const Case cases[] = {{"plain", false, 0}, {"with ends", true, 0}, {"in flight", true, 64}};
  double plain = 0;
  std::printf("decoder: %llu FileIo Read operations (x64, v3) on %d named files, best of 3\n",
              static_cast<unsigned long long>(operations), files);
  for (const Case& c : cases) {
    std::vector<Record> records = make_records(operations, c.ends, c.in_flight);
    const Timing timing = time_decoder(records, operations);
    // Until the first OperationEnd the decoder does not know the session has
    // them: the operations before it go at once.
    const std::uint64_t held = c.ends ? operations - static_cast<std::uint64_t>(c.in_flight) - 1 : 0;
    if (timing.delivered != operations || timing.stats.never_completed != 0 || timing.stats.completed != held) {
      std::fprintf(stderr, "etwaudit-bench: %s: delivered %llu of %llu, completed %llu, never completed %llu\n", c.name,
                   static_cast<unsigned long long>(timing.delivered), static_cast<unsigned long long>(operations),
                   static_cast<unsigned long long>(timing.stats.completed),
                   static_cast<unsigned long long>(timing.stats.never_completed));
      return 1;
    }
    if (!c.ends) plain = timing.ns_per_operation;
    std::printf("%-10s %8.1f ns per operation (%d record%s)  %+7.1f ns against plain\n", c.name,
                timing.ns_per_operation, c.ends ? 2 : 1, c.ends ? "s" : "", timing.ns_per_operation - plain);
  }
  return 0;
}

}  // namespace bench
