#include "query/filters.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "core/error.h"
#include "core/glob.h"
#include "core/time_format.h"
#include "platform/platform.h"
#include "query/read_only_guard.h"
#include "query/sql_functions.h"
#include "store/activity_columns.h"
#include "store/event_slots.h"

namespace etwaudit {
namespace {

// ---- the WITH clause -------------------------------------------------------

// An activity row's events of the --op operations (all of them without --op).
std::string activity_events(const QueryFilters& filters, const std::string& source) {
  if (filters.ops.empty()) return source + "events";
  std::string events;
  for (const ActivityColumns& column : activity_columns)
    if (std::find(filters.ops.begin(), filters.ops.end(), column.op) != filters.ops.end())
      events += (events.empty() ? "" : " + ") + source + column.count;
  return events;
}

// Activity's per-op columns as `expression AS column`, with unselected ops 0.
// The failed events are one count of every operation: with --op, unknown (NULL).
// With --failed, only they count: the other columns are 0.
// Where the window holds events without a size (filters.unsized), an
// operation's bytes are NULL where none of its events had one: where the row
// has none of them, or where all its events that move bytes lack one
// (sql/0022: a row's source sizes them all or none).
std::string activity_select_list(const QueryFilters& filters, const std::string& source) {
  auto selected = [&](Op op) {
    return !filters.failed_only &&
           (filters.ops.empty() || std::find(filters.ops.begin(), filters.ops.end(), op) != filters.ops.end());
  };
  std::string moving;  // the row's events of operations that move bytes
  for (const ActivityColumns& column : activity_columns)
    if (column.bytes) moving += (moving.empty() ? "" : " + ") + source + column.count;
  const std::string sized = "(" + source + "unsized = 0 OR " + source + "unsized < " + moving + ")";
  std::string columns;
  for (const ActivityColumns& column : activity_columns) {
    const bool on = selected(column.op);
    columns += std::string(", ") + (on ? source + column.count : std::string("0")) + " AS " + column.count;
    if (!column.bytes) continue;
    // (Without such events in the window, the bytes as they are: the reports
    // add them up the same, and a whole-database report is a fifth faster.)
    const std::string checked = filters.unsized ? "CASE WHEN " + source + column.count + " > 0 AND " + sized +
                                                      " THEN " + source + column.bytes + " END"
                                                : source + column.bytes;
    columns += std::string(", ") + (on ? checked : std::string("NULL")) + " AS " + column.bytes;
  }
  const std::string events = filters.failed_only ? "0" : activity_events(filters, source);
  const std::string failed = filters.ops.empty() ? source + "failed" : "NULL";
  return events + " AS events, " + failed + " AS failed" + columns;
}

// Lower bound of the event rows of an activity row that match the --op
// operations: rows - (events - selected events), at least 1 when any match.
// Exact when no row is coalesced (rows = events); the listings use it to know
// where their :limit rows lie.
std::string activity_rows(const QueryFilters& filters, const std::string& source) {
  const std::string rows = "coalesce(" + source + "rows, " + source + "events)";
  // Rows of failed events: at least those that are not rows of the others
  // (no more than their events); per operation, unknown.
  if (filters.failed_only)
    return filters.ops.empty() ? "max(" + rows + " - " + source + "events, min(1, " + source + "failed))" : "0";
  if (filters.ops.empty()) return rows;
  const std::string selected = "(" + activity_events(filters, source) + ")";
  return "max(" + rows + " - " + source + "events + " + selected + ", min(1, " + selected + "))";
}

// The same columns for a single event row e (for segments at the window's
// edges); a coalesced row counts its events.
std::string counted_select_list(const QueryFilters& filters) {
  std::string columns = "(e.status IS NULL) * coalesce(e.count, 1) AS events, " +
                        std::string(filters.ops.empty() ? "(e.status IS NOT NULL) * coalesce(e.count, 1)" : "NULL") +
                        " AS failed";
  for (const ActivityColumns& column : activity_columns) {
    const bool on =
        filters.ops.empty() || std::find(filters.ops.begin(), filters.ops.end(), column.op) != filters.ops.end();
    const std::string op = std::to_string(static_cast<int>(column.op));
    const std::string counted = "e.op = " + op + " AND e.status IS NULL";
    columns += std::string(", ") + (on ? "(" + counted + ") * coalesce(e.count, 1)" : "0") + " AS " + column.count;
    if (column.bytes)
      columns +=
          std::string(", ") + (on ? "CASE WHEN " + counted + " THEN e.size END" : "NULL") + " AS " + column.bytes;
  }
  return columns;
}

// windowed_activity's per-operation columns as rows (op, events, bytes),
// summed over the whole window (group_by empty) or per value of group_by.
std::string unpivoted_operations(const std::string& group_by) {
  std::string sums, events = "CASE o.op", bytes = "CASE o.op";
  for (const ActivityColumns& column : activity_columns) {
    const std::string op = std::to_string(static_cast<int>(column.op));
    sums += std::string(", sum(") + column.count + ") AS " + column.count;
    events += std::string(" WHEN ") + op + " THEN t." + column.count;
    if (column.bytes) {
      sums += std::string(", sum(") + column.bytes + ") AS " + column.bytes;
      bytes += std::string(" WHEN ") + op + " THEN t." + column.bytes;
    }
  }
  const std::string key = group_by.empty() ? "" : "t." + group_by + ", ";
  return "  SELECT " + key + "o.op, " + events + " END, " + bytes + " END\n" + "  FROM (SELECT " +
         (group_by.empty() ? "" : group_by + ", ") + sums.substr(2) + " FROM windowed_activity" +
         (group_by.empty() ? "" : " GROUP BY " + group_by) + ") AS t CROSS JOIN ops AS o";
}

// " AND alias.op IN (...)" for an --op filter; empty without one.
std::string op_condition(const QueryFilters& filters, const std::string& alias = "e") {
  if (filters.ops.empty()) return "";
  std::string list;
  for (Op op : filters.ops) list += (list.empty() ? "" : ", ") + std::to_string(static_cast<int>(op));
  return " AND " + alias + ".op IN (" + list + ")";
}

// The operations whose bytes mean something, as "(0, 1, ...)".
std::string ops_with_bytes() {
  std::string list;
  for (const ActivityColumns& column : activity_columns)
    if (column.bytes) list += (list.empty() ? "" : ", ") + std::to_string(static_cast<int>(column.op));
  return "(" + list + ")";
}

// windowed_minutes: per minute and operation. Without a process or path the
// writer's minute_totals hold the minutes wholly inside the window, and only
// the events of the (at most two) minutes it cuts are read; with one, the
// matching events are few and are counted directly.
std::string windowed_minutes(const QueryFilters& filters) {
  const std::string bytes = "CASE WHEN op IN " + ops_with_bytes() + " THEN bytes END";
  // (windowed_events holds only failed events with --failed, and minute_totals none.)
  if (filters.by_process() || filters.by_file() || filters.failed_only)
    return "windowed_minutes(minute, op, events, bytes) AS (\n"
           "  SELECT minute, op, events, " +
           bytes +
           " FROM (\n"
           "    SELECT time - (time % 60000000000 + 60000000000) % 60000000000 AS minute, op, sum(count) AS events,\n"
           "           sum(size) AS bytes\n"
           "    FROM windowed_events WHERE " +
           std::string(filters.failed_only ? "status IS NOT NULL" : "status IS NULL") + " GROUP BY 1, 2))";
  return "windowed_minutes(minute, op, events, bytes) AS (\n"
         "  SELECT minute, op, events, " +
         bytes +
         " FROM (\n"
         "    SELECT m.minute * 60000000000 AS minute, m.op, m.events, CASE WHEN m.unsized < m.events THEN m.bytes END "
         "AS bytes\n"
         "    FROM minute_totals m\n"
         "    WHERE m.minute BETWEEN coalesce(:first_minute, -9223372036854775807)"
         " AND coalesce(:last_minute, 9223372036854775807)" +
         op_condition(filters, "m") +
         "\n"
         "    UNION ALL\n"
         "    SELECT time - (time % 60000000000 + 60000000000) % 60000000000, op, sum(count), sum(size)\n"
         "    FROM (" +
         for_each_slot(
             "SELECT coalesce(e.ts, e.id) AS time, e.op, e.size, coalesce(e.count, 1) AS count\n"
             "          FROM window_segments w CROSS JOIN {events} e ON e.id BETWEEN w.first_id AND w.last_id, "
             "bounds b\n"
             "          WHERE w.slot = {slot} AND (w.min_time < :whole_minutes_from OR w.max_time >= "
             ":whole_minutes_to) AND e.status IS NULL\n"
             "            AND coalesce(e.ts, e.id) BETWEEN b.lo AND b.hi" +
                 op_condition(filters) +
                 "\n"
                 "            AND (coalesce(e.ts, e.id) < :whole_minutes_from OR coalesce(e.ts, e.id) >= "
                 ":whole_minutes_to)",
             "\n          UNION ALL ") +
         ")\n"
         "    GROUP BY 1, 2))";
}

}  // namespace

std::int64_t parse_time_argument(const std::string& option, const std::string& value, std::int64_t now) {
  if (auto time = parse_time_point(value, now, utc_offset_seconds)) return *time;
  throw UsageError(option + " '" + value + "': " +
                   (is_bare_number(value) ? "a number needs its unit: " + value + "m, " + value + "h, " + value + "d?"
                                          : std::string("expected a date or a time (2026-12-02, '2026-12-02 10:16', "
                                                        "10:16, local time; 2026-12-02T10:16:00Z, ...+01:00), "
                                                        "today, yesterday, now, or back from now (15m, 1h30m, -2h)")));
}

void check_glob_argument(const std::string& option, const std::string& value) {
  glob_argument(option, value);
}

Op parse_op_argument(const std::string& value) {
  return op_argument("--op", value);
}

namespace {

// The filters as SQL conditions on activity rows (a), hourly totals (h) and
// events (e), and the join that finds the window's activity rows.
struct FilterConditions {
  std::string on_activity, on_totals, on_events;
  std::string located;
};

FilterConditions filter_conditions(const QueryFilters& filters) {
  FilterConditions c;
  // --user: a glob over the account, as over a path (user alone matches DOMAIN\\user).
  const std::string picked_processes = std::string("(SELECT process_id FROM processes WHERE 1") +
                                       (filters.process ? " AND process_match(:process, pid, image)" : "") +
                                       (filters.user ? " AND path_match(:user, user)" : "") +
                                       (filters.process_id ? " AND process_id = :process_id" : "") + ")";
  std::string excluded;
  for (std::size_t i = 0; i < filters.exclude_paths.size(); ++i)
    excluded += " AND NOT path_match(:exclude_path_" + std::to_string(i) + ", coalesce(path, nt_path))";
  const std::string picked_files = std::string("(SELECT file_id FROM files WHERE 1") +
                                   (filters.path ? " AND path_match(:path, coalesce(path, nt_path))" : "") +
                                   (filters.file_id ? " AND file_id = :file_id" : "") + excluded + ")";
  if (filters.by_process()) {
    c.on_activity += " AND a.process_id IN " + picked_processes;
    c.on_totals += " AND h.process_id IN " + picked_processes;
    c.on_events += " AND e.process_id IN " + picked_processes;
  }
  if (filters.by_file()) {
    c.on_activity += " AND a.file_id IN " + picked_files;
    c.on_totals += " AND h.file_id IN " + picked_files;
    c.on_events += " AND e.file_id IN " + picked_files;
  }
  if (filters.failed_only) {
    c.on_activity += " AND a.failed > 0";
    c.on_totals += " AND h.failed > 0";
    c.on_events += " AND e.status IS NOT NULL";
  }
  c.on_events += " AND coalesce(e.ts, e.id) BETWEEN b.lo AND b.hi" + op_condition(filters);
  // Activity rows of the window's segments that pass the filters, segment by
  // segment (CROSS JOIN fixes the order): with a path, the few files looked
  // up in each segment through activity_by_segment_file, which SQLite would
  // not pick over the key by itself; without, or when the glob matches many
  // files, each segment's rows along activity's key (sql/0010).
  c.located = filters.by_file() && !filters.broad_path
                  ? "window_segments w CROSS JOIN activity a INDEXED BY activity_by_segment_file"
                    " ON a.segment_id = w.segment_id"
                  : "window_segments w CROSS JOIN activity a ON a.segment_id = w.segment_id";
  return c;
}

const std::string event_columns =
    "e.id, coalesce(e.ts, e.id), e.process_id, e.tid, e.op, e.file_id, e.offset, e.size, coalesce(e.count, 1), "
    "CASE WHEN e.count > 1 THEN coalesce(e.end_offset, e.offset + e.size) END, e.status";
const std::string event_names = "(id, time, process_id, tid, op, file_id, offset, size, count, end_offset, status)";

// One of the event CTEs, with the comma that ends it: NAME(the event
// columns) AS (SELECT them FROM_AND_WHERE), once for each slot table, which
// from_and_where names {events} (its number {slot}).
std::string event_cte(const std::string& name, const std::string& from_and_where) {
  return name + event_names + " AS (\n" + for_each_slot("  SELECT " + event_columns + "\n" + from_and_where) + "),\n";
}

// bounds and window_segments: the window, and the segments it touches.
std::string window_ctes() {
  return "bounds(lo, hi) AS (SELECT coalesce(:since, -9223372036854775807), coalesce(:until, 9223372036854775807)),\n"
         // inside: a kept segment wholly in the window, whose activity rows count
         // its events; pruned: a segment whose events are gone, and whose activity
         // rows count, like hour_totals, for every hour the window touches.
         "window_segments(segment_id, hour, first_id, last_id, min_time, max_time, events, inside, pruned, whole, "
         "slot) AS (\n"
         "  SELECT s.segment_id, s.hour, s.first_id, s.last_id, s.min_time, s.max_time, s.events,\n"
         "         s.pruned IS NULL AND s.min_time >= b.lo AND s.max_time <= b.hi, s.pruned IS NOT NULL,\n"
         "         s.pruned IS NOT NULL OR (s.min_time >= b.lo AND s.max_time <= b.hi), s.slot\n"
         "  FROM segments s, bounds b\n"
         "  WHERE s.max_time >= b.lo AND s.min_time <= b.hi AND s.pruned IS NULL\n"
         "     OR s.pruned IS NOT NULL AND s.hour BETWEEN coalesce(:first_hour, -9223372036854775807)"
         " AND coalesce(:last_hour, 9223372036854775807)),\n";
}

// windowed_events, newest_events and oldest_events with a process, path or
// --failed pick: through the id ranges of the matching activity rows,
// overlapping ones merged, so that each event is read at most once however
// many rows point at it.
std::string located_event_ctes(const QueryFilters& filters, const FilterConditions& c) {
  // (A segment's events are in one slot: so are those of an activity row,
  // and of overlapping ones.)
  return "located_rows(first_id, last_id, min_time, max_time, slot, events) AS (\n"
         "  SELECT a.first_id, a.last_id, w.min_time, w.max_time, w.slot,\n"
         "         CASE WHEN w.inside THEN " +
         activity_rows(filters, "a.") +
         " ELSE 0 END\n"
         "  FROM " +
         c.located + " WHERE NOT w.pruned" + c.on_activity +
         "),\n"
         "located_ranges(first_id, last_id, slot, island) AS (\n"
         "  SELECT first_id, last_id, slot, sum(starts) OVER (ORDER BY first_id ROWS UNBOUNDED PRECEDING) FROM (\n"
         "    SELECT first_id, last_id, slot,\n"
         "           coalesce(first_id > max(last_id) OVER (ORDER BY first_id ROWS BETWEEN UNBOUNDED PRECEDING"
         " AND 1 PRECEDING), 1) AS starts\n"
         "    FROM located_rows)),\n"
         "event_ranges(first_id, last_id, slot) AS (\n"
         "  SELECT min(first_id), max(last_id), min(slot) FROM located_ranges GROUP BY island),\n" +
         event_cte("windowed_events",
                   "  FROM event_ranges r CROSS JOIN {events} e ON e.id BETWEEN r.first_id AND r.last_id, bounds b\n"
                   "  WHERE r.slot = {slot}" +
                       c.on_events) +
         // The newest-first listings need only the last few ranges: counting the
         // located rows of segments wholly inside the window from the newest,
         // the first that reach :limit events hold that many matching events,
         // so the newest :limit all lie at or above the lowest id among them.
         "newest_bound(id) AS (\n"
         "  SELECT CASE WHEN (SELECT sum(events) FROM located_rows) >= coalesce(:limit, 50) THEN min(first_id)\n"
         "              ELSE -9223372036854775807 END\n"
         "  FROM (SELECT first_id, sum(events) OVER (ORDER BY last_id DESC ROWS UNBOUNDED PRECEDING) - events AS "
         "newer\n"
         "        FROM located_rows WHERE events > 0)\n"
         "  WHERE newer < coalesce(:limit, 50)),\n" +
         event_cte("newest_events",
                   "  FROM newest_bound n CROSS JOIN event_ranges r CROSS JOIN {events} e\n"
                   "       ON e.id BETWEEN max(r.first_id, n.id) AND r.last_id, bounds b\n"
                   "  WHERE r.slot = {slot} AND r.last_id >= n.id" +
                       c.on_events) +
         // And the oldest-first ones only the first: the located rows taken by
         // the latest time of their segment, as many as reach :limit events, end
         // by a time before which the first :limit events all lie, and only rows
         // of segments starting before it can hold them.
         "oldest_bound(time, last_id) AS (\n"
         "  SELECT u.time, (SELECT max(last_id) FROM located_rows WHERE min_time <= u.time) FROM (\n"
         "    SELECT coalesce(min(max_time), 9223372036854775807) AS time FROM (\n"
         "      SELECT max_time, sum(events) OVER (ORDER BY max_time ROWS UNBOUNDED PRECEDING) AS up_to\n"
         "      FROM located_rows WHERE events > 0)\n"
         "    WHERE up_to >= coalesce(:limit, 1000)) AS u),\n" +
         event_cte("oldest_events",
                   "  FROM oldest_bound o CROSS JOIN event_ranges r CROSS JOIN {events} e\n"
                   "       ON e.id BETWEEN r.first_id AND min(r.last_id, o.last_id), bounds b\n"
                   "  WHERE r.slot = {slot} AND r.first_id <= o.last_id AND coalesce(e.ts, e.id) <= o.time" +
                       c.on_events);
}

// The same without a pick: the window's events in id order (the rows pruned
// segments leave in a slot lie below every kept segment's: sql/0009).
std::string scanned_event_ctes(const QueryFilters& filters, const FilterConditions& c) {
  return event_cte("windowed_events",
                   "  FROM {events} e, bounds b\n"
                   "  WHERE e.id BETWEEN (SELECT min(first_id) FROM window_segments WHERE NOT pruned) AND (SELECT "
                   "max(last_id) FROM window_segments WHERE NOT pruned)" +
                       c.on_events) +
         "newest_events AS (SELECT * FROM windowed_events),\n"
         // The oldest-first listings without a pick need only the first
         // segments: those wholly inside the window, taken by their latest
         // time, that reach :limit events end by a time before which at least
         // that many events lie; no event after it can be among the first
         // :limit, and only segments starting before it hold the rest.
         // (Segments count every operation: with --op there is no such bound.)
         + (filters.ops.empty() && !filters.failed_only
                ? "oldest_bound(time) AS (\n"
                  "  SELECT coalesce(min(max_time), 9223372036854775807) FROM (\n"
                  "    SELECT max_time, sum(events) OVER (ORDER BY max_time ROWS UNBOUNDED PRECEDING) AS up_to\n"
                  "    FROM window_segments WHERE inside)\n"
                  "  WHERE up_to >= coalesce(:limit, 1000)),\n"
                : "oldest_bound(time) AS (SELECT 9223372036854775807),\n") +
         event_cte("oldest_events",
                   "  FROM {events} e, bounds b, oldest_bound o\n"
                   "  WHERE e.id BETWEEN (SELECT min(first_id) FROM window_segments WHERE NOT pruned)"
                   " AND (SELECT max(last_id) FROM window_segments, oldest_bound o WHERE NOT pruned AND min_time <= "
                   "o.time)\n"
                   "    AND coalesce(e.ts, e.id) <= o.time" +
                       c.on_events);
}

// windowed_activity (per segment or hour, process and file) and windowed_minutes.
// Inside the window the activity rows count (and those of pruned segments in
// the hours it touches); at its edges (at most the two segments it cuts
// through) each matching event is a row of its own, which is cheaper than
// grouping them, and the same once a report adds them up.
std::string activity_ctes(const QueryFilters& filters, const FilterConditions& c) {
  return "windowed_activity AS (\n"
         "  SELECT a.segment_id, w.hour, a.process_id, a.file_id, " +
         activity_select_list(filters, "a.") +
         "\n"
         "  FROM " +
         c.located +
         "\n"
         "  WHERE w.whole" +
         c.on_activity +
         "\n"
         "  UNION ALL\n" +
         for_each_slot("  SELECT w.segment_id, w.hour, e.process_id, e.file_id, " + counted_select_list(filters) +
                       "\n"
                       "  FROM window_segments w CROSS JOIN {events} e ON e.id BETWEEN w.first_id AND w.last_id, "
                       "bounds b\n"
                       "  WHERE NOT w.whole AND w.slot = {slot}" +
                       c.on_events) +
         "\n"
         // Events pruned from busy hours live on as hourly totals: every hour the
         // window touches (those of pruned segments alone in their hour, above).
         "  UNION ALL\n"
         "  SELECT NULL, h.hour, h.process_id, h.file_id, " +
         activity_select_list(filters, "h.") +
         "\n"
         "  FROM hour_totals h\n"
         "  WHERE h.hour BETWEEN coalesce(:first_hour, -9223372036854775807) AND coalesce(:last_hour, "
         "9223372036854775807)" +
         c.on_totals + "),\n" + windowed_minutes(filters) + ",\n";
}

// windowed_op_totals and windowed_ops: per operation, and per hour and operation.
std::string operation_ctes(const QueryFilters& filters) {
  std::string sql;
  // Per operation: without a process or path the minute totals hold them
  // (a few thousand rows a day); with one, the matching activity rows.
  if ((filters.by_process() || filters.by_file()) && !filters.failed_only)
    sql += "windowed_op_totals(op, events, bytes) AS (\n" + unpivoted_operations("") +
           "),\n"
           "windowed_ops(hour, op, events, bytes) AS (\n" +
           unpivoted_operations("hour") + ")";
  else
    sql +=
        "windowed_op_totals(op, events, bytes) AS (\n"
        "  SELECT op, sum(events), sum(bytes) FROM windowed_minutes GROUP BY op),\n"
        "windowed_ops(hour, op, events, bytes) AS (\n"
        "  SELECT minute / 3600000000000 - (minute < 0 AND minute % 3600000000000 <> 0), op, sum(events), sum(bytes)\n"
        "  FROM windowed_minutes GROUP BY 1, 2)";
  return sql;
}

}  // namespace

namespace {

// windowed_rows(rows, exact): how many event rows windowed_events holds,
// without reading them: the rows of the kept segments wholly inside the
// window from segments.events, or from the activity rows that pass the
// filters, and the matching events of the (at most two) segments at its
// edges counted one by one. With --op or --failed an activity row's rows of
// those operations are known only as a lower bound (activity_rows): exact 0.
std::string rows_cte(const QueryFilters& filters, const FilterConditions& c, bool picked) {
  std::string inside;
  if (picked)
    inside = "SELECT coalesce(sum(events), 0) FROM located_rows";
  else if (filters.ops.empty())
    inside = "SELECT coalesce(sum(events), 0) FROM window_segments WHERE inside";
  else
    inside = "SELECT coalesce(sum(" + activity_rows(filters, "a.") +
             "), 0) FROM window_segments w CROSS JOIN activity a ON a.segment_id = w.segment_id WHERE w.inside";
  const bool exact = filters.ops.empty() && !filters.failed_only;
  return "windowed_rows(rows, exact) AS (\n"
         "  SELECT (" +
         inside +
         ")\n"
         "       + (SELECT coalesce(sum(n), 0) FROM (\n" +
         for_each_slot(
             "    SELECT count(*) AS n FROM window_segments w CROSS JOIN {events} e"
             " ON e.id BETWEEN w.first_id AND w.last_id, bounds b\n"
             "    WHERE NOT w.whole AND w.slot = {slot}" +
                 c.on_events,
             "\n    UNION ALL\n") +
         ")), " + (exact ? "1" : "0") + "),\n";
}

// v_events as the view shows it (sql/0013), but of windowed_events: with a
// filter, `--sql "SELECT ... FROM v_events"` reads only what it picks. The
// same columns in the same order (a test compares them with the view's).
const char* const filtered_view_cte =
    ",\nv_events(time, pid, process, user, op, path, offset, size, count, end_offset, status, tid, time_ns, event_id, "
    "process_id, parent_pid, command_line, renamed_from, renamed_to) AS (\n"
    "  SELECT strftime('%Y-%m-%dT%H:%M:%S', e.time / 1000000000, 'unixepoch')\n"
    "           || printf('.%07dZ', (e.time % 1000000000) / 100),\n"
    "         p.pid, p.image, p.user, (SELECT o.name FROM ops o WHERE o.op = e.op), f.name, e.offset, e.size,\n"
    "         e.count, e.end_offset, CASE WHEN e.status IS NOT NULL THEN printf('0x%08X', e.status) END,\n"
    "         e.tid, e.time, e.id, p.process_id, p.parent_pid, p.command_line,\n"
    "         (SELECT n.name FROM renames r JOIN v_files n ON n.file_id = r.from_file_id WHERE r.event_id = e.id),\n"
    "         (SELECT n.name FROM renames r JOIN v_files n ON n.file_id = r.to_file_id WHERE r.event_id = e.id)\n"
    "  FROM windowed_events e JOIN processes p ON p.process_id = e.process_id"
    " JOIN v_files f ON f.file_id = e.file_id)";

}  // namespace

std::string filter_ctes(const QueryFilters& filters) {
  const FilterConditions c = filter_conditions(filters);
  const bool picked = filters.by_process() || filters.by_file() || filters.failed_only;
  return window_ctes() + (picked ? located_event_ctes(filters, c) : scanned_event_ctes(filters, c)) +
         rows_cte(filters, c, picked) + activity_ctes(filters, c) + operation_ctes(filters) +
         (filters.any() ? filtered_view_cte : "");
}

namespace {
// The first ns of a minute, held to the 64-bit range: the minutes at its ends
// start before or end after it (--since 2262-04-11T23:47:16Z).
std::int64_t minute_start(std::int64_t minute) {
  if (minute > INT64_MAX / ns_per_minute) return INT64_MAX;
  if (minute < INT64_MIN / ns_per_minute) return INT64_MIN;
  return minute * ns_per_minute;
}
}  // namespace

void add_filter_params(const QueryFilters& filters, Params& params) {
  if (filters.since) params["since"] = std::to_string(*filters.since);
  if (filters.until) params["until"] = std::to_string(*filters.until);
  // The minutes wholly inside the window (windowed_minutes): from the first
  // that starts at or after since to the last that ends at or before until.
  if (filters.since) {
    const std::int64_t first = ceil_div(*filters.since, ns_per_minute);
    params["first_minute"] = std::to_string(first);
    params["whole_minutes_from"] = std::to_string(minute_start(first));
  }
  if (filters.until) {
    const std::int64_t end = *filters.until == INT64_MAX ? INT64_MAX : *filters.until + 1;  // exclusive
    const std::int64_t last = floor_div(end, ns_per_minute) - 1;
    params["last_minute"] = std::to_string(last);
    params["whole_minutes_to"] = std::to_string(minute_start(last + 1));
  }
  if (filters.since) params["first_hour"] = std::to_string(floor_div(*filters.since, ns_per_hour));
  if (filters.until) params["last_hour"] = std::to_string(floor_div(*filters.until, ns_per_hour));
  if (filters.process) params["process"] = *filters.process;
  if (filters.user) params["user"] = *filters.user;
  if (filters.path) params["path"] = *filters.path;
  for (std::size_t i = 0; i < filters.exclude_paths.size(); ++i)
    params["exclude_path_" + std::to_string(i)] = filters.exclude_paths[i];
  if (filters.process_id) params["process_id"] = std::to_string(*filters.process_id);
  if (filters.file_id) params["file_id"] = std::to_string(*filters.file_id);
  if (filters.failed_only) params["failed_only"] = "1";
}

namespace {
// How many files the path glob matches, counting no further than most.
std::int64_t matching_files(SQLite::Database& db, const std::string& glob, std::int64_t most) {
  SQLite::Statement count(db,
                          "SELECT count(*) FROM (SELECT 1 FROM files WHERE path_match(?, coalesce(path, nt_path)) "
                          "LIMIT ?)");
  count.bind(1, glob);
  count.bind(2, most);
  return count.executeStep() ? count.getColumn(0).getInt64() : 0;
}
}  // namespace

void judge_path_breadth(SQLite::Database& db, QueryFilters& filters) {
  filters.broad_path = !filters.path && !filters.file_id && !filters.exclude_paths.empty();
  if (filters.path) filters.broad_path = matching_files(db, *filters.path, broad_path_files + 1) > broad_path_files;
}

void judge_sizes(SQLite::Database& db, QueryFilters& filters) {
  SQLite::Statement any(db, "SELECT EXISTS (SELECT 1 FROM minute_totals WHERE unsized > 0 AND minute BETWEEN ? AND ?)");
  any.bind(1, filters.since ? floor_div(*filters.since, ns_per_minute) : INT64_MIN);
  any.bind(2, filters.until ? floor_div(*filters.until, ns_per_minute) : INT64_MAX);
  filters.unsized = any.executeStep() && any.getColumn(0).getInt() != 0;
}

std::string below_folder(const std::string& folder) {
  const char separator = is_windows_path(folder) ? '\\' : '/';
  if (!folder.empty() && (folder.back() == separator || folder.back() == '/')) return folder + "*";
  return folder + separator + "*";
}

std::string path_argument(const std::string& value) {
  if (value.size() > 1 && (value.back() == '/' || (value.back() == '\\' && is_windows_path(value))))
    return below_folder(value);
  return value;
}

std::int64_t files_below_folder(SQLite::Database& db, const std::string& glob, std::int64_t limit) {
  if (glob.find_first_of("*?[") != std::string::npos) return 0;
  if (glob.find_first_of("/\\") == std::string::npos) return 0;  // a file name, matched anywhere
  if (matching_files(db, glob, 2) > 1) return 0;
  return matching_files(db, below_folder(glob), limit);
}

void prepare_read_connection(SQLite::Database& db) {
  register_sql_functions(db);
  // The reports say how to find events; an index built on the fly over
  // millions of events is never the better plan.
  db.exec("PRAGMA automatic_index = OFF");
  install_read_only_guard(db);
}

}  // namespace etwaudit
