// The whole import pipeline on traces written here (support/etl_writer.h):
// the kernel FileIo layouts of a live session (operations, OperationEnd,
// Name, FileRundown), which no public trace holds, for 64-bit (FileIo v3)
// and 32-bit (v2) systems, in plain and compressed buffers.

#include <SQLiteCpp/Database.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "pipeline/collection.h"
#include "sources/etl/etl_source.h"
#include "store/database.h"
#include "store/event_writer.h"
#include "support/etl_writer.h"
#include "support/etw_payloads.h"
#include "temp_dir.h"

using namespace etwaudit;
using namespace etwaudit::test;

namespace {

constexpr Guid lost_event_class{0x6a399ae0, 0x4bc6, 0x4de9, {0x87, 0x0b, 0x36, 0x57, 0xf8, 0x94, 0x7e, 0x7e}};
// Kernel HookIds: the group (Process 0x03, Thread 0x05, FileIo 0x04, DiskIo 0x01) and the opcode.
constexpr std::uint16_t process_dc_start = 0x0303, thread_dc_start = 0x0503, file_name = 0x0400, file_rundown = 0x0424,
                        file_create = 0x0440, file_cleanup = 0x0441, file_close = 0x0442, file_read = 0x0443,
                        file_write = 0x0444, file_set_info = 0x0445, file_delete = 0x0446, file_rename = 0x0447,
                        file_op_end = 0x044C, disk_read = 0x010A;
constexpr std::uint32_t pid = 4000, tid = 4010;
constexpr std::uint64_t notes_object = 0xFFFFB00000001000, notes_key = 0xFFFFA00000002000,
                        old_object = 0xFFFFB00000003000, old_key = 0xFFFFA00000004000,
                        missing_object = 0xFFFFB00000005000, log_object = 0xFFFFB00000006000,
                        log_key = 0xFFFFA00000007000;
const std::u16string volume = u"\\Device\\HarddiskVolume2";

// FileIo Read/Write as a builder of the shape operation() takes (FileIo has no ExtraFlags).
std::vector<std::uint8_t> file_read_write(std::size_t p, Layout layout, const Io& io) {
  return read_write(p, layout, io);
}

// One trace: a process and its thread at the start, then a session's file I/O,
// each operation followed by its OperationEnd.
struct Trace {
  bool is_64;
  bool compress;
  std::size_t p() const { return is_64 ? 8 : 4; }
  std::uint8_t system() const { return is_64 ? 0x02 : 0x01; }
  int file_version() const { return is_64 ? 3 : 2; }
  Layout layout() const { return is_64 ? Layout::thread_u32 : Layout::thread_pointer; }

  EtlWriter writer{is_64, 2, EtlWriter::filetime_2026_12_02, 0, 0x1000};
  std::uint64_t time = EtlWriter::filetime_2026_12_02;
  std::uint64_t next_irp = 0xFFFFC00000010000;

  Trace(bool is_64_bit, bool compressed) : is_64(is_64_bit), compress(compressed) { writer.begin_buffer(1); }

  void kernel(std::uint16_t hook, int version, const std::vector<std::uint8_t>& payload) {
    time += 10'000;  // 1 ms
    writer.append(EtlWriter::kernel(system(), static_cast<std::uint16_t>(version), hook, time, payload, tid, pid),
                  compress);
  }
  // An operation with the given payload builder, then its end.
  std::uint64_t operation(std::uint16_t hook, std::vector<std::uint8_t> (*build)(std::size_t, Layout, const Io&), Io io,
                          std::uint64_t moved = 0, std::uint32_t status = 0) {
    io.irp = next_irp += 0x100;
    io.thread = tid;
    kernel(hook, file_version(), build(p(), layout(), io));
    kernel(file_op_end, file_version(), op_end(p(), io.irp, moved, status));
    return io.irp;
  }

  void write_session() {
    kernel(process_dc_start, is_64 ? 4 : 3,
           process_event(p(), is_64 ? 4 : 3, pid, "notepad.exe", u"notepad notes.txt"));
    kernel(thread_dc_start, is_64 ? 3 : 2, thread_event(p(), is_64 ? 3 : 2, 3, pid, tid));
    // An end first, as a live session has: from then on operations wait for theirs.
    kernel(file_op_end, file_version(), op_end(p(), 0xFFFFC000000000F0, 0, 0));
    Io notes;
    notes.file_object = notes_object;
    notes.file_key = notes_key;
    notes.name = volume + u"\\Users\\ada\\notes.txt";
    operation(file_create, create, notes, 1);  // FILE_OPENED
    notes.offset = 0;
    notes.size = 8192;
    operation(file_read, file_read_write, notes, 4000);  // asked 8192, the end says 4000 came
    notes.offset = 4000;
    notes.size = 100;
    operation(file_write, file_read_write, notes, 100);
    notes.info_class = 20;  // FileEndOfFileInformation
    operation(file_set_info, info, notes);
    operation(file_cleanup, simple, notes);
    operation(file_close, simple, notes);

    Io missing;
    missing.file_object = missing_object;
    missing.name = volume + u"\\Users\\ada\\missing.txt";
    operation(file_create, create, missing, 0, 0xC0000034);  // STATUS_OBJECT_NAME_NOT_FOUND

    // A file named by a Name event before its I/O.
    kernel(file_name, file_version(), name_event(p(), log_key, volume + u"\\Windows\\Temp\\setup.log"));
    Io log;
    log.file_object = log_object;
    log.file_key = log_key;
    log.offset = 300;
    log.size = 60;
    operation(file_write, file_read_write, log, 60);

    // A file first met by its key: its name comes from the rundown at the end.
    Io old;
    old.file_object = old_object;
    old.file_key = old_key;
    old.offset = 65536;
    old.size = 512;
    operation(file_read, file_read_write, old, 512);
    old.info_class = 10;  // FileRenameInformation
    operation(file_rename, info, old);
    old.info_class = 13;  // FileDispositionInformation
    old.extra = 1;        // DeleteFile: TRUE
    operation(file_delete, info, old);
    // DiskIo's FileObject is matched against the keys FileIo Name events name (doc/etw-format.md §4.6).
    kernel(disk_read, is_64 ? 3 : 2, disk_io(p(), is_64 ? 3 : 2, 1 << 20, 4096, old_key, tid));
    // The logger lost 5 events here.
    time += 10'000;
    writer.append(EtlWriter::classic(is_64 ? 0x14 : 0x0A, lost_event_class, 32, 2, time, ""), compress);
    kernel(file_rundown, file_version(), name_event(p(), old_key, volume + u"\\Users\\ada\\old.log"));
    writer.finish(compress);
  }
};

struct Imported {
  TempDir dir;
  std::string path = dir.file("audit.db");
  WriteDatabase database{path};
  Catalog catalog;
  RunStats stats;
  CollectionResult result;
  std::unique_ptr<EtlSource> source;

  explicit Imported(Trace& trace) {
    trace.write_session();
    const std::string etl = dir.file("session.etl");
    trace.writer.write(etl);
    source = std::make_unique<EtlSource>(etl, OnBadInput::stop);
    EventWriter writer(database.db(), catalog, SelfExclusion{});
    writer.begin_run(source->description(), "");
    result = run_collection(*source, catalog, writer, stats, CollectionOptions{});
  }
  std::vector<std::string> rows(const std::string& sql) {
    std::vector<std::string> result;
    SQLite::Statement query(database.db(), sql);
    while (query.executeStep()) {
      std::string row;
      for (int i = 0; i < query.getColumnCount(); ++i) row += (i ? "|" : "") + query.getColumn(i).getString();
      result.push_back(row);
    }
    return result;
  }
};

}  // namespace

TEST_CASE("a written trace of kernel FileIo events imports with sizes, statuses, names and losses", "[import]") {
  const bool is_64 = GENERATE(true, false);
  const bool compress = GENERATE(false, true);
  INFO((is_64 ? "64-bit, FileIo v3" : "32-bit, FileIo v2") << (compress ? ", compressed buffers" : ""));
  Trace trace(is_64, compress);
  Imported import(trace);
  REQUIRE_FALSE(import.result.failed);
  CHECK(import.source->reader_counters().records > 20);
  CHECK(import.source->decoder_stats().malformed == 0);
  CHECK(import.rows("SELECT process, op, path, offset, size, coalesce(status, '') FROM v_events ORDER BY time_ns") ==
        std::vector<std::string>{"notepad.exe|open|\\Device\\HarddiskVolume2\\Users\\ada\\notes.txt|||",
                                 "notepad.exe|read|\\Device\\HarddiskVolume2\\Users\\ada\\notes.txt|0|4000|",
                                 "notepad.exe|write|\\Device\\HarddiskVolume2\\Users\\ada\\notes.txt|4000|100|",
                                 "notepad.exe|set_info|\\Device\\HarddiskVolume2\\Users\\ada\\notes.txt|||",
                                 "notepad.exe|cleanup|\\Device\\HarddiskVolume2\\Users\\ada\\notes.txt|||",
                                 "notepad.exe|close|\\Device\\HarddiskVolume2\\Users\\ada\\notes.txt|||",
                                 "notepad.exe|open|\\Device\\HarddiskVolume2\\Users\\ada\\missing.txt|||0xC0000034",
                                 "notepad.exe|write|\\Device\\HarddiskVolume2\\Windows\\Temp\\setup.log|300|60|",
                                 "notepad.exe|read|\\Device\\HarddiskVolume2\\Users\\ada\\old.log|65536|512|",
                                 "notepad.exe|rename|\\Device\\HarddiskVolume2\\Users\\ada\\old.log|||",
                                 "notepad.exe|delete|\\Device\\HarddiskVolume2\\Users\\ada\\old.log|||",
                                 "notepad.exe|disk_read|\\Device\\HarddiskVolume2\\Users\\ada\\old.log|1048576|4096|"});
  CHECK(import.rows("SELECT events_lost, unresolved FROM collector_runs") == std::vector<std::string>{"1|0"});
  CHECK(import.rows("SELECT sum(failed), sum(read_bytes), sum(write_bytes) FROM activity") ==
        std::vector<std::string>{"1|4512|160"});
}
