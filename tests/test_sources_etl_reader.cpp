#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "core/time_format.h"
#include "etl_fixtures.h"
#include "sources/etl/etl_reader.h"
#include "sources/etw/raw_record.h"
#include "support/etl_writer.h"
#include "temp_dir.h"

#ifndef _WIN32
#include <sys/stat.h>
#endif

using namespace etwaudit;
using etwaudit::test::EtlWriter;
using etwaudit::test::perfview_trace;
using etwaudit::test::TempDir;
using etwaudit::test::windows7_trace;

// The real traces are read in place from ETWAUDIT_ETL_FIXTURES (etl_fixtures.h).
namespace {

using Bytes = std::vector<char>;

void put_u32(Bytes& bytes, std::size_t at, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<char>(value >> (8 * i));
}

Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

void write_file(const std::string& path, const Bytes& bytes, std::size_t size) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(size));
}

// Records counted by (provider, event id, opcode, version).
using Key = std::tuple<Guid, int, int, int>;

struct Tally {
  std::map<Key, std::uint64_t> by_event;
  std::uint64_t total = 0;

  std::uint64_t classic(const Guid& provider, int opcode, int version = -1) const {
    std::uint64_t count = 0;
    for (const auto& [key, n] : by_event) {
      if (std::get<0>(key) == provider && std::get<2>(key) == opcode && (version < 0 || std::get<3>(key) == version)) {
        count += n;
      }
    }
    return count;
  }
  std::uint64_t manifest(const Guid& provider, int id, int version) const {
    std::uint64_t count = 0;
    for (const auto& [key, n] : by_event) {
      if (std::get<0>(key) == provider && std::get<1>(key) == id && std::get<3>(key) == version) count += n;
    }
    return count;
  }
};

Tally tally(EtlReader& reader) {
  Tally result;
  reader.for_each([&](const RawRecord& record) {
    ++result.by_event[{record.provider, record.event_id, record.opcode, record.version}];
    ++result.total;
  });
  return result;
}

// The UTF-16LE text at bytes (up to a NUL or the end), as ASCII with '?' for the rest.
std::string ascii_from_utf16(const std::uint8_t* bytes, std::size_t size) {
  std::string text;
  for (std::size_t i = 0; i + 1 < size; i += 2) {
    const unsigned unit = bytes[i] | bytes[i + 1] << 8;
    if (unit == 0) break;
    text += unit < 0x80 ? static_cast<char>(unit) : '?';
  }
  return text;
}

bool is_kernel_header(TraceHeaderType type) {
  switch (type) {
    case TraceHeaderType::system32:
    case TraceHeaderType::system64:
    case TraceHeaderType::compact32:
    case TraceHeaderType::compact64:
    case TraceHeaderType::perfinfo32:
    case TraceHeaderType::perfinfo64: return true;
    default: return false;
  }
}

// Reads the whole file; true when it ended cleanly, false on an Error. Any
// other exception fails the test.
bool reads_cleanly(const std::string& path, OnMalformedBuffer on_malformed, std::string* message = nullptr) {
  try {
    EtlReader reader(path, on_malformed);
    RawRecord record;
    while (reader.next(record)) {
    }
    return true;
  } catch (const Error& error) {
    if (message) *message = error.what();
    return false;
  }
}

std::int64_t unix_ns(std::uint64_t filetime) {
  return (static_cast<std::int64_t>(filetime) - 116444736000000000) * 100;
}
}  // namespace

TEST_CASE("GUIDs of .etl records print and parse in the registry form", "[etl]") {
  CHECK(known_guid::file_io.to_string() == "{90cbdc39-4a3e-11d1-84f4-0000f80464e3}");
  CHECK(Guid::parse("{90cbdc39-4a3e-11d1-84f4-0000f80464e3}") == known_guid::file_io);
  CHECK(Guid::parse("EDD08927-9CC4-4E65-B970-C2560FB5C289") == known_guid::kernel_file);
  CHECK_FALSE(Guid::parse("{90cbdc39-4a3e-11d1-84f4-0000f80464e}").has_value());
  CHECK_FALSE(Guid::parse("{90cbdc39-4a3e-11d1-84f4+0000f80464e3}").has_value());
  const std::uint8_t bytes[16] = {0x39, 0xdc, 0xcb, 0x90, 0x3e, 0x4a, 0xd1, 0x11,
                                  0x84, 0xf4, 0x00, 0x00, 0xf8, 0x04, 0x64, 0xe3};
  CHECK(Guid::from_bytes(bytes) == known_guid::file_io);
}

TEST_CASE("the PerfView .etl trace yields the records an independent parser counted", "[etl]") {
  EtlReader reader(perfview_trace());
  const Tally seen = tally(reader);

  CHECK(seen.total == 179'473);
  CHECK(seen.classic(known_guid::file_io, 36) == 3'054);  // FileRundown
  CHECK(seen.classic(known_guid::file_io, 32) == 16);     // FileCreate (name)
  CHECK(seen.classic(known_guid::file_io, 35) == 14);     // FileDelete (name)
  CHECK(seen.classic(known_guid::disk_io, 10) == 1'208);  // read
  CHECK(seen.classic(known_guid::disk_io, 11) == 21);     // write
  CHECK(seen.manifest(known_guid::kernel_file, 12, 1) == 562);
  CHECK(seen.classic(known_guid::process, 3, 4) == 32);  // DCStart

  const auto& counters = reader.counters();
  CHECK(counters.records == 179'473);
  CHECK(counters.buffers == reader.header().buffers_written);
  CHECK(counters.buffers == 360);
  CHECK(counters.compressed_buffers == 359);
  CHECK(counters.bytes_decompressed > 20'000'000);
  CHECK(counters.records_skipped == 0);
  CHECK(counters.malformed == 0);
  CHECK(counters.of_type(TraceHeaderType::perfinfo64) == 100'157);
  CHECK(counters.of_type(TraceHeaderType::event_header32) == 33'378);
  CHECK(counters.of_type(TraceHeaderType::event_header64) == 34'765);
  CHECK(counters.of_type(TraceHeaderType::system64) == 3'188);  // the logfile header record is not delivered
  CHECK(counters.of_type(TraceHeaderType::full_header64) == 7'956);
}

TEST_CASE("the PerfView .etl logfile header describes a 64-bit trace of July 2020", "[etl]") {
  EtlReader reader(perfview_trace());
  const EtlLogfileHeader& header = reader.header();
  CHECK(header.pointer_size == 8);
  CHECK(header.clock_type == 1);
  CHECK(header.perf_freq == 10'000'000);
  CHECK(header.number_of_processors == 8);
  CHECK(header.buffer_size == 0x10000);
  CHECK(header.provider_version == 9200);
  CHECK(header.events_lost == 0);
  CHECK(header.logger_name == "Relogger");
  CHECK(header.log_file_name == "[multiple files]");
  CHECK(format_iso8601(header.start_time).rfind("2020-07-29T00:07:00.", 0) == 0);
  CHECK(header.end_time > header.start_time);
  CHECK(header.end_time - header.start_time < 60 * ns_per_second);
  CHECK(header.boot_time < header.start_time);
}

TEST_CASE(".etl kernel records take their class GUID and opcode from the HookId", "[etl]") {
  EtlReader reader(perfview_trace());
  std::uint64_t file_io = 0;
  std::uint64_t rundown_paths = 0;
  std::uint64_t mismatches = 0;
  reader.for_each([&](const RawRecord& record) {
    if (!is_kernel_header(record.header_type)) {
      if (record.hook_id != 0) ++mismatches;
      return;
    }
    if (!record.is_classic() || record.opcode != (record.hook_id & 0xFF)) ++mismatches;
    if (record.hook_group() == 0x04) {
      ++file_io;
      if (record.provider != known_guid::file_io) ++mismatches;
    }
    if (record.hook_group() == 0x01 && record.provider != known_guid::disk_io) ++mismatches;
    if (record.hook_id == 0x0424 && record.payload_size > record.pointer_size()) {
      // FileIo_Name: FileObject (a pointer), then the NT path.
      const std::string path =
          ascii_from_utf16(record.payload + record.pointer_size(), record.payload_size - record.pointer_size());
      if (path.rfind("\\Device\\", 0) == 0) ++rundown_paths;
    }
  });
  CHECK(mismatches == 0);
  CHECK(file_io == 3'054 + 16 + 14);
  CHECK(rundown_paths > 3'000);
}

TEST_CASE(".etl records take their pointer size from their own header type", "[etl]") {
  EtlReader reader(perfview_trace());
  std::uint64_t narrow = 0;
  std::uint64_t mismatches = 0;
  reader.for_each([&](const RawRecord& record) {
    const auto type = record.header_type;
    const bool is_32 = type == TraceHeaderType::system32 || type == TraceHeaderType::compact32 ||
                       type == TraceHeaderType::perfinfo32 || type == TraceHeaderType::full_header32 ||
                       type == TraceHeaderType::instance32 || type == TraceHeaderType::event_header32;
    const auto width = record.flags & (event_header_flag::header_32_bit | event_header_flag::header_64_bit);
    if (record.pointer_size() != (is_32 ? 4u : 8u)) ++mismatches;
    if (width != (is_32 ? event_header_flag::header_32_bit : event_header_flag::header_64_bit)) ++mismatches;
    if (is_32) ++narrow;
  });
  CHECK(mismatches == 0);
  CHECK(narrow == 33'378 + 2 + 27);  // 32-bit event headers, system headers and full headers
}

TEST_CASE(".etl manifest events with extended data have their payload after the items", "[etl]") {
  EtlReader reader(perfview_trace());
  std::uint64_t creates = 0;
  std::uint64_t with_paths = 0;
  reader.for_each([&](const RawRecord& record) {
    if (record.provider != known_guid::kernel_file || record.event_id != 12) return;
    ++creates;
    if ((record.flags & event_header_flag::extended_info) == 0 || reader.extended_data().empty()) return;
    // Create V1: Irp, FileObject, IssuingThreadId, CreateOptions, CreateAttributes, ShareAccess, FileName.
    if (record.payload_size > 32 &&
        ascii_from_utf16(record.payload + 32, record.payload_size - 32).rfind("\\Device\\", 0) == 0) {
      ++with_paths;
    }
  });
  CHECK(creates == 562);
  CHECK(with_paths == 562);
}

TEST_CASE("PerfView .etl record times start at the trace start and run in order within a buffer", "[etl]") {
  EtlReader reader(perfview_trace());
  const EtlLogfileHeader header = reader.header();
  std::uint64_t last_buffer = ~std::uint64_t{0};
  std::uint64_t last_raw = 0;
  std::uint64_t backwards = 0;
  std::uint64_t late_kernel = 0;
  std::uint64_t early = 0;
  std::uint64_t far_late = 0;
  std::uint64_t unconverted = 0;
  reader.for_each([&](const RawRecord& record) {
    if (reader.buffer_index() == last_buffer && record.raw_timestamp < last_raw) ++backwards;
    last_buffer = reader.buffer_index();
    last_raw = record.raw_timestamp;
    if (record.time != reader.to_unix_ns(record.raw_timestamp)) ++unconverted;
    if (record.time < header.start_time) ++early;
    if (is_kernel_header(record.header_type) && record.time > header.end_time) ++late_kernel;
    // The merged CLR rundown was recorded after the kernel session ended.
    if (record.time > header.end_time + 10 * ns_per_second) ++far_late;
  });
  CHECK(backwards == 0);
  CHECK(early == 0);
  CHECK(late_kernel == 0);
  CHECK(far_late == 0);
  CHECK(unconverted == 0);
}

TEST_CASE("the Windows 7 .etl trace yields the Kernel-Process events an independent parser counted", "[etl]") {
  EtlReader reader(windows7_trace());
  const Tally seen = tally(reader);
  const Guid& process = known_guid::kernel_process;
  CHECK(seen.manifest(process, 1, 0) == 4);      // ProcessStart
  CHECK(seen.manifest(process, 2, 1) == 4);      // ProcessStop
  CHECK(seen.manifest(process, 3, 1) == 287);    // ThreadStart
  CHECK(seen.manifest(process, 4, 1) == 264);    // ThreadStop
  CHECK(seen.manifest(process, 5, 0) == 1'115);  // ImageLoad
  CHECK(seen.manifest(process, 6, 0) == 1'153);  // ImageUnload
  CHECK(seen.total == 10'343);

  const EtlLogfileHeader& header = reader.header();
  CHECK(header.pointer_size == 8);
  CHECK(header.buffer_size == 8192);
  CHECK(header.provider_version == 7600);
  CHECK(header.clock_type == 1);
  CHECK(format_iso8601(header.start_time).rfind("2010-10-29T", 0) == 0);
  CHECK(header.logger_name == "DataCollector02");
  CHECK(reader.counters().buffers == 182);
  CHECK(reader.counters().buffers == header.buffers_written);
  CHECK(reader.counters().compressed_buffers == 0);
}

TEST_CASE("Windows 7 .etl record times lie within the trace and in order within a buffer", "[etl]") {
  EtlReader reader(windows7_trace());
  const EtlLogfileHeader header = reader.header();
  std::uint64_t last_buffer = ~std::uint64_t{0};
  std::uint64_t last_raw = 0;
  std::uint64_t backwards = 0;
  std::uint64_t outside = 0;
  std::uint64_t processors_seen = 0;
  std::uint64_t without_pid = 0;
  reader.for_each([&](const RawRecord& record) {
    if (reader.buffer_index() == last_buffer && record.raw_timestamp < last_raw) ++backwards;
    last_buffer = reader.buffer_index();
    last_raw = record.raw_timestamp;
    if (record.time < header.start_time || record.time > header.end_time) ++outside;
    processors_seen |= std::uint64_t{1} << (record.processor & 63);
    if (record.pid == RawRecord::unknown_id) ++without_pid;
  });
  CHECK(backwards == 0);
  CHECK(outside == 0);
  CHECK(without_pid == 0);
  CHECK(processors_seen == 0b11);  // a two-processor machine
}

TEST_CASE("a file that is not an .etl trace is refused with a reason", "[etl]") {
  TempDir dir;
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(EtlReader(dir.file("missing.etl")), Contains("cannot open ETL file") && Contains("missing.etl"));
  CHECK_THROWS_WITH(EtlReader(dir.path()), Contains("is a directory"));
  const std::string text = dir.file("notes.etl");
  std::ofstream(text) << std::string(500, 'x');
  CHECK_THROWS_WITH(EtlReader(text), Contains("is it an .etl file?"));
  const std::string tiny = dir.file("tiny.etl");
  std::ofstream(tiny) << "ETL";
  CHECK_THROWS_WITH(EtlReader(tiny), Contains("too few for a buffer header"));
}

TEST_CASE("truncated copies of the .etl traces throw an Error or end cleanly", "[etl]") {
  TempDir dir;
  const std::string path = dir.file("truncated.etl");
  for (const std::string& fixture : {perfview_trace(), windows7_trace()}) {
    const Bytes bytes = read_file(fixture);
    const std::vector<std::size_t> sizes = {0,
                                            1,
                                            0x47,
                                            0x48,
                                            0x60,
                                            0x100,
                                            0x1b8,
                                            0x1ff,
                                            0x200,
                                            0x247,
                                            0x248,
                                            0x300,
                                            0x2000,
                                            0x2047,
                                            0x2100,
                                            0x3ca7,
                                            0x3ca8,
                                            0x3d00,
                                            bytes.size() / 3,
                                            bytes.size() / 2,
                                            bytes.size() - 1};
    for (const std::size_t size : sizes) {
      if (size > bytes.size()) continue;
      CAPTURE(fixture, size);
      write_file(path, bytes, size);
      std::string message;
      if (!reads_cleanly(path, OnMalformedBuffer::stop, &message)) {
        CHECK_THAT(message, Catch::Matchers::Contains("truncated.etl"));
      }
      reads_cleanly(path, OnMalformedBuffer::skip);
    }
  }
}

TEST_CASE("an .etl trace cut inside a buffer names the buffer, or under skip keeps what came before", "[etl]") {
  TempDir dir;
  const std::string path = dir.file("cut.etl");
  const Bytes bytes = read_file(windows7_trace());
  write_file(path, bytes, 0x2000 * 100 + 0x1000);  // half of buffer 100
  std::string message;
  CHECK_FALSE(reads_cleanly(path, OnMalformedBuffer::stop, &message));
  CHECK_THAT(message, Catch::Matchers::Contains("buffer 100 at offset 0xc8000") &&
                          Catch::Matchers::Contains("runs past the end of the file"));

  EtlReader reader(path, OnMalformedBuffer::skip);
  const Tally seen = tally(reader);
  CHECK(seen.total > 5'000);
  CHECK(seen.total < 10'343);
  CHECK(reader.counters().malformed == 1);
  CHECK(reader.counters().buffers == 100);
  CHECK_THAT(reader.last_error(), Catch::Matchers::Contains("buffer 100"));
}

TEST_CASE("a broken .etl record marker stops the reading, or under skip costs only its buffer", "[etl]") {
  TempDir dir;
  const std::string path = dir.file("marker.etl");
  Bytes bytes = read_file(windows7_trace());
  bytes[0x2000 + 0x48 + 3] = 0x00;  // first record of buffer 1: no header flag
  write_file(path, bytes, bytes.size());
  std::string message;
  CHECK_FALSE(reads_cleanly(path, OnMalformedBuffer::stop, &message));
  CHECK_THAT(message, Catch::Matchers::Contains("buffer 1 at offset 0x2000: record at buffer byte 0x48") &&
                          Catch::Matchers::Contains("is not a record header"));

  EtlReader reader(path, OnMalformedBuffer::skip);
  const Tally seen = tally(reader);
  CHECK(reader.counters().malformed == 1);
  CHECK(seen.total == 10'343 - 82);  // buffer 1 holds 82 records
}

TEST_CASE("a corrupt compressed .etl buffer names the buffer and the XPRESS problem", "[etl]") {
  TempDir dir;
  const std::string path = dir.file("xpress.etl");
  Bytes bytes = read_file(perfview_trace());
  for (std::size_t i = 0x248 + 100; i < 0x248 + 140; ++i) bytes[i] = static_cast<char>(0xFF);
  write_file(path, bytes, bytes.size());
  std::string message;
  CHECK_FALSE(reads_cleanly(path, OnMalformedBuffer::stop, &message));
  CHECK_THAT(message, Catch::Matchers::Contains("buffer 1 at offset 0x200") &&
                          (Catch::Matchers::Contains("XPRESS") || Catch::Matchers::Contains("record") ||
                           Catch::Matchers::Contains("decompresses")));

  EtlReader reader(path, OnMalformedBuffer::skip);
  const Tally seen = tally(reader);
  CHECK(reader.counters().malformed >= 1);
  CHECK(seen.total > 170'000);
}

TEST_CASE("a compressed .etl buffer may not claim more than a trace buffer holds", "[etl]") {
  TempDir dir;
  const std::string path = dir.file("claims.etl");
  Bytes bytes = read_file(perfview_trace());
  put_u32(bytes, 0x200 + 4, 64u << 20);  // buffer 1's SavedOffset (0xffb0) now claims 64 MiB
  write_file(path, bytes, bytes.size());
  std::string message;
  CHECK_FALSE(reads_cleanly(path, OnMalformedBuffer::stop, &message));
  CHECK_THAT(message,
             Catch::Matchers::EndsWith("buffer 1 at offset 0x200: compressed buffer has an uncompressed size "
                                       "(SavedOffset) of 0x4000000, more than the trace's buffer size 0x10000"));
  EtlReader reader(path, OnMalformedBuffer::skip);
  const Tally seen = tally(reader);
  CHECK(reader.counters().malformed == 1);
  CHECK(seen.total > 170'000);

  // Before the logfile header gives the buffer size, ETW's largest buffer is the limit.
  bytes = read_file(perfview_trace());
  bytes[0x34] = static_cast<char>(bytes[0x34] | 0x40);  // buffer 0 compressed
  put_u32(bytes, 4, (16u << 20) + 1);
  write_file(path, bytes, bytes.size());
  CHECK_THROWS_WITH(EtlReader(path), Catch::Matchers::Contains("(SavedOffset) of 0x1000001, more than an ETW buffer "
                                                               "can hold, 0x1000000") &&
                                         Catch::Matchers::Contains("is it an .etl file?"));
}

#ifndef _WIN32
TEST_CASE("the .etl reader refuses a FIFO or a device at once instead of waiting or reading forever", "[etl]") {
  TempDir dir;
  const std::string fifo = dir.file("trace.etl");
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(EtlReader(fifo),
                    Catch::Matchers::EndsWith("trace.etl': it is not a regular file but a FIFO (a pipe)"));
  CHECK_THROWS_WITH(EtlReader("/dev/zero"),
                    "cannot read ETL file '/dev/zero': it is not a regular file but a character device");
}
#endif

TEST_CASE(".etl traces with flipped bytes throw an Error or end cleanly", "[etl]") {
  TempDir dir;
  const std::string path = dir.file("flipped.etl");
  std::mt19937 random(7);
  for (const std::string& fixture : {windows7_trace(), perfview_trace()}) {
    const Bytes original = read_file(fixture);
    for (int variant = 0; variant < 12; ++variant) {
      Bytes bytes = original;
      const int flips = variant < 4 ? 1 : 40;
      for (int i = 0; i < flips; ++i) {
        // Half of the flips hit the buffer headers and the first records, where structure lives.
        const std::size_t at = (i % 2 == 0) ? random() % 0x400 : random() % bytes.size();
        bytes[at] = static_cast<char>(bytes[at] ^ (1 << (random() % 8)));
      }
      write_file(path, bytes, bytes.size());
      CAPTURE(fixture, variant);
      reads_cleanly(path, OnMalformedBuffer::stop);
      reads_cleanly(path, OnMalformedBuffer::skip);
    }
  }
}

TEST_CASE("a 32-bit .etl trace with every kind of record header reads back field by field", "[etl]") {
  TempDir dir;
  const std::string path = dir.file("built.etl");
  const std::uint64_t start = EtlWriter::filetime_2026_12_02;  // clock type 2: raw values are FILETIMEs
  const Guid mof{0x12345678, 0x9abc, 0xdef0, {1, 2, 3, 4, 5, 6, 7, 8}};
  EtlWriter etl(false, 2, start);
  etl.begin_buffer(3);
  etl.add(EtlWriter::kernel(0x01, 0x8003, 0x0443, start + 10, {'P', 'A', 'Y', 'L'}));  // 8 extra header bytes
  etl.add(EtlWriter::kernel(0x03, 0x0202, 0x0501, start + 20, {'C'}));                 // 16 extra header bytes
  etl.add(EtlWriter::kernel(0x10, 0x0002, 0x0F2E, start + 30, {'p', 'i'}));
  etl.add(EtlWriter::skipped(0x90, 0x00, 16));  // WPP message
  etl.add(EtlWriter::classic(0x0B, mof, 5, 0x0101, start + 40, "inst"));
  etl.add(EtlWriter::skipped(0xC0, 0x0C, 24));  // timed
  etl.add(EtlWriter::event(0x12, known_guid::kernel_file, 15, 1, start + 50, {16, 12}, "DATA"));
  etl.add(EtlWriter::classic(0x0A, mof, 6, 2, start + 60, "full"));
  etl.add_raw({'\xff', '\xff', '\xff', '\xff'});  // end of records: what follows is not read
  etl.add(EtlWriter::kernel(0x01, 2, 0x0443, start + 70, {'X'}));
  etl.end_buffer();
  etl.begin_buffer(1);
  etl.add(EtlWriter::event(0x13, known_guid::kernel_process, 1, 0, start + 80, {}, "zipped"));
  etl.add(EtlWriter::kernel(0x04, 3, 0x0424, start + 90, {'c', '6', '4'}));
  etl.end_buffer(0, 0, true);
  etl.add_zero_tail(0x200);
  etl.write(path);

  EtlReader reader(path);
  const EtlLogfileHeader& header = reader.header();
  CHECK(header.pointer_size == 4);
  CHECK(header.clock_type == 2);
  CHECK(header.provider_version == 7601);
  CHECK(format_iso8601(header.start_time) == "2026-12-02T10:15:30.0000000Z");
  CHECK(header.start_time == unix_ns(start));
  CHECK(header.end_time == unix_ns(start) + 60 * ns_per_second);
  CHECK(header.boot_time == unix_ns(start) - ns_per_hour);
  CHECK(header.logger_name == "Test Logger");
  CHECK(header.log_file_name == "\xc3\xa9");

  std::vector<RawRecord> records;
  std::vector<std::string> payloads;
  std::vector<std::size_t> extended_sizes;
  reader.for_each([&](const RawRecord& record) {
    records.push_back(record);
    payloads.emplace_back(reinterpret_cast<const char*>(record.payload), record.payload_size);
    extended_sizes.push_back(reader.extended_data().size());
  });
  REQUIRE(records.size() == 8);
  for (std::size_t i = 0; i < records.size(); ++i) {
    CHECK(records[i].time ==
          unix_ns(start + 10 * (i < 6 ? i + 1 : i + 2)));  // the record at +70 is past the end marker
    CHECK(records[i].processor == (i < 6 ? 3u : 1u));
    CHECK(records[i].pointer_size() == (i < 6 ? 4u : 8u));
  }

  CHECK(records[0].header_type == TraceHeaderType::system32);
  CHECK(records[0].provider == known_guid::file_io);
  CHECK(records[0].opcode == 67);
  CHECK(records[0].version == 3);
  CHECK(records[0].hook_id == 0x0443);
  CHECK(records[0].tid == 11);
  CHECK(records[0].pid == 22);
  CHECK(payloads[0] == "PAYL");

  CHECK(records[1].header_type == TraceHeaderType::compact32);
  CHECK(records[1].provider == known_guid::thread);
  CHECK(records[1].opcode == 1);
  CHECK(payloads[1] == "C");

  CHECK(records[2].header_type == TraceHeaderType::perfinfo32);
  CHECK(records[2].provider == known_guid::perf_info);
  CHECK(records[2].opcode == 0x2E);
  CHECK(records[2].pid == RawRecord::unknown_id);
  CHECK(records[2].tid == RawRecord::unknown_id);
  CHECK(payloads[2] == "pi");

  CHECK(records[3].header_type == TraceHeaderType::instance32);
  CHECK(records[3].provider == mof);
  CHECK(records[3].opcode == 5);
  CHECK(records[3].version == 1);
  CHECK(records[3].level == 4);
  CHECK(records[3].is_classic());
  CHECK(records[3].tid == 33);
  CHECK(records[3].pid == 44);
  CHECK(payloads[3] == "inst");

  CHECK(records[4].header_type == TraceHeaderType::event_header32);
  CHECK(records[4].provider == known_guid::kernel_file);
  CHECK(records[4].event_id == 15);
  CHECK(records[4].version == 1);
  CHECK(records[4].opcode == 7);
  CHECK(records[4].task == 9);
  CHECK(records[4].channel == 16);
  CHECK(records[4].keyword == 0x8000000000000010);
  CHECK_FALSE(records[4].is_classic());
  CHECK((records[4].flags & event_header_flag::extended_info) != 0);
  CHECK(extended_sizes[4] == 24 + 24);
  CHECK(payloads[4] == "DATA");

  CHECK(records[5].header_type == TraceHeaderType::full_header32);
  CHECK(records[5].opcode == 6);
  CHECK(payloads[5] == "full");

  CHECK(records[6].header_type == TraceHeaderType::event_header64);
  CHECK(records[6].provider == known_guid::kernel_process);
  CHECK(payloads[6] == "zipped");
  CHECK(records[7].header_type == TraceHeaderType::compact64);
  CHECK(records[7].provider == known_guid::file_io);
  CHECK(records[7].opcode == 36);
  CHECK(payloads[7] == "c64");

  const auto& counters = reader.counters();
  CHECK(counters.buffers == 3);
  CHECK(counters.compressed_buffers == 1);
  CHECK(counters.records == 8);
  CHECK(counters.records_skipped == 2);
  CHECK(counters.of_type(TraceHeaderType::message) == 1);
  CHECK(counters.of_type(TraceHeaderType::timed) == 1);
  CHECK(counters.of_type(TraceHeaderType::system32) == 1);
  CHECK(counters.malformed == 0);
}

TEST_CASE(".etl timestamps on the CPU cycle clock count from the logfile header record", "[etl]") {
  TempDir dir;
  const std::string path = dir.file("cycles.etl");
  EtlWriter etl(true, 3, 5'000, 2'000);  // 2,000 MHz
  etl.begin_buffer(0);
  etl.add(EtlWriter::kernel(0x02, 2, 0x0301, 5'000 + 3'000'000'000, {}));  // 1.5 s later
  etl.add(EtlWriter::kernel(0x02, 2, 0x0302, 4'000, {}));                  // 0.5 us before the header
  etl.end_buffer();
  etl.write(path);
  EtlReader reader(path);
  std::vector<std::int64_t> times;
  reader.for_each([&](const RawRecord& record) { times.push_back(record.time); });
  const std::int64_t start = unix_ns(EtlWriter::filetime_2026_12_02);
  REQUIRE(times.size() == 2);
  CHECK(times[0] == start + 1'500'000'000);
  CHECK(times[1] == start - 500);
}

TEST_CASE("an .etl trace on an unknown clock is refused with a reason", "[etl]") {
  TempDir dir;
  const std::string path = dir.file("clock.etl");
  EtlWriter(true, 7, 0).write(path);
  CHECK_THROWS_WITH(EtlReader(path), Catch::Matchers::Contains("clock type 7"));
}

TEST_CASE("broken extended data items and record sizes in an .etl buffer are named", "[etl]") {
  TempDir dir;
  const std::string path = dir.file("broken.etl");
  using Catch::Matchers::Contains;
  auto message_for = [&](Bytes record) {
    EtlWriter etl(true, 2, EtlWriter::filetime_2026_12_02);
    etl.begin_buffer(0);
    etl.add(record);
    etl.end_buffer();
    etl.write(path);
    std::string message;
    CHECK_FALSE(reads_cleanly(path, OnMalformedBuffer::stop, &message));
    return message;
  };
  Bytes chained = EtlWriter::event(0x13, known_guid::kernel_file, 12, 1, 0, {16}, "");
  chained[0x50 + 4] = 1;  // the only item claims another follows
  CHECK_THAT(message_for(chained), Contains("extended data item at +0x68 runs past the record"));
  Bytes oversized = EtlWriter::event(0x13, known_guid::kernel_file, 12, 1, 0, {16}, "");
  oversized[0x50 + 6] = 40;  // data size beyond the item
  CHECK_THAT(message_for(oversized), Contains("extended data item at +0x50 has size 24 and data size 40"));
  Bytes small = EtlWriter::event(0x13, known_guid::kernel_file, 12, 1, 0, {}, "");
  small[0] = 0x20;
  CHECK_THAT(message_for(small), Contains("Size 32 is smaller than its 80-byte event header"));
  Bytes unknown = EtlWriter::skipped(0xC0, 0x30, 16);
  CHECK_THAT(message_for(unknown), Contains("unknown trace header type 0x30"));
}

TEST_CASE("an .etl trace read from memory yields the same records as its file", "[etl]") {
  const Bytes file_bytes = read_file(windows7_trace());
  const std::vector<std::uint8_t> bytes(file_bytes.begin(), file_bytes.end());
  EtlReader from_file(windows7_trace());
  EtlReader from_memory(bytes, "in-memory.etl");
  CHECK(from_memory.header().start_time == from_file.header().start_time);
  CHECK(from_memory.header().logger_name == from_file.header().logger_name);

  RawRecord expected;
  RawRecord record;
  std::uint64_t records = 0;
  while (from_file.next(expected)) {
    REQUIRE(from_memory.next(record));
    ++records;
    REQUIRE(record.provider == expected.provider);
    REQUIRE(record.time == expected.time);
    REQUIRE(record.opcode == expected.opcode);
    REQUIRE(record.payload_size == expected.payload_size);
    REQUIRE(std::equal(record.payload, record.payload + record.payload_size, expected.payload));
  }
  CHECK_FALSE(from_memory.next(record));
  CHECK(records == 10'343);
  CHECK(from_memory.counters().buffers == from_file.counters().buffers);

  using Catch::Matchers::Contains;
  const std::span<const std::uint8_t> cut(bytes.data(), 0x2000 * 3 + 0x1000);
  EtlReader truncated(cut, "cut.etl");
  CHECK_THROWS_WITH(tally(truncated),
                    Contains("cut.etl") && Contains("buffer 3") && Contains("runs past the end of the file"));
  CHECK_THROWS_WITH(EtlReader(std::span(bytes.data(), 0x20), "tiny.etl"), Contains("too few for a buffer header"));
}
