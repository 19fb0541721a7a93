#pragma once
// Payloads of the kernel events etwaudit decodes, built byte by byte from the
// layout tables of doc/etw-format.md §4 (and, for Thread, the dissect
// manifest the decoder cites). Each builder follows one table row in the
// order it lists the fields, so a test fails if the decoder reads a field
// from anywhere else. The decoder's tests hand them over as RawRecords; the
// import tests write them into .etl files (support/etl_writer.h).

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <vector>

namespace etwaudit::test {

class PayloadBuilder {
 public:
  explicit PayloadBuilder(std::size_t pointer_size) : m_pointer_size(pointer_size) {}

  PayloadBuilder& u8(std::uint8_t value) { return put(value, 1); }
  PayloadBuilder& u32(std::uint32_t value) { return put(value, 4); }
  PayloadBuilder& u64(std::uint64_t value) { return put(value, 8); }
  PayloadBuilder& pointer(std::uint64_t value) { return put(value, m_pointer_size); }
  // NUL-terminated UTF-16LE.
  PayloadBuilder& utf16(std::u16string_view text) {
    for (char16_t unit : text) put(unit, 2);
    return put(0, 2);
  }
  // NUL-terminated 8-bit.
  PayloadBuilder& ansi(std::string_view text) {
    for (char c : text) put(static_cast<std::uint8_t>(c), 1);
    return put(0, 1);
  }

  std::vector<std::uint8_t> bytes;

 private:
  PayloadBuilder& put(std::uint64_t value, std::size_t size) {
    for (std::size_t i = 0; i < size; ++i) bytes.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
    return *this;
  }
  std::size_t m_pointer_size;
};

// FileIo v2 and Kernel-File v0 put the thread in a pointer after the Irp; FileIo
// v3 and Kernel-File v1 in a u32 after the other pointers.
enum class Layout { thread_pointer, thread_u32 };

// The fields any FileIo / Kernel-File operation event may have.
struct Io {
  std::uint64_t offset = 0;
  std::uint64_t irp = 0xFFFFC00012340000;
  std::uint64_t file_object = 0;
  std::uint64_t file_key = 0;
  std::uint64_t extra = 0;
  std::uint32_t thread = 0;
  std::uint32_t size = 0;
  std::uint32_t info_class = 0;
  std::uint32_t io_flags = 0x60900;           // Read/Write IoFlags (no paging bits)
  std::uint32_t create_options = 0x01000060;  // (CreateDisposition << 24) | CreateOptions
  std::u16string name;
};

// The part every operation event shares: the Irp, then the given pointers,
// with the issuing thread where the layout puts it.
inline void irp_and_pointers(PayloadBuilder& b, Layout layout, const Io& io,
                             std::initializer_list<std::uint64_t> pointers) {
  b.pointer(io.irp);
  if (layout == Layout::thread_pointer) b.pointer(io.thread);
  for (std::uint64_t value : pointers) b.pointer(value);
  if (layout == Layout::thread_u32) b.u32(io.thread);
}

// FileIo_ReadWrite (67/68), Kernel-File Read/Write (15/16); extra_flags for Kernel-File v1.
inline std::vector<std::uint8_t> read_write(std::size_t p, Layout layout, const Io& io, bool extra_flags = false) {
  PayloadBuilder b(p);
  b.u64(io.offset);
  irp_and_pointers(b, layout, io, {io.file_object, io.file_key});
  b.u32(io.size).u32(io.io_flags);  // IoSize, IoFlags
  if (extra_flags) b.u32(0);
  return b.bytes;
}

// FileIo_Create (64), Kernel-File Create / CreateNewFile (12/30).
inline std::vector<std::uint8_t> create(std::size_t p, Layout layout, const Io& io) {
  PayloadBuilder b(p);
  irp_and_pointers(b, layout, io, {io.file_object});
  b.u32(io.create_options).u32(0x80).u32(7).utf16(io.name);  // CreateOptions, FileAttributes, ShareAccess, OpenPath
  return b.bytes;
}

// FileIo_SimpleOp (65/66/73), Kernel-File Cleanup/Close/Flush (13/14/21).
inline std::vector<std::uint8_t> simple(std::size_t p, Layout layout, const Io& io) {
  PayloadBuilder b(p);
  irp_and_pointers(b, layout, io, {io.file_object, io.file_key});
  return b.bytes;
}

// FileIo_Info (69-71, 74, 75), Kernel-File SetInformation family (17-19, 22, 23, 29).
inline std::vector<std::uint8_t> info(std::size_t p, Layout layout, const Io& io) {
  PayloadBuilder b(p);
  irp_and_pointers(b, layout, io, {io.file_object, io.file_key, io.extra});
  b.u32(io.info_class);
  return b.bytes;
}

// FileIo_DirEnum (72/77), Kernel-File DirEnum/DirNotify (20/25).
inline std::vector<std::uint8_t> dir_enum(std::size_t p, Layout layout, const Io& io) {
  PayloadBuilder b(p);
  irp_and_pointers(b, layout, io, {io.file_object, io.file_key});
  b.u32(4096).u32(37).u32(0).utf16(io.name);  // Length, InfoClass, FileIndex, FileName
  return b.bytes;
}

// FileIo 79-81 (v3 only), Kernel-File DeletePath/RenamePath/SetLinkPath (26-28).
inline std::vector<std::uint8_t> path_event(std::size_t p, Layout layout, const Io& io) {
  PayloadBuilder b(p);
  irp_and_pointers(b, layout, io, {io.file_object, io.file_key, io.extra});
  b.u32(io.info_class).utf16(io.name);
  return b.bytes;
}

// FileIo_OpEnd (76), Kernel-File OperationEnd (24).
inline std::vector<std::uint8_t> operation_end(std::size_t p, const Io& io) {
  return PayloadBuilder(p).pointer(io.irp).pointer(io.size).u32(0).bytes;
}

// FileIo_OpEnd with a given IRP, ExtraInfo and NtStatus.
inline std::vector<std::uint8_t> op_end(std::size_t p, std::uint64_t irp, std::uint64_t extra_info,
                                        std::uint32_t status) {
  return PayloadBuilder(p).pointer(irp).pointer(extra_info).u32(status).bytes;
}

// FileIo_Name (0/32/35/36), Kernel-File NameCreate/NameDelete (10/11): the key, then the name.
inline std::vector<std::uint8_t> name_event(std::size_t p, std::uint64_t key, std::u16string_view name) {
  return PayloadBuilder(p).pointer(key).utf16(name).bytes;
}

// DiskIo_TypeGroup1 (10/11); IssuingThreadId in v3 only.
inline std::vector<std::uint8_t> disk_io(std::size_t p, int version, std::uint64_t offset, std::uint32_t size,
                                         std::uint64_t file_object, std::uint32_t thread) {
  PayloadBuilder b(p);
  b.u32(0).u32(0x43).u32(size).u32(0).u64(offset).pointer(file_object).pointer(0xFFFFE00055550000).u64(1234);
  if (version == 3) b.u32(thread);
  return b.bytes;
}

// How the UserSID of a Process event is written.
enum class Sid { present, absent_in_4_bytes, absent_in_a_pointer };

// Process_TypeGroup1 v3 / v4 (1-4).
inline std::vector<std::uint8_t> process_event(std::size_t p, int version, std::uint32_t pid, std::string_view image,
                                               std::u16string_view command_line, Sid sid = Sid::present,
                                               std::uint8_t sub_authorities = 5,
                                               std::uint32_t first_sub_authority = 21) {
  PayloadBuilder b(p);
  b.pointer(0xFFFFFA8001234560).u32(pid).u32(600).u32(1).u32(0).pointer(0x1ab000);
  if (version == 4) b.u32(0);  // Flags
  switch (sid) {
    case Sid::present:
      b.pointer(0xFFFFF8A001ED2B50).pointer(0);  // TOKEN_USER: two pointers' worth
      b.u8(1).u8(sub_authorities).u8(0).u8(0).u8(0).u8(0).u8(0).u8(5);
      for (std::uint8_t i = 0; i < sub_authorities; ++i) b.u32(first_sub_authority + i);
      break;
    case Sid::absent_in_4_bytes: b.u32(0); break;
    case Sid::absent_in_a_pointer: b.pointer(0); break;
  }
  b.ansi(image).utf16(command_line);
  if (version == 4) b.utf16(u"").utf16(u"");  // PackageFullName, ApplicationId
  return b.bytes;
}

// Thread v0-v4 (1-4), per the dissect manifest {3d6fa8d1-…}.
inline std::vector<std::uint8_t> thread_event(std::size_t p, int version, std::uint8_t opcode, std::uint32_t pid,
                                              std::uint32_t tid) {
  PayloadBuilder b(p);
  if (version == 0) return b.u32(tid).u32(pid).bytes;
  b.u32(pid).u32(tid);
  if (version == 1 && opcode == 2) return b.bytes;  // Thread_V1_TypeGroup2
  const int pointers = version == 1 ? 6 : 7;
  for (int i = 0; i < pointers; ++i) b.pointer(0xFFFFD00000001000 + i);
  if (version == 1) return b.u8(0).bytes;  // WaitMode
  b.u32(0);                                // SubProcessTag
  if (version >= 3) b.u8(8).u8(5).u8(2).u8(0);
  if (version == 4) b.utf16(u"worker");
  return b.bytes;
}

}  // namespace etwaudit::test
