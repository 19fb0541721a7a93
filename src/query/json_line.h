#pragma once
// JsonLine: one JSON object on one line, written field by field into a
// string: what export and shipping write for every row, where building a
// JSON object a line cost four times as much. The bytes are those
// nlohmann::json would write (invalid UTF-8 replaced by U+FFFD).

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>

namespace etwaudit {

class JsonLine {
 public:
  explicit JsonLine(std::string& out) : m_out(out) {}

  void text(const char* key, const std::string& value) {
    start(key);
    quoted(value);
  }
  void number(const char* key, std::int64_t value) {
    start(key);
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
    m_out.append(digits, end);
  }
  template <typename T>
  void optional(const char* key, const std::optional<T>& value) {
    if (!value) {
      start(key);
      m_out += "null";
    } else if constexpr (std::is_same_v<T, std::string>) {
      text(key, *value);
    } else {
      number(key, *value);
    }
  }
  void null(const char* key) {
    start(key);
    m_out += "null";
  }
  void end() { m_out += "}\n"; }

 private:
  void start(const char* key) {
    m_out += m_first ? '{' : ',';
    m_first = false;
    m_out += '"';
    m_out += key;
    m_out += "\":";
  }
  // As nlohmann::json writes it (invalid UTF-8 replaced by U+FFFD): ASCII
  // here, anything else through nlohmann.
  void quoted(const std::string& value) {
    for (const unsigned char c : value) {
      if (c >= 0x80) {
        m_out += nlohmann::json(value).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        return;
      }
    }
    m_out += '"';
    for (const char c : value) {
      switch (c) {
        case '"': m_out += "\\\""; break;
        case '\\': m_out += "\\\\"; break;
        case '\b': m_out += "\\b"; break;
        case '\f': m_out += "\\f"; break;
        case '\n': m_out += "\\n"; break;
        case '\r': m_out += "\\r"; break;
        case '\t': m_out += "\\t"; break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
            m_out += escaped;
          } else {
            m_out += c;
          }
      }
    }
    m_out += '"';
  }

  std::string& m_out;
  bool m_first = true;
};

}  // namespace etwaudit
