#pragma once
// The filters every report shares (--since, --until, --process, --path, --op)
// and the SQL they become.
//
// Reports do not repeat the filtering: the runner puts common table
// expressions in front of each report's SELECT, built from fixed fragments
// for the filters that are present, with every value bound as a parameter:
//
//   bounds(lo, hi)            the time window in ns
//   window_segments(...)      segments overlapping it; inside = wholly inside
//   windowed_events(...)      the matching events themselves, exact to the ns:
//                             id, time, process_id, tid, op, file_id, offset, size,
//                             count, end_offset, status
//   newest_events(...)        the same columns, but for newest-first listings
//                             of at most :limit rows (default 50): it may
//                             leave out matching events older than those
//   oldest_events(...)        and for oldest-first listings of at most :limit
//                             rows (default 1000), leaving out newer ones
//   windowed_activity(...)    the counts of the matching events by segment,
//                             process and file: activity rows for segments
//                             inside the window, and one row per event in the
//                             segments at its edges, so a key can have several
//                             rows: always add them up. Columns segment_id,
//                             hour, process_id, file_id, events, failed and
//                             the per-operation columns of activity (unselected
//                             --op operations are 0, their bytes NULL). Where
//                             the window holds events without a size
//                             (QueryFilters::unsized), an operation's bytes
//                             are NULL where none of its events had one (none
//                             in the row, or fanotify's: sql/0022), so sum()
//                             is NULL where nothing is known. events and the
//                             per-operation columns leave out the operations
//                             that failed, which failed counts (NULL with --op;
//                             with --failed only it counts)
//   windowed_op_totals(op, events, bytes)        those counts per operation
//   windowed_ops(hour, op, events, bytes)        and per operation and hour
//                             (from windowed_minutes when no process or path
//                             is picked)
//                             (bytes NULL for operations without sizes, and
//                             where none of the events had one)
//   windowed_minutes(minute, op, events, bytes) the same per minute (minute =
//                             its first ns), from the writer's minute_totals
//                             when no process or path is picked
//   windowed_rows(rows, exact) how many rows windowed_events holds, counted
//                             from segments and activity rows without reading
//                             the events (the totals of the listings that a
//                             limit cut); exact 0: a lower bound (--op, --failed)
//   v_events                  with any filter: the view's columns over
//                             windowed_events, so that ad-hoc SQL on v_events
//                             is filtered too
//
// So a report over the whole window aggregates windowed_activity (small), and
// a report that lists events reads windowed_events, which goes through the
// activity index to the few id ranges that hold them.

#include <SQLiteCpp/Database.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/file_event.h"
#include "query/read_only_guard.h"
#include "query/report.h"

namespace etwaudit {

struct QueryFilters {
  std::optional<std::int64_t> since;       // ns since epoch, inclusive
  std::optional<std::int64_t> until;       // ns since epoch, inclusive
  std::optional<std::string> process;      // image glob, or a pid
  std::optional<std::string> user;         // account glob (DOMAIN\\user, or user alone)
  std::optional<std::string> path;         // path glob
  std::vector<std::string> exclude_paths;  // --exclude-path globs: files matching none of them
  std::vector<Op> ops;                     // empty: every operation
  // --failed: only operations that failed (events with a status). Without it
  // the totals leave them out, and the listings show them with their status.
  bool failed_only = false;
  // The path glob matches many files (see broad_path_files): walk the
  // window's segments instead of each matching file's activity rows.
  bool broad_path = false;
  // One process or one file by its row id, exactly (the drill-downs of the
  // HTML report): a glob over a name would also take other instances of a
  // program, or other files whose names differ only in case.
  std::optional<std::int64_t> process_id;
  std::optional<std::int64_t> file_id;
  // The window holds events without a size (fanotify's): windowed_activity
  // then checks each row's bytes (see judge_sizes).
  bool unsized = true;

  // A filter on the process row (--process, --user, process_id).
  bool by_process() const { return process || user || process_id; }
  // A filter on the file row (--path, --exclude-path, file_id).
  bool by_file() const { return path || file_id || !exclude_paths.empty(); }
  // Any filter at all.
  bool any() const { return since || until || by_process() || by_file() || !ops.empty() || failed_only; }
};

// A path glob matching more files than this is broad (QueryFilters::broad_path).
inline constexpr int broad_path_files = 1000;

// Reads a --since/--until value: ISO-8601 with Z or an offset, or a time
// relative to now ("15m", "2h", "7d"). Throws UsageError naming the option.
std::int64_t parse_time_argument(const std::string& option, const std::string& value, std::int64_t now);
// Checks a --path/--process glob; throws UsageError naming the option and why.
void check_glob_argument(const std::string& option, const std::string& value);
// --op NAME; throws UsageError listing the names.
Op parse_op_argument(const std::string& value);

// The WITH clause described above (without the word WITH), for these filters.
std::string filter_ctes(const QueryFilters& filters);
// The parameters filter_ctes binds (:since, :until, :process, :path,
// :exclude_path_0 ...).
void add_filter_params(const QueryFilters& filters, Params& params);
// Sets filters.broad_path by counting the files the path glob matches in db
// (which needs prepare_read_connection's functions); only exclusions pick
// most files: broad.
void judge_path_breadth(SQLite::Database& db, QueryFilters& filters);

// A path glob without wildcards that names a folder: the files recorded
// below it (at most limit), when the glob itself matches at most one file
// (the folder's own row), so that "file-history /srv/hr" can say "did you
// mean '/srv/hr/*'?". 0 when it is not such a folder.
std::int64_t files_below_folder(SQLite::Database& db, const std::string& glob, std::int64_t limit);
// The glob for everything below a folder: "/srv/hr" -> "/srv/hr/*",
// "C:\Data\" -> "C:\Data\*".
std::string below_folder(const std::string& folder);
// A path argument ending in a separator means everything below it.
std::string path_argument(const std::string& value);

// Sets filters.unsized from the minutes of the window that hold events
// without a size (minute_totals.unsized, through its partial index).
void judge_sizes(SQLite::Database& db, QueryFilters& filters);

// Makes db ready for queries: the functions reports use (sql_functions.h)
// and a guard that refuses anything but reading, with a message that says
// what was refused (read_only_guard.h; take_refusal() says why).
void prepare_read_connection(SQLite::Database& db);

}  // namespace etwaudit
