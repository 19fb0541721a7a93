#include "store/retention.h"

#include <SQLiteCpp/Transaction.h>

#include <string>

#include "core/time_format.h"
#include "store/activity_columns.h"

namespace etwaudit {
namespace {

// INSERT INTO hour_totals ... SELECT the activity of segment ?1, adding to
// rows that exist. The per-operation columns come from activity_columns.
std::string fold_sql() {
  std::string columns = "events, failed", selected = "a.events, a.failed",
              sums = "events = events + excluded.events, failed = failed + excluded.failed";
  for (const ActivityColumns& op : activity_columns) {
    for (const char* column : {op.count, op.bytes}) {
      if (!column) continue;
      columns += std::string(", ") + column;
      selected += std::string(", a.") + column;
      sums += std::string(", ") + column + " = " + column + " + excluded." + column;
    }
  }
  return "INSERT INTO hour_totals (hour, process_id, file_id, " + columns +
         ") SELECT s.hour, a.process_id, a.file_id, " + selected +
         " FROM activity a JOIN segments s ON s.segment_id = a.segment_id WHERE a.segment_id = ?1"
         " ON CONFLICT (hour, process_id, file_id) DO UPDATE SET " +
         sums;
}

// A transaction committed: how long it held the write lock.
void count_transaction(PruneResult& result, std::chrono::steady_clock::time_point started) {
  const auto took = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
  result.longest_transaction = std::max(result.longest_transaction, took);
  result.total_time += took;
  result.transactions += 1;
}

}  // namespace

StoreSizing sizing_for(const RetentionPolicy& policy) {
  StoreSizing sizing;
  if (!policy.max_bytes) return sizing;
  const auto cap = static_cast<std::int64_t>(std::min<std::uint64_t>(*policy.max_bytes, INT64_MAX));
  sizing.segment_events = std::clamp<std::int64_t>(cap / (32 * 64), 1024, segment_capacity);
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
      m_oldest_expired(db,
                       "SELECT segment_id FROM segments WHERE max_time < ?1 AND pruned IS NULL AND segment_id < "
                       "(SELECT max(segment_id) FROM segments) ORDER BY segment_id LIMIT 1"),
      m_segment(db, "SELECT first_id, last_id, max_time FROM segments WHERE segment_id = ?1 AND pruned IS NULL"),
      m_fold(db, fold_sql()),
      m_delete_events(db, "DELETE FROM events WHERE id BETWEEN ?1 AND ?2"),
      m_delete_activity(db, "DELETE FROM activity WHERE segment_id = ?1"),
      m_delete_segment(db, "DELETE FROM segments WHERE segment_id = ?1"),
      m_shares_hour(db,
                    "SELECT EXISTS (SELECT 1 FROM segments t, segments s WHERE s.segment_id = ?1 AND t.hour = s.hour "
                    "AND t.segment_id <> s.segment_id) OR EXISTS (SELECT 1 FROM hour_totals h, segments s "
                    "WHERE s.segment_id = ?1 AND h.hour = s.hour)"),
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
  m_segment.reset();
  SQLite::Statement count(m_db,
                          "SELECT coalesce(sum(coalesce(rows, events)), 0), coalesce(sum(events + failed), 0) "
                          "FROM activity WHERE segment_id = ?1");
  count.bind(1, segment_id);
  count.executeStep();
  const std::int64_t rows = count.getColumn(0).getInt64(), events = count.getColumn(1).getInt64();

  m_delete_events.bind(1, first_id);
  m_delete_events.bind(2, last_id);
  m_delete_events.exec();
  m_delete_events.reset();
  // Alone in its hour, the segment's activity rows are its hourly totals
  // already; in a busy hour they are added into the hour's (sql/0007).
  m_shares_hour.bind(1, segment_id);
  const bool fold = m_shares_hour.executeStep() && m_shares_hour.getColumn(0).getInt() != 0;
  m_shares_hour.reset();
  auto run = [segment_id](SQLite::Statement& statement) {
    statement.bind(1, segment_id);
    statement.exec();
    statement.reset();
  };
  if (fold) {
    run(m_fold);
    run(m_delete_activity);
    run(m_delete_segment);
  } else {
    run(m_mark_pruned);
  }
  m_update_retention.bind(1, max_time + 1);
  m_update_retention.bind(2, rows);
  m_update_retention.bind(3, events);
  m_update_retention.bind(4, static_cast<std::int64_t>(now_ns()));
  m_update_retention.exec();
  m_update_retention.reset();
  transaction.commit();
  count_transaction(result, started);
  result.segments += 1;
  result.rows += static_cast<std::uint64_t>(rows);
  result.events += static_cast<std::uint64_t>(events);
}

bool Pruner::prune_total_hour(PruneResult& result) {
  SQLite::Transaction transaction(m_db, SQLite::TransactionBehavior::IMMEDIATE);
  const auto started = std::chrono::steady_clock::now();
  // The totals of an hour are its hour_totals rows and the activity rows of
  // its pruned segments (sql/0007).
  SQLite::Statement oldest(m_db,
                           "SELECT min(hour) FROM (SELECT min(hour) AS hour FROM hour_totals UNION ALL "
                           "SELECT min(hour) FROM segments WHERE pruned IS NOT NULL)");
  if (!oldest.executeStep() || oldest.getColumn(0).isNull()) return false;
  const std::int64_t hour = oldest.getColumn(0).getInt64();
  oldest.reset();
  const std::string pruned_segments = "(SELECT segment_id FROM segments WHERE hour = ?3 AND pruned IS NOT NULL)";
  SQLite::Statement mark(m_db,
                         "UPDATE retention SET totals_pruned_before = max(coalesce(totals_pruned_before, ?1), ?1), "
                         "totals_pruned_events = totals_pruned_events + "
                         "(SELECT coalesce(sum(events + failed), 0) FROM hour_totals WHERE hour = ?3) + "
                         "(SELECT coalesce(sum(events + failed), 0) FROM activity WHERE segment_id IN " +
                             pruned_segments + "), last_prune_at = ?2");
  mark.bind(1, (hour + 1) * ns_per_hour);
  mark.bind(2, static_cast<std::int64_t>(now_ns()));
  mark.bind(3, hour);
  mark.exec();
  for (const std::string& sql : {std::string("DELETE FROM hour_totals WHERE hour = ?3"),
                                 "DELETE FROM activity WHERE segment_id IN " + pruned_segments,
                                 std::string("DELETE FROM segments WHERE hour = ?3 AND pruned IS NOT NULL")}) {
    SQLite::Statement drop(m_db, sql);
    drop.bind(3, hour);
    drop.exec();
  }
  transaction.commit();
  count_transaction(result, started);
  result.total_hours += 1;
  return true;
}

PruneResult Pruner::prune(const RetentionPolicy& policy, std::int64_t now, std::chrono::milliseconds budget) {
  PruneResult result;
  if (!policy.enabled()) return result;
  const auto deadline = budget == std::chrono::milliseconds::max() ? std::chrono::steady_clock::time_point::max()
                                                                   : std::chrono::steady_clock::now() + budget;
  auto over_size = [&] { return policy.max_bytes && used_bytes(m_db) > policy.limit(); };
  for (;;) {
    const std::int64_t segment = due_segment(policy, now);
    // Nothing but the newest segment left: the oldest hourly totals go next.
    if (segment == 0 && !(over_size() && m_db.execAndGet("SELECT EXISTS (SELECT 1 FROM hour_totals) OR EXISTS "
                                                         "(SELECT 1 FROM segments WHERE pruned IS NOT NULL)")
                                             .getInt()))
      break;
    if (std::chrono::steady_clock::now() >= deadline) {
      result.budget_spent = true;
      break;
    }
    if (segment != 0)
      prune_segment(segment, result);
    else if (!prune_total_hour(result))
      break;
    if (after_transaction) after_transaction();
  }
  if (!result.budget_spent) result.over_size = over_size();
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
