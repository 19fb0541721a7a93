#include "sources/etl/etl_reader.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>

#include "core/error.h"
#include "core/text.h"
#include "core/time_format.h"
#include "core/utf8_path.h"
#include "sources/etl/xpress.h"

namespace etwaudit {
namespace {

static_assert(std::endian::native == std::endian::little, "the .etl reader loads little-endian fields directly");

// WMI_BUFFER_HEADER (doc/etw-format.md §7.1).
constexpr std::size_t buffer_header_size = 0x48;
constexpr std::size_t buffer_size_at = 0x00;      // u32: bytes of this buffer in the file
constexpr std::size_t saved_offset_at = 0x04;     // u32: uncompressed size of a compressed buffer
constexpr std::size_t client_context_at = 0x28;   // processor number (u8) or index (u16 with proc_index)
constexpr std::size_t filled_at = 0x30;           // u32 Offset: bytes filled, header included
constexpr std::size_t buffer_flag_at = 0x34;      // u16 BufferFlag
constexpr std::uint16_t flag_events_lost = 0x02;  // the logger dropped events while filling this buffer
constexpr std::uint16_t flag_buffer_lost = 0x04;  // the logger dropped whole buffers before this one
constexpr std::uint16_t flag_proc_index = 0x20;   // client context holds a 16-bit processor index
constexpr std::uint16_t flag_compressed = 0x40;   // the body after the header is XPRESS-compressed

// Buffers larger than this are taken for corruption rather than allocated.
// ETW's own buffers are at most a few MB.
constexpr std::uint32_t max_buffer_size = 64u << 20;
// A compressed buffer decompresses into one of the session's buffers: no more
// than the logfile header's BufferSize, and never more than ETW's largest
// buffer, 16 MB (doc/etw-format.md §2.2). XPRESS bounds nothing itself (a 9-byte
// match may claim 4 GB), so its SavedOffset is held to that before the output
// is allocated.
constexpr std::uint32_t max_etw_buffer_size = 16u << 20;

constexpr std::uint32_t end_of_records = 0xFFFFFFFF;  // marker of the unused rest of a buffer
constexpr std::uint8_t marker_header_flag = 0x80;     // set in byte 3 of every record marker
constexpr std::uint8_t marker_typed_flag = 0x40;      // set in all but WPP message markers

// Fixed header sizes by header type (doc/etw-format.md §7.2).
constexpr std::size_t system_header_size = 0x20;
constexpr std::size_t compact_header_size = 0x18;
constexpr std::size_t perfinfo_header_size = 0x10;
constexpr std::size_t full_header_size = 0x30;
constexpr std::size_t instance_header_size = 0x48;
constexpr std::size_t event_header_size = 0x50;
constexpr std::size_t skipped_header_size = 0x08;  // message, timed, error, wnode: Size u16 at +0

// TRACE_LOGFILE_HEADER sizes and the offsets that differ between the 64-bit
// and 32-bit layouts (doc/etw-format.md §7.4); the 32-bit ones are 8 lower.
constexpr std::size_t logfile_header_size_64 = 0x118;
constexpr std::size_t logfile_header_size_32 = 0x110;
constexpr std::size_t boot_time_at_64 = 0xF8;

// Clocks faster than this are taken for corruption (real ones run at 10 MHz
// to a few GHz); it also keeps the timestamp arithmetic within 64 bits.
constexpr std::uint64_t max_ticks_per_second = 1'000'000'000'000;

constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t int64_min = std::numeric_limits<std::int64_t>::min();

// Event-class GUIDs of the kernel event groups, indexed by HookId group, as
// ETW maps them for consumers (dissect.etl utils.py GROUP_GUID_MAP, after
// geoffchappell.com hookid.htm).
constexpr Guid kernel_group_classes[] = {
    known_guid::event_trace,                                                         // 0x00 header
    known_guid::disk_io,                                                             // 0x01 DiskIo
    {0x3d6fa8d3, 0xfe05, 0x11d0, {0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c}},  // 0x02 PageFault
    known_guid::process,                                                             // 0x03 Process
    known_guid::file_io,                                                             // 0x04 FileIo
    known_guid::thread,                                                              // 0x05 Thread
    {0x9a280ac0, 0xc8e0, 0x11d1, {0x84, 0xe2, 0x00, 0xc0, 0x4f, 0xb9, 0x98, 0xa2}},  // 0x06 TcpIp
    {0x3282fc76, 0xfeed, 0x498e, {0x8a, 0xa7, 0xe7, 0x0f, 0x45, 0x9d, 0x43, 0x0e}},  // 0x07 Job
    {0xbf3a50c5, 0xa9c9, 0x4988, {0xa0, 0x05, 0x2d, 0xf0, 0xb7, 0xc8, 0x0f, 0x80}},  // 0x08 UdpIp
    {0xae53722e, 0xc863, 0x11d2, {0x86, 0x59, 0x00, 0xc0, 0x4f, 0xa3, 0x21, 0xa1}},  // 0x09 Registry
    {0x13976d09, 0xa327, 0x438c, {0x95, 0x0b, 0x7f, 0x03, 0x19, 0x28, 0x15, 0xc7}},  // 0x0A DbgPrint
    {0x01853a65, 0x418f, 0x4f36, {0xae, 0xfc, 0xdc, 0x0f, 0x1d, 0x2f, 0xd2, 0x35}},  // 0x0B Config
    {0x99134383, 0x5248, 0x43fc, {0x83, 0x4b, 0x52, 0x94, 0x54, 0xe7, 0x5d, 0xf3}},  // 0x0C Spare1
    {0x42695762, 0xea50, 0x497a, {0x90, 0x68, 0x5c, 0xbb, 0xb3, 0x5e, 0x0b, 0x95}},  // 0x0D Wnf
    {0x0268a8b6, 0x74fd, 0x4302, {0x9d, 0xd0, 0x6e, 0x8f, 0x17, 0x95, 0xc0, 0xcf}},  // 0x0E Pool
    known_guid::perf_info,                                                           // 0x0F PerfInfo
    {0x222962ab, 0x6180, 0x4b88, {0xa8, 0x25, 0x34, 0x6b, 0x75, 0xf2, 0xa2, 0x4a}},  // 0x10 Heap
    {0x89497f50, 0xeffe, 0x4440, {0x8c, 0xf2, 0xce, 0x6b, 0x1c, 0xdc, 0xac, 0xa7}},  // 0x11 Object
    {0xe43445e0, 0x0903, 0x48c3, {0xb8, 0x78, 0xff, 0x0f, 0xcc, 0xeb, 0xdd, 0x04}},  // 0x12 Power
    {0xa9152f00, 0x3f58, 0x4bee, {0x92, 0xa1, 0x70, 0xc7, 0xd0, 0x79, 0xd5, 0xdd}},  // 0x13 ModBound
    known_guid::image_load,                                                          // 0x14 Image
    {0xb2d14872, 0x7c5b, 0x463d, {0x84, 0x19, 0xee, 0x9b, 0xf7, 0xd2, 0x3e, 0x04}},  // 0x15 Dpc
    {0x7687a439, 0xf752, 0x45b8, {0xb7, 0x41, 0x32, 0x1a, 0xec, 0x0f, 0x8d, 0xf9}},  // 0x16 Cc
    {0x3ac66736, 0xcc59, 0x4cff, {0x81, 0x15, 0x8d, 0xf5, 0x0e, 0x39, 0x81, 0x6b}},  // 0x17 CritSec
    {0xdef2fe46, 0x7bd6, 0x4b80, {0xbd, 0x94, 0xf5, 0x7f, 0xe2, 0x0d, 0x0c, 0xe3}},  // 0x18 StackWalk
    {0x9aec974b, 0x5b8e, 0x4118, {0x9b, 0x92, 0x31, 0x86, 0xd8, 0x00, 0x2c, 0xe5}},  // 0x19 Ums
    {0x45d8cccd, 0x539f, 0x4b72, {0xa8, 0xb7, 0x5c, 0x68, 0x31, 0x42, 0x60, 0x9a}},  // 0x1A Alpc
    {0xd837ca92, 0x12b9, 0x44a5, {0xad, 0x6a, 0x3a, 0x65, 0xb3, 0x57, 0x8a, 0xa8}},  // 0x1B SplitIo
    {0xc861d0e2, 0xa2c1, 0x4d36, {0x9f, 0x9c, 0x97, 0x0b, 0xab, 0x94, 0x3a, 0x12}},  // 0x1C ThreadPool
    {0x7f2a405c, 0x69b5, 0x4bf9, {0xa1, 0xf5, 0x30, 0xe8, 0xf1, 0xaf, 0xab, 0x5e}},  // 0x1D Hypervisor
    {0x2ce9a149, 0xeffe, 0x42f0, {0xa6, 0x35, 0xa1, 0xd3, 0x9e, 0x26, 0xc8, 0xf2}},  // 0x1E HypervisorX
};

// The event-class GUID for a kernel HookId; all zero for unknown groups.
Guid kernel_event_class(std::uint8_t group, std::uint8_t type) {
  // Group 3 type 10 is the old image load event, reported under Image.
  if (group == 0x03 && type == 0x0A) return known_guid::image_load;
  if (group < std::size(kernel_group_classes)) return kernel_group_classes[group];
  return Guid{};
}

// Error that knows whether the next buffer can still be found.
class MalformedEtl : public Error {
 public:
  MalformedEtl(const std::string& message, bool fatal) : Error(message), m_fatal(fatal) {}
  bool fatal() const noexcept { return m_fatal; }

 private:
  bool m_fatal;
};

template <typename T>
T load(const std::uint8_t* bytes) noexcept {
  T value;
  std::memcpy(&value, bytes, sizeof value);
  return value;
}

std::string hex(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

std::int64_t add_clamped(std::int64_t a, std::int64_t b) noexcept {
  if (b > 0 && a > int64_max - b) return int64_max;
  if (b < 0 && a < int64_min - b) return int64_min;
  return a + b;
}

// ticks of a clock running at ticks_per_second (1 to max_ticks_per_second), in
// ns, clamped to about ±126 years.
std::int64_t ticks_to_ns(std::int64_t ticks, std::uint64_t ticks_per_second) noexcept {
  constexpr std::int64_t max_seconds = 4'000'000'000;
  const auto frequency = static_cast<std::int64_t>(ticks_per_second);
  std::int64_t seconds = ticks / frequency;
  const std::int64_t rest = ticks % frequency;  // |rest| < frequency
  if (seconds > max_seconds) return max_seconds * 1'000'000'000;
  if (seconds < -max_seconds) return -max_seconds * 1'000'000'000;
  std::int64_t fraction;
  if (frequency <= 9'000'000'000) {
    fraction = rest * 1'000'000'000 / frequency;  // exact; |rest| * 1e9 < 9e18
  } else {
    fraction = static_cast<std::int64_t>(static_cast<double>(rest) * 1e9 / static_cast<double>(frequency));
  }
  return seconds * 1'000'000'000 + fraction;
}

// Reads a NUL-terminated UTF-16LE string at data[position, size) as UTF-8 and
// moves position past it; a string cut off by size ends there. Unpaired
// surrogates become U+FFFD.
std::string read_utf16(const std::uint8_t* data, std::size_t size, std::size_t& position) {
  std::size_t end = position;
  while (size - end >= 2 && load<std::uint16_t>(data + end) != 0) end += 2;
  std::string text;
  append_utf8_from_utf16le(data + position, end - position, text);
  position = size - end >= 2 ? end + 2 : end;
  return text;
}

// "a FIFO", "a character device", ...: what a path is when not a regular file.
std::string file_kind(std::filesystem::file_type type) {
  switch (type) {
    case std::filesystem::file_type::fifo: return "a FIFO (a pipe)";
    case std::filesystem::file_type::character: return "a character device";
    case std::filesystem::file_type::block: return "a block device";
    case std::filesystem::file_type::socket: return "a socket";
    default: return "a special file";
  }
}

bool is_system_type(std::uint8_t type) {
  return type == static_cast<std::uint8_t>(TraceHeaderType::system32) ||
         type == static_cast<std::uint8_t>(TraceHeaderType::system64);
}

}  // namespace

EtlReader::EtlReader(const std::filesystem::path& path, OnMalformedBuffer on_malformed)
    : m_path(path), m_on_malformed(on_malformed) {
  const std::string name = utf8_name(path);
  // Only a regular file is read: opening a FIFO would wait for a writer
  // forever, and a device such as /dev/zero never ends.
  std::error_code ignored;
  const std::filesystem::file_status status = std::filesystem::status(path, ignored);
  if (std::filesystem::is_directory(status)) throw Error("cannot read ETL file '" + name + "': it is a directory");
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw Error("cannot read ETL file '" + name + "': it is not a regular file but " + file_kind(status.type()));
  errno = 0;
  m_file.open(path, std::ios::binary);
  if (!m_file) {
    throw Error("cannot open ETL file '" + name + "': " + (errno != 0 ? std::strerror(errno) : "open failed"));
  }
  m_file.seekg(0, std::ios::end);
  const std::streamoff size = m_file.tellg();
  m_file.seekg(0, std::ios::beg);
  if (size < 0 || !m_file) throw Error("cannot read ETL file '" + name + "': cannot determine its size");
  m_file_size = static_cast<std::uint64_t>(size);
  open_trace();
}

EtlReader::EtlReader(std::span<const std::uint8_t> bytes, const std::filesystem::path& name,
                     OnMalformedBuffer on_malformed)
    : m_path(name), m_memory(bytes), m_in_memory(true), m_file_size(bytes.size()), m_on_malformed(on_malformed) {
  open_trace();
}

void EtlReader::open_trace() {
  if (m_file_size < buffer_header_size) {
    throw Error("cannot read ETL file '" + utf8_name(m_path) + "': it has " + std::to_string(m_file_size) +
                " bytes, too few for a buffer header; is it an .etl file?");
  }
  read_logfile_header();
}

void EtlReader::read_at(std::uint64_t at, std::uint8_t* into, std::size_t count) {
  std::size_t got = 0;
  if (m_in_memory) {
    if (at <= m_memory.size()) {
      got = static_cast<std::size_t>(std::min<std::uint64_t>(count, m_memory.size() - at));
      if (got != 0) std::memcpy(into, m_memory.data() + at, got);
    }
  } else {
    m_file.seekg(static_cast<std::streamoff>(at), std::ios::beg);
    m_file.read(reinterpret_cast<char*>(into), static_cast<std::streamsize>(count));
    got = static_cast<std::size_t>(m_file.gcount());
  }
  if (got != count) {
    m_at_end = true;
    fail("cannot read " + std::to_string(count) + " bytes at file offset " + hex(at), true);
  }
}

void EtlReader::fail(const std::string& what, bool fatal) const {
  throw MalformedEtl("cannot read ETL file '" + utf8_name(m_path) + "': buffer " + std::to_string(m_buffer_index) +
                         " at offset " + hex(m_buffer_offset) + ": " + what,
                     fatal);
}

void EtlReader::fail_record(const std::string& what) const {
  fail("record at buffer byte " + hex(m_record_offset) + ": " + what, false);
}

std::int64_t EtlReader::to_unix_ns(std::uint64_t raw_timestamp) const noexcept {
  const auto ticks = static_cast<std::int64_t>(raw_timestamp - m_header.start_timestamp_raw);
  return add_clamped(m_header.start_time, ticks_to_ns(ticks, m_ticks_per_second));
}

// Reads a compressed buffer's body_size bytes at file offset + 72 and
// decompresses them after the header in m_buffer; returns the buffer's
// uncompressed size (SavedOffset).
std::size_t EtlReader::read_compressed_body(std::uint64_t offset, std::size_t body_size, std::uint32_t saved_offset) {
  ++m_counters.compressed_buffers;
  if (saved_offset < buffer_header_size) {
    fail("compressed buffer has an uncompressed size (SavedOffset) of " + hex(saved_offset), false);
  }
  // Before the logfile header is read (the first buffer), or when it gives
  // no plausible size, ETW's largest buffer is the limit.
  const bool header_size_known =
      m_header.buffer_size >= buffer_header_size && m_header.buffer_size <= max_etw_buffer_size;
  const std::uint32_t largest = header_size_known ? m_header.buffer_size : max_etw_buffer_size;
  if (saved_offset > largest) {
    fail("compressed buffer has an uncompressed size (SavedOffset) of " + hex(saved_offset) + ", more than " +
             (header_size_known ? "the trace's buffer size " : "an ETW buffer can hold, ") + hex(largest),
         false);
  }
  if (m_compressed.size() < body_size) m_compressed.resize(body_size);
  read_at(offset + buffer_header_size, m_compressed.data(), body_size);
  if (m_buffer.size() < saved_offset) m_buffer.resize(saved_offset);
  const std::size_t expected = saved_offset - buffer_header_size;
  std::size_t produced;
  try {
    produced = xpress_decompress(m_compressed.data(), body_size, m_buffer.data() + buffer_header_size, expected);
  } catch (const Error& error) {
    fail(error.what(), false);
  }
  if (produced != expected) {
    fail("compressed body decompresses to " + std::to_string(produced) + " bytes, SavedOffset says " +
             std::to_string(expected),
         false);
  }
  m_counters.bytes_decompressed += produced;
  return saved_offset;
}

bool EtlReader::load_next_buffer() {
  if (m_at_end) return false;
  m_filled = 0;
  m_position = 0;
  m_extended_data = {};
  const std::uint64_t offset = m_next_buffer_offset;
  if (offset >= m_file_size) {
    m_at_end = true;
    return false;
  }
  m_buffer_index = m_have_buffer ? m_buffer_index + 1 : 0;
  m_buffer_offset = offset;
  m_have_buffer = true;

  const std::uint64_t left = m_file_size - offset;
  if (left < buffer_header_size) {
    m_at_end = true;
    fail("the file ends " + std::to_string(left) + " bytes into the 72-byte buffer header", true);
  }
  if (m_buffer.size() < buffer_header_size) m_buffer.resize(buffer_header_size);
  read_at(offset, m_buffer.data(), buffer_header_size);

  const std::uint8_t* header = m_buffer.data();
  bool all_zero = true;
  for (std::size_t i = 0; i < buffer_header_size && all_zero; ++i) all_zero = header[i] == 0;
  if (all_zero) {
    // Unused space at the end of a preallocated file.
    m_at_end = true;
    return false;
  }
  const auto buffer_size = load<std::uint32_t>(header + buffer_size_at);
  const auto saved_offset = load<std::uint32_t>(header + saved_offset_at);
  const auto filled = load<std::uint32_t>(header + filled_at);
  const auto buffer_flag = load<std::uint16_t>(header + buffer_flag_at);
  if (buffer_size < buffer_header_size) {
    m_at_end = true;
    fail("BufferSize " + hex(buffer_size) + " is smaller than the buffer header", true);
  }
  if (buffer_size > left) {
    m_at_end = true;
    fail("BufferSize " + hex(buffer_size) + " runs past the end of the file (" + hex(left) + " bytes left)", true);
  }
  if (buffer_size > max_buffer_size) {
    m_at_end = true;
    fail("BufferSize " + hex(buffer_size) + " is implausibly large", true);
  }
  m_next_buffer_offset = offset + buffer_size;
  ++m_counters.buffers;
  m_counters.bytes_read += buffer_size;
  if (buffer_flag & (flag_events_lost | flag_buffer_lost)) ++m_counters.buffers_with_lost_events;
  m_processor =
      (buffer_flag & flag_proc_index) ? load<std::uint16_t>(header + client_context_at) : header[client_context_at];

  const std::size_t body_size = buffer_size - buffer_header_size;
  std::size_t capacity = buffer_size;
  if (buffer_flag & flag_compressed) {
    capacity = read_compressed_body(offset, body_size, saved_offset);
  } else {
    if (m_buffer.size() < buffer_size) m_buffer.resize(buffer_size);
    read_at(offset + buffer_header_size, m_buffer.data() + buffer_header_size, body_size);
  }
  if (filled < buffer_header_size || filled > capacity) {
    fail("Offset (bytes filled) " + hex(filled) + " lies outside the buffer's " + hex(capacity) + " bytes", false);
  }
  m_filled = filled;
  m_position = buffer_header_size;
  return true;
}

void EtlReader::read_logfile_header() {
  const std::string name = utf8_name(m_path);
  try {
    if (!load_next_buffer()) throw Error("cannot read ETL file '" + name + "': its first buffer header is all zero");
  } catch (const MalformedEtl& error) {
    throw Error(std::string(error.what()) + "; is it an .etl file?");
  }
  const std::uint8_t* record = m_buffer.data() + m_position;
  m_record_offset = m_position;
  const std::size_t room = m_filled - m_position;
  const bool is_etl = room >= system_header_size && (record[3] & 0xC0) == 0xC0 && is_system_type(record[2]) &&
                      load<std::uint16_t>(record + 6) == 0;
  if (!is_etl) {
    throw Error("cannot read ETL file '" + name +
                "': its first record is not a logfile header (a system header with HookId 0); is it an .etl file?");
  }
  const bool is_64 = record[2] == static_cast<std::uint8_t>(TraceHeaderType::system64);
  const auto version_word = load<std::uint16_t>(record);
  const std::size_t header_size =
      system_header_size + ((version_word & 0x8000) ? 8 : 0) + 8 * ((version_word & 0x0700) >> 8);
  const std::size_t size = load<std::uint16_t>(record + 4);
  const std::size_t struct_size = is_64 ? logfile_header_size_64 : logfile_header_size_32;
  if (size > room) fail_record("the logfile header record's Size " + hex(size) + " runs past the filled bytes");
  if (size < header_size + struct_size) {
    fail_record("the logfile header record's Size " + hex(size) + " is too small for a TRACE_LOGFILE_HEADER");
  }
  const std::uint8_t* logfile = record + header_size;
  const std::size_t shift = is_64 ? 0 : 8;  // the 32-bit layout has two 4-byte name pointers
  m_header.buffer_size = load<std::uint32_t>(logfile + 0x00);
  m_header.version = load<std::uint32_t>(logfile + 0x04);
  m_header.provider_version = load<std::uint32_t>(logfile + 0x08);
  m_header.number_of_processors = load<std::uint32_t>(logfile + 0x0C);
  const auto end_filetime = load<std::uint64_t>(logfile + 0x10);
  m_header.timer_resolution = load<std::uint32_t>(logfile + 0x18);
  m_header.maximum_file_size = load<std::uint32_t>(logfile + 0x1C);
  m_header.log_file_mode = load<std::uint32_t>(logfile + 0x20);
  m_header.buffers_written = load<std::uint32_t>(logfile + 0x24);
  m_header.pointer_size = load<std::uint32_t>(logfile + 0x2C);
  m_header.events_lost = load<std::uint32_t>(logfile + 0x30);
  m_header.cpu_speed_mhz = load<std::uint32_t>(logfile + 0x34);
  const auto boot_filetime = load<std::uint64_t>(logfile + boot_time_at_64 - shift);
  m_header.perf_freq = load<std::uint64_t>(logfile + boot_time_at_64 + 0x08 - shift);
  const auto start_filetime = load<std::uint64_t>(logfile + boot_time_at_64 + 0x10 - shift);
  m_header.clock_type = load<std::uint32_t>(logfile + boot_time_at_64 + 0x18 - shift);
  m_header.buffers_lost = load<std::uint32_t>(logfile + boot_time_at_64 + 0x1C - shift);
  m_header.start_timestamp_raw = load<std::uint64_t>(record + 0x10);
  m_header.start_time = unix_ns_from_filetime(start_filetime);
  m_header.end_time = unix_ns_from_filetime(end_filetime);
  m_header.boot_time = unix_ns_from_filetime(boot_filetime);

  const std::size_t names_size = size - header_size;
  std::size_t position = struct_size;
  m_header.logger_name = read_utf16(logfile, names_size, position);
  m_header.log_file_name = read_utf16(logfile, names_size, position);

  if (m_header.pointer_size != 4 && m_header.pointer_size != 8) {
    fail_record("the logfile header gives a pointer size of " + std::to_string(m_header.pointer_size));
  }
  switch (m_header.clock_type) {
    case 1:
      m_ticks_per_second = m_header.perf_freq;
      if (m_ticks_per_second == 0) fail_record("the logfile header names the QPC clock but gives PerfFreq 0");
      break;
    case 2: m_ticks_per_second = 10'000'000; break;
    case 3:
      m_ticks_per_second = std::uint64_t{m_header.cpu_speed_mhz} * 1'000'000;
      if (m_ticks_per_second == 0) fail_record("the logfile header names the CPU cycle clock but gives 0 MHz");
      break;
    default:
      fail_record("the logfile header names clock type " + std::to_string(m_header.clock_type) +
                  " (expected 1 QPC, 2 system time or 3 CPU cycles)");
  }
  if (m_ticks_per_second > max_ticks_per_second) {
    fail_record("the logfile header gives an implausible clock rate of " + std::to_string(m_ticks_per_second) +
                " ticks per second");
  }
  m_position += (size + 7) & ~std::size_t{7};
}

bool EtlReader::next(RawRecord& record) {
  for (;;) {
    try {
      while (m_position < m_filled) {
        if (parse_record(record)) {
          ++m_counters.records;
          return true;
        }
      }
      if (!load_next_buffer()) return false;
    } catch (const MalformedEtl& error) {
      m_filled = 0;
      m_position = 0;
      m_extended_data = {};
      if (m_on_malformed == OnMalformedBuffer::stop) {
        m_at_end = true;
        throw;
      }
      ++m_counters.malformed;
      m_last_error = error.what();
      if (error.fatal()) m_at_end = true;
    }
  }
}

namespace {

// Sets the fields a classic (kernel or GUID) header does not have.
void clear_manifest_fields(RawRecord& record) {
  record.event_id = 0;
  record.task = 0;
  record.channel = 0;
  record.keyword = 0;
}

// ThreadId, ProcessId and TimeStamp: at the same offsets in the system,
// compact, full, instance and event headers.
void read_thread_process_time(const std::uint8_t* bytes, RawRecord& record) {
  record.tid = load<std::uint32_t>(bytes + 0x08);
  record.pid = load<std::uint32_t>(bytes + 0x0C);
  record.raw_timestamp = load<std::uint64_t>(bytes + 0x10);
}

}  // namespace

void EtlReader::take_record(const RecordAt& at, std::size_t size, std::size_t header_size, const char* header_name) {
  if (size < header_size) {
    fail_record("Size " + std::to_string(size) + " is smaller than its " + std::to_string(header_size) + "-byte " +
                header_name + " header");
  }
  if (size > at.room) {
    fail_record("Size " + std::to_string(size) + " runs past the buffer's filled bytes (" + std::to_string(at.room) +
                " left)");
  }
  m_position = at.position + ((size + 7) & ~std::size_t{7});
}

bool EtlReader::skip_record(const RecordAt& at, TraceHeaderType type, const char* header_name) {
  if (at.room < skipped_header_size) fail_record("only " + std::to_string(at.room) + " bytes are left for a record");
  take_record(at, load<std::uint16_t>(at.bytes), skipped_header_size, header_name);
  ++m_counters.by_header_type[static_cast<std::size_t>(type)];
  ++m_counters.records_skipped;
  return false;
}

// System, compact and perfinfo headers (doc/etw-format.md §7.4): the class
// and opcode come from the HookId.
std::size_t EtlReader::read_kernel_header(const RecordAt& at, TraceHeaderType type, RawRecord& record,
                                          std::size_t& size) {
  const bool is_perfinfo = type == TraceHeaderType::perfinfo32 || type == TraceHeaderType::perfinfo64;
  const bool is_compact = type == TraceHeaderType::compact32 || type == TraceHeaderType::compact64;
  const std::size_t base = is_perfinfo ? perfinfo_header_size : is_compact ? compact_header_size : system_header_size;
  if (at.room < base) fail_record("only " + std::to_string(at.room) + " bytes are left for a kernel event header");
  const std::uint8_t* bytes = at.bytes;
  const auto version_word = load<std::uint16_t>(bytes);
  const std::size_t header_size = base + ((version_word & 0x8000) ? 8 : 0) + 8 * ((version_word & 0x0700) >> 8);
  size = load<std::uint16_t>(bytes + 4);
  take_record(at, size, header_size, "kernel event");
  const auto hook_id = load<std::uint16_t>(bytes + 6);
  const auto event_type = static_cast<std::uint8_t>(hook_id & 0xFF);
  record.provider = kernel_event_class(static_cast<std::uint8_t>(hook_id >> 8), event_type);
  record.hook_id = hook_id;
  record.opcode = event_type;
  record.version = static_cast<std::uint8_t>(version_word & 0xFF);
  record.level = 0;
  clear_manifest_fields(record);
  if (is_perfinfo) {
    record.tid = RawRecord::unknown_id;
    record.pid = RawRecord::unknown_id;
    record.raw_timestamp = load<std::uint64_t>(bytes + 0x08);
  } else {
    read_thread_process_time(bytes, record);
  }
  return header_size;
}

// Full and instance headers: a classic event of the GUID at 0x18.
std::size_t EtlReader::read_classic_header(const RecordAt& at, TraceHeaderType type, RawRecord& record,
                                           std::size_t& size) {
  const bool is_instance = type == TraceHeaderType::instance32 || type == TraceHeaderType::instance64;
  const std::size_t header_size = is_instance ? instance_header_size : full_header_size;
  const std::uint8_t* bytes = at.bytes;
  size = load<std::uint16_t>(bytes);
  take_record(at, size, header_size, is_instance ? "instance" : "full");
  record.provider = Guid::from_bytes(bytes + 0x18);
  record.hook_id = 0;
  record.opcode = bytes[4];
  record.level = bytes[5];
  record.version = static_cast<std::uint8_t>(load<std::uint16_t>(bytes + 6) & 0xFF);
  clear_manifest_fields(record);
  read_thread_process_time(bytes, record);
  return header_size;
}

// Event headers: a manifest event, with extended data items when Flags has
// 0x1, chained by their linkage bit; the payload follows the last one.
std::size_t EtlReader::read_event_header(const RecordAt& at, std::uint16_t width_flag, RawRecord& record,
                                         std::size_t& size) {
  const std::uint8_t* bytes = at.bytes;
  size = load<std::uint16_t>(bytes);
  take_record(at, size, event_header_size, "event");
  const auto raw_flags = load<std::uint16_t>(bytes + 4);
  record.provider = Guid::from_bytes(bytes + 0x18);
  record.hook_id = 0;
  record.event_id = load<std::uint16_t>(bytes + 0x28);
  record.version = bytes[0x2A];
  record.channel = bytes[0x2B];
  record.level = bytes[0x2C];
  record.opcode = bytes[0x2D];
  record.task = load<std::uint16_t>(bytes + 0x2E);
  record.keyword = load<std::uint64_t>(bytes + 0x30);
  record.flags = static_cast<std::uint16_t>(
      (raw_flags & ~(event_header_flag::header_32_bit | event_header_flag::header_64_bit)) | width_flag);
  read_thread_process_time(bytes, record);
  if ((raw_flags & event_header_flag::extended_info) == 0) return event_header_size;
  std::size_t item = event_header_size;
  for (;;) {
    if (size - item < 8) fail_record("extended data item at +" + hex(item) + " runs past the record");
    const std::size_t item_size = load<std::uint16_t>(bytes + item);
    const bool more = (load<std::uint16_t>(bytes + item + 4) & 1) != 0;
    const std::size_t data_size = load<std::uint16_t>(bytes + item + 6);
    if (item_size < 8 || item_size > size - item || data_size > item_size - 8) {
      fail_record("extended data item at +" + hex(item) + " has size " + std::to_string(item_size) + " and data size " +
                  std::to_string(data_size) + " in a record of " + std::to_string(size));
    }
    item += item_size;
    if (!more) break;
  }
  m_extended_data = {bytes + event_header_size, item - event_header_size};
  return item;
}

bool EtlReader::parse_record(RawRecord& record) {
  const RecordAt at{m_buffer.data() + m_position, m_position, m_filled - m_position};
  m_record_offset = at.position;
  m_extended_data = {};
  if (at.room < 4) fail_record("only " + std::to_string(at.room) + " bytes are left for a record header");
  const auto marker = load<std::uint32_t>(at.bytes);
  if (marker == end_of_records) {
    m_position = m_filled;
    return false;
  }
  const auto marker_flags = static_cast<std::uint8_t>(marker >> 24);
  if ((marker_flags & marker_header_flag) == 0) fail_record("marker " + hex(marker) + " is not a record header");
  if ((marker_flags & marker_typed_flag) == 0) return skip_record(at, TraceHeaderType::message, "message");

  const auto type = static_cast<TraceHeaderType>(static_cast<std::uint8_t>(marker >> 16));
  std::uint16_t width_flag = event_header_flag::header_64_bit;
  switch (type) {
    case TraceHeaderType::system32:
    case TraceHeaderType::compact32:
    case TraceHeaderType::perfinfo32:
    case TraceHeaderType::full_header32:
    case TraceHeaderType::instance32:
    case TraceHeaderType::event_header32: width_flag = event_header_flag::header_32_bit; break;
    default: break;
  }

  std::size_t header_size = 0, size = 0;
  switch (type) {
    case TraceHeaderType::system32:
    case TraceHeaderType::system64:
    case TraceHeaderType::compact32:
    case TraceHeaderType::compact64:
    case TraceHeaderType::perfinfo32:
    case TraceHeaderType::perfinfo64:
      header_size = read_kernel_header(at, type, record, size);
      record.flags = event_header_flag::classic_header | width_flag;
      break;
    case TraceHeaderType::full_header32:
    case TraceHeaderType::full_header64:
    case TraceHeaderType::instance32:
    case TraceHeaderType::instance64:
      header_size = read_classic_header(at, type, record, size);
      record.flags = event_header_flag::classic_header | width_flag;
      break;
    case TraceHeaderType::event_header32:
    case TraceHeaderType::event_header64: header_size = read_event_header(at, width_flag, record, size); break;
    case TraceHeaderType::timed: return skip_record(at, type, "timed");
    case TraceHeaderType::error: return skip_record(at, type, "error");
    case TraceHeaderType::wnode: return skip_record(at, type, "wnode");
    case TraceHeaderType::message: return skip_record(at, type, "message");
    default:
      fail_record("unknown trace header type " + hex(static_cast<std::uint8_t>(type)) + " in marker " + hex(marker));
  }
  record.header_type = type;
  record.payload = at.bytes + header_size;
  record.payload_size = static_cast<std::uint32_t>(size - header_size);
  record.processor = m_processor;
  record.time = to_unix_ns(record.raw_timestamp);
  ++m_counters.by_header_type[static_cast<std::size_t>(type)];
  return true;
}

}  // namespace etwaudit
