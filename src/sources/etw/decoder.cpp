#include "sources/etw/decoder.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <span>
#include <vector>

#include "core/ascii.h"
#include "core/text.h"
#include "core/time_format.h"

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

constexpr std::uint32_t system_pid = 4;

// Bounds-checked little-endian reads from a record's payload. Each reader
// returns false, leaving its output alone, when the field does not fit.
class Payload {
 public:
  explicit Payload(const RawRecord& record)
      : m_data(record.payload),
        m_size(record.payload != nullptr ? record.payload_size : 0),
        m_pointer_size(record.pointer_size()) {}

  std::size_t size() const { return m_size; }
  std::size_t pointer_size() const { return m_pointer_size; }
  bool has(std::size_t offset, std::size_t bytes) const { return offset <= m_size && bytes <= m_size - offset; }

  bool u8(std::size_t offset, std::uint8_t& value) const {
    if (!has(offset, 1)) return false;
    value = m_data[offset];
    return true;
  }
  bool u32(std::size_t offset, std::uint32_t& value) const {
    if (!has(offset, 4)) return false;
    value = static_cast<std::uint32_t>(little_endian(offset, 4));
    return true;
  }
  bool u64(std::size_t offset, std::uint64_t& value) const {
    if (!has(offset, 8)) return false;
    value = little_endian(offset, 8);
    return true;
  }
  bool pointer(std::size_t offset, std::uint64_t& value) const {
    if (!has(offset, m_pointer_size)) return false;
    value = little_endian(offset, m_pointer_size);
    return true;
  }
  // The NUL-terminated UTF-16LE string at offset: text is its bytes without
  // the terminator, end the offset after the terminator.
  bool utf16(std::size_t offset, std::span<const std::uint8_t>& text, std::size_t& end) const {
    if (offset > m_size) return false;
    for (std::size_t at = offset; at + 2 <= m_size; at += 2) {
      if (m_data[at] == 0 && m_data[at + 1] == 0) {
        text = {m_data + offset, at - offset};
        end = at + 2;
        return true;
      }
    }
    return false;
  }
  // The NUL-terminated 8-bit string at offset, likewise.
  bool ansi(std::size_t offset, std::span<const std::uint8_t>& text, std::size_t& end) const {
    for (std::size_t at = offset; at < m_size; ++at) {
      if (m_data[at] == 0) {
        text = {m_data + offset, at - offset};
        end = at + 1;
        return true;
      }
    }
    return false;
  }

 private:
  std::uint64_t little_endian(std::size_t offset, std::size_t bytes) const {
    std::uint64_t value = 0;
    for (std::size_t i = bytes; i-- > 0;) value = value << 8 | m_data[offset + i];
    return value;
  }

  const std::uint8_t* m_data;  // the payload
  std::size_t m_size;          // bytes at m_data
  std::size_t m_pointer_size;  // 4 or 8, from the record's header
};

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

// The fields of an operation event.
struct FileFields {
  std::int64_t byte_offset = -1;       // file offset (Read/Write); -1 otherwise
  std::uint64_t irp = 0;               // the IRP, shared by the events of one operation
  std::uint64_t file_object = 0;       // the open instance
  std::uint64_t file_key = 0;          // the file (stream context); 0 when the layout has none
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
  switch (opcode) {
    case file_io::create: return decode_operation(record, create_layout, Action::open, Op::open);
    case file_io::cleanup: return decode_operation(record, simple_layout, Action::deliver, Op::cleanup);
    case file_io::close: return decode_operation(record, simple_layout, Action::close, Op::close);
    case file_io::read: return decode_operation(record, read_write_layout, Action::deliver, Op::read);
    case file_io::write: return decode_operation(record, read_write_layout, Action::deliver, Op::write);
    case file_io::set_info: return decode_operation(record, info_layout, Action::deliver, Op::set_info);
    case file_io::remove: return decode_operation(record, info_layout, Action::remove, Op::remove);
    case file_io::rename: return decode_operation(record, info_layout, Action::rename, Op::rename);
    case file_io::flush: return decode_operation(record, simple_layout, Action::deliver, Op::flush);
    case file_io::dir_enum:
    case file_io::dir_notify: return decode_operation(record, dir_enum_layout, Action::count_only, Op::read);
    case file_io::query_info:
    case file_io::fs_control: return decode_operation(record, info_layout, Action::count_only, Op::read);
    case file_io::operation_end: return count_operation_end(record);
    case file_io::delete_path:
    case file_io::rename_path:
    case file_io::set_link_path:
      if (version != 3) break;
      if (opcode == file_io::delete_path) return decode_operation(record, path_layout, Action::delete_path, Op::remove);
      if (opcode == file_io::rename_path) return decode_operation(record, path_layout, Action::rename_path, Op::rename);
      return decode_operation(record, path_layout, Action::count_only, Op::read);
    default: break;
  }
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
  complete(irp, extra_info, status);
}

void EtwDecoder::complete(std::uint64_t irp, std::uint64_t extra_info, std::uint32_t status) {
  const auto found = m_held.find(irp);
  if (found == m_held.end()) return;  // an operation not held (Cleanup, Close, ...) or seen before the first OpEnd
  FileEvent event = found->second.event;
  m_held.erase(found);
  ++m_stats.completed;
  if (is_ntstatus_error(status)) {
    event.status = status;
    ++m_stats.failed_operations;
  }
  // ExtraInfo: the bytes moved by a read or write; for a Create, what it did
  // to the file (FILE_CREATED = 2: a new file).
  constexpr std::uint64_t file_created = 2;
  if (event.op == Op::read || event.op == Op::write)
    event.size = static_cast<std::int64_t>(std::min<std::uint64_t>(extra_info, INT64_MAX));
  else if (event.op == Op::open && !event.status && extra_info == file_created)
    event.op = Op::create;
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
  switch (id) {
    case kernel_file::name_create: return decode_name(record, false, false);
    case kernel_file::name_delete: return decode_name(record, true, false);
    case kernel_file::create: return decode_operation(record, create_layout, Action::open, Op::open);
    case kernel_file::create_new_file: return decode_operation(record, create_layout, Action::open, Op::create);
    case kernel_file::cleanup: return decode_operation(record, simple_layout, Action::deliver, Op::cleanup);
    case kernel_file::close: return decode_operation(record, simple_layout, Action::close, Op::close);
    case kernel_file::read:
    case kernel_file::write:
      return decode_operation(record, version == 0 ? read_write_layout : kernel_file_read_write_v1_layout,
                              Action::deliver, id == kernel_file::read ? Op::read : Op::write);
    case kernel_file::set_information: return decode_operation(record, info_layout, Action::deliver, Op::set_info);
    case kernel_file::set_delete: return decode_operation(record, info_layout, Action::remove, Op::remove);
    case kernel_file::rename:
    case kernel_file::rename29: return decode_operation(record, info_layout, Action::rename, Op::rename);
    case kernel_file::flush: return decode_operation(record, simple_layout, Action::deliver, Op::flush);
    case kernel_file::dir_enum:
    case kernel_file::dir_notify: return decode_operation(record, dir_enum_layout, Action::count_only, Op::read);
    case kernel_file::query_information:
    case kernel_file::fsctl: return decode_operation(record, info_layout, Action::count_only, Op::read);
    case kernel_file::operation_end: return count_operation_end(record);
    case kernel_file::delete_path: return decode_operation(record, path_layout, Action::delete_path, Op::remove);
    case kernel_file::rename_path: return decode_operation(record, path_layout, Action::rename_path, Op::rename);
    case kernel_file::set_link_path: return decode_operation(record, path_layout, Action::count_only, Op::read);
    default: ++m_stats.unknown; return;
  }
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

void EtwDecoder::decode_operation(const RawRecord& record, const FileLayout& layout, Action action, Op op) {
  const Payload payload(record);
  const std::size_t pointer = payload.pointer_size();
  // FileIo v2 and Kernel-File v0 carry the thread in a pointer after the Irp.
  const bool thread_pointer = record.provider == known_guid::file_io ? record.version == 2 : record.version == 0;

  FileFields fields;
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
  if (!thread_pointer) {
    ok = ok && payload.u32(at, fields.thread);
    at += 4;
  }
  for (std::size_t i = 0; i < layout.numbers; ++i, at += 4) ok = ok && payload.u32(at, fields.numbers[i]);
  std::size_t end = 0;
  if (layout.name) ok = ok && payload.utf16(at, fields.name, end);
  if (!ok) {
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
      deliver(record, op, path, thread, -1, -1, irp);
      return;
    }
    case Action::close: {
      const std::uint32_t path = file_path(fields.file_key, fields.file_object);
      deliver(record, op, path, thread, -1, -1);
      m_object_names.erase(fields.file_object);
      m_catalog.forget_file_key(fields.file_object);
      return;
    }
    case Action::remove:
    case Action::rename:
      if (fold_into_partner(fields.irp, fields.file_object, op, false)) return;
      break;
    case Action::delete_path:
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
      if (fold_into_partner(fields.irp, fields.file_object, op, true)) return;
      break;
    case Action::rename_path:
      // Whether FileName is the old or the new name is not documented, so it
      // names nothing.
      if (fold_into_partner(fields.irp, fields.file_object, op, true)) return;
      break;
    case Action::deliver: break;
  }
  const std::uint32_t path = file_path(fields.file_key, fields.file_object);
  const bool sized = layout.byte_offset;
  deliver(record, op, path, thread, sized ? fields.byte_offset : -1, sized ? std::int64_t{fields.numbers[0]} : -1, irp);
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

namespace {
// A SID's text form (S-1-5-21-...) from its bytes: revision, count, a 48-bit
// big-endian authority, count little-endian u32 sub-authorities.
std::string sid_text(std::span<const std::uint8_t> sid) {
  if (sid.size() < 8 || sid.size() < 8 + 4 * std::size_t{sid[1]}) return {};
  std::uint64_t authority = 0;
  for (int i = 2; i < 8; ++i) authority = authority << 8 | sid[i];
  char number[32];
  std::snprintf(number, sizeof number, authority >> 32 ? "0x%012llX" : "%llu",
                static_cast<unsigned long long>(authority));
  std::string text = "S-" + std::to_string(sid[0]) + "-" + number;
  for (std::size_t i = 0; i < sid[1]; ++i) {
    const std::size_t at = 8 + 4 * i;
    text += "-" + std::to_string(std::uint32_t{sid[at]} | std::uint32_t{sid[at + 1]} << 8 |
                                 std::uint32_t{sid[at + 2]} << 16 | std::uint32_t{sid[at + 3]} << 24);
  }
  return text;
}

// The accounts every Windows has, named the same everywhere.
std::string_view well_known_account(std::string_view sid) {
  if (sid == "S-1-5-18") return "NT AUTHORITY\\SYSTEM";
  if (sid == "S-1-5-19") return "NT AUTHORITY\\LOCAL SERVICE";
  if (sid == "S-1-5-20") return "NT AUTHORITY\\NETWORK SERVICE";
  return {};
}
}  // namespace

void EtwDecoder::decode_process(const RawRecord& record) {
  constexpr std::uint8_t start = 1, end = 2, rundown_end = 4;  // 3 is the rundown start (DCStart)
  const std::uint8_t version = record.version;
  if (record.opcode < start || record.opcode > rundown_end || (version != 3 && version != 4)) {
    ++m_stats.unknown;
    return;
  }
  const Payload payload(record);
  const std::size_t pointer = payload.pointer_size();
  const std::size_t sid_at = 2 * pointer + 16 + (version == 4 ? 4 : 0);
  std::uint32_t pid = 0, sid_low = 0;
  if (!payload.u32(pointer, pid) || !payload.u32(sid_at, sid_low)) {
    ++m_stats.malformed;
    return;
  }
  // Where the strings may start after the SID (see the top of the file): an
  // absent SID shows as 4 zero bytes, a present one as a non-zero pointer.
  std::size_t candidates[3] = {};
  std::size_t candidate_count = 0;
  std::uint64_t sid_pointer = 0;
  std::uint8_t sub_authorities = 0;
  bool sid_candidate = false;  // candidates[0] follows a SID
  if (payload.pointer(sid_at, sid_pointer) && sid_pointer != 0 && payload.has(sid_at + 2 * pointer, 8) &&
      payload.u8(sid_at + 2 * pointer + 1, sub_authorities)) {
    candidates[candidate_count++] = sid_at + 2 * pointer + 8 + 4 * std::size_t{sub_authorities};
    sid_candidate = true;
  }
  if (sid_low == 0) {
    candidates[candidate_count++] = sid_at + 4;
    if (pointer != 4) candidates[candidate_count++] = sid_at + pointer;
  }
  // ImageFileName, CommandLine, and in v4 PackageFullName and ApplicationId,
  // which end the payload.
  std::span<const std::uint8_t> image, command_line;
  bool found = false, with_sid = false;
  for (std::size_t i = 0; i < candidate_count && !found; ++i) {
    with_sid = sid_candidate && i == 0;
    std::span<const std::uint8_t> ignored;
    std::size_t at = 0;
    found = payload.ansi(candidates[i], image, at) && payload.utf16(at, command_line, at);
    if (version == 4) found = found && payload.utf16(at, ignored, at) && payload.utf16(at, ignored, at);
    // Misreading an absent pointer-sized SID as 4 bytes starts the image at
    // a zero byte; a process always has an image name.
    found = found && at == payload.size() && !image.empty();
  }
  if (!found) {
    ++m_stats.malformed;
    return;
  }
  ++m_stats.processes;
  ProcessInfo info;
  info.pid = pid;
  append_utf8_from_ansi(image.data(), image.size(), info.image);
  append_utf8_from_utf16le(command_line.data(), command_line.size(), info.command_line);
  payload.u32(pointer + 4, info.parent_pid);  // ParentId: within what was checked above
  if (with_sid) {
    std::vector<std::uint8_t> sid(8 + 4 * std::size_t{sub_authorities});
    for (std::size_t i = 0; i < sid.size(); ++i) payload.u8(sid_at + 2 * pointer + i, sid[i]);
    const std::string text = sid_text(sid);
    info.user = well_known_account(text);
    if (info.user.empty() && m_process_lookup && !text.empty()) info.user = m_process_lookup->account_name(text);
    if (info.user.empty()) info.user = text;
  }
  if (record.opcode == end || record.opcode == rundown_end) {
    // An end names a process only if nothing else has.
    if (m_process_ids.find(pid) != nullptr) return;
    m_process_ids.set(pid, m_catalog.intern_process(info));
    return;
  }
  // The classic events carry no creation time: a Start happens at its own
  // time, a rundown's start time is unknown unless the system says it.
  info.start_time = record.opcode == start ? record.time : 0;
  const std::int64_t created_by = record.opcode == start ? std::numeric_limits<std::int64_t>::max() : record.time;
  if (look_up_process(pid, created_by, info.image, m_looked_up)) {
    if (record.opcode != start) info.start_time = m_looked_up.start_time;
    info.image.swap(m_looked_up.image);
  }
  m_process_ids.set(pid, m_catalog.intern_process(info));
}

void EtwDecoder::decode_kernel_process(const RawRecord& record) {
  constexpr std::uint16_t process_start = 1, process_stop = 2, thread_start = 3, thread_stop = 4;
  const Payload payload(record);
  const std::uint8_t version = record.version;
  switch (record.event_id) {
    case process_start: {
      if (version > 2) break;
      std::uint32_t pid = 0;
      std::uint64_t create_time = 0;
      std::span<const std::uint8_t> image;
      std::size_t end = 0;
      bool ok = payload.u32(0, pid) && payload.u64(4, create_time) && payload.utf16(version == 0 ? 20 : 24, image, end);
      if (version == 2) {
        // ImageChecksum, TimeDateStamp, PackageFullName, PackageRelativeAppId.
        std::span<const std::uint8_t> ignored;
        ok = ok && payload.has(end, 8) && payload.utf16(end + 8, ignored, end) && payload.utf16(end, ignored, end);
      }
      if (!ok) {
        ++m_stats.malformed;
        return;
      }
      ++m_stats.processes;
      m_image.clear();
      append_utf8_from_utf16le(image.data(), image.size(), m_image);
      m_process_ids.set(pid, m_catalog.intern_process(pid, unix_ns_from_filetime(create_time), m_image));
      return;
    }
    case process_stop: {
      if (version > 1) break;
      std::uint32_t pid = 0;
      std::uint64_t create_time = 0;
      std::span<const std::uint8_t> image;
      std::size_t end = 0;
      if (!payload.u32(0, pid) || !payload.u64(4, create_time) || !payload.ansi(version == 0 ? 48 : 76, image, end)) {
        ++m_stats.malformed;
        return;
      }
      ++m_stats.processes;
      if (m_process_ids.find(pid) != nullptr) return;
      m_image.clear();
      append_utf8_from_ansi(image.data(), image.size(), m_image);
      m_process_ids.set(pid, m_catalog.intern_process(pid, unix_ns_from_filetime(create_time), m_image));
      return;
    }
    case thread_start:
    case thread_stop: {
      if (version > 1) break;
      // Seven pointers follow the ids; v1 adds SubProcessTag, and its stop CycleTime.
      const std::size_t fixed = 8 + 7 * payload.pointer_size() + (version == 1 ? 4 : 0) +
                                (version == 1 && record.event_id == thread_stop ? 8 : 0);
      std::uint32_t pid = 0, tid = 0;
      if (!payload.has(0, fixed) || !payload.u32(0, pid) || !payload.u32(4, tid)) {
        ++m_stats.malformed;
        return;
      }
      ++m_stats.threads;
      m_thread_processes.set(tid, pid);
      return;
    }
    default: break;
  }
  ++m_stats.unknown;
}

void EtwDecoder::decode_thread(const RawRecord& record) {
  constexpr std::uint8_t start = 1, end = 2, rundown_end = 4;
  const std::uint8_t version = record.version;
  if (record.opcode < start || record.opcode > rundown_end || version > 4) {
    ++m_stats.unknown;
    return;
  }
  const Payload payload(record);
  const std::size_t pointer = payload.pointer_size();
  // The fixed size of each version's layout.
  std::size_t fixed = 8;
  if (version == 1 && record.opcode != end) fixed = 8 + 6 * pointer + 1;
  if (version == 2) fixed = 8 + 7 * pointer + 4;
  if (version >= 3) fixed = 8 + 7 * pointer + 8;
  std::uint32_t first = 0, second = 0;
  std::span<const std::uint8_t> name;
  std::size_t name_end = 0;
  bool ok = payload.has(0, fixed) && payload.u32(0, first) && payload.u32(4, second);
  if (version == 4) ok = ok && payload.utf16(fixed, name, name_end);
  if (!ok) {
    ++m_stats.malformed;
    return;
  }
  ++m_stats.threads;
  // v0 has the thread first, later versions the process.
  const std::uint32_t pid = version == 0 ? second : first;
  const std::uint32_t tid = version == 0 ? first : second;
  m_thread_processes.set(tid, pid);
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

bool EtwDecoder::look_up_process(std::uint32_t pid, std::int64_t seen_at, std::string_view short_image,
                                 ProcessInfo& info) {
  if (m_process_lookup == nullptr || pid == 0 || pid == system_pid || pid == RawRecord::unknown_id) return false;
  info = ProcessInfo{};
  if (!m_process_lookup->lookup(pid, info) || info.start_time == 0 || info.start_time > seen_at || info.image.empty())
    return false;
  if (!short_image.empty()) {
    // ImageFileName is the start of the image's file name, cut at 15 bytes.
    const std::size_t slash = info.image.find_last_of("\\/");
    const std::string_view file_name = std::string_view(info.image).substr(slash == std::string::npos ? 0 : slash + 1);
    if (!starts_with_ignoring_ascii_case(file_name, short_image)) return false;
  }
  ++m_stats.looked_up;
  return true;
}

std::uint32_t EtwDecoder::process_for_pid(std::uint32_t pid, std::int64_t seen_at) {
  if (const std::uint32_t* process = m_process_ids.find(pid)) return *process;
  const std::uint32_t process =
      look_up_process(pid, seen_at, {}, m_looked_up)
          ? m_catalog.intern_process(pid, m_looked_up.start_time, m_looked_up.image, m_looked_up.command_line)
          : m_catalog.intern_process(pid, 0, {});
  m_process_ids.set(pid, process);
  return process;
}

std::uint32_t EtwDecoder::event_process(std::uint32_t pid, std::uint32_t thread, std::int64_t seen_at) {
  if (pid == RawRecord::unknown_id || pid == 0 || pid == system_pid) {
    if (thread != RawRecord::unknown_id && thread != 0) {
      if (const std::uint32_t* owner = m_thread_processes.find(thread)) {
        pid = *owner;
      } else if (pid == RawRecord::unknown_id && m_process_lookup) {
        // A thread that started before the session and no rundown named:
        // ask Windows, once.
        if (const std::uint32_t owner = m_process_lookup->process_of_thread(thread)) {
          m_thread_processes.set(thread, owner);
          pid = owner;
        }
      }
    }
    // Kernel work logged outside any process (the cache manager's and the
    // file systems' worker threads) belongs to System; pid 0xFFFFFFFF is no process.
    if (pid == RawRecord::unknown_id) {
      pid = system_pid;
      ++m_stats.system_assumed;
    }
  }
  return process_for_pid(pid, seen_at);
}

void EtwDecoder::deliver(const RawRecord& record, Op op, std::uint32_t path, std::uint32_t thread, std::int64_t offset,
                         std::int64_t size, std::uint64_t irp) {
  FileEvent event;
  event.time = record.time;
  event.op = op;
  event.path = path;
  event.process = event_process(record.pid, thread, record.time);
  event.tid = thread == RawRecord::unknown_id ? 0 : thread;
  event.offset = offset;
  event.size = size;
  if (irp == 0 || !m_op_ends_seen) {
    emit(event);
    return;
  }
  // An IRP is reused once its operation is done: one still held never got its end.
  if (const auto found = m_held.find(irp); found != m_held.end()) {
    ++m_stats.never_completed;
    emit(found->second.event);
    m_held.erase(found);
  }
  m_held[irp] = Held{event, ++m_held_sequence};
  m_held_order.emplace_back(irp, m_held_sequence);
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
}

}  // namespace etwaudit
