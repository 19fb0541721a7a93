#pragma once
// The totals per file, per process and per (process, file) that the browsing
// views show (sql/0021_browsing_totals.sql): every event ever written.
//
// Adding each batch to them rewrites their pages all over the tables, so the
// writer hands each committed batch's activity here, and the totals take it
// in memory and fold it into the tables every interval or so many pairs (in
// a batch's transaction), when the collector is idle and when the run ends.
// totals_folded.through_id is the last event id they hold: a writer that
// starts after one that died folds the events after it from the event tables.
// Under a size cap the pruner bounds the pairs (store/retention.h).

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <chrono>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/file_event.h"

namespace etwaudit {

// What a set of events adds up to; the counting columns of activity and of
// the totals tables.
struct OperationTotals {
  std::int64_t events = 0;   // events that did not fail (a coalesced row counts its events)
  std::int64_t failed = 0;   // events that failed (a status), counted nowhere else
  std::int64_t unsized = 0;  // events of an operation that moves bytes, without a size
  std::int64_t rows = 0;     // event rows, of both
  std::int64_t first_id = 0;
  std::int64_t last_id = 0;
  std::int64_t count[op_count] = {};  // events per Op
  std::int64_t bytes[op_count] = {};  // bytes per Op (read, write, disk_read, disk_write, paging)

  // Adds other, whose events all come after these or all before.
  void add(const OperationTotals& other);
};

class BrowsingTotals {
 public:
  explicit BrowsingTotals(SQLite::Database& db);

  struct Pair {
    std::int64_t process_id;
    std::int64_t file_id;
    const OperationTotals* totals;
  };

  // Whether the batch being written should fold: the interval passed since
  // the last fold, or much is held.
  bool due() const;
  // In a transaction: adds what is held and batch (pairs may repeat, and are
  // reordered) to the tables, which then hold the events up to through_id.
  void fold(std::vector<Pair>& batch, std::int64_t through_id);
  // After the transaction of a batch committed: forgets what was held when
  // it folded, holds batch when not.
  void committed(bool folded, const std::vector<Pair>& batch);
  bool holding() const { return !m_held.empty(); }
  // The most a fold of what is held adds to the database: every pair new, in
  // its table, its index and as a new file (B-tree pages about 2/3 full).
  std::uint64_t fold_bytes() const { return m_held.size() * 320; }
  // In a transaction: folds the events after through_id that the tables lack
  // (their writer stopped before it folded them).
  void catch_up();
  // Moves the totals of file row from into those of file row into.
  void merge_file(std::int64_t from, std::int64_t into);
  // Statements left half-run by a failed transaction.
  void reset();
  // How long what is written may wait to be folded (0: every batch folds).
  void set_interval(std::chrono::milliseconds interval) { m_interval = interval; }
  // The most pairs held before a fold (a cap on the database sets it lower).
  void set_hold_limit(std::size_t pairs) { m_hold_limit = pairs; }
  // Keeps no totals from now on: under a small cap they would take much of
  // it (and their folds much of its WAL).
  void stop_keeping() {
    m_keeping = false;
    m_held.clear();
  }

 private:
  struct KeyHash {
    std::size_t operator()(const std::pair<std::int64_t, std::int64_t>& key) const noexcept;
  };
  // Adds pairs (reordered) to the three tables, which then hold the events
  // up to through_id.
  void upsert(std::vector<Pair>& pairs, std::int64_t through_id);
  // Adds totals to what is held for key (process, file).
  void hold(const std::pair<std::int64_t, std::int64_t>& key, const OperationTotals& totals);

  SQLite::Database& m_db;
  SQLite::Statement m_upsert_file;
  SQLite::Statement m_upsert_process;
  SQLite::Statement m_upsert_pair;
  SQLite::Statement m_has_pair;
  SQLite::Statement m_set_through;
  std::chrono::milliseconds m_interval{5000};
  std::size_t m_hold_limit = 32768;
  bool m_keeping = true;
  std::chrono::steady_clock::time_point m_last_fold = std::chrono::steady_clock::now();
  // (process, file) -> what was committed since the last fold
  std::unordered_map<std::pair<std::int64_t, std::int64_t>, OperationTotals, KeyHash> m_held;
  std::vector<Pair> m_scratch;  // held and batch together
  // In a fold: the pairs new to the table, by file and by process.
  std::unordered_map<std::int64_t, std::int64_t> m_new_partners_of_file, m_new_partners_of_process;
};

}  // namespace etwaudit
