#include "store/event_writer.h"

#include <SQLiteCpp/Transaction.h>

#include <algorithm>
#include <filesystem>
#include <tuple>
#include <utility>

#include "core/ascii.h"
#include "core/time_format.h"
#include "core/utf8_path.h"
#include "platform/platform.h"
#include "store/activity_columns.h"

namespace etwaudit {
namespace {

void bind_optional(SQLite::Statement& statement, int index, std::int64_t value, bool present) {
  if (present)
    statement.bind(index, static_cast<std::int64_t>(value));
  else
    statement.bind(index);
}

// The activity table's counting columns after its key, and how a row that
// meets an existing one adds to it.
struct ActivitySql {
  const OperationColumnsSql ops = operation_columns_sql();
  const std::string counts = "events, failed, rows, first_id, last_id, unsized" + ops.names;
  // rows is NULL while it equals events (see sql/0003_retention.sql).
  const std::string updates =
      "events = events + excluded.events, failed = failed + excluded.failed, "
      "rows = nullif(coalesce(rows, events) + coalesce(excluded.rows, excluded.events), events + excluded.events), "
      "first_id = min(first_id, excluded.first_id), last_id = max(last_id, excluded.last_id), "
      "unsized = unsized + excluded.unsized" +
      ops.sums;
  const int count_columns = 6 + ops.count;
};

// INSERT ... ON CONFLICT DO UPDATE adding every counter; parameters in the
// order segment, process, file, events, failed, rows, first_id, last_id,
// unsized, then per op its count and, where it has one, its bytes.
std::string activity_upsert_sql() {
  const ActivitySql sql;
  std::string values = "?, ?, ?";
  for (int i = 0; i < sql.count_columns; ++i) values += ", ?";
  return "INSERT INTO activity (segment_id, process_id, file_id, " + sql.counts + ") VALUES (" + values +
         ") ON CONFLICT (segment_id, process_id, file_id) DO UPDATE SET " + sql.updates;
}

// Adds the activity rows of file ?2 in the segments after ?3 to those of
// file ?1, looking it up in each segment (sql/0010).
std::string activity_merge_sql() {
  const ActivitySql sql;
  return "INSERT INTO activity (segment_id, process_id, file_id, " + sql.counts +
         ") SELECT a.segment_id, a.process_id, ?1, a.events, a.failed, a.rows, a.first_id, a.last_id, a.unsized" +
         operation_columns_sql("a.").names +
         " FROM segments s CROSS JOIN activity a INDEXED BY activity_by_segment_file ON a.segment_id = s.segment_id "
         "AND a.file_id = ?2 WHERE s.segment_id > ?3 ON CONFLICT (segment_id, process_id, file_id) DO UPDATE SET " +
         sql.updates;
}

// The same for the hourly totals of file ?2 from hour ?3 on (hour_totals has
// no index by file: sql/0010).
std::string hour_totals_merge_sql() {
  const OperationColumnsSql ops = operation_columns_sql();
  const std::string counts = "events, failed, unsized" + ops.names;
  return "INSERT INTO hour_totals (hour, process_id, file_id, " + counts + ") SELECT hour, process_id, ?1, " + counts +
         " FROM hour_totals WHERE hour >= ?3 AND file_id = ?2 ON CONFLICT (hour, process_id, file_id) DO UPDATE SET "
         "events = events + excluded.events, failed = failed + excluded.failed, unsized = unsized + excluded.unsized" +
         ops.sums;
}

// INSERT of `rows` events in one statement: one statement execution per row
// would spend more time starting and finishing the statement than inserting.
constexpr int event_columns = 11;
std::string event_insert_sql(int slot, int rows) {
  std::string sql = "INSERT INTO " + event_table(slot) +
                    " (id, ts, process_id, tid, op, file_id, offset, size, count, end_offset, status) VALUES ";
  for (int i = 0; i < rows; ++i) sql += i ? ", (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" : "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
  return sql;
}

// The INSERT of `rows` events into each slot table.
std::vector<BulkStatement> event_inserts(SQLite::Database& db, int rows) {
  std::vector<BulkStatement> inserts;
  for (int slot = 0; slot < event_slot_count; ++slot) inserts.emplace_back(db, event_insert_sql(slot, rows));
  return inserts;
}

void bind_text_or_null(SQLite::Statement& statement, int index, const std::string& text) {
  if (text.empty())
    statement.bind(index);
  else
    statement.bind(index, text);
}

}  // namespace

SelfExclusion SelfExclusion::for_database(const std::string& database_path, std::uint32_t pid) {
  SelfExclusion self;
  self.pid = pid;
  std::error_code error;
  std::string absolute = utf8_name(std::filesystem::weakly_canonical(utf8_path(database_path), error));
  if (error) absolute = database_path;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) self.paths.push_back(absolute + suffix);
  self.ignore_case = file_names_ignore_case;
  return self;
}

bool SelfExclusion::excludes_path(const std::string& path) const {
  for (const auto& own : paths) {
    if (ignore_case ? equal_ignoring_ascii_case(own, path) : own == path) return true;
  }
  return false;
}

void EventWriter::set_filter(RecordFilter filter) {
  m_filter = std::move(filter);
  m_selected_ops = m_filter.selected_ops();
}

std::size_t EventWriter::ActivityKeyHash::operator()(const ActivityKey& key) const noexcept {
  std::uint64_t h = static_cast<std::uint64_t>(key.segment_id) * 0x9E3779B97F4A7C15ull;
  h ^= static_cast<std::uint64_t>(key.process_id) + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
  h ^= static_cast<std::uint64_t>(key.file_id) * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
  return static_cast<std::size_t>(h);
}

EventWriter::EventWriter(SQLite::Database& db, Catalog& catalog, SelfExclusion self, const DeviceMap* device_map)
    : m_db(db),
      m_catalog(catalog),
      m_self(std::move(self)),
      m_selected_ops(m_filter.selected_ops()),
      m_device_map(device_map),
      m_insert_event(event_inserts(db, 1)),
      m_insert_events(event_inserts(db, rows_per_insert)),
      m_upsert_activity(db, activity_upsert_sql()),
      m_upsert_segment(
          db,
          "INSERT OR REPLACE INTO segments (segment_id, hour, first_id, last_id, min_time, max_time, events, slot) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
      m_upsert_minute(db,
                      "INSERT INTO minute_totals (minute, op, events, bytes, unsized) VALUES (?, ?, ?, ?, ?) "
                      "ON CONFLICT (minute, op) DO UPDATE SET events = events + excluded.events, "
                      "bytes = bytes + excluded.bytes, unsized = unsized + excluded.unsized"),
      m_find_file(db, "SELECT file_id FROM files WHERE path = ? ORDER BY file_id LIMIT 1"),
      m_find_unnamed_file(db,
                          "SELECT file_id FROM files WHERE path IS NULL AND nt_path IS NULL AND file_key IS NULL "
                          "ORDER BY file_id LIMIT 1"),
      m_insert_file(db, "INSERT INTO files (path, nt_path, file_key, name_source) VALUES (?, ?, ?, ?)"),
      m_name_file(db, "UPDATE files SET path = ?, nt_path = ?, name_source = 'backfill' WHERE file_id = ?"),
      m_insert_rename(db, "INSERT INTO renames (event_id, from_file_id, to_file_id) VALUES (?, ?, ?)"),
      // Nothing of a kept segment is in it, nor anything pruned (sql/0009).
      m_slot_is_empty(db,
                      "SELECT pruned_rows = 0 AND NOT EXISTS (SELECT 1 FROM segments WHERE slot = ?1 AND pruned IS "
                      "NULL) FROM event_slots WHERE slot = ?1"),
      m_file_slots(db,
                   "SELECT DISTINCT s.slot FROM segments s CROSS JOIN activity a INDEXED BY activity_by_segment_file "
                   "ON a.segment_id = s.segment_id AND a.file_id = ?1 WHERE s.segment_id > ?2 AND s.pruned IS NULL"),
      m_merge_file_activity(db, activity_merge_sql()),
      m_merge_file_totals(db, hour_totals_merge_sql()),
      m_browsing(db),
      m_find_process(db,
                     "SELECT process_id FROM processes WHERE pid = ? AND start_time IS ? AND image IS ? "
                     "ORDER BY process_id LIMIT 1"),
      m_insert_process(db,
                       "INSERT INTO processes (pid, start_time, image, command_line, parent_pid, user, uid) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?)"),
      m_name_process(db, "UPDATE processes SET command_line = ? WHERE process_id = ? AND command_line IS NULL"),
      m_log_name_change(db,
                        "INSERT INTO name_changes (file_id, process_id) SELECT ?1, ?2 WHERE EXISTS "
                        "(SELECT 1 FROM destinations)"),
      m_update_run(db,
                   "UPDATE collector_runs SET last_commit_at = ?, events_received = ?, events_written = ?, "
                   "events_dropped = ?, events_lost = ?, events_excluded = ?, bad_input = ?, unresolved = ?, "
                   "first_event_at = ?, last_event_at = ?, rundown_names = ?, events_own = ? WHERE run_id = ?") {
  m_last_event_id = db.execAndGet("SELECT coalesce(max(id), 0) FROM (" +
                                  for_each_slot("SELECT max(id) AS id FROM {events}", " UNION ALL ") + ")")
                        .getInt64();
  m_last_segment_id = db.execAndGet("SELECT coalesce(max(segment_id), 0) FROM segments").getInt64();
  // Events go on into the slot of the newest segment.
  m_slot = db.execAndGet("SELECT coalesce((SELECT slot FROM segments ORDER BY segment_id DESC LIMIT 1), 0)").getInt();
  SQLite::Statement rows(db,
                         "SELECT pruned_rows + (SELECT coalesce(sum(events), 0) FROM segments WHERE slot = ?1 AND "
                         "pruned IS NULL) FROM event_slots WHERE slot = ?1");
  rows.bind(1, m_slot);
  m_slot_rows = rows.executeStep() ? rows.getColumn(0).getInt64() : 0;
}

void EventWriter::begin_run(const std::string& source, const std::string& host, std::uint32_t collector_pid, bool live,
                            const std::string& input_hash) {
  SQLite::Transaction transaction(m_db, SQLite::TransactionBehavior::IMMEDIATE);
  // Runs that never recorded their end died (we hold the only writer lock).
  m_db.exec(
      "UPDATE collector_runs SET stopped_at = coalesce(last_commit_at, started_at), "
      "exit_reason = 'interrupted (the collector stopped without closing its run)' "
      "WHERE stopped_at IS NULL");
  SQLite::Statement insert(m_db,
                           "INSERT INTO collector_runs (source, host, pid, version, started_at, live, input_hash) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?)");
  insert.bind(1, source);
  bind_text_or_null(insert, 2, host);
  bind_optional(insert, 3, collector_pid, collector_pid != 0);
  insert.bind(4, ETWAUDIT_VERSION);
  insert.bind(5, static_cast<std::int64_t>(now_ns()));
  insert.bind(6, live ? 1 : 0);
  bind_text_or_null(insert, 7, input_hash);
  insert.exec();
  m_run_id = m_db.getLastInsertRowid();
  m_run_first_segment_id = m_last_segment_id;
  m_browsing.catch_up();  // what a writer that died had not folded
  transaction.commit();
}

void EventWriter::set_run_clock(const std::string& clock) {
  SQLite::Statement update(m_db, "UPDATE collector_runs SET clock = ? WHERE run_id = ?");
  update.bind(1, clock);
  update.bind(2, m_run_id);
  update.exec();
}

std::pair<std::string, std::string> EventWriter::file_columns(const std::string& name) const {
  const bool nt = name.rfind("\\Device\\", 0) == 0 || name.rfind("\\??\\", 0) == 0;
  if (!nt) return {name, std::string()};
  if (m_device_map)
    if (auto dos = m_device_map->to_dos_path(name)) return {*dos, name};
  return {name, name};
}

std::int64_t EventWriter::lookup_or_insert_file(const std::string& name, std::uint64_t file_key) {
  std::string path, nt_path;
  if (!name.empty()) {
    std::tie(path, nt_path) = file_columns(name);
    m_find_file.reset();
    m_find_file.bind(1, path);
    if (m_find_file.executeStep()) return m_find_file.getColumn(0).getInt64();
  } else if (file_key == 0) {
    m_find_unnamed_file.reset();
    if (m_find_unnamed_file.executeStep()) return m_find_unnamed_file.getColumn(0).getInt64();
  }
  // A file known only by its kernel key gets a row of its own, named later.
  m_insert_file.reset();
  bind_text_or_null(m_insert_file, 1, path);
  bind_text_or_null(m_insert_file, 2, nt_path);
  bind_optional(m_insert_file, 3, static_cast<std::int64_t>(file_key), name.empty() && file_key != 0);
  m_insert_file.bind(4, !name.empty() ? "event" : file_key != 0 ? "unresolved" : "none");
  m_insert_file.exec();
  return m_db.getLastInsertRowid();
}

void EventWriter::apply_learned_command_lines() {
  // Kept until the batch commits: a batch rolled back applies them again.
  for (const std::uint32_t process : m_catalog.take_learned_command_lines()) m_learned.push_back(process);
  for (const std::uint32_t process : m_learned) {
    if (process >= m_process_ids.size() || m_process_ids[process] <= 0) continue;  // written later, with it
    m_name_process.reset();
    m_name_process.bind(1, m_catalog.process(process).command_line);
    m_name_process.bind(2, m_process_ids[process]);
    if (m_name_process.exec() > 0) log_name_change(0, m_process_ids[process]);
  }
}

void EventWriter::apply_resolutions() {
  for (const auto& resolution : m_catalog.take_resolutions()) {
    if (resolution.path_id >= m_file_ids.size() || m_file_ids[resolution.path_id] <= 0) continue;  // not written yet
    const auto [path, nt_path] = file_columns(resolution.name);
    m_file_unresolved[resolution.path_id] = 0;
    // The file may have a row under its name already: its name came with
    // other events, or another key of it was named first. One row per path.
    m_find_file.reset();
    m_find_file.bind(1, path);
    if (m_find_file.executeStep()) {
      const std::int64_t named = m_find_file.getColumn(0).getInt64();
      if (named != m_file_ids[resolution.path_id]) {
        merge_file(m_file_ids[resolution.path_id], named);
        m_file_ids[resolution.path_id] = named;
        log_name_change(named, 0);
        continue;
      }
    }
    m_name_file.reset();
    m_name_file.bind(1, path);
    bind_text_or_null(m_name_file, 2, nt_path);
    m_name_file.bind(3, static_cast<std::int64_t>(m_file_ids[resolution.path_id]));
    m_name_file.exec();
    log_name_change(m_file_ids[resolution.path_id], 0);
  }
}

void EventWriter::log_name_change(std::int64_t file_id, std::int64_t process_id) {
  m_log_name_change.reset();
  if (file_id)
    m_log_name_change.bind(1, file_id);
  else
    m_log_name_change.bind(1);
  if (process_id)
    m_log_name_change.bind(2, process_id);
  else
    m_log_name_change.bind(2);
  m_log_name_change.exec();
}

void EventWriter::merge_file(std::int64_t from, std::int64_t into) {
  // File `from` got its row in this run: its activity is in the run's
  // segments, its events in the id ranges of those rows, in the slots of
  // their segments, and its pruned events added into hour_totals are in the
  // hours from the run's first event on.
  const auto run_segments = static_cast<std::int64_t>(m_run_first_segment_id);
  const std::int64_t first_hour = floor_div(m_first_event_time, ns_per_hour);
  std::vector<int> slots;
  m_file_slots.reset();
  m_file_slots.bind(1, from);
  m_file_slots.bind(2, run_segments);
  while (m_file_slots.executeStep()) slots.push_back(m_file_slots.getColumn(0).getInt());
  std::vector<SQLite::Statement*> statements;
  for (int slot : slots) {
    if (slot < 0 || slot >= event_slot_count) continue;
    auto& move = m_move_file_events[static_cast<std::size_t>(slot)];
    if (!move)
      move.emplace(m_db,
                   "UPDATE " + event_table(slot) +
                       " SET file_id = ?1 WHERE id IN (SELECT e.id FROM segments s CROSS JOIN activity a INDEXED "
                       "BY activity_by_segment_file ON a.segment_id = s.segment_id AND a.file_id = ?2 CROSS JOIN " +
                       event_table(slot) + " e ON e.id BETWEEN a.first_id AND a.last_id WHERE s.segment_id > ?3 " +
                       "AND s.slot = " + std::to_string(slot) + " AND s.pruned IS NULL AND e.file_id = ?2)");
    statements.push_back(&*move);
  }
  statements.push_back(&m_merge_file_activity);
  for (SQLite::Statement* statement : statements) {
    statement->reset();
    statement->bind(1, into);
    statement->bind(2, from);
    statement->bind(3, run_segments);
    statement->exec();
  }
  m_merge_file_totals.reset();
  m_merge_file_totals.bind(1, into);
  m_merge_file_totals.bind(2, from);
  m_merge_file_totals.bind(3, first_hour);
  m_merge_file_totals.exec();
  SQLite::Statement drop_activity(m_db,
                                  "DELETE FROM activity INDEXED BY activity_by_segment_file WHERE segment_id IN "
                                  "(SELECT segment_id FROM segments WHERE segment_id > ?2) AND file_id = ?1");
  drop_activity.bind(1, from);
  drop_activity.bind(2, run_segments);
  drop_activity.exec();
  SQLite::Statement drop_totals(m_db, "DELETE FROM hour_totals WHERE hour >= ?2 AND file_id = ?1");
  drop_totals.bind(1, from);
  drop_totals.bind(2, first_hour);
  drop_totals.exec();
  for (const char* column : {"from_file_id", "to_file_id"}) {
    SQLite::Statement rename(m_db, std::string("UPDATE renames SET ") + column + " = ?1 WHERE " + column + " = ?2");
    rename.bind(1, into);
    rename.bind(2, from);
    rename.exec();
  }
  m_browsing.merge_file(from, into);
  SQLite::Statement drop_file(m_db, "DELETE FROM files WHERE file_id = ?");
  drop_file.bind(1, from);
  drop_file.exec();
}

std::uint64_t EventWriter::run_events(bool named) {
  // From the run's activity rows (its segments come after those that were
  // there when it began), through the few files without a name: a count over
  // the events themselves would read every row of a run of months at its end.
  auto count = [&](const char* sql) {
    SQLite::Statement statement(m_db, sql);
    statement.bind(1, static_cast<std::int64_t>(m_run_first_segment_id));
    return statement.executeStep() ? static_cast<std::uint64_t>(statement.getColumn(0).getInt64()) : 0;
  };
  const std::uint64_t unnamed = count(
      "SELECT coalesce(sum(a.events + a.failed), 0) FROM files f JOIN activity a ON a.file_id = f.file_id "
      "AND a.segment_id > ?1 WHERE f.path IS NULL");
  if (!named) return unnamed;
  return count("SELECT coalesce(sum(events + failed), 0) FROM activity WHERE segment_id > ?1") - unnamed;
}

std::int64_t EventWriter::lookup_or_insert_process(const ProcessInfo& info) {
  // The identity columns, the same for the lookup and the insert.
  auto bind_identity = [&](SQLite::Statement& statement) {
    statement.reset();
    statement.bind(1, static_cast<std::int64_t>(info.pid));
    bind_optional(statement, 2, info.start_time, info.start_time != 0);
    bind_text_or_null(statement, 3, info.image);
  };
  bind_identity(m_find_process);
  if (m_find_process.executeStep()) return m_find_process.getColumn(0).getInt64();
  bind_identity(m_insert_process);
  bind_text_or_null(m_insert_process, 4, info.command_line);
  bind_optional(m_insert_process, 5, info.parent_pid, info.parent_pid != 0);
  bind_optional(m_insert_process, 7, info.uid.value_or(0), info.uid.has_value());
  bind_text_or_null(m_insert_process, 6, info.user);
  m_insert_process.exec();
  return m_db.getLastInsertRowid();
}

std::int64_t EventWriter::file_id(std::uint32_t path) {
  if (path >= m_file_ids.size()) {
    m_file_ids.resize(std::max<std::size_t>(path + 1, m_file_ids.size() * 2), 0);
    m_file_unresolved.resize(m_file_ids.size(), 0);
  }
  std::int64_t& id = m_file_ids[path];
  if (id == 0) {
    std::string name = m_catalog.path(path);
    if (m_self.excludes_path(name)) {
      id = ours;
    } else if (!m_filter.keeps_path(name)) {
      id = filtered_out;
    } else {
      id = lookup_or_insert_file(name, m_catalog.file_key(path));
      m_file_unresolved[path] = name.empty();
    }
  }
  return id < 0 ? 0 : id;
}

std::int64_t EventWriter::process_id(std::uint32_t process) {
  if (process >= m_process_ids.size())
    m_process_ids.resize(std::max<std::size_t>(process + 1, m_process_ids.size() * 2), 0);
  std::int64_t& id = m_process_ids[process];
  if (id == 0) {
    ProcessInfo info = m_catalog.process(process);
    if (m_self.pid != 0 && info.pid == m_self.pid)
      id = ours;
    else if (!m_filter.keeps_process(info))
      id = filtered_out;
    else
      id = lookup_or_insert_process(info);
  }
  return id < 0 ? 0 : id;
}

void EventWriter::add_to_segment(std::int64_t id, std::int64_t time) {
  const std::int64_t hour = floor_div(time, ns_per_hour);
  if (m_segment.id == 0 || m_segment.events >= m_segment_capacity || m_segment.hour != hour) {
    if (m_segment.id != 0) m_touched.push_back(m_segment);
    // A full slot hands over to the next once retention has emptied it (a
    // slot never holds two stretches of time: sql/0009); until then it grows.
    const int next = (m_slot + 1) % event_slot_count;
    if (m_slot_rows >= m_slot_rows_target && slot_is_empty(next)) {
      insert_pending();  // the rows queued for the slot left behind
      m_slot = next;
      m_slot_rows = 0;
    }
    m_segment = Segment{++m_last_segment_id, hour, id, id, time, time, 0, m_slot};
  }
  ++m_slot_rows;
  m_segment.last_id = id;
  m_segment.min_time = std::min(m_segment.min_time, time);
  m_segment.max_time = std::max(m_segment.max_time, time);
  ++m_segment.events;
}

bool EventWriter::slot_is_empty(int slot) {
  m_slot_is_empty.reset();
  m_slot_is_empty.bind(1, slot);
  const bool empty = m_slot_is_empty.executeStep() && m_slot_is_empty.getColumn(0).getInt() != 0;
  m_slot_is_empty.reset();
  return empty;
}

void EventWriter::insert_pending() {
  if (m_pending_count == 0) return;
  const bool full = m_pending_count == rows_per_insert;
  // A short tail goes in row by row; it happens once a batch.
  for (int start = 0; start < m_pending_count; start += full ? rows_per_insert : 1) {
    BulkStatement& insert = (full ? m_insert_events : m_insert_event)[static_cast<std::size_t>(m_slot)];
    const int rows = full ? rows_per_insert : 1;
    for (int row = 0; row < rows; ++row) {
      const EventRow& pending = m_pending[start + row];
      const FileEvent& event = *pending.event;
      const int base = row * event_columns;
      insert.bind(base + 1, pending.id);
      insert.bind(base + 2, event.time, pending.id != event.time);
      insert.bind(base + 3, pending.process_id);
      insert.bind(base + 4, event.tid, event.tid != 0);
      insert.bind(base + 5, static_cast<std::int64_t>(event.op));
      insert.bind(base + 6, pending.file_id);
      insert.bind(base + 7, event.offset, event.offset >= 0);
      insert.bind(base + 8, event.size, event.size >= 0);
      insert.bind(base + 9, event.count, event.count != 1);
      // A sequential run ends at offset + size: only other ends are stored.
      insert.bind(base + 10, event.end_offset,
                  event.end_offset >= 0 &&
                      !(event.offset >= 0 && event.size >= 0 && event.end_offset == event.offset + event.size));
      insert.bind(base + 11, event.status, event.status != 0);
    }
    insert.exec();
  }
  m_pending_count = 0;
}

void EventWriter::write_batch(std::vector<FileEvent>& batch, RunStats& stats) {
  auto by_time = [](const FileEvent& a, const FileEvent& b) { return a.time < b.time; };
  if (!std::is_sorted(batch.begin(), batch.end(), by_time)) std::stable_sort(batch.begin(), batch.end(), by_time);

  const Position before{m_last_event_id,   m_segment, m_last_segment_id, m_first_event_time,
                        m_last_event_time, m_slot,    m_slot_rows};
  m_touched.clear();
  m_activity.clear();
  m_minutes.clear();
  BatchCounts counts;
  const bool fold = !std::exchange(m_postpone_fold, false) && m_browsing.due();
  try {
    SQLite::Transaction transaction(m_db, SQLite::TransactionBehavior::IMMEDIATE);
    apply_resolutions();
    counts = insert_events(batch);
    apply_learned_command_lines();
    write_activity();
    write_totals(fold);
    write_segments();
    write_minutes();
    save_run_counters(stats, counts);
    transaction.commit();
    m_learned.clear();
  } catch (...) {
    forget_batch(before);
    throw;
  }
  m_browsing.committed(fold, m_pairs);
  stats.written += counts.written;
  stats.excluded += counts.excluded;
  stats.own += counts.own;
  stats.unresolved += counts.unresolved;
  stats.batches += 1;
}

EventWriter::BatchCounts EventWriter::insert_events(const std::vector<FileEvent>& batch) {
  // Names and processes first: their inserts are rare, and doing them before
  // the event loop keeps that loop to one prepared statement.
  for (const FileEvent& event : batch) {
    file_id(event.path);
    process_id(event.process);
    if (event.renamed_from != 0 && event.renamed_to != 0) {
      file_id(event.renamed_from);
      file_id(event.renamed_to);
    }
  }
  BatchCounts counts;
  std::int64_t minute_end = INT64_MIN;  // end of m_minutes.back()
  for (const FileEvent& event : batch) {
    const std::int64_t file = file_id(event.path);
    const std::int64_t process = process_id(event.process);
    if (file == 0 || process == 0 || !m_selected_ops[static_cast<std::size_t>(event.op)]) {
      (is_own(event) ? counts.own : counts.excluded) += event.count;
      continue;
    }
    const std::int64_t id = std::max(event.time, m_last_event_id + 1);
    m_last_event_id = id;
    add_to_segment(id, event.time);  // first: it may move on to the next slot
    m_pending[m_pending_count++] = EventRow{id, process, file, &event};
    if (m_pending_count == rows_per_insert) insert_pending();
    if (event.op == Op::rename && event.renamed_from != 0 && event.renamed_to != 0) insert_rename(id, event);
    m_first_event_time = std::min(m_first_event_time, event.time);
    m_last_event_time = std::max(m_last_event_time, event.time);
    ActivityTotals& totals = m_activity[ActivityKey{m_segment.id, process, file}];
    if (totals.rows == 0) totals.first_id = id;
    ++totals.rows;
    totals.last_id = id;
    counts.written += event.count;
    counts.unresolved += m_file_unresolved[event.path] ? event.count : 0;
    // A failed operation did nothing: it is counted apart (sql/0005).
    if (event.status != 0) {
      totals.failed += event.count;
      continue;
    }
    totals.events += event.count;
    const auto op = static_cast<std::size_t>(event.op);
    totals.count[op] += event.count;
    totals.bytes[op] += event.size > 0 ? event.size : 0;
    const std::int64_t unsized = event.size < 0 && activity_columns[op].bytes ? event.count : 0;
    totals.unsized += unsized;
    if (event.time >= minute_end) {  // the batch is in time order
      const std::int64_t minute = floor_div(event.time, ns_per_minute);
      m_minutes.push_back(MinuteTotals{minute});
      minute_end = minute < INT64_MAX / ns_per_minute ? (minute + 1) * ns_per_minute : INT64_MAX;
    }
    m_minutes.back().count[op] += event.count;
    m_minutes.back().bytes[op] += event.size > 0 ? event.size : 0;
    m_minutes.back().unsized[op] += unsized;
  }
  insert_pending();
  if (m_segment.id != 0) m_touched.push_back(m_segment);
  return counts;
}

void EventWriter::insert_rename(std::int64_t id, const FileEvent& event) {
  const std::int64_t from = file_id(event.renamed_from);
  const std::int64_t to = file_id(event.renamed_to);
  if (from == 0 || to == 0) return;  // a name --exclude-path leaves out
  m_insert_rename.reset();
  m_insert_rename.bind(1, id);
  m_insert_rename.bind(2, from);
  m_insert_rename.bind(3, to);
  m_insert_rename.exec();
}

void EventWriter::write_activity() {
  // In key order the rows go to the end of the table's B-tree one after the
  // other instead of to random places in its last pages.
  m_activity_order.clear();
  for (const auto& entry : m_activity) m_activity_order.push_back(&entry);
  std::sort(m_activity_order.begin(), m_activity_order.end(), [](const auto* a, const auto* b) {
    return std::tie(a->first.segment_id, a->first.process_id, a->first.file_id) <
           std::tie(b->first.segment_id, b->first.process_id, b->first.file_id);
  });
  for (const auto* entry : m_activity_order) {
    const auto& [key, totals] = *entry;
    int index = 0;
    m_upsert_activity.bind(++index, key.segment_id);
    m_upsert_activity.bind(++index, key.process_id);
    m_upsert_activity.bind(++index, key.file_id);
    m_upsert_activity.bind(++index, totals.events);
    m_upsert_activity.bind(++index, totals.failed);
    m_upsert_activity.bind(++index, totals.rows, totals.rows != totals.events);
    m_upsert_activity.bind(++index, totals.first_id);
    m_upsert_activity.bind(++index, totals.last_id);
    m_upsert_activity.bind(++index, totals.unsized);
    for (int op = 0; op < op_count; ++op) {
      m_upsert_activity.bind(++index, totals.count[op]);
      if (activity_columns[op].bytes) m_upsert_activity.bind(++index, totals.bytes[op]);
    }
    m_upsert_activity.exec();
  }
}

void EventWriter::write_totals(bool fold) {
  m_pairs.clear();
  for (const auto& [key, totals] : m_activity) m_pairs.push_back({key.process_id, key.file_id, &totals});
  if (fold) m_browsing.fold(m_pairs, m_last_event_id);
}

void EventWriter::fold_totals_if_possible() noexcept {
  // What the totals lack, the next writer folds from the events
  // (BrowsingTotals::catch_up): a full disk or a lock must not lose the run.
  try {
    fold_totals();
  } catch (const std::exception&) {
  }
}

void EventWriter::fold_totals() {
  if (!m_browsing.holding()) return;
  SQLite::Transaction transaction(m_db, SQLite::TransactionBehavior::IMMEDIATE);
  std::vector<BrowsingTotals::Pair> none;
  m_browsing.fold(none, m_last_event_id);
  transaction.commit();
  m_browsing.committed(true, none);
}

void EventWriter::write_segments() {
  for (const Segment& segment : m_touched) {
    if (segment.events == 0) continue;
    m_upsert_segment.bind(1, static_cast<std::int64_t>(segment.id));
    m_upsert_segment.bind(2, static_cast<std::int64_t>(segment.hour));
    m_upsert_segment.bind(3, static_cast<std::int64_t>(segment.first_id));
    m_upsert_segment.bind(4, static_cast<std::int64_t>(segment.last_id));
    m_upsert_segment.bind(5, static_cast<std::int64_t>(segment.min_time));
    m_upsert_segment.bind(6, static_cast<std::int64_t>(segment.max_time));
    m_upsert_segment.bind(7, static_cast<std::int64_t>(segment.events));
    m_upsert_segment.bind(8, segment.slot);
    m_upsert_segment.exec();
    m_upsert_segment.reset();
  }
}

void EventWriter::write_minutes() {
  for (const MinuteTotals& minute : m_minutes) {
    for (int op = 0; op < op_count; ++op) {
      if (minute.count[op] == 0) continue;
      m_upsert_minute.bind(1, minute.minute);
      m_upsert_minute.bind(2, op);
      m_upsert_minute.bind(3, minute.count[op]);
      m_upsert_minute.bind(4, minute.bytes[op]);
      m_upsert_minute.bind(5, minute.unsized[op]);
      m_upsert_minute.exec();
      m_upsert_minute.reset();
    }
  }
}

void EventWriter::forget_batch(const Position& before) {
  // Nothing of the batch is in the database: forget what it changed in memory.
  m_last_event_id = before.last_event_id;
  m_segment = before.segment;
  m_last_segment_id = before.last_segment_id;
  m_first_event_time = before.first_event_time;
  m_last_event_time = before.last_event_time;
  m_slot = before.slot;
  m_slot_rows = before.slot_rows;
  // Files and processes inserted by the batch were rolled back with it.
  std::fill(m_file_ids.begin(), m_file_ids.end(), 0);
  std::fill(m_process_ids.begin(), m_process_ids.end(), 0);
  m_pending_count = 0;
  for (auto* inserts : {&m_insert_event, &m_insert_events})
    for (BulkStatement& insert : *inserts) insert.reset();
  m_upsert_activity.reset();
  m_browsing.reset();
  m_upsert_segment.tryReset();
  m_upsert_minute.tryReset();
}

bool EventWriter::is_own(const FileEvent& event) const {
  return m_file_ids[event.path] == ours || m_process_ids[event.process] == ours;
}

void EventWriter::save_run_counters(const RunStats& stats, const BatchCounts& batch) {
  m_update_run.reset();
  m_update_run.bind(1, static_cast<std::int64_t>(now_ns()));
  m_update_run.bind(2, static_cast<std::int64_t>(stats.received.load()));
  m_update_run.bind(3, static_cast<std::int64_t>(stats.written.load() + batch.written));
  m_update_run.bind(4, static_cast<std::int64_t>(stats.dropped.load()));
  m_update_run.bind(5, static_cast<std::int64_t>(stats.lost.load()));
  m_update_run.bind(6, static_cast<std::int64_t>(stats.excluded.load() + batch.excluded));
  m_update_run.bind(7, static_cast<std::int64_t>(stats.bad_input.load()));
  m_update_run.bind(8, static_cast<std::int64_t>(stats.unresolved.load() + batch.unresolved));
  bind_optional(m_update_run, 9, m_first_event_time, m_first_event_time != INT64_MAX);
  bind_optional(m_update_run, 10, m_last_event_time, m_last_event_time != INT64_MIN);
  m_update_run.bind(11, static_cast<std::int64_t>(stats.rundown_names.load()));
  m_update_run.bind(12, static_cast<std::int64_t>(stats.own.load() + batch.own));
  m_update_run.bind(13, static_cast<std::int64_t>(m_run_id));
  m_update_run.exec();
}

void EventWriter::heartbeat(const RunStats& stats) {
  fold_totals_if_possible();
  SQLite::Transaction transaction(m_db, SQLite::TransactionBehavior::IMMEDIATE);
  save_run_counters(stats, {});
  transaction.commit();
}

void EventWriter::end_run(const std::string& exit_reason, const RunStats& stats) {
  fold_totals_if_possible();
  SQLite::Transaction transaction(m_db, SQLite::TransactionBehavior::IMMEDIATE);
  apply_resolutions();  // names from the end of a trace, after its last events
  save_run_counters(stats, {});
  SQLite::Statement close_run(m_db,
                              "UPDATE collector_runs SET stopped_at = ?, exit_reason = ?, "
                              "unresolved = ? WHERE run_id = ?");
  close_run.bind(1, static_cast<std::int64_t>(now_ns()));
  close_run.bind(2, exit_reason);
  close_run.bind(3, static_cast<std::int64_t>(unresolved_events()));
  close_run.bind(4, static_cast<std::int64_t>(m_run_id));
  close_run.exec();
  transaction.commit();
}

}  // namespace etwaudit
