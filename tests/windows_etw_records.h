#pragma once
// EVENT_RECORDs as ProcessTrace hands them over, built in memory with the
// real Windows types, for the Windows tests of the live ETW source: kernel
// FileIo events of a 64-bit system (doc/etw-format.md §4.4).
#include <windows.h>
// clang-format off: evntcons.h needs windows.h first.
#include <evntcons.h>
// clang-format on

#include <cstdint>
#include <cstring>
#include <vector>

namespace etwaudit::test {

// FileIo event class {90cbdc39-4a3e-11d1-84f4-0000f80464e3} and its opcodes (doc/etw-format.md §4.4).
inline constexpr GUID file_io_class = {0x90cbdc39, 0x4a3e, 0x11d1, {0x84, 0xf4, 0x00, 0x00, 0xf8, 0x04, 0x64, 0xe3}};
inline constexpr UCHAR opcode_name = 0, opcode_file_rundown = 36, opcode_read = 67, opcode_write = 68;
inline constexpr std::uint64_t file_key = 0xFFFFA00011112222, file_object = 0xFFFFB00033334444,
                               irp = 0xFFFFC00055556666;
inline constexpr ULONG pid = 1234, tid = 5678;
// 2023-11-14T22:13:20Z as FILETIME (100 ns since 1601), and in ns since 1970.
inline constexpr LONGLONG event_filetime = 116'444'736'000'000'000 + 17'000'000'000'000'000;
inline constexpr std::int64_t event_unix_ns = 1'700'000'000'000'000'000;

// Little-endian payload bytes, packed as ETW packs them.
struct Payload {
  std::vector<std::uint8_t> bytes;
  Payload& u32(std::uint32_t value) { return put(value, 4); }
  Payload& u64(std::uint64_t value) { return put(value, 8); }
  Payload& utf16(const wchar_t* text) {
    for (; *text; ++text) put(static_cast<std::uint16_t>(*text), 2);
    return put(0, 2);
  }
  Payload& put(std::uint64_t value, int size) {
    for (int i = 0; i < size; ++i) bytes.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
    return *this;
  }
};

// A kernel (classic) event of a 64-bit system, as ProcessTrace delivers it.
inline EVENT_RECORD kernel_record(const GUID& event_class, UCHAR opcode, UCHAR version, Payload& payload,
                                  void* context) {
  EVENT_RECORD record;
  std::memset(&record, 0, sizeof record);
  record.EventHeader.Size = sizeof(EVENT_HEADER);
  record.EventHeader.Flags = EVENT_HEADER_FLAG_CLASSIC_HEADER | EVENT_HEADER_FLAG_64_BIT_HEADER;
  record.EventHeader.ProcessId = pid;
  record.EventHeader.ThreadId = tid;
  record.EventHeader.TimeStamp.QuadPart = event_filetime;
  record.EventHeader.ProviderId = event_class;
  record.EventHeader.EventDescriptor.Opcode = opcode;
  record.EventHeader.EventDescriptor.Version = version;
  record.EventHeader.EventDescriptor.Id = 99;  // meaningless for classic events
  record.BufferContext.ProcessorNumber = 3;
  record.UserData = payload.bytes.data();
  record.UserDataLength = static_cast<USHORT>(payload.bytes.size());
  record.UserContext = context;
  return record;
}

// FileIo_Name v2: FileKey pointer, file name.
inline Payload name_payload(const wchar_t* name) {
  Payload payload;
  payload.u64(file_key).utf16(name);
  return payload;
}

// FileIo_ReadWrite v2: offset, Irp, issuing thread (a pointer in v2),
// FileObject, FileKey, IoSize, IoFlags.
inline Payload read_write_payload(std::uint64_t offset, std::uint32_t size, std::uint32_t thread) {
  Payload payload;
  payload.u64(offset).u64(irp).u64(thread).u64(file_object).u64(file_key).u32(size).u32(0);
  return payload;
}

}  // namespace etwaudit::test
