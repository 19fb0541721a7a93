#pragma once
// RawRecord: one ETW event as its source received it, before any decoding.
//
// Two sources produce it: the .etl file reader (src/sources/etl) and the live
// Windows consumer. Both describe an event by what ETW itself says about it:
// which provider or kernel event class, which event (manifest id or classic
// opcode) in which version, who logged it and when, and the payload bytes. The
// decoder dispatches on exactly these fields, so it never needs to know where a
// record came from.
//
// Classic kernel events carry a HookId in the file: its high byte is the event
// group, which selects the event-class GUID (FileIo, DiskIo, Process, ...), and
// its low byte is the event type, which becomes the opcode. Manifest events
// carry a provider GUID and an event id. Dispatch on provider first, then on
// opcode (classic) or event_id (manifest), then on version; take the width of
// pointer fields from pointer_size(), never from sizeof(void*)
// (doc/etw-format.md §1, §4.1).
//
// A RawRecord is a view: payload points into the source's buffer and is valid
// only until the source produces the next record. Copy what you keep.

#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace etwaudit {

// A Windows GUID. In memory and in files it is stored little-endian field by
// field: data1 (4 bytes), data2 (2), data3 (2), then data4 as 8 plain bytes.
struct Guid {
  std::uint32_t data1 = 0;     // first group of 8 hex digits
  std::uint16_t data2 = 0;     // second group of 4 hex digits
  std::uint16_t data3 = 0;     // third group of 4 hex digits
  std::uint8_t data4[8] = {};  // last 2 + 6 bytes, as written

  friend bool operator==(const Guid&, const Guid&) = default;
  friend auto operator<=>(const Guid&, const Guid&) = default;

  // Reads the 16-byte little-endian layout at bytes.
  static Guid from_bytes(const std::uint8_t* bytes) noexcept {
    Guid guid;
    guid.data1 = static_cast<std::uint32_t>(bytes[0]) | static_cast<std::uint32_t>(bytes[1]) << 8 |
                 static_cast<std::uint32_t>(bytes[2]) << 16 | static_cast<std::uint32_t>(bytes[3]) << 24;
    guid.data2 = static_cast<std::uint16_t>(bytes[4] | bytes[5] << 8);
    guid.data3 = static_cast<std::uint16_t>(bytes[6] | bytes[7] << 8);
    for (int i = 0; i < 8; ++i) guid.data4[i] = bytes[8 + i];
    return guid;
  }

  // "{90cbdc39-4a3e-11d1-84f4-0000f80464e3}": braces, lower-case hex.
  std::string to_string() const {
    char text[39];
    std::snprintf(text, sizeof text, "{%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x}", static_cast<unsigned>(data1),
                  static_cast<unsigned>(data2), static_cast<unsigned>(data3), data4[0], data4[1], data4[2], data4[3],
                  data4[4], data4[5], data4[6], data4[7]);
    return text;
  }

  // The inverse of to_string; braces are optional and hex digits may be upper
  // case. nullopt for anything else.
  static std::optional<Guid> parse(std::string_view text) {
    if (text.size() == 38 && text.front() == '{' && text.back() == '}') text = text.substr(1, 36);
    if (text.size() != 36) return std::nullopt;
    std::uint8_t nibbles[32];
    std::size_t count = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (i == 8 || i == 13 || i == 18 || i == 23) {
        if (c != '-') return std::nullopt;
        continue;
      }
      int value;
      if (c >= '0' && c <= '9') {
        value = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        value = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        value = c - 'A' + 10;
      } else {
        return std::nullopt;
      }
      nibbles[count++] = static_cast<std::uint8_t>(value);
    }
    auto hex = [&](std::size_t first, std::size_t digits) {
      std::uint32_t value = 0;
      for (std::size_t i = 0; i < digits; ++i) value = value << 4 | nibbles[first + i];
      return value;
    };
    Guid guid;
    guid.data1 = hex(0, 8);
    guid.data2 = static_cast<std::uint16_t>(hex(8, 4));
    guid.data3 = static_cast<std::uint16_t>(hex(12, 4));
    for (std::size_t i = 0; i < 8; ++i) guid.data4[i] = static_cast<std::uint8_t>(hex(16 + 2 * i, 2));
    return guid;
  }
};

// Event-class GUIDs of classic kernel events (the ProviderId ETW reports for
// them) and providers the decoder knows. Sources: doc/etw-format.md §4.3, §7.3.
namespace known_guid {
inline constexpr Guid event_trace{0x68fdd900, 0x4a3e, 0x11d1, {0x84, 0xf4, 0x00, 0x00, 0xf8, 0x04, 0x64, 0xe3}};
inline constexpr Guid disk_io{0x3d6fa8d4, 0xfe05, 0x11d0, {0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c}};
inline constexpr Guid process{0x3d6fa8d0, 0xfe05, 0x11d0, {0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c}};
inline constexpr Guid thread{0x3d6fa8d1, 0xfe05, 0x11d0, {0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c}};
inline constexpr Guid file_io{0x90cbdc39, 0x4a3e, 0x11d1, {0x84, 0xf4, 0x00, 0x00, 0xf8, 0x04, 0x64, 0xe3}};
inline constexpr Guid image_load{0x2cb15d1d, 0x5fc1, 0x11d2, {0xab, 0xe1, 0x00, 0xa0, 0xc9, 0x11, 0xf5, 0x18}};
inline constexpr Guid perf_info{0xce1dbfb4, 0x137e, 0x4da6, {0x87, 0xb0, 0x3f, 0x59, 0xaa, 0x10, 0x2c, 0xbc}};
// Microsoft-Windows-Kernel-File: manifest events, dispatched on event_id.
inline constexpr Guid kernel_file{0xedd08927, 0x9cc4, 0x4e65, {0xb9, 0x70, 0xc2, 0x56, 0x0f, 0xb5, 0xc2, 0x89}};
// Microsoft-Windows-Kernel-Process: manifest events, dispatched on event_id.
inline constexpr Guid kernel_process{0x22fb2cd6, 0x0e7b, 0x422b, {0xa0, 0xc7, 0x2f, 0xad, 0x1f, 0xd0, 0xe7, 0x16}};
}  // namespace known_guid

// Bits of RawRecord::flags: the EVENT_HEADER_FLAG_* values of evntcons.h, as a
// live consumer sees them in EVENT_HEADER.Flags.
namespace event_header_flag {
inline constexpr std::uint16_t extended_info = 0x0001;
inline constexpr std::uint16_t private_session = 0x0002;
inline constexpr std::uint16_t string_only = 0x0004;
inline constexpr std::uint16_t trace_message = 0x0008;
inline constexpr std::uint16_t no_cputime = 0x0010;
inline constexpr std::uint16_t header_32_bit = 0x0020;   // pointer fields in the payload are 4 bytes
inline constexpr std::uint16_t header_64_bit = 0x0040;   // pointer fields in the payload are 8 bytes
inline constexpr std::uint16_t classic_header = 0x0100;  // classic (MOF or kernel) event: dispatch on opcode
inline constexpr std::uint16_t processor_index = 0x0200;
}  // namespace event_header_flag

// How a record was stored in an .etl file: the header type byte of its marker
// (doc/etw-format.md §7.2). Live events have none and say unknown.
enum class TraceHeaderType : std::uint8_t {
  unknown = 0x00,
  system32 = 0x01,
  system64 = 0x02,
  compact32 = 0x03,
  compact64 = 0x04,
  full_header32 = 0x0A,
  instance32 = 0x0B,
  timed = 0x0C,
  error = 0x0D,
  wnode = 0x0E,
  message = 0x0F,
  perfinfo32 = 0x10,
  perfinfo64 = 0x11,
  event_header32 = 0x12,
  event_header64 = 0x13,
  full_header64 = 0x14,
  instance64 = 0x15,
};

// One more than the largest TraceHeaderType value: the size of tables indexed by it.
inline constexpr std::size_t trace_header_type_count = 0x16;

struct RawRecord {
  // pid and tid when the header does not carry them (perfinfo headers). ETW
  // itself also uses this value for work done in no particular process.
  static constexpr std::uint32_t unknown_id = 0xFFFFFFFF;

  Guid provider;                          // provider GUID, or the event-class GUID of a classic event
  std::int64_t time = 0;                  // ns since 1970-01-01T00:00:00Z
  std::uint64_t raw_timestamp = 0;        // the clock value as recorded (QPC ticks, FILETIME or CPU cycles)
  std::uint64_t keyword = 0;              // keyword mask (manifest events); 0 for classic events
  const std::uint8_t* payload = nullptr;  // the event's user data; valid only until the next record
  std::uint32_t payload_size = 0;         // bytes at payload
  std::uint32_t pid = unknown_id;         // process id from the header
  std::uint32_t tid = unknown_id;         // thread id from the header
  std::uint32_t processor = 0;            // processor that logged the event (from the buffer in .etl files)
  std::uint16_t event_id = 0;             // manifest event id; 0 for classic events
  std::uint16_t hook_id = 0;              // kernel HookId, group << 8 | type (system/compact/perfinfo headers only)
  std::uint16_t task = 0;                 // manifest task; 0 for classic events
  std::uint16_t flags = 0;                // event_header_flag bits
  std::uint8_t opcode = 0;                // manifest opcode, or the event type of a classic event
  std::uint8_t version = 0;               // manifest event version, or the MOF class version
  std::uint8_t level = 0;                 // severity level; 0 when not recorded
  std::uint8_t channel = 0;               // manifest channel; 0 for classic events
  TraceHeaderType header_type = TraceHeaderType::unknown;  // how it was stored in an .etl file

  // Width of pointer and SIZE_T fields in the payload: 8 or 4 bytes.
  std::size_t pointer_size() const noexcept { return (flags & event_header_flag::header_32_bit) ? 4 : 8; }
  bool is_classic() const noexcept { return (flags & event_header_flag::classic_header) != 0; }
  // HookId group (high byte): meaningful for system, compact and perfinfo headers.
  std::uint8_t hook_group() const noexcept { return static_cast<std::uint8_t>(hook_id >> 8); }
};

}  // namespace etwaudit
