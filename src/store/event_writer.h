#pragma once
// EventWriter: turns batches of FileEvents into rows, one transaction a batch.
//
// For each event it finds the database ids of its file and process (interning
// new ones), gives it a time-ordered events.id, appends the row, and adds it
// to the open segment and to the per-batch activity rollup. At the end of the
// batch it upserts the touched segments and activity rows and the run's
// counters, and commits. The layout and why it is shaped this way are
// described at the top of sql/0001_initial.sql.
//
// All statements are prepared once. Only the collector thread calls it.
// Every transaction begins IMMEDIATE, taking the write lock before it reads
// anything: a deferred one that read first could not wait for another
// connection's write lock (SQLite refuses the upgrade at once) and would fail.
// A write that fails leaves the database and the writer as they were before
// it, so the same batch can be written again (see Collector).

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/catalog.h"
#include "core/device_map.h"
#include "core/file_event.h"
#include "core/run_stats.h"
#include "store/browsing_totals.h"
#include "store/bulk_statement.h"
#include "store/event_slots.h"
#include "store/record_filter.h"

namespace etwaudit {

// What the collector must never record: itself. Without this a collector would
// record its own database writes, which cause more writes, without end.
struct SelfExclusion {
  std::uint32_t pid = 0;           // our own pid (live sources only; 0 = none)
  std::vector<std::string> paths;  // our database and its -wal, -shm and -journal files
  bool ignore_case = false;        // compare paths without regard to case (Windows)

  // The exclusion for a collector writing database_path from process pid.
  static SelfExclusion for_database(const std::string& database_path, std::uint32_t pid);
  bool excludes_path(const std::string& path) const;
};

// Events per segment at most, unless set_segment_capacity lowers it; bounds
// the rows a located range can hold, and what one prune transaction deletes.
inline constexpr std::int64_t segment_capacity = 65536;

class EventWriter {
 public:
  // device_map, when given, turns NT paths into drive paths (the NT path is kept too).
  EventWriter(SQLite::Database& db, Catalog& catalog, SelfExclusion self, const DeviceMap* device_map = nullptr);

  // Records only what filter keeps (the rest counts as excluded). Call before the first batch.
  void set_filter(RecordFilter filter);

  // Starts a new segment after this many events (1 .. segment_capacity).
  void set_segment_capacity(std::int64_t events) {
    m_segment_capacity = std::clamp<std::int64_t>(events, 1, segment_capacity);
  }

  // Moves on to the next slot table once the current one holds this many
  // rows (1 .. slot_rows_limit) and the next one is empty.
  void set_slot_rows(std::int64_t rows) { m_slot_rows_target = std::clamp<std::int64_t>(rows, 1, slot_rows_limit); }

  // Inserts this run's collector_runs row (and closes the rows of runs that
  // died without closing their own: we hold the only writer lock).
  // collector_pid is the pid of the process doing the collecting (0: not recorded).
  // live: the events happen on this host as we record them (not from a file);
  // input_hash: the fingerprint of the file read, if any.
  // Records in the current run which clock timed its events (sql/0015).
  void set_run_clock(const std::string& clock);
  void begin_run(const std::string& source, const std::string& host, std::uint32_t collector_pid = 0, bool live = false,
                 const std::string& input_hash = {});
  // Writes batch (sorted in place by time) and the run counters in stats in one
  // transaction; afterwards adds what it wrote to stats.
  void write_batch(std::vector<FileEvent>& batch, RunStats& stats);
  // Commits the run counters alone, so a quiet run still shows it is alive
  // (and folds the browsing totals held).
  void heartbeat(const RunStats& stats);
  // Folds the browsing totals held into their tables, in a transaction of
  // its own (store/browsing_totals.h); totals_waiting: held and due.
  void fold_totals();
  // The same, where failing to fold must not fail the caller (heartbeat, end_run).
  void fold_totals_if_possible() noexcept;
  bool totals_waiting() const { return m_browsing.holding() && m_browsing.due(); }
  // The most the next fold can add to the database's pages.
  std::uint64_t totals_fold_bytes() const { return m_browsing.fold_bytes(); }
  // How long written events may wait to be folded into the browsing totals
  // (0: every batch).
  void set_totals_interval(std::chrono::milliseconds interval) { m_browsing.set_interval(interval); }
  // The next batch does not fold the browsing totals, due or not.
  void postpone_totals_fold() { m_postpone_fold = true; }
  // Keeps no browsing totals (a database capped small).
  void stop_keeping_totals() { m_browsing.stop_keeping(); }
  // The most (process, file) pairs held between folds.
  void set_totals_hold_limit(std::size_t pairs) { m_browsing.set_hold_limit(pairs); }
  // Records how the run ended.
  void end_run(const std::string& exit_reason, const RunStats& stats);

  // Starts a new segment with the next event, so that the current one (the
  // newest, which retention never prunes) can be pruned when the cap needs it.
  void close_segment() { m_segment = Segment{}; }

  std::int64_t run_id() const { return m_run_id; }
  // Time of the newest event this writer has committed; INT64_MIN before the first.
  std::int64_t last_event_time() const { return m_last_event_time; }
  // Events of this run whose file has a name now (after back-fill).
  std::uint64_t resolved_events() { return run_events(true); }
  // Events of this run still kept whose file has no name (pruned ones are not counted).
  std::uint64_t unresolved_events() { return run_events(false); }
  SQLite::Database& database() { return m_db; }

 private:
  struct Segment {
    std::int64_t id = 0;        // segments.segment_id; 0 = none open
    std::int64_t hour = 0;      // hours since epoch of every event in it
    std::int64_t first_id = 0;  // events.id bounds
    std::int64_t last_id = 0;
    std::int64_t min_time = 0;  // exact time bounds
    std::int64_t max_time = 0;
    std::int64_t events = 0;
    int slot = 0;  // events_NN holding its events
  };

  struct ActivityKey {
    std::int64_t segment_id;
    std::int64_t process_id;
    std::int64_t file_id;
    bool operator==(const ActivityKey&) const = default;
  };
  struct ActivityKeyHash {
    std::size_t operator()(const ActivityKey& key) const noexcept;
  };
  using ActivityTotals = OperationTotals;

  // Events and bytes of one minute by operation, for minute_totals.
  struct MinuteTotals {
    std::int64_t minute = 0;  // minutes since epoch
    std::int64_t count[op_count] = {};
    std::int64_t bytes[op_count] = {};
    std::int64_t unsized[op_count] = {};  // events without a size, of operations that move bytes
  };

  // Events of this run still kept whose file has a name (named) or has none.
  std::uint64_t run_events(bool named);

  // Database id for a Catalog id; 0 when the item is excluded.
  std::int64_t file_id(std::uint32_t path);
  std::int64_t process_id(std::uint32_t process);
  std::int64_t lookup_or_insert_file(const std::string& name, std::uint64_t file_key);
  // Names the catalog learned for files written without one: updates their rows.
  void apply_resolutions();
  // Command lines the catalog learned for processes written without one.
  void apply_learned_command_lines();
  // Moves the events and activity of file row from to file row into, and
  // drops row from: a file that was unresolved under one kernel key turned
  // out to have a row under its name already.
  void merge_file(std::int64_t from, std::int64_t into);
  // While there are destinations: the file or the process (the other 0) got
  // its name after events of it may have been delivered (sql/0018).
  void log_name_change(std::int64_t file_id, std::int64_t process_id);
  // path and nt_path for a name as the source gave it.
  std::pair<std::string, std::string> file_columns(const std::string& name) const;
  std::int64_t lookup_or_insert_process(const ProcessInfo& info);

  // The parts of write_batch, in order, inside its transaction.
  struct BatchCounts {
    std::uint64_t written = 0, excluded = 0, own = 0, unresolved = 0;  // events
  };
  // Inserts the batch's event rows (and its names and processes) and adds
  // the events up in m_activity, m_touched and m_minutes.
  BatchCounts insert_events(const std::vector<FileEvent>& batch);
  void write_activity();         // m_activity into activity
  void write_totals(bool fold);  // m_activity to the browsing totals: held, or folded with what is held
  void write_segments();         // m_touched into segments
  void write_minutes();          // m_minutes into minute_totals
  // Where the writer stood before a batch; a batch that failed puts it back.
  struct Position {
    std::int64_t last_event_id;
    Segment segment;
    std::int64_t last_segment_id;
    std::int64_t first_event_time, last_event_time;
    int slot;
    std::int64_t slot_rows;
  };
  void forget_batch(const Position& before);

  // Inserts the rows in m_pending.
  void insert_pending();
  // Records the two names of the rename event id.
  void insert_rename(std::int64_t id, const FileEvent& event);
  void add_to_segment(std::int64_t id, std::int64_t time);
  bool slot_is_empty(int slot);
  void save_run_counters(const RunStats& stats, const BatchCounts& batch);

  SQLite::Database& m_db;
  Catalog& m_catalog;
  SelfExclusion m_self;
  RecordFilter m_filter;
  std::array<bool, op_count> m_selected_ops;  // m_filter.selected_ops()
  const DeviceMap* m_device_map;              // may be null
  std::int64_t m_run_first_segment_id = 0;    // this run's events are in segments above this
  std::int64_t m_run_id = 0;
  std::int64_t m_first_event_time = INT64_MAX;  // exact time bounds of what the run wrote
  std::int64_t m_last_event_time = INT64_MIN;
  std::int64_t m_last_event_id = 0;    // ids only grow
  std::int64_t m_last_segment_id = 0;  // highest segment id in the database
  Segment m_segment;                   // the open segment
  std::int64_t m_segment_capacity = segment_capacity;
  std::vector<Segment> m_touched;  // segments changed by the current batch
  int m_slot = 0;                  // the slot table events go to
  std::int64_t m_slot_rows = 0;    // rows in it
  std::int64_t m_slot_rows_target = slot_rows_limit;

  // Catalog id -> database id (0 = not looked up yet, filtered_out or ours).
  static constexpr std::int64_t filtered_out = -1;  // left out by a filter of the run
  static constexpr std::int64_t ours = -2;          // etwaudit's own process or database file
  // Whether event is etwaudit's own (its ids looked up already).
  bool is_own(const FileEvent& event) const;
  std::vector<std::int64_t> m_file_ids;
  std::vector<char> m_file_unresolved;  // the file has no name
  std::vector<std::int64_t> m_process_ids;

  std::unordered_map<ActivityKey, ActivityTotals, ActivityKeyHash> m_activity;        // this batch
  std::vector<const std::pair<const ActivityKey, ActivityTotals>*> m_activity_order;  // m_activity sorted by key
  std::vector<MinuteTotals> m_minutes;                                                // this batch, in time order

  // Events waiting for a multi-row INSERT.
  static constexpr int rows_per_insert = 32;
  struct EventRow {
    std::int64_t id;          // events.id
    std::int64_t process_id;  // database ids
    std::int64_t file_id;
    const FileEvent* event;  // the rest, from the batch
  };
  EventRow m_pending[rows_per_insert];
  int m_pending_count = 0;

  std::vector<BulkStatement> m_insert_event;   // one row, per slot
  std::vector<BulkStatement> m_insert_events;  // rows_per_insert rows, per slot
  BulkStatement m_upsert_activity;
  SQLite::Statement m_upsert_segment;
  SQLite::Statement m_upsert_minute;
  SQLite::Statement m_find_file;
  SQLite::Statement m_find_unnamed_file;
  SQLite::Statement m_insert_file;
  SQLite::Statement m_name_file;
  SQLite::Statement m_insert_rename;  // the two names of a rename event (sql/0013)
  SQLite::Statement m_slot_is_empty;
  SQLite::Statement m_file_slots;                                                     // slots holding a file's events
  std::array<std::optional<SQLite::Statement>, event_slot_count> m_move_file_events;  // per slot, when needed
  SQLite::Statement m_merge_file_activity;
  SQLite::Statement m_merge_file_totals;
  BrowsingTotals m_browsing;
  bool m_postpone_fold = false;               // the next batch does not fold
  std::vector<BrowsingTotals::Pair> m_pairs;  // scratch for write_totals
  SQLite::Statement m_find_process;
  SQLite::Statement m_insert_process;
  SQLite::Statement m_name_process;
  SQLite::Statement m_log_name_change;   // sql/0018
  std::vector<std::uint32_t> m_learned;  // processes whose learned command line is not committed yet
  SQLite::Statement m_update_run;
};

}  // namespace etwaudit
