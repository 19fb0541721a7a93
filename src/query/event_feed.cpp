#include "query/event_feed.h"

#include <algorithm>

#include "store/event_slots.h"

namespace etwaudit {
namespace {

std::optional<std::int64_t> optional_integer(const SQLite::Column& column) {
  if (column.isNull()) return std::nullopt;
  return column.getInt64();
}

// The columns read_rows reads, in its order.
constexpr const char* row_columns =
    "SELECT id, coalesce(ts, id), process_id, tid, op, file_id, offset, size, coalesce(count, 1), "
    "CASE WHEN count > 1 THEN coalesce(end_offset, offset + size) END, status";

std::optional<std::string> optional_text(const SQLite::Column& column) {
  if (column.isNull()) return std::nullopt;
  return column.getString();
}

}  // namespace

EventFeed::EventFeed(SQLite::Database& db)
    : m_db(db),
      m_segments(
          db,
          "SELECT s.first_id, s.last_id, s.slot, k.kept_from FROM segments s JOIN event_slots k ON k.slot = s.slot "
          "WHERE s.pruned IS NULL AND s.last_id > ?1 ORDER BY s.first_id"),
      m_events(event_slot_count),
      // Per segment (its activity rows overlap), its slot and the id range
      // holding the events of file ?1 or process ?2 in (?3, ?4].
      m_ranges(db,
               "SELECT s.slot, max(min(a.first_id), ?3 + 1, k.kept_from), min(max(a.last_id), ?4) FROM activity a "
               "JOIN segments s ON s.segment_id = a.segment_id JOIN event_slots k ON k.slot = s.slot "
               "WHERE s.pruned IS NULL AND (a.file_id = ?1 OR a.process_id = ?2) AND a.last_id > ?3 "
               "AND a.first_id <= ?4 GROUP BY s.segment_id ORDER BY 2"),
      m_events_of(event_slot_count),
      m_process(db,
                "SELECT pid, start_time, image, user, parent_pid, command_line FROM processes WHERE process_id = ?"),
      m_file(db, "SELECT name FROM v_files WHERE file_id = ?"),
      m_rename(db,
               "SELECT f.name, t.name FROM renames r JOIN v_files f ON f.file_id = r.from_file_id "
               "JOIN v_files t ON t.file_id = r.to_file_id WHERE r.event_id = ?") {
  SQLite::Statement ops(db, "SELECT op, name FROM ops ORDER BY op");
  while (ops.executeStep()) {
    const auto op = static_cast<std::size_t>(ops.getColumn(0).getInt());
    if (op >= m_ops.size()) m_ops.resize(op + 1);
    m_ops[op] = ops.getColumn(1).getString();
  }
}

std::vector<FeedEvent> EventFeed::next(std::int64_t after, std::size_t max) {
  m_processes.clear();
  m_files.clear();
  std::vector<FeedEvent> events;
  m_segments.reset();
  m_segments.bind(1, after);
  while (events.size() < max && m_segments.executeStep()) {
    const std::int64_t first = m_segments.getColumn(0).getInt64(), last = m_segments.getColumn(1).getInt64();
    const int slot = m_segments.getColumn(2).getInt();
    const std::int64_t kept_from = m_segments.getColumn(3).getInt64();
    if (slot < 0 || slot >= event_slot_count) continue;
    auto& statement = m_events[static_cast<std::size_t>(slot)];
    if (!statement)
      statement.emplace(m_db, std::string(row_columns) + " FROM " + event_table(slot) +
                                  " WHERE id BETWEEN ?1 AND ?2 ORDER BY id LIMIT ?3");
    statement->reset();
    statement->bind(1, std::max({first, after + 1, kept_from}));
    statement->bind(2, last);
    statement->bind(3, static_cast<std::int64_t>(max - events.size()));
    read_rows(*statement, events);
  }
  m_segments.reset();
  return events;
}

std::vector<FeedEvent> EventFeed::of(std::int64_t file_id, std::int64_t process_id, std::int64_t after,
                                     std::int64_t through, std::size_t max) {
  m_processes.clear();
  m_files.clear();
  std::vector<FeedEvent> events;
  m_ranges.reset();
  m_ranges.bind(1, file_id);
  m_ranges.bind(2, process_id);
  m_ranges.bind(3, after);
  m_ranges.bind(4, through);
  while (events.size() < max && m_ranges.executeStep()) {
    const int slot = m_ranges.getColumn(0).getInt();
    if (slot < 0 || slot >= event_slot_count) continue;
    auto& statement = m_events_of[static_cast<std::size_t>(slot)];
    if (!statement)
      statement.emplace(m_db, std::string(row_columns) + " FROM " + event_table(slot) +
                                  " WHERE id BETWEEN ?1 AND ?2 AND (file_id = ?4 OR process_id = ?5) ORDER BY id "
                                  "LIMIT ?3");
    statement->reset();
    statement->bind(1, m_ranges.getColumn(1).getInt64());
    statement->bind(2, m_ranges.getColumn(2).getInt64());
    statement->bind(3, static_cast<std::int64_t>(max - events.size()));
    statement->bind(4, file_id);
    statement->bind(5, process_id);
    read_rows(*statement, events);
  }
  m_ranges.reset();
  return events;
}

void EventFeed::read_rows(SQLite::Statement& statement, std::vector<FeedEvent>& events) {
  while (statement.executeStep()) {
    FeedEvent event;
    event.event_id = statement.getColumn(0).getInt64();
    event.time_ns = statement.getColumn(1).getInt64();
    event.process_id = statement.getColumn(2).getInt64();
    event.tid = optional_integer(statement.getColumn(3));
    const auto op = static_cast<std::size_t>(statement.getColumn(4).getInt());
    event.op = op < m_ops.size() ? m_ops[op] : std::to_string(op);
    event.path = file_name(statement.getColumn(5).getInt64());
    event.offset = optional_integer(statement.getColumn(6));
    event.size = optional_integer(statement.getColumn(7));
    event.count = statement.getColumn(8).getInt64();
    event.end_offset = optional_integer(statement.getColumn(9));
    event.status = optional_integer(statement.getColumn(10));
    if (event.op == "rename") {
      m_rename.reset();
      m_rename.bind(1, event.event_id);
      if (m_rename.executeStep()) {
        event.renamed_from = m_rename.getColumn(0).getString();
        event.renamed_to = m_rename.getColumn(1).getString();
      }
    }
    events.push_back(std::move(event));
  }
}

const FeedProcess& EventFeed::process(std::int64_t process_id) {
  auto [found, added] = m_processes.try_emplace(process_id);
  if (!added) return found->second;
  m_process.reset();
  m_process.bind(1, process_id);
  if (m_process.executeStep()) {
    FeedProcess& process = found->second;
    process.pid = m_process.getColumn(0).getInt64();
    process.start_time = optional_integer(m_process.getColumn(1));
    process.image = m_process.getColumn(2).getString();
    process.user = optional_text(m_process.getColumn(3));
    process.parent_pid = optional_integer(m_process.getColumn(4));
    process.command_line = optional_text(m_process.getColumn(5));
  }
  m_process.reset();
  return found->second;
}

const std::string& EventFeed::file_name(std::int64_t file_id) {
  auto [found, added] = m_files.try_emplace(file_id);
  if (!added) return found->second;
  m_file.reset();
  m_file.bind(1, file_id);
  if (m_file.executeStep()) found->second = m_file.getColumn(0).getString();
  m_file.reset();
  return found->second;
}

}  // namespace etwaudit
