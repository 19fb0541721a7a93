#include "store/browsing_totals.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/time_format.h"
#include "store/activity_columns.h"

namespace etwaudit {

namespace {

// The counting columns of the totals tables after their key, and how a row
// that meets an existing one adds to it (the twin of event_writer.cpp's
// ActivitySql).
struct TotalsSql {
  const OperationColumnsSql ops = operation_columns_sql();
  const std::string counts = "events, failed, unsized, first_seen, last_seen" + ops.names;
  const std::string updates =
      "events = events + excluded.events, failed = failed + excluded.failed, unsized = unsized + excluded.unsized, "
      "first_seen = min(first_seen, excluded.first_seen), last_seen = max(last_seen, excluded.last_seen)" +
      ops.sums;
  const int count_columns = 5 + ops.count;
};

// INSERT ... ON CONFLICT DO UPDATE adding one row's counters; parameters: the
// key columns, then the counting columns in TotalsSql's order (bind_totals),
// then the partners new to the row (files of a process, processes of a
// file), when it has such a column.
std::string totals_upsert_sql(const std::string& table, const std::string& key, const std::string& partners = "") {
  const TotalsSql sql;
  std::string values;
  const int keys = static_cast<int>(std::count(key.begin(), key.end(), ',')) + 1;
  for (int i = 0; i < keys + sql.count_columns + !partners.empty(); ++i) values += i ? ", ?" : "?";
  return "INSERT INTO " + table + " (" + key + ", " + sql.counts + (partners.empty() ? "" : ", " + partners) +
         ") VALUES (" + values + ") ON CONFLICT (" + key + ") DO UPDATE SET " + sql.updates +
         (partners.empty() ? "" : ", " + partners + " = " + partners + " + excluded." + partners);
}

void bind_totals(SQLite::Statement& statement, int index, const OperationTotals& totals) {
  statement.bind(++index, totals.events);
  statement.bind(++index, totals.failed);
  statement.bind(++index, totals.unsized);
  statement.bind(++index, format_iso8601(totals.first_id));  // as text: see sql/0021
  statement.bind(++index, format_iso8601(totals.last_id));
  for (int op = 0; op < op_count; ++op) {
    statement.bind(++index, totals.count[op]);
    if (activity_columns[op].bytes) statement.bind(++index, totals.bytes[op]);
  }
}

}  // namespace

void OperationTotals::add(const OperationTotals& other) {
  first_id = std::min(first_id, other.first_id);
  last_id = std::max(last_id, other.last_id);
  events += other.events;
  failed += other.failed;
  unsized += other.unsized;
  rows += other.rows;
  for (int op = 0; op < op_count; ++op) {
    count[op] += other.count[op];
    bytes[op] += other.bytes[op];
  }
}

BrowsingTotals::BrowsingTotals(SQLite::Database& db)
    : m_db(db),
      m_upsert_file(db, totals_upsert_sql("file_totals", "file_id", "processes")),
      m_upsert_process(db, totals_upsert_sql("process_totals", "process_id", "files")),
      m_upsert_pair(db, totals_upsert_sql("process_file_totals", "process_id, file_id")),
      m_has_pair(db, "SELECT 1 FROM process_file_totals WHERE process_id = ? AND file_id = ?"),
      m_set_through(db, "UPDATE totals_folded SET through_id = max(through_id, ?), pairs = pairs + ?") {}

std::size_t BrowsingTotals::KeyHash::operator()(const std::pair<std::int64_t, std::int64_t>& key) const noexcept {
  std::uint64_t h = static_cast<std::uint64_t>(key.first) * 0x9E3779B97F4A7C15ull;
  h ^= static_cast<std::uint64_t>(key.second) * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
  return static_cast<std::size_t>(h);
}

bool BrowsingTotals::due() const {
  if (!m_keeping) return false;
  // A held pair costs about 350 bytes of memory; a fold touches every page of
  // the totals it adds to (m_hold_limit: see set_hold_limit).
  return std::chrono::steady_clock::now() - m_last_fold >= m_interval || m_held.size() >= m_hold_limit;
}

void BrowsingTotals::fold(std::vector<Pair>& batch, std::int64_t through_id) {
  m_scratch.assign(batch.begin(), batch.end());
  for (const auto& [key, totals] : m_held) m_scratch.push_back({key.first, key.second, &totals});
  upsert(m_scratch, through_id);
}

void BrowsingTotals::committed(bool folded, const std::vector<Pair>& batch) {
  if (!m_keeping) return;
  if (folded) {
    m_held.clear();
    m_last_fold = std::chrono::steady_clock::now();
    return;
  }
  for (const Pair& pair : batch) hold({pair.process_id, pair.file_id}, *pair.totals);
}

void BrowsingTotals::hold(const std::pair<std::int64_t, std::int64_t>& key, const OperationTotals& totals) {
  auto [at, added] = m_held.try_emplace(key, totals);
  if (!added) at->second.add(totals);
}

void BrowsingTotals::catch_up() {
  if (!m_keeping) return;
  const std::int64_t through = m_db.execAndGet("SELECT through_id FROM totals_folded").getInt64();
  // Per (process, file), as the writer counts them (event_writer.cpp).
  const std::string ok = "status IS NULL", n = "coalesce(count, 1)";
  std::string columns = "process_id, file_id, sum(CASE WHEN " + ok + " THEN " + n + " ELSE 0 END), sum(CASE WHEN " +
                        ok + " THEN 0 ELSE " + n + " END), min(id), max(id)";
  std::string moving;
  for (const ActivityColumns& c : activity_columns) {
    const std::string op = std::to_string(static_cast<int>(c.op));
    columns += ", sum(CASE WHEN " + ok + " AND op = " + op + " THEN " + n + " ELSE 0 END)";
    if (!c.bytes) continue;
    columns += ", sum(CASE WHEN " + ok + " AND op = " + op + " THEN max(coalesce(size, 0), 0) ELSE 0 END)";
    moving += (moving.empty() ? "" : ", ") + op;
  }
  columns += ", sum(CASE WHEN " + ok + " AND size IS NULL AND op IN (" + moving + ") THEN " + n + " ELSE 0 END)";
  SQLite::Statement after(m_db, "SELECT " + columns + " FROM events WHERE id > ? GROUP BY process_id, file_id");
  after.bind(1, through);
  std::vector<OperationTotals> totals;
  std::vector<std::pair<std::int64_t, std::int64_t>> keys;
  std::int64_t last = through;
  while (after.executeStep()) {
    OperationTotals t;
    int i = 0;
    keys.emplace_back(after.getColumn(i).getInt64(), after.getColumn(i + 1).getInt64());
    i += 2;
    t.events = after.getColumn(i++).getInt64();
    t.failed = after.getColumn(i++).getInt64();
    t.first_id = after.getColumn(i++).getInt64();
    t.last_id = after.getColumn(i++).getInt64();
    for (int op = 0; op < op_count; ++op) {
      t.count[op] = after.getColumn(i++).getInt64();
      if (activity_columns[op].bytes) t.bytes[op] = after.getColumn(i++).getInt64();
    }
    t.unsized = after.getColumn(i).getInt64();
    last = std::max(last, t.last_id);
    totals.push_back(t);
  }
  if (totals.empty()) return;
  std::vector<Pair> pairs;
  for (std::size_t k = 0; k < totals.size(); ++k) pairs.push_back({keys[k].first, keys[k].second, &totals[k]});
  upsert(pairs, last);
}

void BrowsingTotals::upsert(std::vector<Pair>& pairs, std::int64_t through_id) {
  // Each table's rows summed by key and written in key order, as they lie in
  // its B-tree. The pairs first: those new to the table are new partners of
  // their file and process, counted into those rows as they are written.
  using Key = std::pair<std::int64_t, std::int64_t>;
  // Calls write(key, totals) with the sum of each run of pairs with one key
  // (no copy of the many keys that have a single pair).
  auto for_each_sum = [&](auto key_of, auto write) {
    std::sort(pairs.begin(), pairs.end(), [&](const Pair& a, const Pair& b) { return key_of(a) < key_of(b); });
    OperationTotals sum;
    for (std::size_t i = 0; i < pairs.size();) {
      const Key key = key_of(pairs[i]);
      std::size_t end = i + 1;
      while (end < pairs.size() && key_of(pairs[end]) == key) ++end;
      if (end == i + 1) {
        write(key, *pairs[i].totals);
      } else {
        sum = *pairs[i].totals;
        for (std::size_t j = i + 1; j < end; ++j) sum.add(*pairs[j].totals);
        write(key, sum);
      }
      i = end;
    }
  };
  auto bind = [&](SQLite::Statement& upsert, const Key& key, int keys, const OperationTotals& totals) {
    upsert.reset();
    upsert.bind(1, key.first);
    if (keys == 2) upsert.bind(2, key.second);
    bind_totals(upsert, keys, totals);
  };
  m_new_partners_of_file.clear();
  m_new_partners_of_process.clear();
  std::int64_t new_pairs = 0;
  auto by_pair = [](const Pair& p) { return Key{p.process_id, p.file_id}; };
  auto by_file = [](const Pair& p) { return Key{p.file_id, 0}; };
  auto by_process = [](const Pair& p) { return Key{p.process_id, 0}; };
  for_each_sum(by_pair, [&](const Key& key, const OperationTotals& totals) {
    m_has_pair.reset();
    m_has_pair.bind(1, key.first);
    m_has_pair.bind(2, key.second);
    if (!m_has_pair.executeStep()) {
      ++m_new_partners_of_process[key.first];
      ++m_new_partners_of_file[key.second];
      ++new_pairs;
    }
    bind(m_upsert_pair, key, 2, totals);
    m_upsert_pair.exec();
  });
  const int partners_index = 1 + TotalsSql().count_columns + 1;
  // (Pointers: the lambda it returns outlives the call.)
  auto write_with_partners = [&](SQLite::Statement* upsert, const auto* new_partners) {
    return [&, upsert, new_partners](const Key& key, const OperationTotals& totals) {
      bind(*upsert, key, 1, totals);
      const auto found = new_partners->find(key.first);
      upsert->bind(partners_index, found == new_partners->end() ? std::int64_t{0} : found->second);
      upsert->exec();
    };
  };
  for_each_sum(by_file, write_with_partners(&m_upsert_file, &m_new_partners_of_file));
  for_each_sum(by_process, write_with_partners(&m_upsert_process, &m_new_partners_of_process));
  m_set_through.reset();
  m_set_through.bind(1, through_id);
  m_set_through.bind(2, new_pairs);
  m_set_through.exec();
}

void BrowsingTotals::merge_file(std::int64_t from, std::int64_t into) {
  const TotalsSql totals_sql;
  const std::string& counts = totals_sql.counts;
  const std::string& sums = totals_sql.updates;
  // A process of from that into has too is one file fewer for it, and one
  // pair fewer; the others are new processes of into. Counted before the
  // pairs move.
  const std::string shared =
      "FROM process_file_totals a WHERE a.file_id = ?2 AND EXISTS (SELECT 1 FROM process_file_totals b "
      "WHERE b.process_id = a.process_id AND b.file_id = ?1)";
  for (const std::string& sql : {
           "INSERT INTO file_totals (file_id, " + counts + ") SELECT ?1, " + counts +
               " FROM file_totals WHERE file_id = ?2 ON CONFLICT (file_id) DO UPDATE SET " + sums,
           "UPDATE file_totals SET processes = processes + (SELECT count(*) FROM process_file_totals WHERE file_id = "
           "?2) - (SELECT count(*) " +
               shared + ") WHERE file_id = ?1",
           "UPDATE process_totals SET files = files - 1 WHERE process_id IN (SELECT a.process_id " + shared + ")",
           "UPDATE totals_folded SET pairs = pairs - (SELECT count(*) " + shared + ")",
           "INSERT INTO process_file_totals (process_id, file_id, " + counts + ") SELECT process_id, ?1, " + counts +
               " FROM process_file_totals WHERE file_id = ?2 ON CONFLICT (process_id, file_id) DO UPDATE SET " + sums,
           std::string("DELETE FROM process_file_totals WHERE file_id = ?2"),
           std::string("DELETE FROM file_totals WHERE file_id = ?2"),
       }) {
    SQLite::Statement statement(m_db, sql);
    statement.bind(1, into);
    statement.bind(2, from);
    statement.exec();
  }
  // And what is held of it.
  std::vector<std::pair<std::int64_t, OperationTotals>> moved;
  for (auto at = m_held.begin(); at != m_held.end();) {
    if (at->first.second != from) {
      ++at;
      continue;
    }
    moved.emplace_back(at->first.first, at->second);
    at = m_held.erase(at);
  }
  for (const auto& [process, totals] : moved) hold({process, into}, totals);
}

void BrowsingTotals::reset() {
  m_set_through.tryReset();
  m_upsert_file.tryReset();
  m_upsert_process.tryReset();
  m_upsert_pair.tryReset();
  m_has_pair.tryReset();
}

}  // namespace etwaudit
