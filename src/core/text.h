#pragma once
// Text conversions for the strings of ETW payloads and .etl headers, all
// bounds-checked.
//
// ETW strings are UTF-16LE (win:UnicodeString, MOF WString) or 8-bit
// (win:AnsiString, MOF String) and NUL-terminated (doc/etw-format.md §4.2). The
// decoder stores UTF-8. A UTF-16 unit sequence that is not valid (a lone or
// reversed surrogate) becomes U+FFFD; so does an 8-bit byte outside ASCII,
// because the code page of the recording machine is not known here.

#include <cstddef>
#include <cstdint>
#include <string>

namespace etwaudit {

namespace text_detail {
inline void append_code_point(std::uint32_t code, std::string& out) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | code >> 6);
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | code >> 12);
    out += static_cast<char>(0x80 | (code >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | code >> 18);
    out += static_cast<char>(0x80 | (code >> 12 & 0x3F));
    out += static_cast<char>(0x80 | (code >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}
inline constexpr std::uint32_t replacement_character = 0xFFFD;
}  // namespace text_detail

// Appends the UTF-8 form of the UTF-16LE units in bytes[0, size) to out. An
// odd last byte is not a unit and is ignored; a NUL unit is kept as U+0000
// (callers pass the text without its terminator).
inline void append_utf8_from_utf16le(const std::uint8_t* bytes, std::size_t size, std::string& out) {
  using namespace text_detail;
  const std::size_t units = size / 2;
  auto unit_at = [bytes](std::size_t i) -> std::uint32_t { return bytes[2 * i] | bytes[2 * i + 1] << 8; };
  for (std::size_t i = 0; i < units; ++i) {
    const std::uint32_t unit = unit_at(i);
    if (unit < 0xD800 || unit > 0xDFFF) {
      append_code_point(unit, out);
    } else if (unit <= 0xDBFF && i + 1 < units && unit_at(i + 1) >= 0xDC00 && unit_at(i + 1) <= 0xDFFF) {
      append_code_point(0x10000 + ((unit - 0xD800) << 10) + (unit_at(i + 1) - 0xDC00), out);
      ++i;
    } else {
      append_code_point(replacement_character, out);
    }
  }
}

// Appends the 8-bit text in bytes[0, size) to out: ASCII as it is, any other
// byte as U+FFFD.
inline void append_utf8_from_ansi(const std::uint8_t* bytes, std::size_t size, std::string& out) {
  using namespace text_detail;
  for (std::size_t i = 0; i < size; ++i) {
    if (bytes[i] < 0x80) {
      out += static_cast<char>(bytes[i]);
    } else {
      append_code_point(replacement_character, out);
    }
  }
}

}  // namespace etwaudit
