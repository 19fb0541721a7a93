#include "query/run_lines.h"

#include <SQLiteCpp/Statement.h>

#include "core/time_format.h"
#include "query/json_line.h"

namespace etwaudit {

RunLines::RunLines(SQLite::Database& db, std::string destination) : m_db(db), m_destination(std::move(destination)) {}

bool RunLines::changed(std::string& out, const EventOrigin& origin) {
  out.clear();
  m_pending = m_sent;
  SQLite::Statement runs(m_db,
                         "SELECT run_id, source, live, version, pid, started_at, last_commit_at, stopped_at, "
                         "first_event_at, last_event_at, events_received, events_written, events_dropped, "
                         "events_lost, events_excluded + events_own, bad_input, unresolved, exit_reason, clock, "
                         "max(started_at, coalesce(last_commit_at, 0), coalesce(stopped_at, 0)), "
                         "(SELECT pruned_unshipped FROM destinations WHERE name = ?1) FROM collector_runs "
                         "ORDER BY run_id");
  runs.bind(1, m_destination);
  const std::int64_t now = now_ns();
  bool any = false;
  while (runs.executeStep()) {
    auto column = [&](int i) { return runs.getColumn(i); };
    auto optional_number = [&](int i) {
      return column(i).isNull() ? std::nullopt : std::optional<std::int64_t>(column(i).getInt64());
    };
    auto optional_text = [&](int i) {
      return column(i).isNull() ? std::nullopt : std::optional<std::string>(column(i).getString());
    };
    const std::int64_t run_id = column(0).getInt64();
    const std::pair<std::int64_t, std::int64_t> state{column(19).getInt64(), column(20).getInt64()};
    if (const auto sent = m_sent.find(run_id); sent != m_sent.end() && sent->second == state) continue;
    m_pending[run_id] = state;
    any = true;
    JsonLine line(out);
    line.text("host_id", origin.host_id);
    line.text("host", origin.host);
    line.text("db_uuid", origin.db_uuid);
    line.number("run_id", run_id);
    line.text("source", column(1).getString());
    line.number("live", column(2).getInt64());
    line.optional("version", optional_text(3));
    line.optional("collector_pid", optional_number(4));
    line.text("started", format_iso8601(column(5).getInt64()));
    line.number("started_ns", column(5).getInt64());
    line.optional("last_commit_ns", optional_number(6));
    line.optional("stopped_ns", optional_number(7));
    line.optional("first_event_ns", optional_number(8));
    line.optional("last_event_ns", optional_number(9));
    static constexpr const char* counters[] = {"events_received", "events_written", "events_dropped", "events_lost",
                                               "events_excluded", "bad_input",      "unresolved"};
    for (int i = 0; i < 7; ++i) line.number(counters[i], column(10 + i).getInt64());
    line.optional("exit_reason", optional_text(17));
    line.optional("clock", optional_text(18));
    line.number("pruned_unshipped", state.second);
    line.number("updated_ns", now);
    line.end();
  }
  return any;
}

}  // namespace etwaudit
