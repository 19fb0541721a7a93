#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/catalog.h"
#include "core/text.h"
#include "etl_fixtures.h"
#include "sources/etl/etl_reader.h"
#include "sources/etw/decoder.h"
#include "sources/etw/key_table.h"
#include "sources/etw/raw_record.h"
#include "support/etw_payloads.h"

using namespace etwaudit;
using etwaudit::test::perfview_trace;
using etwaudit::test::windows7_trace;

// Records are built byte by byte from the layout tables of doc/etw-format.md §4
// (support/etw_payloads.h; and, for Kernel-Process, the dissect manifest the
// decoder cites). Each builder follows one table row in the order it lists the
// fields, so a test fails if the decoder reads a field from anywhere else.
using namespace etwaudit::test;

namespace {

constexpr std::uint32_t unknown_id = RawRecord::unknown_id;
constexpr std::int64_t base_time = 1'700'000'000'000'000'000;
constexpr Guid lost_event_class{0x6a399ae0, 0x4bc6, 0x4de9, {0x87, 0x0b, 0x36, 0x57, 0xf8, 0x94, 0x7e, 0x7e}};

// A record that owns its payload.
struct Record {
  RawRecord raw;
  std::vector<std::uint8_t> payload;

  // The view with payload pointing at this record's bytes.
  const RawRecord& view() {
    raw.payload = payload.empty() ? nullptr : payload.data();
    raw.payload_size = static_cast<std::uint32_t>(payload.size());
    return raw;
  }
};

// Who logged a record and when.
struct Header {
  std::uint32_t pid = 4242;
  std::uint32_t tid = 4250;
  std::int64_t time = base_time;
};

std::uint16_t pointer_flag(std::size_t pointer_size) {
  return pointer_size == 4 ? event_header_flag::header_32_bit : event_header_flag::header_64_bit;
}

Record classic(const Guid& event_class, std::uint8_t opcode, std::uint8_t version, std::size_t pointer_size,
               std::vector<std::uint8_t> payload, Header header = {}) {
  Record record;
  record.raw.provider = event_class;
  record.raw.opcode = opcode;
  record.raw.version = version;
  record.raw.flags = event_header_flag::classic_header | pointer_flag(pointer_size);
  record.raw.pid = header.pid;
  record.raw.tid = header.tid;
  record.raw.time = header.time;
  record.payload = std::move(payload);
  return record;
}

Record manifest(const Guid& provider, std::uint16_t id, std::uint8_t version, std::size_t pointer_size,
                std::vector<std::uint8_t> payload, Header header = {}) {
  Record record;
  record.raw.provider = provider;
  record.raw.event_id = id;
  record.raw.task = id;
  record.raw.version = version;
  record.raw.flags = pointer_flag(pointer_size);
  record.raw.pid = header.pid;
  record.raw.tid = header.tid;
  record.raw.time = header.time;
  record.payload = std::move(payload);
  return record;
}

constexpr std::uint64_t filetime_of_base_time = static_cast<std::uint64_t>(base_time / 100) + 116444736000000000ull;

// Kernel-Process ProcessStart (1): v0-v2; from v3 with sequence numbers,
// elevation and a MandatoryLabel SID (S-1-16-8192, medium); v4 adds
// SecurityMitigations, and v5 stands for a later version with more at the end.
std::vector<std::uint8_t> kernel_process_start(int version, std::uint32_t pid, std::uint64_t create_time,
                                               std::u16string_view image) {
  PayloadBuilder b(8);
  if (version >= 3) {
    b.u32(pid).u64(0x1234).u64(create_time).u32(600).u64(0x1200).u32(1).u32(0).u32(3).u32(0);
    b.u8(1).u8(1).u8(0).u8(0).u8(0).u8(0).u8(0).u8(16).u32(8192);
  } else {
    b.u32(pid).u64(create_time).u32(600).u32(1);
    if (version >= 1) b.u32(0);  // Flags
  }
  b.utf16(image);
  if (version >= 2) b.u32(0xabcd).u32(0x5f000000).utf16(u"").utf16(u"");
  if (version >= 4) b.u32(0);     // SecurityMitigations
  if (version >= 5) b.u64(0x77);  // what a later version adds
  return b.bytes;
}

// Kernel-Process ProcessStop (2) v0/v1.
std::vector<std::uint8_t> kernel_process_stop(int version, std::uint32_t pid, std::uint64_t create_time,
                                              std::string_view image) {
  PayloadBuilder b(8);
  b.u32(pid).u64(create_time).u64(create_time + 1000).u32(0).u32(1).u32(40).u64(1 << 20).u64(2 << 20);
  if (version == 1) b.u64(99).u32(1).u32(2).u32(3).u32(4).u32(5);
  b.ansi(image);
  return b.bytes;
}

// Kernel-Process ThreadStart/ThreadStop (3/4) v0/v1.
std::vector<std::uint8_t> kernel_process_thread(std::size_t p, int id, int version, std::uint32_t pid,
                                                std::uint32_t tid) {
  PayloadBuilder b(p);
  b.u32(pid).u32(tid);
  for (int i = 0; i < 7; ++i) b.pointer(0x7FF000000000 + i);
  if (version == 1) b.u32(0);             // SubProcessTag
  if (version == 1 && id == 4) b.u64(9);  // CycleTime
  return b.bytes;
}

// A decoder with a sink that keeps what it is given.
struct Harness : FileEventSink {
  Catalog catalog;
  std::vector<FileEvent> events;
  EtwDecoder decoder{catalog, *this};

  void deliver(const FileEvent& event) override { events.push_back(event); }
  void decode(Record record) { decoder.decode(record.view()); }
  const DecoderStats& stats() const { return decoder.stats(); }
  std::string path(const FileEvent& event) const { return catalog.path(event.path); }
  ProcessInfo process(const FileEvent& event) const { return catalog.process(event.process); }
};

const std::u16string notes = u"\\Device\\HarddiskVolume3\\Users\\ada\\notes.txt";
const std::string notes_utf8 = "\\Device\\HarddiskVolume3\\Users\\ada\\notes.txt";
const std::u16string report = u"\\Device\\HarddiskVolume3\\Users\\ada\\report.docx";
const std::string report_utf8 = "\\Device\\HarddiskVolume3\\Users\\ada\\report.docx";

constexpr std::uint64_t file_object_a = 0xFFFFE0000A000010;
constexpr std::uint64_t file_object_b = 0xFFFFE0000B000020;
constexpr std::uint64_t file_key_a = 0xFFFFC0000A0000F0;
constexpr std::uint64_t file_key_b = 0xFFFFC0000B0000F0;

// An operation on file A, with FileObject and FileKey as a kernel with
// pointers of this size would log them.
Io on_file_a(std::size_t pointer_size) {
  Io io;
  io.file_object = pointer_size == 4 ? 0x8A000010 : file_object_a;
  io.file_key = pointer_size == 4 ? 0x9C0000F0 : file_key_a;
  return io;
}

}  // namespace

TEST_CASE("the record builders lay out FileIo and Kernel-File events as the facts tables say", "[etw]") {
  // Sizes from doc/etw-format.md §4.4 / §4.5: x64 / x86.
  CHECK(read_write(8, Layout::thread_pointer, {}).size() == 48);
  CHECK(read_write(4, Layout::thread_pointer, {}).size() == 32);
  CHECK(read_write(8, Layout::thread_u32, {}).size() == 44);
  CHECK(read_write(4, Layout::thread_u32, {}).size() == 32);
  CHECK(read_write(8, Layout::thread_u32, {}, true).size() == 48);
  CHECK(read_write(4, Layout::thread_u32, {}, true).size() == 36);
  CHECK(simple(8, Layout::thread_pointer, {}).size() == 32);
  CHECK(simple(8, Layout::thread_u32, {}).size() == 28);
  // FileKey of a v2 read at 32 (x64) / 20 (x86); the v3 TTID at 32 / 20.
  Io io;
  io.file_key = 0x1122334455667788;
  io.thread = 0xAABBCCDD;
  CHECK(read_write(8, Layout::thread_pointer, io)[32] == 0x88);
  CHECK(read_write(4, Layout::thread_pointer, io)[20] == 0x88);
  CHECK(read_write(8, Layout::thread_u32, io)[32] == 0xDD);
  CHECK(read_write(4, Layout::thread_u32, io)[20] == 0xDD);
  // OpenPath at 36 / 24 in v2 and 32 / 24 in v3.
  io.name = u"X";
  CHECK(create(8, Layout::thread_pointer, io)[36] == 'X');
  CHECK(create(4, Layout::thread_pointer, io)[24] == 'X');
  CHECK(create(8, Layout::thread_u32, io)[32] == 'X');
  CHECK(create(4, Layout::thread_u32, io)[24] == 'X');
  // DiskIo v3 is 52 bytes on x64, as the PerfView trace has it.
  CHECK(disk_io(8, 3, 0, 0, 0, 0).size() == 52);
}

TEST_CASE("FileIo create, read, write, cleanup, flush and close decode in v2 and v3 with both pointer sizes", "[etw]") {
  const std::size_t p = GENERATE(4, 8);
  const int version = GENERATE(2, 3);
  const Layout layout = version == 2 ? Layout::thread_pointer : Layout::thread_u32;
  CAPTURE(p, version);
  Harness h;
  Io io = on_file_a(p);
  io.thread = 4251;
  io.name = notes;

  h.decode(classic(known_guid::file_io, 64, version, p, create(p, layout, io), {4242, 4251, base_time}));
  io.offset = 4096;
  io.size = 1834;
  h.decode(classic(known_guid::file_io, 67, version, p, read_write(p, layout, io), {4242, 4251, base_time + 10}));
  io.offset = 0x1'0000'0000;  // above 4 GiB
  io.size = 512;
  h.decode(classic(known_guid::file_io, 68, version, p, read_write(p, layout, io), {4242, 4251, base_time + 20}));
  h.decode(classic(known_guid::file_io, 73, version, p, simple(p, layout, io), {4242, 4251, base_time + 25}));
  h.decode(classic(known_guid::file_io, 65, version, p, simple(p, layout, io), {4242, 4251, base_time + 30}));
  io.info_class = 20;  // FileEndOfFileInformation
  h.decode(classic(known_guid::file_io, 69, version, p, info(p, layout, io), {4242, 4251, base_time + 35}));
  h.decode(classic(known_guid::file_io, 66, version, p, simple(p, layout, io), {4242, 4251, base_time + 40}));

  REQUIRE(h.events.size() == 7);
  const std::vector<Op> ops{Op::open, Op::read, Op::write, Op::flush, Op::cleanup, Op::set_info, Op::close};
  for (std::size_t i = 0; i < ops.size(); ++i) {
    CAPTURE(i);
    CHECK(h.events[i].op == ops[i]);
    CHECK(h.path(h.events[i]) == notes_utf8);
    CHECK(h.events[i].tid == 4251);
    CHECK(h.process(h.events[i]).pid == 4242);
  }
  CHECK(h.events[0].time == base_time);
  CHECK(h.events[1].offset == 4096);
  CHECK(h.events[1].size == 1834);
  CHECK(h.events[2].offset == 0x1'0000'0000);
  CHECK(h.events[2].size == 512);
  CHECK(h.events[2].time == base_time + 20);
  for (std::size_t i : {0, 3, 4, 5, 6}) {
    CHECK(h.events[i].offset == -1);
    CHECK(h.events[i].size == -1);
  }
  CHECK(h.stats().file_events == 7);
  CHECK(h.stats().delivered == 7);
  CHECK(h.stats().unresolved == 0);
  CHECK(h.stats().malformed == 0);
  CHECK(h.stats().unknown == 0);
}

TEST_CASE("Kernel-File create, read, write, set information, flush, cleanup and close decode in v0 and v1", "[etw]") {
  const std::size_t p = GENERATE(4, 8);
  const int version = GENERATE(0, 1);
  const Layout layout = version == 0 ? Layout::thread_pointer : Layout::thread_u32;
  CAPTURE(p, version);
  Harness h;
  Io io;
  io.file_object = file_object_a & (p == 4 ? 0xFFFFFFFF : ~0ull);
  io.file_key = file_key_a & (p == 4 ? 0xFFFFFFFF : ~0ull);
  io.thread = 3780;
  io.name = notes;
  const Header header{3988, 3780, base_time};

  h.decode(manifest(known_guid::kernel_file, 12, version, p, create(p, layout, io), header));
  io.offset = 100;
  io.size = 200;
  h.decode(manifest(known_guid::kernel_file, 15, version, p, read_write(p, layout, io, version == 1), header));
  io.offset = 300;
  io.size = 400;
  h.decode(manifest(known_guid::kernel_file, 16, version, p, read_write(p, layout, io, version == 1), header));
  h.decode(manifest(known_guid::kernel_file, 17, version, p, info(p, layout, io), header));
  h.decode(manifest(known_guid::kernel_file, 21, version, p, simple(p, layout, io), header));
  h.decode(manifest(known_guid::kernel_file, 13, version, p, simple(p, layout, io), header));
  h.decode(manifest(known_guid::kernel_file, 14, version, p, simple(p, layout, io), header));

  REQUIRE(h.events.size() == 7);
  const std::vector<Op> ops{Op::open, Op::read, Op::write, Op::set_info, Op::flush, Op::cleanup, Op::close};
  for (std::size_t i = 0; i < ops.size(); ++i) {
    CAPTURE(i);
    CHECK(h.events[i].op == ops[i]);
    CHECK(h.path(h.events[i]) == notes_utf8);
    CHECK(h.events[i].tid == 3780);
    CHECK(h.process(h.events[i]).pid == 3988);
  }
  CHECK(h.events[1].offset == 100);
  CHECK(h.events[1].size == 200);
  CHECK(h.events[2].offset == 300);
  CHECK(h.events[2].size == 400);
  CHECK(h.stats().malformed == 0);
}

TEST_CASE("Kernel-File CreateNewFile is delivered as create and NameCreate/NameDelete keep the FileKey names",
          "[etw]") {
  const int version = GENERATE(0, 1);
  const Layout layout = version == 0 ? Layout::thread_pointer : Layout::thread_u32;
  Harness h;
  Io io;
  io.file_object = file_object_a;
  io.name = report;
  h.decode(manifest(known_guid::kernel_file, 30, version, 8, create(8, layout, io)));
  REQUIRE(h.events.size() == 1);
  CHECK(h.events[0].op == Op::create);
  CHECK(h.path(h.events[0]) == report_utf8);

  // NameCreate exists as v0 only.
  h.decode(manifest(known_guid::kernel_file, 10, 0, 8, name_event(8, file_key_b, notes)));
  Io read;
  read.file_object = file_object_b;
  read.file_key = file_key_b;
  h.decode(manifest(known_guid::kernel_file, 15, version, 8, read_write(8, layout, read, version == 1)));
  REQUIRE(h.events.size() == 2);
  CHECK(h.path(h.events[1]) == notes_utf8);

  h.decode(manifest(known_guid::kernel_file, 11, 0, 8, name_event(8, file_key_b, notes)));
  h.decode(manifest(known_guid::kernel_file, 15, version, 8, read_write(8, layout, read, version == 1)));
  REQUIRE(h.events.size() == 3);
  CHECK(h.path(h.events[2]).empty());
  CHECK(h.catalog.file_key(h.events[2].path) == file_key_b);
  CHECK(h.stats().names == 2);
}

TEST_CASE("a read whose name arrives only in the FileRundown at the end is back-filled", "[etw]") {
  const std::size_t p = GENERATE(4, 8);
  const int version = GENERATE(2, 3);
  const Layout layout = version == 2 ? Layout::thread_pointer : Layout::thread_u32;
  CAPTURE(p, version);
  Harness h;
  Io io = on_file_a(p);
  io.size = 4096;
  h.decode(classic(known_guid::file_io, 67, version, p, read_write(p, layout, io)));
  h.decode(classic(known_guid::file_io, 67, version, p, read_write(p, layout, io)));
  REQUIRE(h.events.size() == 2);
  const std::uint32_t entry = h.events[0].path;
  CHECK(entry != 0);
  CHECK(h.events[1].path == entry);  // one entry per key
  CHECK(h.catalog.path(entry).empty());
  CHECK(h.catalog.file_key(entry) == io.file_key);
  CHECK(h.stats().unresolved == 2);
  CHECK(h.catalog.take_resolutions().empty());

  // The rundown at the end of the trace names the key.
  h.decode(classic(known_guid::file_io, 36, version, p, name_event(p, io.file_key, notes), {unknown_id, unknown_id}));
  CHECK(h.stats().names == 1);
  CHECK(h.stats().rundown_names == 1);
  const auto resolutions = h.catalog.take_resolutions();
  REQUIRE(resolutions.size() == 1);
  CHECK(resolutions[0].path_id == entry);
  CHECK(resolutions[0].name == notes_utf8);
  CHECK(h.catalog.path(entry) == notes_utf8);
  CHECK(h.catalog.take_resolutions().empty());

  // Later events of the key use the name, under the same entry.
  h.decode(classic(known_guid::file_io, 67, version, p, read_write(p, layout, io)));
  REQUIRE(h.events.size() == 3);
  CHECK(h.events[2].path == entry);
  CHECK(h.stats().unresolved == 2);
}

TEST_CASE("a FileKey name wins over the FileObject name and a FileObject name covers an unnamed key", "[etw]") {
  Harness h;
  Io io;
  io.file_object = file_object_a;
  io.name = u"\\Device\\HarddiskVolume3\\Users\\ada\\NOTES~1.TXT";
  h.decode(classic(known_guid::file_io, 64, 3, 8, create(8, Layout::thread_u32, io)));
  io.file_key = file_key_a;
  h.decode(classic(known_guid::file_io, 67, 3, 8, read_write(8, Layout::thread_u32, io)));
  h.decode(classic(known_guid::file_io, 0, 2, 8, name_event(8, file_key_a, notes)));
  h.decode(classic(known_guid::file_io, 67, 3, 8, read_write(8, Layout::thread_u32, io)));
  REQUIRE(h.events.size() == 3);
  CHECK(h.path(h.events[1]) == "\\Device\\HarddiskVolume3\\Users\\ada\\NOTES~1.TXT");
  CHECK(h.path(h.events[2]) == notes_utf8);
  CHECK(h.stats().unresolved == 0);
}

TEST_CASE("Close forgets a FileObject so that its reuse does not inherit the old name", "[etw]") {
  const int version = GENERATE(2, 3);
  const Layout layout = version == 2 ? Layout::thread_pointer : Layout::thread_u32;
  Harness h;
  Io io;
  io.file_object = file_object_a;
  io.name = notes;
  h.decode(classic(known_guid::file_io, 64, version, 8, create(8, layout, io)));
  h.decode(classic(known_guid::file_io, 66, version, 8, simple(8, layout, io)));
  // The same FileObject value, opened again before the session saw its Create.
  h.decode(classic(known_guid::file_io, 67, version, 8, read_write(8, layout, io)));
  REQUIRE(h.events.size() == 3);
  CHECK(h.events[1].op == Op::close);
  CHECK(h.path(h.events[1]) == notes_utf8);
  CHECK(h.path(h.events[2]).empty());
  CHECK(h.catalog.file_key(h.events[2].path) == file_object_a);
  const std::uint32_t first_life = h.events[2].path;

  // It is closed again and reused once more: a new entry each life.
  h.decode(classic(known_guid::file_io, 66, version, 8, simple(8, layout, io)));
  h.decode(classic(known_guid::file_io, 67, version, 8, read_write(8, layout, io)));
  REQUIRE(h.events.size() == 5);
  CHECK(h.events[3].path == first_life);
  CHECK(h.events[4].path != first_life);
  CHECK(h.catalog.file_key(h.events[4].path) == file_object_a);
}

TEST_CASE("FileDelete names the key's earlier events and a reused key starts unresolved", "[etw]") {
  Harness h;
  Io io;
  io.file_object = file_object_a;
  io.file_key = file_key_a;
  h.decode(classic(known_guid::file_io, 68, 3, 8, read_write(8, Layout::thread_u32, io)));
  h.decode(classic(known_guid::file_io, 35, 2, 8, name_event(8, file_key_a, notes)));
  h.decode(classic(known_guid::file_io, 68, 3, 8, read_write(8, Layout::thread_u32, io)));
  REQUIRE(h.events.size() == 2);
  const auto resolutions = h.catalog.take_resolutions();
  REQUIRE(resolutions.size() == 1);
  CHECK(resolutions[0].path_id == h.events[0].path);
  CHECK(h.catalog.path(h.events[0].path) == notes_utf8);
  CHECK(h.events[1].path != h.events[0].path);
  CHECK(h.path(h.events[1]).empty());

  // FileCreate names a key as Name and FileRundown do.
  h.decode(classic(known_guid::file_io, 32, 2, 8, name_event(8, file_key_a, report)));
  h.decode(classic(known_guid::file_io, 68, 3, 8, read_write(8, Layout::thread_u32, io)));
  REQUIRE(h.events.size() == 3);
  CHECK(h.path(h.events[2]) == report_utf8);
  CHECK(h.catalog.path(h.events[1].path) == report_utf8);
}

TEST_CASE("delete and rename are delivered once even when the path event repeats them", "[etw]") {
  const std::size_t p = GENERATE(4, 8);
  CAPTURE(p);
  Harness h;
  Io io = on_file_a(p);
  io.name = notes;
  io.info_class = 13;  // FileDispositionInformation
  io.extra = 1;        // DeleteFile: TRUE

  SECTION("FileIo v2 Delete and Rename, which have no path events, are delivered") {
    h.decode(classic(known_guid::file_io, 70, 2, p, info(p, Layout::thread_pointer, io)));
    io.info_class = 10;  // FileRenameInformation
    h.decode(classic(known_guid::file_io, 71, 2, p, info(p, Layout::thread_pointer, io)));
    REQUIRE(h.events.size() == 2);
    CHECK(h.events[0].op == Op::remove);
    CHECK(h.events[1].op == Op::rename);
    CHECK(h.events[0].path == h.events[1].path);
    CHECK(h.catalog.file_key(h.events[0].path) == io.file_key);
  }

  SECTION("FileIo Delete then DeletePath of the same IRP: one delete, and the path names the file") {
    h.decode(classic(known_guid::file_io, 70, 3, p, info(p, Layout::thread_u32, io)));
    h.decode(classic(known_guid::file_io, 79, 3, p, path_event(p, Layout::thread_u32, io)));
    REQUIRE(h.events.size() == 1);
    CHECK(h.events[0].op == Op::remove);
    CHECK(h.catalog.path(h.events[0].path) == notes_utf8);  // back-filled
    CHECK(h.stats().duplicates == 1);
    CHECK(h.catalog.take_resolutions().size() == 1);
  }
  SECTION("DeletePath first: one delete, named at once") {
    h.decode(classic(known_guid::file_io, 79, 3, p, path_event(p, Layout::thread_u32, io)));
    h.decode(classic(known_guid::file_io, 70, 3, p, info(p, Layout::thread_u32, io)));
    REQUIRE(h.events.size() == 1);
    CHECK(h.events[0].op == Op::remove);
    CHECK(h.path(h.events[0]) == notes_utf8);
  }
  SECTION("FileIo Rename then RenamePath: one rename, whose path names nothing") {
    io.info_class = 10;  // FileRenameInformation
    io.name = u"\\Device\\HarddiskVolume3\\Users\\ada\\renamed.txt";
    h.decode(classic(known_guid::file_io, 71, 3, p, info(p, Layout::thread_u32, io)));
    h.decode(classic(known_guid::file_io, 80, 3, p, path_event(p, Layout::thread_u32, io)));
    REQUIRE(h.events.size() == 1);
    CHECK(h.events[0].op == Op::rename);
    CHECK(h.catalog.path(h.events[0].path).empty());
  }
  SECTION("deletes of other files through a reused IRP are each delivered") {
    h.decode(classic(known_guid::file_io, 70, 3, p, info(p, Layout::thread_u32, io)));
    io.file_object = file_object_b;
    h.decode(classic(known_guid::file_io, 70, 3, p, info(p, Layout::thread_u32, io)));
    h.decode(classic(known_guid::file_io, 70, 3, p, info(p, Layout::thread_u32, io)));
    CHECK(h.events.size() == 3);
    CHECK(h.stats().duplicates == 0);
  }
  SECTION("Kernel-File SetDelete and DeletePath, Rename and RenamePath, in v0 and v1") {
    for (int version : {0, 1}) {
      CAPTURE(version);
      Harness k;
      const Layout layout = version == 0 ? Layout::thread_pointer : Layout::thread_u32;
      Io op = io;
      k.decode(manifest(known_guid::kernel_file, 18, version, p, info(p, layout, op)));
      k.decode(manifest(known_guid::kernel_file, 26, version, p, path_event(p, layout, op)));
      op.irp += 0x100;
      k.decode(manifest(known_guid::kernel_file, 19, version, p, info(p, layout, op)));
      k.decode(manifest(known_guid::kernel_file, 27, version, p, path_event(p, layout, op)));
      op.irp += 0x100;
      k.decode(manifest(known_guid::kernel_file, 29, version, p, info(p, layout, op)));
      REQUIRE(k.events.size() == 3);
      CHECK(k.events[0].op == Op::remove);
      CHECK(k.catalog.path(k.events[0].path) == notes_utf8);
      CHECK(k.events[1].op == Op::rename);
      CHECK(k.events[2].op == Op::rename);
      CHECK(k.stats().duplicates == 2);
    }
  }
}

TEST_CASE("events with pid -1 or the System pid take their process from the issuing thread", "[etw]") {
  const std::size_t p = GENERATE(4, 8);
  CAPTURE(p);
  Harness h;
  h.decode(classic(known_guid::thread, 3, 3, p, thread_event(p, 3, 3, 1234, 77), {0, 0}));
  h.decode(classic(known_guid::process, 3, 4, p, process_event(p, 4, 1234, "notepad.exe", u"notepad notes.txt"),
                   {unknown_id, unknown_id}));
  Io io;
  io.file_object = file_object_a & 0xFFFFFFFF;
  io.file_key = file_key_a & 0xFFFFFFFF;
  io.thread = 77;
  for (std::uint32_t pid : {unknown_id, 4u, 0u}) {
    h.decode(classic(known_guid::file_io, 68, 3, p, read_write(p, Layout::thread_u32, io), {pid, unknown_id}));
  }
  // An ordinary header pid is kept.
  h.decode(classic(known_guid::file_io, 68, 3, p, read_write(p, Layout::thread_u32, io), {500, 77}));
  // A thread nobody announced, without a pid: kernel work, System's.
  io.thread = 78;
  h.decode(classic(known_guid::file_io, 68, 3, p, read_write(p, Layout::thread_u32, io), {unknown_id, unknown_id}));
  // DiskIo: the IssuingThreadId.
  h.decode(classic(known_guid::disk_io, 10, 3, p, disk_io(p, 3, 0, 512, io.file_object, 77), {unknown_id, unknown_id}));

  REQUIRE(h.events.size() == 6);
  for (std::size_t i : {0, 1, 2, 5}) {
    CAPTURE(i);
    const ProcessInfo process = h.process(h.events[i]);
    CHECK(process.pid == 1234);
    CHECK(process.image == "notepad.exe");
    CHECK(process.command_line == "notepad notes.txt");
    CHECK(h.events[i].tid == 77);
  }
  CHECK(h.process(h.events[3]).pid == 500);
  CHECK(h.process(h.events[3]).image.empty());  // a pid before any process event
  CHECK(h.process(h.events[4]).pid == 4);
  CHECK(h.events[4].tid == 78);
  CHECK(h.stats().system_assumed == 1);
}

TEST_CASE("Thread events of every version keep the thread map", "[etw]") {
  const std::size_t p = GENERATE(4, 8);
  const int version = GENERATE(0, 1, 2, 3, 4);
  const std::uint8_t opcode = GENERATE(1, 2, 3, 4);
  CAPTURE(p, version, opcode);
  Harness h;
  h.decode(classic(known_guid::thread, opcode, version, p, thread_event(p, version, opcode, 2020, 2024)));
  CHECK(h.stats().threads == 1);
  CHECK(h.stats().malformed == 0);
  Io io;
  io.thread = 2024;
  io.file_key = 0x9C0000F0;
  h.decode(classic(known_guid::file_io, 67, 3, p, read_write(p, Layout::thread_u32, io), {unknown_id, unknown_id}));
  REQUIRE(h.events.size() == 1);
  CHECK(h.process(h.events[0]).pid == 2020);
}

TEST_CASE("DiskIo reads and writes carry offset and size and are named through the key tables", "[etw]") {
  const std::size_t p = GENERATE(4, 8);
  const int version = GENERATE(2, 3);
  CAPTURE(p, version);
  Harness h;
  const std::uint64_t named_by_key = 0x8A000010, named_by_create = 0x8B000020, unnamed = 0x8C000030;
  h.decode(classic(known_guid::file_io, 32, 2, p, name_event(p, named_by_key, notes)));
  Io io;
  io.file_object = named_by_create;
  io.name = report;
  h.decode(classic(known_guid::file_io, 64, 3, p, create(p, Layout::thread_u32, io)));
  h.events.clear();

  const Header header{unknown_id, unknown_id, base_time};
  h.decode(
      classic(known_guid::disk_io, 10, version, p, disk_io(p, version, 5412451328, 8704, named_by_key, 9), header));
  h.decode(classic(known_guid::disk_io, 11, version, p, disk_io(p, version, 4096, 4096, named_by_create, 9), header));
  h.decode(classic(known_guid::disk_io, 10, version, p, disk_io(p, version, 8192, 512, unnamed, 9), header));
  REQUIRE(h.events.size() == 3);
  CHECK(h.events[0].op == Op::disk_read);
  CHECK(h.events[0].offset == 5412451328);
  CHECK(h.events[0].size == 8704);
  CHECK(h.path(h.events[0]) == notes_utf8);
  CHECK(h.events[1].op == Op::disk_write);
  CHECK(h.events[1].offset == 4096);
  CHECK(h.events[1].size == 4096);
  CHECK(h.path(h.events[1]) == report_utf8);
  CHECK(h.path(h.events[2]).empty());
  CHECK(h.events[0].tid == (version == 3 ? 9u : 0u));
  CHECK(h.stats().disk_events == 3);
  CHECK(h.stats().unresolved == 1);

  h.decode(classic(known_guid::file_io, 36, 2, p, name_event(p, unnamed, u"\\Device\\HarddiskVolume3\\$Mft")));
  CHECK(h.catalog.path(h.events[2].path) == "\\Device\\HarddiskVolume3\\$Mft");
}

TEST_CASE("kernel Process events of v3 and v4 give image and command line, with or without a SID", "[etw]") {
  const std::size_t p = GENERATE(4, 8);
  const int version = GENERATE(3, 4);
  const Sid sid = GENERATE(Sid::present, Sid::absent_in_4_bytes, Sid::absent_in_a_pointer);
  const std::uint8_t sub_authorities = GENERATE(1, 5);
  CAPTURE(p, version, static_cast<int>(sid), sub_authorities);
  Harness h;
  h.decode(classic(known_guid::process, 3, version, p,
                   process_event(p, version, 3020, "SearchIndexer.exe",
                                 u"C:\\Windows\\system32\\SearchIndexer.exe /Embedding", sid, sub_authorities)));
  CHECK(h.stats().processes == 1);
  REQUIRE(h.stats().malformed == 0);
  REQUIRE(h.catalog.process_count() == 2);
  const ProcessInfo info = h.catalog.process(1);
  CHECK(info.pid == 3020);
  CHECK(info.start_time == 0);  // a rundown does not say when the process started
  CHECK(info.image == "SearchIndexer.exe");
  CHECK(info.command_line == "C:\\Windows\\system32\\SearchIndexer.exe /Embedding");
  CHECK(info.parent_pid == 600);
  // The account: the SID, as nothing here knows its name.
  CHECK(info.user == (sid != Sid::present ? "" : sub_authorities == 1 ? "S-1-5-21" : "S-1-5-21-22-23-24-25"));
}

TEST_CASE("a process's account is named for the well-known SIDs and by a live lookup for the others", "[etw]") {
  Harness h;
  struct Accounts : ProcessLookup {
    bool lookup(std::uint32_t, ProcessInfo&) noexcept override { return false; }
    std::uint32_t process_of_thread(std::uint32_t) noexcept override { return 0; }
    std::string account_name(const std::string& sid) noexcept override {
      return sid == "S-1-5-999-1000-1001-1002-1003" ? "WORKSTATION\\ada" : "";
    }
  } accounts;
  h.decoder.set_process_lookup(&accounts);
  h.decode(classic(known_guid::process, 3, 3, 8, process_event(8, 3, 4, "System", u"", Sid::present, 1, 18)));
  h.decode(classic(known_guid::process, 3, 3, 8, process_event(8, 3, 900, "svchost.exe", u"", Sid::present, 1, 20)));
  h.decode(classic(known_guid::process, 3, 3, 8, process_event(8, 3, 901, "word.exe", u"", Sid::present, 5, 999)));
  h.decode(classic(known_guid::process, 3, 3, 8, process_event(8, 3, 902, "other.exe", u"", Sid::present, 2, 7)));
  REQUIRE(h.catalog.process_count() == 5);
  CHECK(h.catalog.process(1).user == "NT AUTHORITY\\SYSTEM");
  CHECK(h.catalog.process(2).user == "NT AUTHORITY\\NETWORK SERVICE");
  CHECK(h.catalog.process(3).user == "WORKSTATION\\ada");
  CHECK(h.catalog.process(4).user == "S-1-5-7-8");
}

TEST_CASE("a process Start makes a reused pid another process and its file events follow", "[etw]") {
  Harness h;
  Io io;
  io.file_key = file_key_a;
  h.decode(classic(known_guid::process, 3, 4, 8, process_event(8, 4, 100, "a.exe", u"a.exe")));
  h.decode(classic(known_guid::file_io, 67, 3, 8, read_write(8, Layout::thread_u32, io), {100, 101}));
  h.decode(classic(known_guid::process, 2, 4, 8, process_event(8, 4, 100, "a.exe", u"a.exe")));
  h.decode(classic(known_guid::process, 1, 3, 8, process_event(8, 3, 100, "b.exe", u"b.exe -x"),
                   {100, 102, base_time + 5000}));
  h.decode(classic(known_guid::file_io, 67, 3, 8, read_write(8, Layout::thread_u32, io), {100, 102}));
  REQUIRE(h.events.size() == 2);
  CHECK(h.process(h.events[0]).image == "a.exe");
  const ProcessInfo second = h.process(h.events[1]);
  CHECK(second.image == "b.exe");
  CHECK(second.command_line == "b.exe -x");
  CHECK(second.start_time == base_time + 5000);
  CHECK(h.events[0].process != h.events[1].process);
  CHECK(h.stats().processes == 3);

  // An End or DCEnd names a process that no Start or DCStart announced.
  h.decode(classic(known_guid::process, 4, 4, 8, process_event(8, 4, 300, "late.exe", u"late.exe /x")));
  h.decode(classic(known_guid::process, 2, 3, 8, process_event(8, 3, 301, "gone.exe", u"gone.exe")));
  h.decode(classic(known_guid::file_io, 67, 3, 8, read_write(8, Layout::thread_u32, io), {300, 303}));
  h.decode(classic(known_guid::file_io, 67, 3, 8, read_write(8, Layout::thread_u32, io), {301, 304}));
  REQUIRE(h.events.size() == 4);
  CHECK(h.process(h.events[2]).image == "late.exe");
  CHECK(h.process(h.events[2]).command_line == "late.exe /x");
  CHECK(h.process(h.events[3]).image == "gone.exe");
}

// A running system with the processes a test puts in it.
struct FakeProcessLookup : ProcessLookup {
  std::map<std::uint32_t, ProcessInfo> running;
  std::vector<std::uint32_t> asked;
  std::map<std::uint32_t, std::uint32_t> threads;  // tid -> pid
  std::vector<std::uint32_t> threads_asked;
  bool lookup(std::uint32_t pid, ProcessInfo& info) noexcept override {
    asked.push_back(pid);
    const auto found = running.find(pid);
    if (found == running.end()) return false;
    info = found->second;
    return true;
  }
  std::uint32_t process_of_thread(std::uint32_t tid) noexcept override {
    threads_asked.push_back(tid);
    const auto found = threads.find(tid);
    return found == threads.end() ? 0 : found->second;
  }
};

TEST_CASE("a live source names the processes the trace lost, unless the pid now belongs to a later process", "[etw]") {
  Harness h;
  FakeProcessLookup system;
  h.decoder.set_process_lookup(&system);
  system.running[700] = {700, base_time - 60'000'000'000, "C:\\Program Files\\Tool\\tool.exe", "tool.exe --sync", 0, {},
                         {}};
  system.running[701] = {701, base_time + 1, "C:\\Windows\\System32\\cmd.exe", "cmd", 0, {},
                         {}};  // created after the event
  Io io;
  io.file_key = file_key_a;
  for (std::uint32_t pid : {700u, 700u, 701u, 702u, 4u, unknown_id})
    h.decode(classic(known_guid::file_io, 67, 3, 8, read_write(8, Layout::thread_u32, io), {pid, 9}));
  REQUIRE(h.events.size() == 6);
  const ProcessInfo tool = h.process(h.events[0]);
  CHECK(tool.pid == 700);
  CHECK(tool.image == "C:\\Program Files\\Tool\\tool.exe");
  CHECK(tool.command_line == "tool.exe --sync");
  CHECK(tool.start_time == base_time - 60'000'000'000);
  CHECK(h.events[1].process == h.events[0].process);
  // Pid 701 now names a process created after the read: not the reader.
  CHECK(h.process(h.events[2]).pid == 701);
  CHECK(h.process(h.events[2]).image.empty());
  CHECK(h.process(h.events[2]).start_time == 0);
  CHECK(h.process(h.events[3]).image.empty());  // gone
  // Each pid is asked about once; System and "no pid" never.
  CHECK(system.asked == std::vector<std::uint32_t>{700, 701, 702});
  CHECK(h.stats().looked_up == 1);
  // No pid and a thread no event placed: Windows is asked whose thread it is,
  // once; one it does not know either is System's, never pid 0xFFFFFFFF.
  CHECK(h.process(h.events[5]).pid == 4);
  system.threads[31] = 700;
  for (std::uint32_t thread : {31u, 31u, 32u}) {
    io.thread = thread;
    h.decode(classic(known_guid::file_io, 67, 3, 8, read_write(8, Layout::thread_u32, io), {unknown_id, unknown_id}));
  }
  REQUIRE(h.events.size() == 9);
  CHECK(h.events[6].process == h.events[0].process);
  CHECK(h.events[7].process == h.events[0].process);
  CHECK(h.process(h.events[8]).pid == 4);
  CHECK(system.threads_asked == std::vector<std::uint32_t>{9, 31, 32});
}

TEST_CASE("a live source completes rundown and Start processes with the full image path and creation time", "[etw]") {
  const std::size_t p = GENERATE(4, 8);
  CAPTURE(p);
  Harness h;
  FakeProcessLookup system;
  h.decoder.set_process_lookup(&system);
  const std::int64_t created = base_time - 3'600'000'000'000;
  // ImageFileName keeps the first 15 bytes of the file name, in any case.
  system.running[800] = {800, created, "C:\\Program Files\\Microsoft Office\\root\\Office16\\WINWORD.EXE", "", 0,
                         {},  {}};
  system.running[801] = {801, created, "C:\\Windows\\explorer.exe", "", 0, {}, {}};  // pid reused by another program
  system.running[802] = {802, base_time + 5, "C:\\Tools\\build-helper.exe", "", 0, {}, {}};
  system.running[803] = {803, base_time + 5, "C:\\Tools\\late.exe", "", 0, {}, {}};
  h.decode(classic(known_guid::process, 3, 4, p, process_event(p, 4, 800, "WINWORD.EXE", u"\"WINWORD.EXE\" /n")));
  h.decode(classic(known_guid::process, 3, 4, p, process_event(p, 4, 801, "notepad.exe", u"notepad")));
  // A Start: image from the system, start time from the event.
  h.decode(classic(known_guid::process, 1, 4, p, process_event(p, 4, 802, "build-helper.ex", u"build-helper"),
                   {802, 1, base_time + 10}));
  // A rundown of a process the system says was created after it: not the same one.
  h.decode(classic(known_guid::process, 3, 4, p, process_event(p, 4, 803, "late.exe", u"late")));
  REQUIRE(h.catalog.process_count() == 5);
  const ProcessInfo word = h.catalog.process(1);
  CHECK(word.image == "C:\\Program Files\\Microsoft Office\\root\\Office16\\WINWORD.EXE");
  CHECK(word.start_time == created);
  CHECK(word.command_line == "\"WINWORD.EXE\" /n");
  const ProcessInfo notepad = h.catalog.process(2);
  CHECK(notepad.image == "notepad.exe");
  CHECK(notepad.start_time == 0);
  const ProcessInfo helper = h.catalog.process(3);
  CHECK(helper.image == "C:\\Tools\\build-helper.exe");
  CHECK(helper.start_time == base_time + 10);
  CHECK(h.catalog.process(4).image == "late.exe");
  CHECK(h.stats().looked_up == 2);
  // Ends never ask: the process is gone.
  system.asked.clear();
  h.decode(classic(known_guid::process, 2, 4, p, process_event(p, 4, 900, "gone.exe", u"gone")));
  h.decode(classic(known_guid::process, 4, 4, p, process_event(p, 4, 901, "svc.exe", u"svc")));
  CHECK(system.asked.empty());
}

TEST_CASE("Kernel-Process start and stop give a process its NT image path and creation time", "[etw]") {
  Harness h;
  const std::u16string devenv =
      u"\\Device\\HarddiskVolume2\\Program Files (x86)\\Microsoft Visual Studio 10.0\\Common7\\IDE\\devenv.exe";
  for (int version : {0, 1, 2, 3, 4, 5}) {
    h.decode(manifest(known_guid::kernel_process, 1, version, 8,
                      kernel_process_start(version, 5864 + version, filetime_of_base_time, devenv)));
  }
  for (int version : {0, 1}) {
    h.decode(manifest(known_guid::kernel_process, 2, version, 8,
                      kernel_process_stop(version, 7000 + version, filetime_of_base_time, "SearchProtocolHost.exe")));
  }
  // A stop of a known process names nothing new.
  h.decode(manifest(known_guid::kernel_process, 2, 1, 8, kernel_process_stop(1, 5864, filetime_of_base_time, "x")));
  CHECK(h.stats().processes == 9);
  CHECK(h.stats().malformed == 0);
  CHECK(h.stats().newer_versions == 1);
  REQUIRE(h.catalog.process_count() == 9);
  for (std::uint32_t id = 1; id <= 6; ++id) {
    const ProcessInfo info = h.catalog.process(id);
    CHECK(info.pid == 5863 + id);
    CHECK(info.start_time == base_time);
    CHECK(info.parent_pid == 600);
    CHECK(info.image ==
          "\\Device\\HarddiskVolume2\\Program Files (x86)\\Microsoft Visual Studio 10.0\\Common7\\IDE\\devenv.exe");
  }
  CHECK(h.catalog.process(7).image == "SearchProtocolHost.exe");
  CHECK(h.catalog.process(8).pid == 7001);

  // ThreadStart and ThreadStop keep the thread map.
  for (int version : {0, 1}) {
    h.decode(manifest(known_guid::kernel_process, 3 + version, version, 8,
                      kernel_process_thread(8, 3 + version, version, 5864, 6000 + version)));
  }
  CHECK(h.stats().threads == 2);
  Io io;
  io.file_key = file_key_a;
  for (std::uint32_t tid : {6000u, 6001u}) {
    io.thread = tid;
    h.decode(classic(known_guid::file_io, 67, 3, 8, read_write(8, Layout::thread_u32, io), {unknown_id, tid}));
  }
  REQUIRE(h.events.size() == 2);
  CHECK(h.process(h.events[0]).pid == 5864);
  CHECK(h.process(h.events[1]).pid == 5864);
}

TEST_CASE("lost-event markers are counted", "[etw]") {
  Harness h;
  for (std::uint8_t opcode : {32, 33, 34}) h.decode(classic(lost_event_class, opcode, 2, 8, {}));
  h.decode(classic(lost_event_class, 35, 2, 8, {}));
  CHECK(h.stats().lost_markers == 3);
  CHECK(h.stats().unknown == 1);
}

TEST_CASE("operations that say nothing about file contents are counted, not delivered", "[etw]") {
  const std::size_t p = GENERATE(4, 8);
  Harness h;
  Io io;
  io.file_key = file_key_a & 0xFFFFFFFF;
  io.name = u"*";
  for (int version : {2, 3}) {
    const Layout layout = version == 2 ? Layout::thread_pointer : Layout::thread_u32;
    h.decode(classic(known_guid::file_io, 72, version, p, dir_enum(p, layout, io)));
    h.decode(classic(known_guid::file_io, 77, version, p, dir_enum(p, layout, io)));
    h.decode(classic(known_guid::file_io, 74, version, p, info(p, layout, io)));
    h.decode(classic(known_guid::file_io, 75, version, p, info(p, layout, io)));
    h.decode(classic(known_guid::file_io, 76, version, p, operation_end(p, io)));
  }
  h.decode(classic(known_guid::file_io, 81, 3, p, path_event(p, Layout::thread_u32, io)));
  for (int version : {0, 1}) {
    const Layout layout = version == 0 ? Layout::thread_pointer : Layout::thread_u32;
    h.decode(manifest(known_guid::kernel_file, 20, version, p, dir_enum(p, layout, io)));
    h.decode(manifest(known_guid::kernel_file, 25, version, p, dir_enum(p, layout, io)));
    h.decode(manifest(known_guid::kernel_file, 22, version, p, info(p, layout, io)));
    h.decode(manifest(known_guid::kernel_file, 23, version, p, info(p, layout, io)));
    h.decode(manifest(known_guid::kernel_file, 28, version, p, path_event(p, layout, io)));
  }
  h.decode(manifest(known_guid::kernel_file, 24, 0, p, operation_end(p, io)));  // OperationEnd is v0 only
  CHECK(h.events.empty());
  CHECK(h.stats().file_events == 22);
  CHECK(h.stats().counted_only == 22);
  CHECK(h.stats().malformed == 0);
  CHECK(h.stats().unknown == 0);
}

TEST_CASE("with OperationEnd in the trace, operations carry their status, the bytes moved and created or opened",
          "[etw]") {
  const std::size_t p = GENERATE(4, 8);
  CAPTURE(p);
  Harness h;
  Io io = on_file_a(p);
  io.name = notes;
  const Header at{4242, 4251, base_time};
  auto with_irp = [&](std::uint64_t irp) {
    Io copy = io;
    copy.irp = irp;
    return copy;
  };
  // Before any OperationEnd: delivered at once, as a trace without them needs.
  h.decode(classic(known_guid::file_io, 64, 3, p, create(p, Layout::thread_u32, with_irp(0x100)), at));
  REQUIRE(h.events.size() == 1);
  h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, 0x100, 1, 0)));  // FILE_OPENED: nothing more

  // From now on each waits for its end.
  h.decode(classic(known_guid::file_io, 64, 3, p, create(p, Layout::thread_u32, with_irp(0x200)), at));
  h.decode(classic(known_guid::file_io, 64, 3, p, create(p, Layout::thread_u32, with_irp(0x300)), at));
  io.offset = 0;
  io.size = 65536;  // asked for 64 KiB of a 100-byte file
  h.decode(classic(known_guid::file_io, 67, 3, p, read_write(p, Layout::thread_u32, with_irp(0x400)), at));
  h.decode(classic(known_guid::file_io, 68, 3, p, read_write(p, Layout::thread_u32, with_irp(0x500)), at));
  CHECK(h.events.size() == 1);
  h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, 0x400, 100, 0)));         // read 100 bytes
  h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, 0x300, 0, 0xC0000034)));  // name not found
  h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, 0x200, 2, 0)));           // FILE_CREATED
  h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, 0x999, 0, 0)));           // nothing held
  REQUIRE(h.events.size() == 4);
  CHECK(h.events[1].op == Op::read);
  CHECK(h.events[1].size == 100);
  CHECK(h.events[1].status == 0);
  CHECK(h.events[2].op == Op::open);  // a failed open stays an open, marked
  CHECK(h.events[2].status == 0xC0000034);
  CHECK(h.events[3].op == Op::create);
  CHECK(h.path(h.events[3]) == notes_utf8);
  // The write never completes: the end of the trace delivers it as it was.
  h.decoder.flush();
  REQUIRE(h.events.size() == 5);
  CHECK(h.events[4].op == Op::write);
  CHECK(h.events[4].size == 65536);
  CHECK(h.stats().completed == 3);
  CHECK(h.stats().failed_operations == 1);
  CHECK(h.stats().never_completed == 1);
  CHECK(h.stats().delivered == 5);
}

TEST_CASE("operations waiting for their OperationEnd are bounded, and a reused IRP delivers the old one", "[etw]") {
  Harness h;
  Io io = on_file_a(8);
  io.size = 10;
  h.decode(classic(known_guid::file_io, 76, 3, 8, op_end(8, 1, 0, 0)));
  for (std::uint64_t i = 0; i < EtwDecoder::held_capacity + 10; ++i) {
    io.irp = 0x1000 + i;
    h.decode(classic(known_guid::file_io, 67, 3, 8, read_write(8, Layout::thread_u32, io), {4242, 4251, base_time}));
  }
  CHECK(h.events.size() == 10);                     // the oldest went as they were
  io.irp = 0x1000 + EtwDecoder::held_capacity + 9;  // in use: its first operation never ended
  h.decode(classic(known_guid::file_io, 67, 3, 8, read_write(8, Layout::thread_u32, io), {4242, 4251, base_time}));
  CHECK(h.events.size() == 11);
  CHECK(h.stats().never_completed == 11);
  h.decoder.flush();
  CHECK(h.events.size() == EtwDecoder::held_capacity + 11);
}

TEST_CASE("unknown providers, events and versions are counted and never decoded", "[etw]") {
  Harness h;
  Io io;
  io.file_key = file_key_a;
  const auto v3_read = read_write(8, Layout::thread_u32, io);
  const Guid other{0x12345678, 0x1234, 0x1234, {1, 2, 3, 4, 5, 6, 7, 8}};
  h.decode(classic(other, 67, 3, 8, v3_read));                       // another provider
  h.decode(classic(known_guid::file_io, 99, 3, 8, v3_read));         // an opcode FileIo does not have
  h.decode(classic(known_guid::file_io, 67, 1, 8, v3_read));         // FileIo v1
  h.decode(classic(known_guid::file_io, 79, 2, 8, v3_read));         // path events are v3 only
  h.decode(manifest(known_guid::kernel_file, 31, 1, 8, v3_read));    // beyond Kernel-File's ids
  h.decode(manifest(known_guid::kernel_file, 15, 2, 8, v3_read));    // Kernel-File v2
  h.decode(manifest(known_guid::kernel_file, 10, 1, 8, v3_read));    // NameCreate is v0 only
  h.decode(classic(known_guid::disk_io, 12, 3, 8, v3_read));         // DiskIo ReadInit
  h.decode(classic(known_guid::disk_io, 10, 4, 8, v3_read));         // DiskIo v4
  h.decode(classic(known_guid::process, 39, 4, 8, v3_read));         // Process Defunct
  h.decode(classic(known_guid::process, 1, 2, 8, v3_read));          // Process v2
  h.decode(classic(known_guid::thread, 36, 3, 8, v3_read));          // CSwitch
  h.decode(classic(known_guid::thread, 1, 5, 8, v3_read));           // Thread v5
  h.decode(manifest(known_guid::kernel_process, 5, 0, 8, v3_read));  // ImageLoad
  h.decode(manifest(known_guid::kernel_process, 2, 2, 8, v3_read));  // ProcessStop v2
  h.decode(classic(known_guid::perf_info, 46, 2, 8, v3_read));       // a sampled profile
  CHECK(h.stats().records == 16);
  CHECK(h.stats().unknown == 16);
  CHECK(h.stats().malformed == 0);
  CHECK(h.events.empty());
  CHECK(h.catalog.path_count() == 1);
  CHECK(h.catalog.process_count() == 1);
}

TEST_CASE("kernel Process records of a version above 4 are read with the v4 layout", "[etw]") {
  const std::size_t p = GENERATE(4, 8);
  CAPTURE(p);
  for (Sid sid : {Sid::present, Sid::absent_in_4_bytes}) {
    Harness h;
    auto v5 = process_event(p, 4, 4242, "notepad.exe", u"notepad notes.txt", sid);
    for (int i = 0; i < 12; ++i) v5.push_back(0xee);  // what the later version adds
    h.decode(classic(known_guid::process, 1, 5, p, v5, {4242, 4243, base_time}));
    CHECK(h.stats().processes == 1);
    CHECK(h.stats().newer_versions == 1);
    CHECK(h.stats().malformed == 0);
    REQUIRE(h.catalog.process_count() == 2);
    CHECK(h.catalog.process(1).image == "notepad.exe");
    CHECK(h.catalog.process(1).command_line == "notepad notes.txt");
  }
}

TEST_CASE("FileIo records of a version above 3 are read with the v3 layout, length-checked", "[etw]") {
  const std::size_t p = GENERATE(4, 8);
  CAPTURE(p);
  Harness h;
  Io io = on_file_a(p);
  io.offset = 8192;
  io.size = 100;
  // A later version with a field added at the end, and its name event.
  auto v4_read = read_write(p, Layout::thread_u32, io);
  for (int i = 0; i < 8; ++i) v4_read.push_back(0xee);
  h.decode(classic(known_guid::file_io, 36, 4, p, name_event(p, io.file_key, notes)));
  h.decode(classic(known_guid::file_io, 67, 4, p, v4_read, {4242, 4251, base_time}));
  // One shorter than v3's layout is malformed, not read past its end.
  auto short_read = read_write(p, Layout::thread_u32, io);
  short_read.resize(short_read.size() - 6);
  h.decode(classic(known_guid::file_io, 68, 5, p, short_read, {4242, 4251, base_time + 10}));
  REQUIRE(h.events.size() == 1);
  CHECK(h.events[0].op == Op::read);
  CHECK(h.path(h.events[0]) == notes_utf8);
  CHECK(h.events[0].offset == 8192);
  CHECK(h.events[0].size == 100);
  CHECK(h.stats().newer_versions == 3);
  CHECK(h.stats().rundown_names == 1);
  CHECK(h.stats().malformed == 1);
  CHECK(h.stats().unknown == 0);
}

TEST_CASE("every truncated payload of every kind is counted as malformed and delivers nothing", "[etw]") {
  const std::size_t p = GENERATE(4, 8);
  CAPTURE(p);
  Io io;
  io.file_object = 0x8A000010;
  io.file_key = 0x9C0000F0;
  io.thread = 77;
  io.name = notes;
  std::vector<Record> kinds;
  for (int version : {2, 3}) {
    const Layout layout = version == 2 ? Layout::thread_pointer : Layout::thread_u32;
    kinds.push_back(classic(known_guid::file_io, 64, version, p, create(p, layout, io)));
    kinds.push_back(classic(known_guid::file_io, 67, version, p, read_write(p, layout, io)));
    kinds.push_back(classic(known_guid::file_io, 68, version, p, read_write(p, layout, io)));
    kinds.push_back(classic(known_guid::file_io, 65, version, p, simple(p, layout, io)));
    kinds.push_back(classic(known_guid::file_io, 66, version, p, simple(p, layout, io)));
    kinds.push_back(classic(known_guid::file_io, 73, version, p, simple(p, layout, io)));
    kinds.push_back(classic(known_guid::file_io, 69, version, p, info(p, layout, io)));
    kinds.push_back(classic(known_guid::file_io, 70, version, p, info(p, layout, io)));
    kinds.push_back(classic(known_guid::file_io, 71, version, p, info(p, layout, io)));
    kinds.push_back(classic(known_guid::file_io, 74, version, p, info(p, layout, io)));
    kinds.push_back(classic(known_guid::file_io, 72, version, p, dir_enum(p, layout, io)));
    kinds.push_back(classic(known_guid::file_io, 76, version, p, operation_end(p, io)));
    kinds.push_back(classic(known_guid::file_io, 36, version, p, name_event(p, io.file_key, notes)));
    kinds.push_back(classic(known_guid::file_io, 35, version, p, name_event(p, io.file_key, notes)));
    kinds.push_back(classic(known_guid::disk_io, 10, version, p, disk_io(p, version, 0, 512, io.file_object, 77)));
  }
  kinds.push_back(classic(known_guid::file_io, 79, 3, p, path_event(p, Layout::thread_u32, io)));
  kinds.push_back(classic(known_guid::file_io, 80, 3, p, path_event(p, Layout::thread_u32, io)));
  for (int version : {0, 1}) {
    const Layout layout = version == 0 ? Layout::thread_pointer : Layout::thread_u32;
    kinds.push_back(manifest(known_guid::kernel_file, 12, version, p, create(p, layout, io)));
    kinds.push_back(manifest(known_guid::kernel_file, 15, version, p, read_write(p, layout, io, version == 1)));
    kinds.push_back(manifest(known_guid::kernel_file, 14, version, p, simple(p, layout, io)));
    kinds.push_back(manifest(known_guid::kernel_file, 18, version, p, info(p, layout, io)));
    kinds.push_back(manifest(known_guid::kernel_file, 25, version, p, dir_enum(p, layout, io)));
    kinds.push_back(manifest(known_guid::kernel_file, 26, version, p, path_event(p, layout, io)));
    for (int id : {3, 4}) {
      kinds.push_back(
          manifest(known_guid::kernel_process, id, version, p, kernel_process_thread(p, id, version, 1234, 77)));
    }
    kinds.push_back(manifest(known_guid::kernel_process, 2, version, 8, kernel_process_stop(version, 9, 1, "a.exe")));
  }
  kinds.push_back(manifest(known_guid::kernel_file, 10, 0, p, name_event(p, io.file_key, notes)));
  kinds.push_back(manifest(known_guid::kernel_file, 24, 0, p, operation_end(p, io)));
  for (int version : {0, 1, 2, 3, 4}) {
    kinds.push_back(manifest(known_guid::kernel_process, 1, version, 8,
                             kernel_process_start(version, 9, filetime_of_base_time, u"\\Device\\x.exe")));
  }
  for (int version : {3, 4}) {
    for (Sid sid : {Sid::present, Sid::absent_in_4_bytes, Sid::absent_in_a_pointer}) {
      kinds.push_back(classic(known_guid::process, 1, version, p, process_event(p, version, 9, "a.exe", u"a", sid)));
    }
  }
  for (int version : {0, 1, 2, 3, 4}) {
    kinds.push_back(classic(known_guid::thread, 1, version, p, thread_event(p, version, 1, 1234, 77)));
  }

  for (Record& kind : kinds) {
    CAPTURE(kind.raw.provider.to_string(), kind.raw.opcode, kind.raw.event_id, kind.raw.version);
    {
      // The whole record decodes.
      Harness h;
      h.decode(kind);
      CHECK(h.stats().malformed == 0);
      CHECK(h.stats().unknown == 0);
    }
    for (std::size_t size = 0; size < kind.payload.size(); ++size) {
      CAPTURE(size);
      Harness h;
      Record cut = kind;
      // A buffer of exactly the cut size, so a read past it is caught by the sanitizers.
      cut.payload.assign(kind.payload.begin(), kind.payload.begin() + static_cast<std::ptrdiff_t>(size));
      cut.payload.shrink_to_fit();
      h.decode(cut);
      CHECK(h.stats().malformed == 1);
      CHECK(h.events.empty());
      CHECK(h.catalog.path_count() == 1);
    }
  }
  // A null payload that claims bytes is read as empty.
  Harness h;
  Record null_payload = classic(known_guid::file_io, 67, 3, p, {});
  RawRecord raw = null_payload.view();
  raw.payload_size = 48;
  h.decoder.decode(raw);
  CHECK(h.stats().malformed == 1);
}

TEST_CASE("names are converted from UTF-16LE to UTF-8 and broken surrogates become U+FFFD", "[etw]") {
  Harness h;
  Io io;
  io.file_object = file_object_a;
  io.name = u"\\Device\\HarddiskVolume3\\Users\\Zo\u00eb\\\u65e5\u672c\\\U0001F600.txt";
  h.decode(classic(known_guid::file_io, 64, 3, 8, create(8, Layout::thread_u32, io)));
  io.file_object = file_object_b;
  io.name = std::u16string(u"\\Device\\a") + char16_t(0xD800) + u"b" + char16_t(0xDC00) + u"c";
  h.decode(classic(known_guid::file_io, 64, 3, 8, create(8, Layout::thread_u32, io)));
  REQUIRE(h.events.size() == 2);
  CHECK(h.path(h.events[0]) ==
        "\\Device\\HarddiskVolume3\\Users\\Zo\xC3\xAB\\\xE6\x97\xA5\xE6\x9C\xAC\\\xF0\x9F\x98\x80.txt");
  CHECK(h.path(h.events[1]) ==
        "\\Device\\a\xEF\xBF\xBD"
        "b\xEF\xBF\xBD"
        "c");
}

TEST_CASE("the text helpers convert UTF-16LE and 8-bit strings within their bounds", "[etw]") {
  auto utf16 = [](std::vector<std::uint8_t> bytes) {
    std::string out;
    append_utf8_from_utf16le(bytes.data(), bytes.size(), out);
    return out;
  };
  CHECK(utf16({}).empty());
  CHECK(utf16({'A', 0, 'B'}) == "A");                                    // an odd last byte is not a unit
  CHECK(utf16({0x3D, 0xD8, 0x00, 0xDE}) == "\xF0\x9F\x98\x80");          // a surrogate pair
  CHECK(utf16({0x3D, 0xD8}) == "\xEF\xBF\xBD");                          // a high surrogate at the end
  CHECK(utf16({0x00, 0xDE, 0x3D, 0xD8}) == "\xEF\xBF\xBD\xEF\xBF\xBD");  // reversed
  CHECK(utf16({0xFF, 0x07}) == "\xDF\xBF");                              // U+07FF, the last two-byte form
  std::string ansi;
  const std::uint8_t bytes[] = {'c', 'm', 'd', 0xE9};
  append_utf8_from_ansi(bytes, sizeof bytes, ansi);
  CHECK(ansi == "cmd\xEF\xBF\xBD");
}

TEST_CASE("the key table finds, replaces and erases keys like a map and stops growing under churn", "[etw]") {
  KeyTable table;
  std::unordered_map<std::uint64_t, std::uint32_t> reference;
  std::mt19937_64 random(42);
  for (int step = 0; step < 200000; ++step) {
    // Keys shaped like kernel pointers: aligned, sharing their high bits.
    const std::uint64_t key = 0xFFFFE00000000000 | (random() % 3000) << 4;
    switch (random() % 3) {
      case 0:
      case 1: {
        const auto value = static_cast<std::uint32_t>(random());
        table.set(key, value);
        reference[key] = value;
        break;
      }
      case 2: CHECK(table.erase(key) == (reference.erase(key) == 1)); break;
    }
  }
  CHECK(table.size() == reference.size());
  for (std::uint64_t slot = 0; slot < 3000; ++slot) {
    const std::uint64_t key = 0xFFFFE00000000000 | slot << 4;
    const std::uint32_t* found = table.find(key);
    const auto expected = reference.find(key);
    REQUIRE((found != nullptr) == (expected != reference.end()));
    if (found != nullptr) CHECK(*found == expected->second);
  }
  CHECK(table.find(KeyTable::no_key) == nullptr);
  table.set(KeyTable::no_key, 1);
  CHECK(table.find(KeyTable::no_key) == nullptr);

  // Opening and closing ever new FileObjects, a few at a time, reuses the same slots.
  KeyTable objects;
  for (std::uint64_t i = 0; i < 100; ++i) objects.set(0xFFFFE00000000000 + i * 16, 1);
  const std::size_t capacity = objects.capacity();
  std::uint64_t erased = 0;
  for (std::uint64_t i = 100; i < 1000000; ++i) {
    objects.set(0xFFFFE00000000000 + i * 16, 1);
    erased += objects.erase(0xFFFFE00000000000 + (i - 100) * 16);
  }
  CHECK(erased == 1000000 - 100);
  CHECK(objects.size() == 100);
  CHECK(objects.capacity() == capacity);
}

TEST_CASE("the PerfView trace decodes into the disk, create, name and process events counted independently",
          "[etw][etl]") {
  struct Sink : FileEventSink {
    const RawRecord* current = nullptr;
    std::vector<FileEvent> disk;
    std::vector<FileEvent> kernel_file_opens;
    void deliver(const FileEvent& event) override {
      if (event.op == Op::disk_read || event.op == Op::disk_write) disk.push_back(event);
      if (event.op == Op::open && current->provider == known_guid::kernel_file && current->event_id == 12 &&
          current->version == 1) {
        kernel_file_opens.push_back(event);
      }
    }
  } sink;
  Catalog catalog;
  EtwDecoder decoder(catalog, sink);
  EtlReader reader(perfview_trace());
  std::uint64_t process_rundowns = 0, records = 0, named_in_stream = 0;
  std::size_t disk_seen = 0;
  reader.for_each([&](const RawRecord& record) {
    ++records;
    if (record.provider == known_guid::process && record.opcode == 3) ++process_rundowns;
    sink.current = &record;
    decoder.decode(record);
    for (; disk_seen < sink.disk.size(); ++disk_seen)
      named_in_stream += !catalog.path(sink.disk[disk_seen].path).empty();
  });
  const DecoderStats& stats = decoder.stats();
  CHECK(stats.records == records);
  CHECK(stats.malformed == 0);
  CHECK(stats.failed == 0);

  // DiskIo: 1,208 reads and 21 writes; 4 named in stream order, all after back-fill.
  std::uint64_t reads = 0, writes = 0;
  for (const FileEvent& event : sink.disk) (event.op == Op::disk_read ? reads : writes) += 1;
  CHECK(reads == 1208);
  CHECK(writes == 21);
  CHECK(stats.disk_events == 1229);
  CHECK(named_in_stream == 4);
  const auto resolutions = catalog.take_resolutions();
  CHECK(!resolutions.empty());
  for (const Resolution& resolution : resolutions) CHECK(catalog.path(resolution.path_id) == resolution.name);
  std::uint64_t named = 0;
  for (const FileEvent& event : sink.disk) named += !catalog.path(event.path).empty();
  CHECK(named == 1229);
  const ProcessInfo first = catalog.process(sink.disk.front().process);
  CHECK(first.pid == 4);  // the lazy writer, found through its thread
  CHECK(first.image == "System");

  // Kernel-File Create v1: 562 opens over 102 paths, all named.
  CHECK(sink.kernel_file_opens.size() == 562);
  std::set<std::uint32_t> paths;
  for (const FileEvent& event : sink.kernel_file_opens) {
    paths.insert(event.path);
    CHECK(catalog.path(event.path).rfind("\\Device\\", 0) == 0);
  }
  CHECK(paths.size() == 102);

  // FileIo names: 3,054 in the rundown, 16 FileCreate, 14 FileDelete.
  CHECK(stats.rundown_names == 3054);
  CHECK(stats.names == 3054 + 16 + 14);

  // 32 processes in the rundown, each with its image.
  CHECK(process_rundowns == 32);
  std::set<std::uint32_t> rundown_pids;
  for (std::uint32_t id = 1; id < catalog.process_count(); ++id) {
    const ProcessInfo info = catalog.process(id);
    if (info.start_time == 0 && !info.image.empty()) rundown_pids.insert(info.pid);
  }
  CHECK(rundown_pids.size() == 32);
  CHECK(rundown_pids.count(3988) == 1);  // PerfView.exe
}

TEST_CASE("the decoder interns the four Kernel-Process starts of the Windows 7 trace with their NT image paths",
          "[etw][etl]") {
  struct Sink : FileEventSink {
    void deliver(const FileEvent&) override { ++events; }
    int events = 0;
  } sink;
  Catalog catalog;
  EtwDecoder decoder(catalog, sink);
  EtlReader reader(windows7_trace());
  std::map<std::uint32_t, std::int64_t> start_record_pids;
  reader.for_each([&](const RawRecord& record) {
    if (record.provider == known_guid::kernel_process && record.event_id == 1 && record.version == 0) {
      start_record_pids[record.payload[0] | record.payload[1] << 8 | record.payload[2] << 16] = record.time;
    }
    decoder.decode(record);
  });
  CHECK(decoder.stats().malformed == 0);
  CHECK(sink.events == 0);
  REQUIRE(start_record_pids.size() == 4);
  std::map<std::uint32_t, std::string> images;
  for (std::uint32_t id = 1; id < catalog.process_count(); ++id) {
    const ProcessInfo info = catalog.process(id);
    if (start_record_pids.count(info.pid) == 1) {
      images[info.pid] = info.image;
      // CreateTime comes from the payload: the system time, which moves in
      // clock ticks, so it lies within a few ms of the event's own time.
      CHECK(std::abs(info.start_time - start_record_pids[info.pid]) < 50'000'000);
    }
  }
  CHECK(images == std::map<std::uint32_t, std::string>{
                      {5864,
                       "\\Device\\HarddiskVolume2\\Program Files (x86)\\Microsoft Visual Studio "
                       "10.0\\Common7\\IDE\\devenv.exe"},
                      {2880, "\\Device\\HarddiskVolume2\\Program Files (x86)\\Microsoft Office\\Office14\\OUTLOOK.EXE"},
                      {700, "\\Device\\HarddiskVolume2\\Windows\\SysWOW64\\SearchProtocolHost.exe"},
                      {6644, "\\Device\\HarddiskVolume2\\Windows\\System32\\SearchFilterHost.exe"},
                  });
  CHECK(decoder.stats().threads == 287 + 264);
}

TEST_CASE("a delete is stored only when the disposition deletes, and a delete-on-close file goes at its Cleanup",
          "[etw]") {
  const std::size_t p = GENERATE(4, 8);
  CAPTURE(p);
  Harness h;
  Io io = on_file_a(p);
  io.name = notes;
  const Header at{4242, 4251, base_time};
  auto ops = [&] {
    std::string text;
    for (const FileEvent& e : h.events) text += (text.empty() ? "" : ", ") + std::string(op_name(e.op));
    return text;
  };
  auto op_ends = [&] { h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, 0x1, 1, 0))); };

  SECTION("FileDispositionInformation with DeleteFile FALSE asks not to delete: a set_info") {
    io.info_class = 13;
    io.extra = 0;
    h.decode(classic(known_guid::file_io, 70, 3, p, info(p, Layout::thread_u32, io), at));
    h.decode(classic(known_guid::file_io, 79, 3, p, path_event(p, Layout::thread_u32, io), at));
    CHECK(ops() == "set_info");
  }
  SECTION("FileDispositionInformationEx: DELETE deletes, DO_NOT_DELETE does not") {
    io.info_class = 64;
    io.extra = 0x1 | 0x2;  // DELETE | POSIX_SEMANTICS
    h.decode(classic(known_guid::file_io, 70, 3, p, info(p, Layout::thread_u32, io), at));
    io.irp += 0x10;
    io.extra = 0;
    h.decode(classic(known_guid::file_io, 70, 3, p, info(p, Layout::thread_u32, io), at));
    CHECK(ops() == "delete, set_info");
  }
  SECTION("a file opened with FILE_DELETE_ON_CLOSE is deleted at its Cleanup, once") {
    io.create_options = 0x01001060;  // FILE_OPEN_IF, FILE_DELETE_ON_CLOSE | ...
    h.decode(classic(known_guid::file_io, 64, 3, p, create(p, Layout::thread_u32, io), at));
    h.decode(classic(known_guid::file_io, 68, 3, p, read_write(p, Layout::thread_u32, io), at));
    h.decode(classic(known_guid::file_io, 65, 3, p, simple(p, Layout::thread_u32, io), at));
    h.decode(classic(known_guid::file_io, 66, 3, p, simple(p, Layout::thread_u32, io), at));
    CHECK(ops() == "open, write, cleanup, delete, close");
    CHECK(h.path(h.events[3]) == notes_utf8);
    CHECK(h.stats().deletes_on_close == 1);
    // The same file object value reused by a plain open deletes nothing.
    io.create_options = 0x01000060;
    h.decode(classic(known_guid::file_io, 64, 3, p, create(p, Layout::thread_u32, io), at));
    h.decode(classic(known_guid::file_io, 65, 3, p, simple(p, Layout::thread_u32, io), at));
    CHECK(ops() == "open, write, cleanup, delete, close, open, cleanup");
  }
  SECTION("with OperationEnd: a failed delete-on-close open deletes nothing, a successful one does") {
    op_ends();
    io.create_options = 0x01001060;
    io.irp = 0x500;
    h.decode(classic(known_guid::file_io, 64, 3, p, create(p, Layout::thread_u32, io), at));
    h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, 0x500, 0, 0xC0000022)));  // access denied
    h.decode(classic(known_guid::file_io, 65, 3, p, simple(p, Layout::thread_u32, io), at));
    CHECK(ops() == "open, cleanup");
    CHECK(h.events[0].status == 0xC0000022);
    io.irp = 0x600;
    h.decode(classic(known_guid::file_io, 64, 3, p, create(p, Layout::thread_u32, io), at));
    h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, 0x600, 2, 0)));  // FILE_CREATED
    h.decode(classic(known_guid::file_io, 65, 3, p, simple(p, Layout::thread_u32, io), at));
    CHECK(ops() == "open, cleanup, create, cleanup, delete");
  }
  SECTION("DispositionEx ON_CLOSE sets and clears delete-on-close") {
    io.info_class = 64;
    io.extra = 0x1 | 0x8;  // DELETE | ON_CLOSE: delete when closed
    h.decode(classic(known_guid::file_io, 70, 3, p, info(p, Layout::thread_u32, io), at));
    h.decode(classic(known_guid::file_io, 65, 3, p, simple(p, Layout::thread_u32, io), at));
    CHECK(ops() == "set_info, cleanup, delete");
    io.irp += 0x10;
    h.decode(classic(known_guid::file_io, 70, 3, p, info(p, Layout::thread_u32, io), at));
    io.irp += 0x10;
    io.extra = 0x8;  // ON_CLOSE without DELETE: not any more
    h.decode(classic(known_guid::file_io, 70, 3, p, info(p, Layout::thread_u32, io), at));
    h.decode(classic(known_guid::file_io, 65, 3, p, simple(p, Layout::thread_u32, io), at));
    CHECK(ops() == "set_info, cleanup, delete, set_info, set_info, cleanup");
  }
}

TEST_CASE("after a rename, the file's key gives up its old name: the next open's name wins", "[etw]") {
  const std::size_t p = GENERATE(4, 8);
  CAPTURE(p);
  const std::u16string renamed = u"\\Device\\HarddiskVolume3\\Users\\ada\\renamed.txt";
  const std::string renamed_utf8 = "\\Device\\HarddiskVolume3\\Users\\ada\\renamed.txt";
  for (const bool op_ends : {false, true}) {
    CAPTURE(op_ends);
    Harness h;
    Io io = on_file_a(p);
    const Header at{4242, 4251, base_time};
    if (op_ends) h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, 0x1, 1, 0)));
    h.decode(classic(known_guid::file_io, 0, 3, p, name_event(p, io.file_key, notes), at));
    io.irp = 0x20;
    io.info_class = 10;  // FileRenameInformation
    h.decode(classic(known_guid::file_io, 71, 3, p, info(p, Layout::thread_u32, io), at));
    if (op_ends) h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, 0x20, 0, 0)));
    // Opened again by its new name through another file object: the same key.
    Io again = io;
    again.irp = 0x30;
    again.file_object = file_object_b & (p == 4 ? 0xFFFFFFFF : ~0ull);
    again.name = renamed;
    h.decode(classic(known_guid::file_io, 64, 3, p, create(p, Layout::thread_u32, again), at));
    if (op_ends) h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, 0x30, 1, 0)));
    again.irp = 0x40;
    again.size = 10;
    h.decode(classic(known_guid::file_io, 68, 3, p, read_write(p, Layout::thread_u32, again), at));
    if (op_ends) h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, 0x40, 10, 0)));
    REQUIRE(h.events.size() == 3);
    CHECK(h.events[0].op == Op::rename);
    CHECK(h.path(h.events[0]) == notes_utf8);    // the rename is of the old name
    CHECK(h.path(h.events[2]) == renamed_utf8);  // what follows, of the new one
  }
}

TEST_CASE("paging I/O is kept apart from the reads and writes of programs", "[etw]") {
  const std::size_t p = GENERATE(4, 8);
  CAPTURE(p);
  Harness h;
  Io io = on_file_a(p);
  io.name = notes;
  h.decode(classic(known_guid::file_io, 64, 3, p, create(p, Layout::thread_u32, io)));
  io.size = 4096;
  // A program's write, the lazy writer's (IRP_PAGING_IO | IRP_NOCACHE), a
  // mapped page's read (IRP_PAGING_IO | IRP_SYNCHRONOUS_PAGING_IO), in
  // FileIo v3 and Kernel-File v1.
  for (const std::uint32_t flags : {0x60900u, 0x3u, 0x43u}) {
    io.io_flags = flags;
    h.decode(classic(known_guid::file_io, flags == 0x43u ? 67 : 68, 3, p, read_write(p, Layout::thread_u32, io)));
  }
  io.io_flags = 0x40;
  h.decode(manifest(known_guid::kernel_file, 16, 1, p, read_write(p, Layout::thread_u32, io, true)));
  std::string ops;
  for (const FileEvent& event : h.events)
    ops += std::string(ops.empty() ? "" : ", ") + std::string(op_name(event.op)) + " " + std::to_string(event.size);
  CHECK(ops == "open -1, write 4096, paging_write 4096, paging_read 4096, paging_write 4096");
  CHECK(h.stats().paging_io == 3);
}

TEST_CASE("a rename whose RenamePath names another file is a row under each name, each naming both", "[etw]") {
  const std::size_t p = GENERATE(4, 8);
  CAPTURE(p);
  const std::u16string renamed = u"\\Device\\HarddiskVolume3\\Users\\ada\\renamed.txt";
  const std::string renamed_utf8 = "\\Device\\HarddiskVolume3\\Users\\ada\\renamed.txt";
  const Header at{4242, 4251, base_time};
  // FileIo Rename (the file object's name, the old one) and RenamePath of
  // the same IRP, in either order, with or without OperationEnds.
  for (const bool op_ends : {false, true}) {
    for (const bool path_event_first : {false, true}) {
      CAPTURE(op_ends, path_event_first);
      Harness h;
      Io io = on_file_a(p);
      if (op_ends) h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, 0x1, 1, 0)));
      io.name = notes;
      h.decode(classic(known_guid::file_io, 64, 3, p, create(p, Layout::thread_u32, io), at));
      if (op_ends) h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, io.irp, 1, 0)));
      io.irp = 0x20;
      io.info_class = 10;  // FileRenameInformation
      io.name = renamed;
      if (path_event_first) h.decode(classic(known_guid::file_io, 80, 3, p, path_event(p, Layout::thread_u32, io), at));
      h.decode(classic(known_guid::file_io, 71, 3, p, info(p, Layout::thread_u32, io), at));
      if (!path_event_first)
        h.decode(classic(known_guid::file_io, 80, 3, p, path_event(p, Layout::thread_u32, io), at));
      if (op_ends) h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, 0x20, 0, 0)));
      // Later I/O through the same file object is the new name's.
      io.irp = 0x30;
      io.size = 10;
      h.decode(classic(known_guid::file_io, 67, 3, p, read_write(p, Layout::thread_u32, io), at));
      if (op_ends) h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, 0x30, 10, 0)));
      h.decoder.flush();
      std::vector<std::string> rows;
      for (const FileEvent& event : h.events)
        rows.push_back(std::string(op_name(event.op)) + " " + h.path(event) + " [" +
                       h.catalog.path(event.renamed_from) + " -> " + h.catalog.path(event.renamed_to) + "]");
      const std::string pair = " [" + notes_utf8 + " -> " + renamed_utf8 + "]";
      const bool old_row_named = op_ends || path_event_first;  // held, or given the name at once
      CHECK(rows == std::vector<std::string>{"open " + notes_utf8 + " [ -> ]",
                                             "rename " + notes_utf8 + (old_row_named ? pair : " [ -> ]"),
                                             "rename " + renamed_utf8 + pair, "read " + renamed_utf8 + " [ -> ]"});
    }
  }
  SECTION("a failed rename names both, under the old name alone") {
    Harness h;
    Io io = on_file_a(p);
    h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, 0x1, 1, 0)));
    io.name = notes;
    h.decode(classic(known_guid::file_io, 64, 3, p, create(p, Layout::thread_u32, io), at));
    h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, io.irp, 1, 0)));
    io.irp = 0x20;
    io.info_class = 10;
    io.name = renamed;
    h.decode(classic(known_guid::file_io, 71, 3, p, info(p, Layout::thread_u32, io), at));
    h.decode(classic(known_guid::file_io, 80, 3, p, path_event(p, Layout::thread_u32, io), at));
    h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, 0x20, 0, 0xC0000035)));  // STATUS_OBJECT_NAME_COLLISION
    REQUIRE(h.events.size() == 2);
    CHECK(h.events[1].op == Op::rename);
    CHECK(h.events[1].status == 0xC0000035);
    CHECK(h.path(h.events[1]) == notes_utf8);
    CHECK(h.catalog.path(h.events[1].renamed_to) == renamed_utf8);
  }
  SECTION("a RenamePath that repeats the old name names nothing new") {
    Harness h;
    Io io = on_file_a(p);
    io.name = notes;
    h.decode(classic(known_guid::file_io, 64, 3, p, create(p, Layout::thread_u32, io), at));
    io.irp = 0x20;
    io.info_class = 10;
    io.name = u"\\DEVICE\\HarddiskVolume3\\Users\\ada\\NOTES.txt";  // the same, in other case
    h.decode(classic(known_guid::file_io, 71, 3, p, info(p, Layout::thread_u32, io), at));
    h.decode(classic(known_guid::file_io, 80, 3, p, path_event(p, Layout::thread_u32, io), at));
    REQUIRE(h.events.size() == 2);
    CHECK(h.events[1].renamed_to == 0);
  }
}

TEST_CASE("an OperationEnd that comes before its start completes it when it arrives, and an old one never does",
          "[etw]") {
  const std::size_t p = GENERATE(4, 8);
  CAPTURE(p);
  Harness h;
  Io io = on_file_a(p);
  io.name = notes;
  const Header early{4242, 4251, base_time + 1000};
  const Header start{4242, 4251, base_time + 900};
  h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, 0x1, 1, 0), start));  // the trace has ends
  // The end of a 64 KiB read that moved 100 bytes, before the read itself.
  h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, 0x700, 100, 0), early));
  io.irp = 0x700;
  io.size = 65536;
  h.decode(classic(known_guid::file_io, 67, 3, p, read_write(p, Layout::thread_u32, io), start));
  REQUIRE(h.events.size() == 1);
  CHECK(h.events[0].size == 100);
  CHECK(h.stats().early_ends == 1);
  CHECK(h.stats().never_completed == 0);
  // An end of an earlier operation on a reused IRP, whose start was lost: a
  // later start of that IRP waits for its own end.
  h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, 0x800, 7, 0xC0000022), early));
  io.irp = 0x800;
  const Header later{4242, 4251, base_time + 5000};
  h.decode(classic(known_guid::file_io, 67, 3, p, read_write(p, Layout::thread_u32, io), later));
  CHECK(h.events.size() == 1);
  h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, 0x800, 4096, 0), later));
  REQUIRE(h.events.size() == 2);
  CHECK(h.events[1].size == 4096);
  CHECK(h.events[1].status == 0);
  CHECK(h.stats().early_ends == 1);
}

TEST_CASE("an open that replaced or truncated an existing file is an overwrite", "[etw]") {
  const std::size_t p = GENERATE(4, 8);
  CAPTURE(p);
  Harness h;
  Io io = on_file_a(p);
  io.name = notes;
  h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, 0x1, 1, 0)));  // the trace has ends
  // OperationEnd's ExtraInfo: FILE_SUPERSEDED 0, FILE_OPENED 1, FILE_CREATED 2, FILE_OVERWRITTEN 3.
  const std::uint64_t what[] = {0, 1, 2, 3};
  for (std::uint64_t extra : what) {
    io.irp = 0x100 + extra;
    h.decode(classic(known_guid::file_io, 64, 3, p, create(p, Layout::thread_u32, io)));
    h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, io.irp, extra, 0)));
  }
  io.irp = 0x200;  // a failed one stays an open, with its status
  h.decode(classic(known_guid::file_io, 64, 3, p, create(p, Layout::thread_u32, io)));
  h.decode(classic(known_guid::file_io, 76, 3, p, op_end(p, io.irp, 0, 0xC0000043)));
  REQUIRE(h.events.size() == 5);
  CHECK(h.events[0].op == Op::overwrite);
  CHECK(h.events[1].op == Op::open);
  CHECK(h.events[2].op == Op::create);
  CHECK(h.events[3].op == Op::overwrite);
  CHECK(h.events[4].op == Op::open);
  CHECK(h.events[4].status == 0xC0000043);
  CHECK(op_name(Op::overwrite) == "overwrite");
}
