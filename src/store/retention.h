#pragma once
// Retention: dropping the oldest events while keeping what they add up to.
//
// A Pruner prunes whole segments, oldest first, one segment per transaction.
// Their events go with their slot table (sql/0009): a segment pruned while
// others of its slot are kept leaves its rows below the slot's kept_from, and
// the slot is emptied in the transaction that prunes its last kept segment,
// at a tenth of the cost of deleting the rows one by one. Where that would
// leave more than slot_rows_limit rows to empty at once (a slot that grew
// past its share while the next was not free yet), in the slot the writer is
// filling, or for a segment that is not the oldest kept, its rows are deleted
// at once (at most 65,536). Either way a transaction holds the write lock for
// tens of milliseconds, not seconds. In the same transaction its activity
// rows become its hourly totals (segments.pruned) and retention's
// pruned_before advances. Once every segment of an hour is pruned, the hour's
// activity rows are added into hour_totals, which holds each (hour, process,
// file) once however many segments the hour had, a few segments a
// transaction: folding them one transaction a segment rewrote each page of
// the hour's totals once a segment, and cost as much as writing the events. At
// every commit hour_totals plus activity count every event ever written
// (sql/0003_retention.sql, sql/0007_pruned_segments.sql).
//
// A segment goes when its newest event is older than keep and every
// destination has its events (sql/0017: an outage longer than keep leaves
// the backlog in place), or while the pages
// in use exceed max_bytes less a headroom (a tenth of it, or what the next
// batches are expected to add) (pages freed by deletes are reused by later
// inserts, so the file stops growing near the cap); what that takes before a
// destination had it is counted in destinations.pruned_unshipped. The newest
// segment is
// never pruned: a collector may still be adding to it. Names, processes,
// runs and minute_totals are never pruned. The totals of pruned hours
// (hour_totals rows and pruned segments' activity rows) are dropped only for
// max_bytes, oldest hour first, and only once no segment but the newest is
// left: the cap is what the user asked for, and per-minute totals still count
// those events. Should what is left still outgrow max_bytes (names, runs, the
// minute totals), the Pruner says so and recording goes on.
//
// The collector prunes between its batches; `etwaudit prune` does the same
// from another connection, each of its transactions waiting for the
// collector's batch in progress (SQLite's write lock).

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "store/database.h"
#include "store/event_slots.h"
#include "store/event_writer.h"

namespace etwaudit {

struct RetentionPolicy {
  std::optional<std::int64_t> keep_ns;     // prune events older than this (ns before now)
  std::optional<std::uint64_t> max_bytes;  // keep the database's pages in use under this
  std::uint64_t headroom = 0;              // ...less this much, for what comes next (0: a tenth of it)
  std::uint64_t limit() const { return *max_bytes - std::min(*max_bytes / 2, std::max(*max_bytes / 10, headroom)); }
  bool enabled() const { return keep_ns || max_bytes; }
};

// The browsing totals' pairs a cap of max_bytes allows: one in 4 KiB, about
// a thirtieth of it (sql/0021).
inline std::int64_t browsing_pairs_allowed(std::uint64_t max_bytes) {
  return static_cast<std::int64_t>(max_bytes / 4096);
}
// Under a smaller cap the collector keeps no browsing totals.
inline constexpr std::uint64_t browsing_totals_min_cap = std::uint64_t{64} << 20;

struct PruneResult {
  std::uint64_t segments = 0;                        // segments deleted
  std::uint64_t rows = 0;                            // event rows deleted
  std::uint64_t events = 0;                          // events they stood for
  std::uint64_t transactions = 0;                    // transactions committed
  std::uint64_t total_hours = 0;                     // hours of hourly totals dropped for max_bytes
  std::uint64_t folded_segments = 0;                 // pruned segments folded into hour_totals
  std::chrono::microseconds longest_transaction{0};  // longest write lock held
  const char* longest_work = "";                     // what it did: "segment", "fold", "totals", "browsing totals"
  std::chrono::microseconds longest_checkpoint{0};   // longest WAL checkpoint after one (without the lock)
  std::chrono::microseconds total_time{0};           // all transactions together
  std::uint64_t unshipped_rows = 0;                  // event rows deleted before a destination had them
  std::uint64_t held_segments = 0;                   // segments past keep that a destination has not had yet
  bool over_size = false;                            // still over max_bytes with nothing left to prune
  bool budget_spent = false;                         // stopped at the time budget with more to prune

  // Adds the counts and times of a later round (not its flags).
  void add(const PruneResult& round);
};

// The units of the store, shrunk under a small cap. Pruning drops whole
// segments and never the newest, and the WAL keeps its largest size until it
// is cut back: with the usual 65,536-event segments and 64 MiB WAL, a few MiB
// of cap (or of disk) would be full before the first segment could go. Under
// max_bytes a segment holds about a 32nd of the cap (at 64 bytes an event, more
// than an event row takes) and the WAL is cut back at an 8th of it (at the
// latest at a 4th: Checkpointer::cut_back).
// A slot table holds about a 12th of what the cap leaves for events (at 32
// bytes a row), so that the ring of 16 reaches around it: emptying the oldest
// frees a 12th of the cap.
struct StoreSizing {
  std::int64_t segment_events = segment_capacity;  // EventWriter::set_segment_capacity
  std::int64_t slot_rows = slot_rows_limit;        // EventWriter::set_slot_rows
  std::int64_t wal_bytes = wal_size_limit;         // the Checkpointer's wal_limit
};
StoreSizing sizing_for(const RetentionPolicy& policy);

// Bytes of the database's pages in use (page_count - freelist_count).
std::uint64_t used_bytes(SQLite::Database& db);

class TimedAutocheckpoint;

class Pruner {
 public:
  explicit Pruner(SQLite::Database& db);

  // Prunes under policy at time now (ns) until nothing more is due, or until
  // budget has been spent (then budget_spent is set; call again later).
  PruneResult prune(const RetentionPolicy& policy, std::int64_t now,
                    std::chrono::milliseconds budget = std::chrono::milliseconds::max());

  // Records the policy in the retention table (for `etwaudit status`).
  void record_policy(const RetentionPolicy& policy);

  // Called after each transaction prune() commits, when set (the collector
  // cuts its WAL back there).
  std::function<void()> after_transaction;

 private:
  // The oldest prunable segment under policy, or 0.
  std::int64_t due_segment(const RetentionPolicy& policy, std::int64_t now);
  // Deletes one segment in one transaction; adds to result.
  void prune_segment(std::int64_t segment_id, PruneResult& result);
  // In prune_segment: counts the rows of a segment that destinations had not
  // received yet, in destinations.pruned_unshipped; returns the most of them.
  std::int64_t count_unshipped(int slot, std::int64_t first_id, std::int64_t last_id);
  // In prune_segment: removes the segment's event rows, or leaves them for
  // their slot to be emptied.
  void remove_rows(std::int64_t segment_id, int slot, std::int64_t first_id, std::int64_t last_id, std::int64_t rows);
  // Folds pruned segments of the oldest hour that is pruned whole into
  // hour_totals, at most about fold_rows activity rows in one transaction;
  // false when there is none.
  bool fold_hour(PruneResult& result);
  // Deletes up to total_rows of the oldest hour's totals in one transaction;
  // false when there are none.
  bool prune_total_hour(PruneResult& result);
  // Deletes the browsing totals of the (process, file) pairs seen longest
  // ago, at most at_most of them (4,096 a transaction): under max_bytes, the
  // pairs beyond what it allows (sql/0021). False when there are none.
  bool prune_browsing_totals(PruneResult& result, std::int64_t at_most);
  // Adds a committed transaction begun at started to result: the time it
  // held the write lock, without the checkpoint SQLite may run after it.
  void count_transaction(PruneResult& result, std::chrono::steady_clock::time_point started, const char* work);

  SQLite::Database& m_db;
  SQLite::Statement m_oldest;          // oldest segment but the newest
  SQLite::Statement m_oldest_expired;  // ...whose newest event is before ?
  SQLite::Statement m_segment;         // a segment's bounds
  SQLite::Statement m_fold;            // its activity into hour_totals
  SQLite::Statement m_slot_state;      // where segment ?2's rows stand in its slot ?1
  SQLite::Statement m_leave_rows;      // leaves them below kept_from
  SQLite::Statement m_slot_emptied;
  SQLite::Statement m_delete_activity;
  SQLite::Statement m_delete_segment;
  SQLite::Statement m_delete_renames;               // a pruned segment's renames (sql/0013)
  SQLite::Statement m_held;                         // segments past keep held for a destination
  SQLite::Statement m_foldable_hour;                // the hour fold_hour folds
  SQLite::Statement m_hour_segments;                // its pruned segments and their activity rows
  bool m_may_fold = true;                           // false: fold_hour found nothing since the last segment was pruned
  static constexpr std::int64_t total_rows = 8192;  // the same for prune_total_hour
  static constexpr std::int64_t fold_rows = 8192;   // about 50 ms (about 6 µs a row)
  bool m_pruning_pairs = false;                     // browsing totals over the cap's allowance, until under it
  SQLite::Statement m_mark_pruned;                  // keeps a segment's activity rows as its totals
  SQLite::Statement m_update_retention;
  TimedAutocheckpoint* m_autocheckpoint = nullptr;  // while prune() runs
};

}  // namespace etwaudit
