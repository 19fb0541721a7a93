#include "query/event_lines.h"

#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/time_format.h"

namespace etwaudit {
namespace {

// A line written field by field into out: a shipper spends most of its time
// here, and building a JSON object a line cost four times as much.
class LineWriter {
 public:
  explicit LineWriter(std::string& out) : m_out(out) {}

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

void append_event_line(std::string& out, const FeedEvent& event, const FeedProcess& process,
                       const EventOrigin& origin) {
  LineWriter line(out);
  line.text("event_uid", origin.db_uuid + ":" + std::to_string(event.event_id));
  line.text("host_id", origin.host_id);
  line.text("host", origin.host);
  line.text("db_uuid", origin.db_uuid);
  line.number("event_id", event.event_id);
  line.text("time", format_iso8601(event.time_ns));
  line.number("time_ns", event.time_ns);
  line.text("op", event.op);
  line.text("path", event.path);
  line.optional("offset", event.offset);
  line.optional("size", event.size);
  line.number("count", event.count);
  line.optional("end_offset", event.end_offset);
  if (event.status) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%08llX", static_cast<unsigned long long>(*event.status));
    line.text("status", hex);
  } else {
    line.null("status");
  }
  line.number("pid", process.pid);
  line.optional("tid", event.tid);
  line.text("process", process.image);
  if (process.start_time)
    line.text("process_start", format_iso8601(*process.start_time));
  else
    line.null("process_start");
  line.optional("user", process.user);
  line.optional("parent_pid", process.parent_pid);
  line.optional("command_line", process.command_line);
  line.optional("renamed_from", event.renamed_from);
  line.optional("renamed_to", event.renamed_to);
  line.end();
}

}  // namespace

void event_lines(std::string& out, EventFeed& feed, const std::vector<FeedEvent>& events, const EventOrigin& origin) {
  out.clear();
  for (const FeedEvent& event : events) append_event_line(out, event, feed.process(event.process_id), origin);
}

}  // namespace etwaudit
