#include "sources/etw/decoder.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>
#include <span>
#include <vector>

#include "core/ascii.h"
#include "core/text.h"
#include "core/time_format.h"
#include "sources/etw/payload.h"

// Payload layouts, from doc/etw-format.md §4 unless said otherwise. P is the
// record's pointer size (4 or 8); fields are packed without padding (§4.2).
//
// FileIo and Kernel-File operation events share one shape. FileIo v2 and
// Kernel-File v0 put the issuing thread in a pointer right after the Irp;
// FileIo v3 and Kernel-File v1 move it to a u32 after the other pointers:
//
//   [u64 byte offset]  Irp  [thread ptr]  pointers...  [thread u32]  u32s...  [UTF-16 name]
//
//   Read/Write            offset, 2 pointers (FileObject, FileKey), u32 IoSize,
//                         IoFlags (+ ExtraFlags in Kernel-File v1)
//   Create, CreateNewFile 1 pointer (FileObject), u32 CreateOptions, attributes,
//                         ShareAccess, name (OpenPath / FileName)
//   Cleanup/Close/Flush   2 pointers (FileObject, FileKey)
//   SetInfo family        3 pointers (FileObject, FileKey, ExtraInfo), u32 InfoClass
//   DirEnum/DirNotify     2 pointers, u32 Length, InfoClass, FileIndex, name
//   path events 79-81,    3 pointers, u32 InfoClass, name
//   Kernel-File 26-28
//   OperationEnd          Irp, ExtraInfo pointer, u32 NtStatus (no thread)
//   Name events           FileKey pointer, name
//
// DiskIo Read/Write (DiskIo_TypeGroup1, learn.microsoft.com etw/diskio-typegroup1):
// u32 DiskNumber 0, IrpFlags 4, TransferSize 8, Reserved 12, u64 ByteOffset 16,
// FileObject 24, Irp 24+P, u64 HighResResponseTime 24+2P, and in v3 u32
// IssuingThreadId 32+2P.
//
// Kernel Process v3/v4: UniqueProcessKey 0, u32 ProcessId P, ParentId P+4,
// SessionId P+8, ExitStatus P+12, DirectoryTableBase P+16, (v4: u32 Flags
// 2P+16), UserSID, ANSI ImageFileName, UTF-16 CommandLine, (v4: UTF-16
// PackageFullName, ApplicationId). The SID is a TOKEN_USER of two pointers
// followed by the SID itself: 8 bytes with SubAuthorityCount in the second,
// then 4 bytes per sub-authority. When the field starts with zero the SID is
// absent; whether it then takes 4 bytes or a pointer is UNVERIFIED, so each
// reading is tried, and the one whose image name is not empty and whose
// strings end exactly at the end of the payload is taken.
//
// Thread (dissect manifest {3d6fa8d1-…}): v0 u32 TThreadId, ProcessId; v1-v4
// u32 ProcessId, TThreadId, then pointers and small fields whose sizes are
// checked below. Kernel-Process (dissect manifest {22fb2cd6-…}):
// ProcessStart u32 ProcessID, FILETIME CreateTime, u32 ParentProcessID,
// SessionID, (v1/v2: u32 Flags), UTF-16 ImageName; ProcessStop u32 ProcessID,
// FILETIME CreateTime, ExitTime, u32 ExitCode, TokenElevationType,
// HandleCount, u64 CommitCharge, CommitPeak, (v1: u64 CPUCycleCount, five
// u32 counters), ANSI ImageName; ThreadStart/Stop u32 ProcessID, ThreadID,
// seven pointers, (v1: u32 SubProcessTag, and for the stop u64 CycleTime).

namespace etwaudit {

namespace {

// Lost_Event class {6a399ae0-4bc6-4de9-870b-3657f8947e7e} (doc/etw-format.md §3.4).
constexpr Guid lost_event_guid{0x6a399ae0, 0x4bc6, 0x4de9, {0x87, 0x0b, 0x36, 0x57, 0xf8, 0x94, 0x7e, 0x7e}};

// FileIo opcodes (doc/etw-format.md §4.4).
namespace file_io {
constexpr std::uint8_t name = 0, file_create = 32, file_delete = 35, file_rundown = 36, create = 64, cleanup = 65,
                       close = 66, read = 67, write = 68, set_info = 69, remove = 70, rename = 71, dir_enum = 72,
                       flush = 73, query_info = 74, fs_control = 75, operation_end = 76, dir_notify = 77,
                       delete_path = 79, rename_path = 80, set_link_path = 81;
}  // namespace file_io

// Microsoft-Windows-Kernel-File event ids (doc/etw-format.md §4.5).
namespace kernel_file {
constexpr std::uint16_t name_create = 10, name_delete = 11, create = 12, cleanup = 13, close = 14, read = 15,
                        write = 16, set_information = 17, set_delete = 18, rename = 19, dir_enum = 20, flush = 21,
                        query_information = 22, fsctl = 23, operation_end = 24, dir_notify = 25, delete_path = 26,
                        rename_path = 27, set_link_path = 28, rename29 = 29, create_new_file = 30;
}  // namespace kernel_file

}  // namespace

namespace decoder_detail {

enum class Action : std::uint8_t {
  deliver,      // deliver op for the event's file
  open,         // the name names the FileObject; deliver op
  close,        // deliver op, then forget the FileObject's name
  remove,       // SetInfo-style delete: deliver unless its path event came first
  rename,       // SetInfo-style rename: likewise
  delete_path,  // path event of a delete: the name names the file; deliver unless its partner came first
  rename_path,  // path event of a rename: deliver unless its partner came first
  count_only,   // decoded and counted, not delivered
};

// Where an operation event keeps its fields; see the table at the top.
struct FileLayout {
  bool byte_offset = false;   // a u64 file offset comes first (Read/Write)
  std::uint8_t pointers = 0;  // pointers after the Irp and thread: FileObject, FileKey, ExtraInformation in order
  std::uint8_t numbers = 0;   // u32 fields after the thread id
  bool name = false;          // a NUL-terminated UTF-16 name comes last
};

}  // namespace decoder_detail

namespace {

using decoder_detail::Action;
using decoder_detail::FileLayout;
using decoder_detail::Payload;

// The fields of an operation event.
struct FileFields {
  std::int64_t byte_offset = -1;       // file offset (Read/Write); -1 otherwise
  std::uint64_t irp = 0;               // the IRP, shared by the events of one operation
  std::uint64_t file_object = 0;       // the open instance
  std::uint64_t file_key = 0;          // the file (stream context); 0 when the layout has none
  std::uint64_t extra_info = 0;        // the SetInfo family's ExtraInformation; 0 when the layout has none
  std::uint32_t thread = 0;            // issuing thread (TTID / IssuingThreadId)
  std::uint32_t numbers[3] = {};       // the u32 fields after the thread, in order
  std::span<const std::uint8_t> name;  // UTF-16LE bytes of the name, without terminator
};

constexpr FileLayout read_write_layout{true, 2, 2, false};
constexpr FileLayout kernel_file_read_write_v1_layout{true, 2, 3, false};
constexpr FileLayout create_layout{false, 1, 3, true};
constexpr FileLayout simple_layout{false, 2, 0, false};
constexpr FileLayout info_layout{false, 3, 1, false};
constexpr FileLayout dir_enum_layout{false, 2, 3, true};
constexpr FileLayout path_layout{false, 3, 1, true};

// What each FileIo opcode or Kernel-File event id that is a file operation
// is: where its fields are, what it does, and the operation it delivers.
struct FileOperation {
  FileLayout layout;
  Action action = Action::count_only;
  Op op = Op::read;
  bool v3_only = false;         // FileIo path events exist from v3 on
  bool v1_extra_flags = false;  // Kernel-File Read/Write v1 add ExtraFlags
  bool known = false;           // set by by_code for the codes listed
};

struct FileOperationEntry {
  std::uint16_t code;  // opcode or event id
  FileOperation operation;
};

// A table indexed by code from a list of entries.
template <std::size_t N>
constexpr std::array<FileOperation, 128> by_code(const FileOperationEntry (&entries)[N]) {
  std::array<FileOperation, 128> table{};
  for (const FileOperationEntry& entry : entries) {
    table[entry.code] = entry.operation;
    table[entry.code].known = true;
  }
  return table;
}

constexpr FileOperationEntry file_io_list[] = {
    {file_io::create, {create_layout, Action::open, Op::open}},
    {file_io::cleanup, {simple_layout, Action::deliver, Op::cleanup}},
    {file_io::close, {simple_layout, Action::close, Op::close}},
    {file_io::read, {read_write_layout, Action::deliver, Op::read}},
    {file_io::write, {read_write_layout, Action::deliver, Op::write}},
    {file_io::set_info, {info_layout, Action::deliver, Op::set_info}},
    {file_io::remove, {info_layout, Action::remove, Op::remove}},
    {file_io::rename, {info_layout, Action::rename, Op::rename}},
    {file_io::flush, {simple_layout, Action::deliver, Op::flush}},
    {file_io::dir_enum, {dir_enum_layout, Action::count_only, Op::read}},
    {file_io::dir_notify, {dir_enum_layout, Action::count_only, Op::read}},
    {file_io::query_info, {info_layout, Action::count_only, Op::read}},
    {file_io::fs_control, {info_layout, Action::count_only, Op::read}},
    {file_io::delete_path, {path_layout, Action::delete_path, Op::remove, true}},
    {file_io::rename_path, {path_layout, Action::rename_path, Op::rename, true}},
    {file_io::set_link_path, {path_layout, Action::count_only, Op::read, true}},
};
constexpr std::array<FileOperation, 128> file_io_operations = by_code(file_io_list);

constexpr FileOperationEntry kernel_file_list[] = {
    {kernel_file::create, {create_layout, Action::open, Op::open}},
    {kernel_file::create_new_file, {create_layout, Action::open, Op::create}},
    {kernel_file::cleanup, {simple_layout, Action::deliver, Op::cleanup}},
    {kernel_file::close, {simple_layout, Action::close, Op::close}},
    {kernel_file::read, {read_write_layout, Action::deliver, Op::read, false, true}},
    {kernel_file::write, {read_write_layout, Action::deliver, Op::write, false, true}},
    {kernel_file::set_information, {info_layout, Action::deliver, Op::set_info}},
    {kernel_file::set_delete, {info_layout, Action::remove, Op::remove}},
    {kernel_file::rename, {info_layout, Action::rename, Op::rename}},
    {kernel_file::rename29, {info_layout, Action::rename, Op::rename}},
    {kernel_file::flush, {simple_layout, Action::deliver, Op::flush}},
    {kernel_file::dir_enum, {dir_enum_layout, Action::count_only, Op::read}},
    {kernel_file::dir_notify, {dir_enum_layout, Action::count_only, Op::read}},
    {kernel_file::query_information, {info_layout, Action::count_only, Op::read}},
    {kernel_file::fsctl, {info_layout, Action::count_only, Op::read}},
    {kernel_file::delete_path, {path_layout, Action::delete_path, Op::remove}},
    {kernel_file::rename_path, {path_layout, Action::rename_path, Op::rename}},
    {kernel_file::set_link_path, {path_layout, Action::count_only, Op::read}},
};
constexpr std::array<FileOperation, 128> kernel_file_operations = by_code(kernel_file_list);

const FileOperation* find_operation(const std::array<FileOperation, 128>& table, std::uint16_t code) {
  return code < table.size() && table[code].known ? &table[code] : nullptr;
}

}  // namespace

EtwDecoder::EtwDecoder(Catalog& catalog, FileEventSink& sink) : m_catalog(catalog), m_sink(sink) {}

void EtwDecoder::decode(const RawRecord& record) noexcept {
  ++m_stats.records;
  try {
    const Guid& provider = record.provider;
    if (provider == known_guid::file_io) {
      decode_file_io(record);
    } else if (provider == known_guid::disk_io) {
      decode_disk_io(record);
    } else if (provider == known_guid::kernel_file) {
      decode_kernel_file(record);
    } else if (provider == known_guid::thread) {
      decode_thread(record);
    } else if (provider == known_guid::process) {
      decode_process(record);
    } else if (provider == known_guid::kernel_process) {
      decode_kernel_process(record);
    } else if (provider == lost_event_guid) {
      decode_lost_event(record);
    } else {
      ++m_stats.unknown;
    }
  } catch (...) {
    // Only a table or the catalog growing, or the sink, can throw.
    ++m_stats.failed;
  }
}

void EtwDecoder::decode_file_io(const RawRecord& record) {
  const std::uint8_t opcode = record.opcode;
  // A later version than 3 is read with the v3 layout, as TraceEvent does:
  // new versions have added fields at the end, and every field read is
  // length-checked (a payload shorter than v3's is malformed).
  const std::uint8_t version = std::min<std::uint8_t>(record.version, 3);
  if (record.version > 3) ++m_stats.newer_versions;
  // The name events have one layout in every version (doc/etw-format.md §4.4).
  if (opcode == file_io::name || opcode == file_io::file_create || opcode == file_io::file_rundown ||
      opcode == file_io::file_delete) {
    decode_name(record, opcode == file_io::file_delete, opcode == file_io::file_rundown);
    return;
  }
  if (version != 2 && version != 3) {
    ++m_stats.unknown;
    return;
  }
  if (opcode == file_io::operation_end) return count_operation_end(record);
  const FileOperation* operation = find_operation(file_io_operations, opcode);
  if (operation && (!operation->v3_only || version == 3))
    return decode_operation(record, operation->layout, operation->action, operation->op);
  ++m_stats.unknown;
}

void EtwDecoder::count_operation_end(const RawRecord& record) {
  // Irp, ExtraInfo, NtStatus.
  const Payload payload(record);
  std::uint64_t irp = 0, extra_info = 0;
  std::uint32_t status = 0;
  const std::size_t pointer = payload.pointer_size();
  if (!payload.pointer(0, irp) || !payload.pointer(pointer, extra_info) || !payload.u32(2 * pointer, status)) {
    ++m_stats.malformed;
    return;
  }
  ++m_stats.file_events;
  ++m_stats.counted_only;
  // Kernel-File's OperationEnd (24) completes Kernel-File operations, which are never held.
  if (record.provider != known_guid::file_io) return;
  m_op_ends_seen = true;
  complete(irp, extra_info, status, record.time);
}

void EtwDecoder::complete(std::uint64_t irp, std::uint64_t extra_info, std::uint32_t status, std::int64_t time) {
  const auto found = m_held.find(irp);
  if (found == m_held.end()) {
    // An operation not held (Cleanup, Close, ...), or one whose start comes
    // later (doc/etw-format.md §2.3): kept for a while, the newest first.
    m_early_ends[irp] = EarlyEnd{extra_info, status, time, ++m_early_sequence};
    m_early_order.emplace_back(irp, m_early_sequence);
    while (m_early_ends.size() > early_end_capacity || m_early_order.size() > 2 * early_end_capacity) {
      const auto [oldest, sequence] = m_early_order.front();
      m_early_order.pop_front();
      if (const auto early = m_early_ends.find(oldest);
          early != m_early_ends.end() && early->second.sequence == sequence)
        m_early_ends.erase(early);
    }
    return;
  }
  FileEvent event = found->second.event;
  const OnSuccess then = found->second.then;
  m_held.erase(found);
  ++m_stats.completed;
  if (is_ntstatus_error(status)) {
    event.status = status;
    ++m_stats.failed_operations;
  } else {
    apply(then);
  }
  // ExtraInfo: the bytes moved by a read or write; for a Create, what it did
  // to the file: FILE_CREATED (2) a new file, FILE_SUPERSEDED (0) or
  // FILE_OVERWRITTEN (3) an existing one replaced or cut to nothing.
  constexpr std::uint64_t file_superseded = 0, file_created = 2, file_overwritten = 3;
  if (event.op == Op::read || event.op == Op::write || event.op == Op::paging_read || event.op == Op::paging_write)
    event.size = static_cast<std::int64_t>(std::min<std::uint64_t>(extra_info, INT64_MAX));
  else if (event.op == Op::open && !event.status && extra_info == file_created)
    event.op = Op::create;
  else if (event.op == Op::open && !event.status && (extra_info == file_superseded || extra_info == file_overwritten))
    event.op = Op::overwrite;
  emit(event);
}

void EtwDecoder::flush() noexcept {
  try {
    for (const auto& [irp, sequence] : m_held_order) {
      const auto found = m_held.find(irp);
      if (found == m_held.end() || found->second.sequence != sequence) continue;
      ++m_stats.never_completed;
      emit(found->second.event);
    }
  } catch (...) {
    ++m_stats.failed;
  }
  m_held.clear();
  m_held_order.clear();
}

void EtwDecoder::decode_kernel_file(const RawRecord& record) {
  const std::uint16_t id = record.event_id;
  const std::uint8_t version = record.version;
  // NameCreate, NameDelete and OperationEnd exist only as v0; the rest as v0 and v1.
  const bool v0_only =
      id == kernel_file::name_create || id == kernel_file::name_delete || id == kernel_file::operation_end;
  if (version > (v0_only ? 0 : 1)) {
    ++m_stats.unknown;
    return;
  }
  if (id == kernel_file::name_create || id == kernel_file::name_delete)
    return decode_name(record, id == kernel_file::name_delete, false);
  if (id == kernel_file::operation_end) return count_operation_end(record);
  const FileOperation* operation = find_operation(kernel_file_operations, id);
  if (!operation) {
    ++m_stats.unknown;
    return;
  }
  const bool extra_flags = operation->v1_extra_flags && version == 1;
  decode_operation(record, extra_flags ? kernel_file_read_write_v1_layout : operation->layout, operation->action,
                   operation->op);
}

void EtwDecoder::decode_name(const RawRecord& record, bool removes, bool rundown) {
  const Payload payload(record);
  std::uint64_t key = 0;
  std::span<const std::uint8_t> name;
  std::size_t end = 0;
  if (!payload.pointer(0, key) || !payload.utf16(payload.pointer_size(), name, end)) {
    ++m_stats.malformed;
    return;
  }
  ++m_stats.names;
  if (rundown) ++m_stats.rundown_names;
  m_text.clear();
  append_utf8_from_utf16le(name.data(), name.size(), m_text);
  if (removes) {
    // Events stored under the key before now get the name; the key's next
    // life starts afresh.
    m_catalog.resolve_file_key(key, m_text);
    m_key_names.erase(key);
    m_catalog.forget_file_key(key);
  } else {
    name_key(key, m_text);
  }
}

void EtwDecoder::name_key(std::uint64_t key_value, std::string_view name) {
  if (key_value == 0 || name.empty()) return;
  m_catalog.resolve_file_key(key_value, name);
  m_key_names.set(key_value, m_catalog.intern_path(name));
}

namespace {

// Reads an operation event's fields as layout says (the table at the top);
// false when the payload is too short for them.
bool read_file_fields(const RawRecord& record, const FileLayout& layout, FileFields& fields) {
  const Payload payload(record);
  const std::size_t pointer = payload.pointer_size();
  // FileIo v2 and Kernel-File v0 carry the thread in a pointer after the Irp.
  const bool thread_pointer = record.provider == known_guid::file_io ? record.version == 2 : record.version == 0;
  std::size_t at = 0;
  bool ok = true;
  if (layout.byte_offset) {
    std::uint64_t offset = 0;
    ok = payload.u64(at, offset);
    fields.byte_offset = static_cast<std::int64_t>(offset);
    at += 8;
  }
  ok = ok && payload.pointer(at, fields.irp);
  at += pointer;
  if (thread_pointer) {
    std::uint64_t thread = 0;
    ok = ok && payload.pointer(at, thread);
    fields.thread = static_cast<std::uint32_t>(thread);
    at += pointer;
  }
  std::uint64_t pointers[3] = {};
  for (std::size_t i = 0; i < layout.pointers; ++i, at += pointer) ok = ok && payload.pointer(at, pointers[i]);
  fields.file_object = pointers[0];
  fields.file_key = layout.pointers >= 2 ? pointers[1] : 0;
  fields.extra_info = layout.pointers >= 3 ? pointers[2] : 0;
  if (!thread_pointer) {
    ok = ok && payload.u32(at, fields.thread);
    at += 4;
  }
  for (std::size_t i = 0; i < layout.numbers; ++i, at += 4) ok = ok && payload.u32(at, fields.numbers[i]);
  std::size_t end = 0;
  if (layout.name) ok = ok && payload.utf16(at, fields.name, end);
  return ok;
}

// What a delete event (SetInfo Delete, Kernel-File SetDelete, DeletePath)
// asked for: its ExtraInformation is the requested disposition
// (doc/etw-format.md §4.4): FileDispositionInformation's DeleteFile
// boolean, or FileDispositionInformationEx's flags.
enum class Disposition { deletes, keeps, sets_on_close, clears_on_close };

Disposition disposition(std::uint32_t info_class, std::uint64_t extra_info) {
  constexpr std::uint32_t file_disposition_information = 13, file_disposition_information_ex = 64;
  constexpr std::uint64_t disposition_delete = 0x1, disposition_on_close = 0x8;
  if (info_class == file_disposition_information_ex) {
    const bool deletes = extra_info & disposition_delete;
    if (extra_info & disposition_on_close) return deletes ? Disposition::sets_on_close : Disposition::clears_on_close;
    return deletes ? Disposition::deletes : Disposition::keeps;
  }
  if (info_class == file_disposition_information) return extra_info != 0 ? Disposition::deletes : Disposition::keeps;
  return Disposition::deletes;  // another class under a delete event: taken at its word
}

// CreateOptions' FILE_DELETE_ON_CLOSE; the top byte is the CreateDisposition.
constexpr std::uint32_t file_delete_on_close = 0x1000;

}  // namespace

void EtwDecoder::decode_operation(const RawRecord& record, const FileLayout& layout, Action action, Op op) {
  FileFields fields;
  if (!read_file_fields(record, layout, fields)) {
    ++m_stats.malformed;
    return;
  }
  ++m_stats.file_events;
  const std::uint32_t thread = fields.thread != 0 ? fields.thread : record.tid;
  // The operations whose OperationEnd says something worth waiting for.
  const bool held =
      record.provider == known_guid::file_io && (op == Op::open || op == Op::read || op == Op::write ||
                                                 op == Op::set_info || op == Op::remove || op == Op::rename);
  const std::uint64_t irp = held ? fields.irp : 0;
  OnSuccess then{};
  // Only a disposition that deletes is a delete; the others set information,
  // and may mark the file object delete-on-close.
  auto ask_disposition = [&] {
    const Disposition asked = disposition(fields.numbers[0], fields.extra_info);
    if (asked == Disposition::deletes) return true;
    op = Op::set_info;
    if (asked != Disposition::keeps) {
      then.on_close_object = fields.file_object;
      then.on_close_set = asked == Disposition::sets_on_close;
    }
    return false;
  };
  switch (action) {
    case Action::count_only: ++m_stats.counted_only; return;
    case Action::open: {
      m_text.clear();
      append_utf8_from_utf16le(fields.name.data(), fields.name.size(), m_text);
      if (m_text.empty() || fields.file_object == 0) break;
      // A Create starts the FileObject's life: anything stored under it before
      // was read out of order (a Close would have forgotten an older life).
      m_catalog.resolve_file_key(fields.file_object, m_text);
      const std::uint32_t path = m_catalog.intern_path(m_text);
      m_object_names.set(fields.file_object, path);
      if ((fields.numbers[0] & 0x00FFFFFF) & file_delete_on_close) {
        then.on_close_object = fields.file_object;
        then.on_close_set = true;
      }
      deliver(record, op, path, thread, -1, -1, irp, then);
      return;
    }
    case Action::close: {
      const std::uint32_t path = file_path(fields.file_key, fields.file_object);
      deliver(record, op, path, thread, -1, -1);
      m_delete_on_close.erase(fields.file_object);
      m_object_names.erase(fields.file_object);
      m_catalog.forget_file_key(fields.file_object);
      return;
    }
    case Action::remove:
      ask_disposition();
      if (fold_into_partner(fields.irp, fields.file_object, op, false)) return;
      break;
    case Action::rename:
    case Action::rename_path: {
      const std::uint32_t path = file_path(fields.file_key, fields.file_object);
      const std::uint32_t renamed_to = action == Action::rename_path ? rename_target(path, fields.name) : 0;
      if (fold_into_partner(fields.irp, fields.file_object, op, action == Action::rename_path)) {
        if (renamed_to != 0) name_rename_target(irp, fields.file_object, path, renamed_to, record, thread);
        return;
      }
      then.renamed_key = fields.file_key;
      if (renamed_to != 0) {
        then.renamed_object = fields.file_object;
        then.new_name = renamed_to;
      }
      deliver(record, op, path, thread, -1, -1, irp, then, renamed_to);
      return;
    }
    case Action::delete_path:
      if (ask_disposition()) {
        m_text.clear();
        append_utf8_from_utf16le(fields.name.data(), fields.name.size(), m_text);
        if (!m_text.empty()) {
          // The path of a file being deleted is that file's name.
          m_catalog.resolve_file_key(fields.file_key, m_text);
          m_catalog.resolve_file_key(fields.file_object, m_text);
          if (fields.file_object != 0 && m_object_names.find(fields.file_object) == nullptr) {
            m_object_names.set(fields.file_object, m_catalog.intern_path(m_text));
          }
        }
      }
      if (fold_into_partner(fields.irp, fields.file_object, op, true)) return;
      break;
    case Action::deliver: break;
  }
  // Paging I/O (IoFlags IRP_PAGING_IO 0x2, IRP_SYNCHRONOUS_PAGING_IO 0x40):
  // the lazy writer's and the memory manager's transfers, not a program's
  // read or write (sql/0014_paging_io.sql).
  constexpr std::uint32_t paging_flags = 0x2 | 0x40;
  if ((op == Op::read || op == Op::write) && layout.byte_offset && (fields.numbers[1] & paging_flags)) {
    op = op == Op::read ? Op::paging_read : Op::paging_write;
    ++m_stats.paging_io;
  }
  const std::uint32_t path = file_path(fields.file_key, fields.file_object);
  const bool sized = layout.byte_offset;
  deliver(record, op, path, thread, sized ? fields.byte_offset : -1, sized ? std::int64_t{fields.numbers[0]} : -1, irp,
          then);
  // A file object opened with FILE_DELETE_ON_CLOSE (or set so) takes its
  // file with it at Cleanup: no delete event of its own says so.
  if (op == Op::cleanup && m_delete_on_close.erase(fields.file_object)) {
    ++m_stats.deletes_on_close;
    deliver(record, Op::remove, path, thread, -1, -1);
  }
}

void EtwDecoder::apply(const OnSuccess& then) {
  if (then.on_close_object != 0) {
    if (then.on_close_set)
      m_delete_on_close.insert(then.on_close_object);
    else
      m_delete_on_close.erase(then.on_close_object);
  }
  if (then.renamed_key != 0) m_key_names.erase(then.renamed_key);
  if (then.renamed_object != 0) m_object_names.set(then.renamed_object, then.new_name);
}

std::uint32_t EtwDecoder::rename_target(std::uint32_t path, std::span<const std::uint8_t> name) {
  // Whether a RenamePath's FileName is the old or the new name is not
  // documented: a name other than the one the file object had can only be
  // the new one. Unknown when the old name is unknown too.
  m_text.clear();
  append_utf8_from_utf16le(name.data(), name.size(), m_text);
  if (m_text.empty()) return 0;
  const std::string old_name = m_catalog.path(path);
  if (old_name.empty() || equal_ignoring_ascii_case(old_name, m_text)) return 0;
  return m_catalog.intern_path(m_text);
}

void EtwDecoder::name_rename_target(std::uint64_t irp, std::uint64_t file_object, std::uint32_t path,
                                    std::uint32_t renamed_to, const RawRecord& record, std::uint32_t thread) {
  if (const auto held = m_held.find(irp); irp != 0 && held != m_held.end() && held->second.event.op == Op::rename) {
    held->second.event.renamed_from = held->second.event.path;
    held->second.event.renamed_to = renamed_to;
    held->second.then.renamed_object = file_object;
    held->second.then.new_name = renamed_to;
    return;
  }
  // Its partner went out already: the new name's row, at least, names both.
  FileEvent event;
  event.time = record.time;
  event.op = Op::rename;
  event.path = renamed_to;
  event.renamed_from = path;
  event.renamed_to = renamed_to;
  event.process = event_process(record.pid, thread, record.time);
  event.tid = thread == RawRecord::unknown_id ? 0 : thread;
  emit(event);
  m_object_names.set(file_object, renamed_to);
}

void EtwDecoder::decode_disk_io(const RawRecord& record) {
  constexpr std::uint8_t disk_read = 10, disk_write = 11;
  if ((record.opcode != disk_read && record.opcode != disk_write) || (record.version != 2 && record.version != 3)) {
    ++m_stats.unknown;
    return;
  }
  const Payload payload(record);
  const std::size_t pointer = payload.pointer_size();
  std::uint32_t transfer_size = 0, thread = 0;
  std::uint64_t byte_offset = 0, file_object = 0, response_time = 0;
  bool ok = payload.u32(8, transfer_size) && payload.u64(16, byte_offset) && payload.pointer(24, file_object) &&
            payload.u64(24 + 2 * pointer, response_time);
  if (record.version == 3) ok = ok && payload.u32(32 + 2 * pointer, thread);
  if (!ok) {
    ++m_stats.malformed;
    return;
  }
  // The field is called FileObject but names match it against FileIo_Name's
  // key (learn.microsoft.com etw/diskio-typegroup1), so both tables are tried.
  const std::uint32_t path = file_path(file_object, file_object);
  ++m_stats.disk_events;
  deliver(record, record.opcode == disk_read ? Op::disk_read : Op::disk_write, path, thread != 0 ? thread : record.tid,
          static_cast<std::int64_t>(byte_offset), transfer_size);
}

void EtwDecoder::decode_lost_event(const RawRecord& record) {
  constexpr std::uint8_t lost_event = 32, lost_buffer = 33, lost_file = 34;
  if (record.opcode == lost_event || record.opcode == lost_buffer || record.opcode == lost_file) {
    ++m_stats.lost_markers;
  } else {
    ++m_stats.unknown;
  }
}

std::uint32_t EtwDecoder::file_path(std::uint64_t key_value, std::uint64_t object_value) {
  if (key_value != 0) {
    if (const std::uint32_t* path = m_key_names.find(key_value)) return *path;
  }
  if (object_value != 0) {
    if (const std::uint32_t* path = m_object_names.find(object_value)) return *path;
  }
  ++m_stats.unresolved;
  return m_catalog.intern_file_key(key_value != 0 ? key_value : object_value);
}

bool EtwDecoder::fold_into_partner(std::uint64_t irp, std::uint64_t file_object, Op op, bool from_path_event) {
  if (irp == 0) return false;
  for (RecentOperation& recent : m_recent) {
    if (recent.irp == irp && recent.file_object == file_object && recent.op == op &&
        recent.from_path_event != from_path_event) {
      recent = RecentOperation{};
      ++m_stats.duplicates;
      return true;
    }
  }
  m_recent[m_recent_next] = RecentOperation{irp, file_object, op, from_path_event};
  m_recent_next = (m_recent_next + 1) % m_recent.size();
  return false;
}

void EtwDecoder::deliver(const RawRecord& record, Op op, std::uint32_t path, std::uint32_t thread, std::int64_t offset,
                         std::int64_t size, std::uint64_t irp, const OnSuccess& then, std::uint32_t renamed_to) {
  FileEvent event;
  event.time = record.time;
  event.op = op;
  event.path = path;
  if (renamed_to != 0) {
    event.renamed_from = path;
    event.renamed_to = renamed_to;
  }
  event.process = event_process(record.pid, thread, record.time);
  event.tid = thread == RawRecord::unknown_id ? 0 : thread;
  event.offset = offset;
  event.size = size;
  if (irp == 0 || !m_op_ends_seen) {
    emit(event);
    apply(then);  // no end to wait for: taken to have succeeded
    return;
  }
  // An IRP is reused once its operation is done: one still held never got its end.
  if (const auto found = m_held.find(irp); found != m_held.end()) {
    ++m_stats.never_completed;
    emit(found->second.event);
    m_held.erase(found);
  }
  m_held[irp] = Held{event, ++m_held_sequence, then};
  m_held_order.emplace_back(irp, m_held_sequence);
  // Its end came first: complete it now, with what the end said.
  if (const auto early = m_early_ends.find(irp); early != m_early_ends.end()) {
    const EarlyEnd end = early->second;
    m_early_ends.erase(early);
    if (end.time >= event.time) {
      ++m_stats.early_ends;
      complete(irp, end.extra_info, end.status, end.time);
      return;
    }
  }
  // Bounded: the oldest waiting goes as it is. The order queue also holds
  // entries of completed operations; they are skipped here.
  while (m_held.size() > held_capacity || (m_held_order.size() > 2 * held_capacity && !m_held_order.empty())) {
    const auto [oldest, sequence] = m_held_order.front();
    m_held_order.pop_front();
    const auto found = m_held.find(oldest);
    if (found == m_held.end() || found->second.sequence != sequence) continue;
    ++m_stats.never_completed;
    emit(found->second.event);
    m_held.erase(found);
  }
}

void EtwDecoder::emit(const FileEvent& event) {
  ++m_stats.delivered;
  m_sink.deliver(event);
  // A rename that happened is a row under each name (see FileEvent).
  if (event.op == Op::rename && event.renamed_to != 0 && event.renamed_to != event.path && event.status == 0) {
    FileEvent renamed = event;
    renamed.path = event.renamed_to;
    ++m_stats.delivered;
    m_sink.deliver(renamed);
  }
}

}  // namespace etwaudit
