#pragma once
// Bounds-checked reads of an ETW event's payload, for the decoder: fields
// are packed little-endian without padding, pointers are as wide as the
// record's header says (doc/etw-format.md §4.2).

#include <cstddef>
#include <cstdint>
#include <span>

#include "sources/etw/raw_record.h"

namespace etwaudit::decoder_detail {

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

}  // namespace etwaudit::decoder_detail
