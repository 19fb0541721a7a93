#pragma once
// The portable event model every source produces and the store consumes.
//
// A FileEvent is small and fixed-size so that sources can hand it over without
// allocating: strings (paths, process images) live in the Catalog and the event
// carries their ids.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace etwaudit {

// Values are stored in events.op and listed in the ops table (sql/0001_initial.sql).
// read and write are 0 and 1 because SQLite stores those two integers in no bytes.
enum class Op : std::uint8_t {
  read = 0,
  write = 1,
  open = 2,
  close = 3,
  cleanup = 4,
  create = 5,
  remove = 6,  // "delete" in the database
  rename = 7,
  set_info = 8,
  flush = 9,
  disk_read = 10,
  disk_write = 11,
  close_write = 12,
  overwrite = 13,  // an open that replaced or truncated an existing file (Windows)
  // Windows: reads and writes of paging I/O (IoFlags IRP_PAGING_IO or
  // IRP_SYNCHRONOUS_PAGING_IO): the cache manager's and the memory manager's
  // transfers between a file and memory, not a program's own read or write
  // (whose bytes the lazy writer writes again).
  paging_read = 14,
  paging_write = 15,
};

inline constexpr int op_count = 16;

// The name stored in the ops table ("read", "delete", ...).
std::string_view op_name(Op op);
// The inverse of op_name; nullopt for an unknown name.
std::optional<Op> op_from_name(std::string_view name);
// "read, write, open, ...": every name, for messages.
std::string op_names_list();
// The operation named on the command line by option; throws UsageError
// "OPTION 'NAME': unknown operation (expected one of: ...)".
Op op_argument(const std::string& option, const std::string& name);

// One event as a source reports it, or (after coalescing, see
// store/coalescer.h) several events of one process, file and operation.
struct FileEvent {
  std::int64_t time = 0;         // ns since 1970-01-01T00:00:00Z (the first event's)
  std::int64_t offset = -1;      // byte offset in the file; -1 when the source does not say
  std::int64_t size = -1;        // bytes transferred (in all); -1 when the source does not say
  std::int64_t end_offset = -1;  // coalesced: end of the last event's byte range; else -1
  std::uint32_t process = 0;     // Catalog process id
  std::uint32_t path = 0;        // Catalog path id
  std::uint32_t tid = 0;         // thread id; 0 when unknown
  std::uint32_t count = 1;       // events this stands for
  std::uint32_t status = 0;      // Windows: the NTSTATUS of an operation that failed (an error); else 0
  // A rename is two events, one under each name (path), and both carry the
  // pair: the Catalog path ids of the old and the new name; 0 when the
  // source does not know them.
  std::uint32_t renamed_from = 0;
  std::uint32_t renamed_to = 0;
  Op op = Op::read;  // what happened
};

// Whether an NTSTATUS is an error (severity 3, 0xC0000000 and above).
constexpr bool is_ntstatus_error(std::uint32_t status) {
  return status >= 0xC0000000u;
}

}  // namespace etwaudit
