#include "query/event_lines.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/time_format.h"

namespace etwaudit {
namespace {

void append_event_line(std::string& out, const FeedEvent& event, const FeedProcess& process,
                       const EventOrigin& origin) {
  nlohmann::ordered_json line;
  line["event_uid"] = origin.db_uuid + ":" + std::to_string(event.event_id);
  line["host_id"] = origin.host_id;
  line["host"] = origin.host;
  line["db_uuid"] = origin.db_uuid;
  line["event_id"] = event.event_id;
  line["time"] = format_iso8601(event.time_ns);
  line["time_ns"] = event.time_ns;
  line["op"] = event.op;
  line["path"] = event.path;
  auto optional = [&](const char* key, const auto& value) {
    if (value)
      line[key] = *value;
    else
      line[key] = nullptr;
  };
  optional("offset", event.offset);
  optional("size", event.size);
  line["count"] = event.count;
  optional("end_offset", event.end_offset);
  if (event.status) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%08llX", static_cast<unsigned long long>(*event.status));
    line["status"] = hex;
  } else {
    line["status"] = nullptr;
  }
  line["pid"] = process.pid;
  optional("tid", event.tid);
  line["process"] = process.image;
  if (process.start_time)
    line["process_start"] = format_iso8601(*process.start_time);
  else
    line["process_start"] = nullptr;
  optional("user", process.user);
  optional("parent_pid", process.parent_pid);
  optional("command_line", process.command_line);
  optional("renamed_from", event.renamed_from);
  optional("renamed_to", event.renamed_to);
  out += line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out += '\n';
}

}  // namespace

void event_lines(std::string& out, EventFeed& feed, const std::vector<FeedEvent>& events, const EventOrigin& origin) {
  out.clear();
  for (const FeedEvent& event : events) append_event_line(out, event, feed.process(event.process_id), origin);
}

}  // namespace etwaudit
