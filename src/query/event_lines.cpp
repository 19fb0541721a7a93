#include "query/event_lines.h"

#include <cstdio>

#include "core/time_format.h"
#include "query/json_line.h"

namespace etwaudit {
namespace {

void append_event_line(std::string& out, const FeedEvent& event, const FeedProcess& process,
                       const EventOrigin& origin) {
  JsonLine line(out);
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
