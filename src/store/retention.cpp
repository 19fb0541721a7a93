#include "store/retention.h"

#include <SQLiteCpp/Transaction.h>
#include <sqlite3.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/time_format.h"
#include "store/activity_columns.h"

namespace etwaudit {
namespace {

// INSERT INTO hour_totals ... SELECT the activity of segment ?1, adding to
// rows that exist.
std::string fold_sql() {
  const OperationColumnsSql ops = operation_columns_sql(), selected = operation_columns_sql("a.");
  return "INSERT INTO hour_totals (hour, process_id, file_id, events, failed, unsized" + ops.names +
         ") SELECT s.hour, a.process_id, a.file_id, a.events, a.failed, a.unsized" + selected.names +
         " FROM activity a JOIN segments s ON s.segment_id = a.segment_id WHERE a.segment_id = ?1"
         " ON CONFLICT (hour, process_id, file_id) DO UPDATE SET events = events + excluded.events, "
         "failed = failed + excluded.failed, unsized = unsized + excluded.unsized" +
         ops.sums;
}

}  // namespace

// While prune() runs: SQLite's checkpoint after a commit that leaves the WAL
// at its wal_autocheckpoint size, done the same way, but timed. It runs once
// the commit has let the write lock go, so it is no part of the time a
// transaction held it.
class TimedAutocheckpoint {
 public:
  explicit TimedAutocheckpoint(SQLite::Database& db)
      : m_db(db), m_pages(db.execAndGet("PRAGMA wal_autocheckpoint").getInt()) {
    sqlite3_wal_hook(m_db.getHandle(), &TimedAutocheckpoint::hook, this);
  }
  ~TimedAutocheckpoint() { sqlite3_wal_autocheckpoint(m_db.getHandle(), m_pages); }  // SQLite's own hook again
  TimedAutocheckpoint(const TimedAutocheckpoint&) = delete;
  TimedAutocheckpoint& operator=(const TimedAutocheckpoint&) = delete;

  // The time spent checkpointing since the last call.
  std::chrono::microseconds take() { return std::exchange(m_spent, std::chrono::microseconds(0)); }

 private:
  static int hook(void* self, sqlite3* db, const char* schema, int pages) {
    auto& me = *static_cast<TimedAutocheckpoint*>(self);
    if (me.m_pages > 0 && pages >= me.m_pages) {
      const auto started = std::chrono::steady_clock::now();
      sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
      me.m_spent += std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
    }
    return SQLITE_OK;
  }

  SQLite::Database& m_db;
  int m_pages;  // wal_autocheckpoint
  std::chrono::microseconds m_spent{0};
};

void PruneResult::add(const PruneResult& round) {
  segments += round.segments;
  rows += round.rows;
  events += round.events;
  transactions += round.transactions;
  total_hours += round.total_hours;
  folded_segments += round.folded_segments;
  unshipped_rows += round.unshipped_rows;
  if (round.longest_transaction > longest_transaction) {
    longest_transaction = round.longest_transaction;
    longest_work = round.longest_work;
  }
  longest_checkpoint = std::max(longest_checkpoint, round.longest_checkpoint);
  total_time += round.total_time;
}

StoreSizing sizing_for(const RetentionPolicy& policy) {
  StoreSizing sizing;
  if (!policy.max_bytes) return sizing;
  const auto cap = static_cast<std::int64_t>(std::min<std::uint64_t>(*policy.max_bytes, INT64_MAX));
  sizing.segment_events = std::clamp<std::int64_t>(cap / (32 * 64), 1024, segment_capacity);
  sizing.slot_rows = std::clamp<std::int64_t>(static_cast<std::int64_t>(policy.limit() / (12 * 32)),
                                              sizing.segment_events, slot_rows_limit);
  sizing.wal_bytes = std::clamp<std::int64_t>(cap / 8, 1 << 20, wal_size_limit);
  return sizing;
}

std::uint64_t used_bytes(SQLite::Database& db) {
  const std::int64_t pages = db.execAndGet("PRAGMA page_count").getInt64();
  const std::int64_t free_pages = db.execAndGet("PRAGMA freelist_count").getInt64();
  const std::int64_t page_size = db.execAndGet("PRAGMA page_size").getInt64();
  return static_cast<std::uint64_t>((pages - free_pages) * page_size);
}

Pruner::Pruner(SQLite::Database& db)
    : m_db(db),
      m_oldest(db,
               "SELECT segment_id FROM segments WHERE pruned IS NULL AND segment_id < (SELECT max(segment_id) FROM "
               "segments) ORDER BY segment_id LIMIT 1"),
      // ...and that every destination has (sql/0017).
      m_oldest_expired(db,
                       "SELECT segment_id FROM segments WHERE max_time < ?1 AND pruned IS NULL AND segment_id < "
                       "(SELECT max(segment_id) FROM segments) AND last_id <= (SELECT coalesce(min(shipped_through), "
                       "9223372036854775807) FROM destinations) ORDER BY segment_id LIMIT 1"),
      m_segment(db, "SELECT first_id, last_id, max_time, slot FROM segments WHERE segment_id = ?1 AND pruned IS NULL"),
      m_fold(db, fold_sql()),
      // The first id of the slot's next kept segment (NULL: none is left),
      // whether segment ?2 is the oldest kept of all, the rows left so far,
      // and whether the writer is still adding to the slot.
      m_slot_state(
          db,
          "SELECT (SELECT min(first_id) FROM segments WHERE slot = ?1 AND pruned IS NULL AND segment_id <> "
          "?2), (SELECT min(segment_id) FROM segments WHERE pruned IS NULL) = ?2, pruned_rows, "
          "(SELECT slot FROM segments ORDER BY segment_id DESC LIMIT 1) = ?1 FROM event_slots WHERE slot = ?1"),
      m_leave_rows(db, "UPDATE event_slots SET kept_from = ?2, pruned_rows = pruned_rows + ?3 WHERE slot = ?1"),
      m_slot_emptied(db,
                     "UPDATE event_slots SET kept_from = -9223372036854775807 - 1, pruned_rows = 0 WHERE slot = ?1"),
      m_delete_activity(db, "DELETE FROM activity WHERE segment_id = ?1"),
      m_delete_segment(db, "DELETE FROM segments WHERE segment_id = ?1"),
      m_delete_renames(db, "DELETE FROM renames WHERE event_id BETWEEN ?1 AND ?2"),
      m_held(db,
             "SELECT count(*) FROM segments WHERE max_time < ?1 AND pruned IS NULL AND segment_id < (SELECT "
             "max(segment_id) FROM segments) AND last_id > (SELECT min(shipped_through) FROM destinations)"),
      // The oldest hour whose segments are all pruned, and that has more
      // than one or hourly totals already (one alone is its hour's totals).
      m_foldable_hour(db,
                      "SELECT s.hour FROM segments s WHERE s.pruned IS NOT NULL GROUP BY s.hour "
                      "HAVING (count(*) > 1 OR EXISTS (SELECT 1 FROM hour_totals h WHERE h.hour = s.hour)) "
                      "AND NOT EXISTS (SELECT 1 FROM segments k WHERE k.hour = s.hour AND k.pruned IS NULL) "
                      "ORDER BY s.hour LIMIT 1"),
      m_hour_segments(db,
                      "SELECT segment_id, (SELECT count(*) FROM activity a WHERE a.segment_id = s.segment_id) "
                      "FROM segments s WHERE hour = ?1 AND pruned IS NOT NULL ORDER BY segment_id"),
      m_mark_pruned(db, "UPDATE segments SET pruned = 1 WHERE segment_id = ?1"),
      m_update_retention(db,
                         "UPDATE retention SET pruned_before = max(coalesce(pruned_before, ?1), ?1), "
                         "pruned_segments = pruned_segments + 1, pruned_rows = pruned_rows + ?2, "
                         "pruned_events = pruned_events + ?3, last_prune_at = ?4") {}

std::int64_t Pruner::due_segment(const RetentionPolicy& policy, std::int64_t now) {
  auto first = [](SQLite::Statement& statement) {
    const std::int64_t id = statement.executeStep() ? statement.getColumn(0).getInt64() : 0;
    statement.reset();
    return id;
  };
  if (policy.keep_ns) {
    m_oldest_expired.bind(1, now - *policy.keep_ns);
    if (const std::int64_t id = first(m_oldest_expired)) return id;
  }
  if (policy.max_bytes && used_bytes(m_db) > policy.limit()) return first(m_oldest);
  return 0;
}

void Pruner::prune_segment(std::int64_t segment_id, PruneResult& result) {
  SQLite::Transaction transaction(m_db, SQLite::TransactionBehavior::IMMEDIATE);
  const auto started = std::chrono::steady_clock::now();
  m_segment.bind(1, segment_id);
  if (!m_segment.executeStep()) {  // pruned by someone else meanwhile
    m_segment.reset();
    return;
  }
  const std::int64_t first_id = m_segment.getColumn(0).getInt64();
  const std::int64_t last_id = m_segment.getColumn(1).getInt64();
  const std::int64_t max_time = m_segment.getColumn(2).getInt64();
  const int slot = m_segment.getColumn(3).getInt();
  m_segment.reset();
  SQLite::Statement count(m_db,
                          "SELECT coalesce(sum(coalesce(rows, events)), 0), coalesce(sum(events + failed), 0) "
                          "FROM activity WHERE segment_id = ?1");
  count.bind(1, segment_id);
  count.executeStep();
  const std::int64_t rows = count.getColumn(0).getInt64(), events = count.getColumn(1).getInt64();

  const std::int64_t unshipped = count_unshipped(slot, first_id, last_id);
  remove_rows(segment_id, slot, first_id, last_id, rows);
  // Its activity rows stay as its hourly totals (sql/0007) until its hour
  // is folded into hour_totals (fold_hour).
  m_mark_pruned.bind(1, segment_id);
  m_mark_pruned.exec();
  m_mark_pruned.reset();
  m_may_fold = true;
  m_update_retention.bind(1, max_time + 1);
  m_update_retention.bind(2, rows);
  m_update_retention.bind(3, events);
  m_update_retention.bind(4, static_cast<std::int64_t>(now_ns()));
  m_update_retention.exec();
  m_update_retention.reset();
  transaction.commit();
  count_transaction(result, started, "segment");
  result.segments += 1;
  result.rows += static_cast<std::uint64_t>(rows);
  result.events += static_cast<std::uint64_t>(events);
  result.unshipped_rows += static_cast<std::uint64_t>(unshipped);
}

std::int64_t Pruner::count_unshipped(int slot, std::int64_t first_id, std::int64_t last_id) {
  // Only under max_bytes: under keep a segment waits for every destination.
  SQLite::Statement behind(m_db, "SELECT name, shipped_through FROM destinations WHERE shipped_through < ?1");
  behind.bind(1, last_id);
  std::int64_t most = 0;
  while (behind.executeStep()) {
    SQLite::Statement rows(m_db, "SELECT count(*) FROM " + event_table(slot) + " WHERE id BETWEEN ?1 AND ?2");
    rows.bind(1, std::max(first_id, behind.getColumn(1).getInt64() + 1));
    rows.bind(2, last_id);
    rows.executeStep();
    const std::int64_t count = rows.getColumn(0).getInt64();
    SQLite::Statement add(m_db, "UPDATE destinations SET pruned_unshipped = pruned_unshipped + ?2 WHERE name = ?1");
    add.bind(1, behind.getColumn(0).getString());
    add.bind(2, count);
    add.exec();
    most = std::max(most, count);
  }
  return most;
}

void Pruner::remove_rows(std::int64_t segment_id, int slot, std::int64_t first_id, std::int64_t last_id,
                         std::int64_t rows) {
  m_slot_state.bind(1, slot);
  m_slot_state.bind(2, segment_id);
  if (!m_slot_state.executeStep())
    throw Error("event slot " + std::to_string(slot) + " of segment " + std::to_string(segment_id) +
                " is not in event_slots");
  const bool last_of_slot = m_slot_state.getColumn(0).isNull();
  const std::int64_t next_kept = m_slot_state.getColumn(0).getInt64();
  const bool oldest = m_slot_state.getColumn(1).getInt() != 0;
  const std::int64_t left = m_slot_state.getColumn(2).getInt64();
  const bool written_to = m_slot_state.getColumn(3).getInt() != 0;
  m_slot_state.reset();
  const std::string table = event_table(slot);
  m_delete_renames.bind(1, first_id);
  m_delete_renames.bind(2, last_id);
  m_delete_renames.exec();
  m_delete_renames.reset();
  if (last_of_slot) {
    m_db.exec("DELETE FROM " + table);  // no WHERE: SQLite frees the table's pages without visiting its rows
    m_slot_emptied.bind(1, slot);
    m_slot_emptied.exec();
    m_slot_emptied.reset();
    return;
  }
  // Rows left in the slot the writer is filling would wait for it to fill
  // and for the ring to come round: they go now.
  if (!oldest || written_to || left + rows > slot_rows_limit) {
    SQLite::Statement remove(m_db, "DELETE FROM " + table + " WHERE id BETWEEN ?1 AND ?2");
    remove.bind(1, first_id);
    remove.bind(2, last_id);
    remove.exec();
    if (!oldest) return;
    rows = 0;  // gone already
  }
  m_leave_rows.bind(1, slot);
  m_leave_rows.bind(2, next_kept);
  m_leave_rows.bind(3, rows);
  m_leave_rows.exec();
  m_leave_rows.reset();
}

bool Pruner::fold_hour(PruneResult& result) {
  if (!m_may_fold) return false;
  SQLite::Transaction transaction(m_db, SQLite::TransactionBehavior::IMMEDIATE);
  const auto started = std::chrono::steady_clock::now();
  const bool found = m_foldable_hour.executeStep();
  const std::int64_t hour = found ? m_foldable_hour.getColumn(0).getInt64() : 0;
  m_foldable_hour.reset();
  if (!found) {
    m_may_fold = false;  // until a segment is pruned
    return false;
  }
  // Segments in id order, until fold_rows activity rows: one transaction
  // writes each page of the hour's totals once for all of them, where a
  // transaction a segment wrote it once each.
  std::vector<std::int64_t> segments;
  std::int64_t rows = 0;
  m_hour_segments.bind(1, hour);
  while (rows < fold_rows && m_hour_segments.executeStep()) {
    segments.push_back(m_hour_segments.getColumn(0).getInt64());
    rows += m_hour_segments.getColumn(1).getInt64();
  }
  m_hour_segments.reset();
  for (const std::int64_t segment : segments) {
    for (SQLite::Statement* statement : {&m_fold, &m_delete_activity, &m_delete_segment}) {
      statement->bind(1, segment);
      statement->exec();
      statement->reset();
    }
  }
  transaction.commit();
  count_transaction(result, started, "fold");
  result.folded_segments += segments.size();
  return true;
}

bool Pruner::prune_total_hour(PruneResult& result) {
  SQLite::Transaction transaction(m_db, SQLite::TransactionBehavior::IMMEDIATE);
  const auto started = std::chrono::steady_clock::now();
  // The totals of an hour are its hour_totals rows and the activity rows of
  // its pruned segments (sql/0007): they go total_rows at a time, the
  // hour_totals rows first, then each segment's, in key order.
  SQLite::Statement oldest(m_db,
                           "SELECT min(hour) FROM (SELECT min(hour) AS hour FROM hour_totals UNION ALL "
                           "SELECT min(hour) FROM segments WHERE pruned IS NOT NULL)");
  if (!oldest.executeStep() || oldest.getColumn(0).isNull()) return false;
  const std::int64_t hour = oldest.getColumn(0).getInt64();
  oldest.reset();
  std::string table = "hour_totals", rows = "hour = ?1";
  std::int64_t key = hour;
  if (!m_db.execAndGet("SELECT EXISTS (SELECT 1 FROM hour_totals WHERE hour = " + std::to_string(hour) + ")")
           .getInt()) {
    table = "activity";
    rows = "segment_id = ?1";
    key = m_db.execAndGet("SELECT min(segment_id) FROM segments WHERE pruned IS NOT NULL AND hour = " +
                          std::to_string(hour))
              .getInt64();
  }
  // The last (process, file) of the chunk; none: the rest of them.
  SQLite::Statement last(m_db, "SELECT process_id, file_id FROM " + table + " WHERE " + rows +
                                   " ORDER BY process_id, file_id LIMIT 1 OFFSET " + std::to_string(total_rows - 1));
  last.bind(1, key);
  if (last.executeStep())
    rows +=
        " AND (process_id, file_id) <= (" + last.getColumn(0).getString() + ", " + last.getColumn(1).getString() + ")";
  last.reset();
  SQLite::Statement mark(
      m_db,
      "UPDATE retention SET totals_pruned_before = max(coalesce(totals_pruned_before, ?2), ?2), "
      "totals_pruned_events = totals_pruned_events + (SELECT coalesce(sum(events + failed), 0) FROM " +
          table + " WHERE " + rows + "), last_prune_at = ?3");
  mark.bind(1, key);
  mark.bind(2, (hour + 1) * ns_per_hour);
  mark.bind(3, static_cast<std::int64_t>(now_ns()));
  mark.exec();
  SQLite::Statement drop(m_db, "DELETE FROM " + table + " WHERE " + rows);
  drop.bind(1, key);
  drop.exec();
  if (table == "activity")
    m_db.exec("DELETE FROM segments WHERE segment_id = " + std::to_string(key) +
              " AND NOT EXISTS (SELECT 1 FROM activity WHERE segment_id = " + std::to_string(key) + ")");
  const bool hour_gone =
      !m_db.execAndGet(
               "SELECT EXISTS (SELECT 1 FROM hour_totals WHERE hour = " + std::to_string(hour) +
               ") OR EXISTS (SELECT 1 FROM segments WHERE pruned IS NOT NULL AND hour = " + std::to_string(hour) + ")")
           .getInt();
  transaction.commit();
  count_transaction(result, started, "totals");
  result.total_hours += hour_gone;
  return true;
}

void Pruner::count_transaction(PruneResult& result, std::chrono::steady_clock::time_point started, const char* work) {
  PruneResult one;
  one.transactions = 1;
  one.longest_checkpoint = m_autocheckpoint ? m_autocheckpoint->take() : std::chrono::microseconds(0);
  one.longest_transaction = one.total_time =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started) -
      one.longest_checkpoint;
  one.longest_work = work;
  result.add(one);
}

bool Pruner::prune_browsing_totals(PruneResult& result, std::int64_t at_most) {
  if (at_most <= 0) return false;
  SQLite::Transaction transaction(m_db, SQLite::TransactionBehavior::IMMEDIATE);
  const auto started = std::chrono::steady_clock::now();
  // The files' and processes' rows keep what these pairs added (sql/0021).
  SQLite::Statement drop(m_db,
                         "DELETE FROM process_file_totals WHERE (process_id, file_id) IN (SELECT process_id, file_id "
                         "FROM process_file_totals ORDER BY last_seen LIMIT ?1)");
  drop.bind(1, std::min<std::int64_t>(at_most, 4096));
  const int dropped = drop.exec();
  if (dropped == 0) return false;
  m_db.exec("UPDATE totals_folded SET pairs = pairs - " + std::to_string(dropped));
  transaction.commit();
  count_transaction(result, started, "browsing totals");
  return true;
}

PruneResult Pruner::prune(const RetentionPolicy& policy, std::int64_t now, std::chrono::milliseconds budget) {
  PruneResult result;
  if (!policy.enabled()) return result;
  TimedAutocheckpoint autocheckpoint(m_db);
  m_autocheckpoint = &autocheckpoint;
  struct Forget {
    TimedAutocheckpoint*& hook;
    ~Forget() { hook = nullptr; }
  } forget{m_autocheckpoint};
  const auto deadline = budget == std::chrono::milliseconds::max() ? std::chrono::steady_clock::time_point::max()
                                                                   : std::chrono::steady_clock::now() + budget;
  auto over_size = [&] { return policy.max_bytes && used_bytes(m_db) > policy.limit(); };
  auto totals_left = [&] {
    return m_db.execAndGet(
                   "SELECT EXISTS (SELECT 1 FROM hour_totals) OR EXISTS (SELECT 1 FROM segments WHERE "
                   "pruned IS NOT NULL)")
               .getInt() != 0;
  };
  // The browsing totals' pairs beyond what the cap allows: pruned once they
  // are a quarter over, down to what it allows (not a few each round).
  auto pairs_over = [&]() -> std::int64_t {
    if (!policy.max_bytes) return 0;
    const std::int64_t allowed = browsing_pairs_allowed(*policy.max_bytes);
    const std::int64_t pairs = m_db.execAndGet("SELECT pairs FROM totals_folded").getInt64();
    if (pairs > allowed + allowed / 4) m_pruning_pairs = true;
    if (pairs <= allowed) m_pruning_pairs = false;
    return m_pruning_pairs ? pairs - allowed : 0;
  };
  // Due segments first, and the browsing totals' pairs beyond what max_bytes
  // allows; then the folding of pruned hours into hour_totals; and only when
  // nothing but the newest segment is left and the database is still over
  // max_bytes, the oldest hourly totals.
  for (;;) {
    const std::int64_t segment = due_segment(policy, now);
    const std::int64_t extra_pairs = pairs_over();
    if (segment == 0 && !m_may_fold && extra_pairs <= 0 && !(over_size() && totals_left())) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      result.budget_spent = true;
      break;
    }
    if (segment != 0)
      prune_segment(segment, result);
    else if (extra_pairs > 0)
      prune_browsing_totals(result, extra_pairs);
    else if (!fold_hour(result) && !(over_size() && prune_total_hour(result)))
      break;
    if (after_transaction) after_transaction();
  }
  if (!result.budget_spent) result.over_size = over_size();
  if (policy.keep_ns) {
    m_held.bind(1, now - *policy.keep_ns);
    m_held.executeStep();
    result.held_segments = static_cast<std::uint64_t>(m_held.getColumn(0).getInt64());
    m_held.reset();
  }
  return result;
}

void Pruner::record_policy(const RetentionPolicy& policy) {
  SQLite::Statement update(m_db, "UPDATE retention SET keep_ns = ?1, max_bytes = ?2");
  if (policy.keep_ns)
    update.bind(1, *policy.keep_ns);
  else
    update.bind(1);
  if (policy.max_bytes)
    update.bind(2, static_cast<std::int64_t>(*policy.max_bytes));
  else
    update.bind(2);
  update.exec();
}

}  // namespace etwaudit
