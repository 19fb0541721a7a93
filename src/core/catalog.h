#pragma once
// Catalog: the strings behind a FileEvent's ids.
//
// The source thread interns each path and process once and then passes small
// integer ids through the queue; the collector reads the strings back when it
// meets an id for the first time. Interning is for the one source thread;
// reading by id is safe from any thread.

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace etwaudit {

struct ProcessInfo {
  std::uint32_t pid = 0;        // process id as the OS reported it
  std::int64_t start_time = 0;  // ns since epoch; 0 when unknown
  std::string image;            // executable path or name; empty when unknown
  std::string command_line;     // empty when unknown
};

class Catalog {
 public:
  Catalog();

  // Source thread only. The same string always gets the same id; id 0 is the
  // empty path.
  std::uint32_t intern_path(std::string_view path);
  // Source thread only. A process is the same process when pid, start time and
  // image agree; the command line of the first sighting is kept.
  std::uint32_t intern_process(std::uint32_t pid, std::int64_t start_time, std::string_view image,
                               std::string_view command_line = {});

  // Any thread.
  std::string path(std::uint32_t id) const;
  ProcessInfo process(std::uint32_t id) const;
  std::size_t path_count() const;
  std::size_t process_count() const;

 private:
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const noexcept { return std::hash<std::string_view>{}(text); }
  };

  // Source-thread lookup tables.
  std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> m_path_ids;
  std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> m_process_ids;
  std::string m_process_key;  // scratch buffer for process lookups

  // Shared storage, indexed by id; deque so that growth never moves entries.
  mutable std::mutex m_mutex;
  std::deque<std::string> m_paths;
  std::deque<ProcessInfo> m_processes;
};

}  // namespace etwaudit
