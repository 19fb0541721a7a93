#pragma once
// EventFeed: the events of a database after a cursor, in id order (the order
// they were written), each with what a reader elsewhere needs resolved: the
// process (image, pid, start, user, parent, command line), the file's name,
// a rename's two names, and the event's uid. What `etwaudit export` writes
// and a destination receives (doc/fleet.md).
//
// It reads segment by segment (a segment's events lie in one slot table, in
// one id range), so a batch costs what it returns, however large the
// database. Ids only grow and a batch commits whole, so a cursor never
// skips an event a later commit adds.

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace etwaudit {

struct FeedEvent {
  std::int64_t event_id = 0;
  std::int64_t time_ns = 0;
  std::string op;
  std::string path;
  std::optional<std::int64_t> offset, size, end_offset, status;
  std::int64_t count = 1;
  std::optional<std::int64_t> tid;
  std::int64_t process_id = 0;
  std::optional<std::string> renamed_from, renamed_to;
};

struct FeedProcess {
  std::int64_t pid = 0;
  std::optional<std::int64_t> start_time, parent_pid;
  std::string image;
  std::optional<std::string> user, command_line;
};

class EventFeed {
 public:
  explicit EventFeed(SQLite::Database& db);

  // At most max events with an id above after, in id order. Each call reads
  // names and processes afresh (a file named since the last batch).
  std::vector<FeedEvent> next(std::int64_t after, std::size_t max);
  // At most max events of one file (file_id) or one process (process_id;
  // the other 0) with an id above after and up to through, in id order:
  // what a destination had of them before their name came (sql/0018).
  std::vector<FeedEvent> of(std::int64_t file_id, std::int64_t process_id, std::int64_t after, std::int64_t through,
                            std::size_t max);
  // The process row of an event (cached).
  const FeedProcess& process(std::int64_t process_id);

 private:
  const std::string& file_name(std::int64_t file_id);
  // Appends the rows statement returns, each resolved.
  void read_rows(SQLite::Statement& statement, std::vector<FeedEvent>& events);

  SQLite::Database& m_db;
  SQLite::Statement m_segments;                               // segments holding ids above ?1, in id order
  std::vector<std::optional<SQLite::Statement>> m_events;     // per slot
  SQLite::Statement m_ranges;                                 // the id ranges holding a file's or process's events
  std::vector<std::optional<SQLite::Statement>> m_events_of;  // per slot: those events
  SQLite::Statement m_process;
  SQLite::Statement m_file;
  SQLite::Statement m_rename;
  std::vector<std::string> m_ops;  // op number -> name
  std::unordered_map<std::int64_t, FeedProcess> m_processes;
  std::unordered_map<std::int64_t, std::string> m_files;
};

}  // namespace etwaudit
