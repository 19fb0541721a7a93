#pragma once
// ReplaySource: events from a JSONL file, one JSON object per line.
//
//   {"time": "2026-12-02T10:15:30.1234567Z", "pid": 4242, "tid": 4343,
//    "process": "C:\\Windows\\notepad.exe", "op": "write",
//    "path": "C:\\Users\\ada\\notes.txt", "offset": 0, "size": 512}
//
// Required: time (ISO-8601 with Z or an offset, or an integer of ns since
// 1970), pid, op (a name from the ops table), path. Optional: tid, process
// (image), process_start (ISO-8601; tells reused pids apart), command_line,
// user (the process's account), parent_pid, offset and size (bytes, not
// negative), status (the NTSTATUS error of an operation that failed: a
// number or "0xC0000034"; 0 or null: it did not fail), renamed_from and
// renamed_to (on a rename, both: the file's old and new name; a rename is
// a line under each name). Blank lines are skipped; any other
// line that is not such an object is an error naming the file, the line and
// the problem, counted as bad input, and either ends the run or is skipped.

#include <atomic>
#include <iosfwd>
#include <string>

#include "sources/event_source.h"

namespace etwaudit {

// One parsed line; what parse_replay_line fills.
struct ReplayRecord {
  FileEvent event;  // time, offset, size, tid and op set
  std::uint32_t pid = 0;
  std::int64_t process_start = 0;
  std::string image;
  std::string command_line;
  std::string user;
  std::uint32_t parent_pid = 0;
  std::string path;
  std::string renamed_from, renamed_to;
};

// Parses one line. Returns an empty string on success, else what is wrong.
std::string parse_replay_line(std::string_view line, ReplayRecord& record);

class ReplaySource final : public EventSource {
 public:
  // Bad lines are reported on diagnostics (the first few, then a count).
  ReplaySource(std::string path, OnBadInput on_bad_input, std::ostream& diagnostics);

  std::string description() const override { return "replay:" + m_path; }
  bool is_live() const override { return false; }
  void run(BoundedQueue<FileEvent>& queue, Catalog& catalog, RunStats& stats) override;
  void stop() noexcept override { m_stop = true; }
  std::string error() const override { return m_error; }

 private:
  std::string m_path;
  OnBadInput m_on_bad_input;
  std::ostream& m_diagnostics;
  std::atomic<bool> m_stop{false};
  std::string m_error;  // set by run() before it returns
};

}  // namespace etwaudit
