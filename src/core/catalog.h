#pragma once
// Catalog: the strings behind a FileEvent's ids.
//
// The source thread interns each path and process once and then passes small
// integer ids through the queue; the collector reads the strings back when it
// meets an id for the first time. Interning is for the one source thread;
// reading by id is safe from any thread.
//
// A file whose name is not known yet (ETW names many files only in a rundown
// at the end of a trace) gets a path id of its own, interned by the kernel's
// FileKey or FileObject value: path(id) is "" and file_key(id) is the key.
// When the name arrives, resolve_file_key gives that entry its name and
// records a Resolution, which the collector takes to back-fill what it stored
// under the id. Such an entry is "current" for its key until it is resolved or
// forgotten; the kernel reuses key values, so a closed FileObject or a deleted
// file is forgotten and its next sighting starts a new entry.

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace etwaudit {

struct ProcessInfo {
  std::uint32_t pid = 0;             // process id as the OS reported it
  std::int64_t start_time = 0;       // ns since epoch; 0 when unknown
  std::string image;                 // executable path or name; empty when unknown
  std::string command_line;          // empty when unknown
  std::uint32_t parent_pid = 0;      // 0 when unknown
  std::optional<std::uint32_t> uid;  // Linux: the real uid; none when unknown (and on Windows)
  std::string user;                  // DOMAIN\user, or the SID (S-1-5-21-...) when no name is known; empty when unknown
};

// A path entry that was interned by kernel key and has now got its name.
struct Resolution {
  std::uint32_t path_id = 0;  // the entry, as intern_file_key returned it
  std::string name;           // its name as the kernel gave it
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
  // The same, keeping the parent and user of the first sighting too.
  std::uint32_t intern_process(const ProcessInfo& info);

  // Source thread only. The id of the current unresolved entry for a kernel
  // FileKey/FileObject value, or a new entry if it has none. Key 0 is no key:
  // it gets id 0, the empty path.
  std::uint32_t intern_file_key(std::uint64_t key);
  // Source thread only. Gives the current unresolved entry of key the name
  // and records a Resolution; nothing when key has no such entry or name is
  // empty. The entry is then no longer current: intern_path(name) returns it
  // unless name already had an id, and intern_file_key(key) starts a new one.
  void resolve_file_key(std::uint64_t key, std::string_view name);
  // Source thread only. The next intern_file_key(key) starts a new entry; the
  // old one keeps its id and stays unresolved.
  void forget_file_key(std::uint64_t key);

  // Any thread.
  std::string path(std::uint32_t id) const;
  // The kernel key of an entry made by intern_file_key; 0 for other paths.
  std::uint64_t file_key(std::uint32_t id) const;
  ProcessInfo process(std::uint32_t id) const;
  std::size_t path_count() const;
  std::size_t process_count() const;
  // The resolutions recorded since the last call, oldest first.
  std::vector<Resolution> take_resolutions();
  // Source thread only. Gives a process without a command line the one
  // learned after it was interned (Linux reads it once the exec has taken
  // effect); nothing when it has one or command_line is empty.
  void learn_command_line(std::uint32_t process_id, std::string_view command_line);
  // The processes given a command line since the last call.
  std::vector<std::uint32_t> take_learned_command_lines();

 private:
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const noexcept { return std::hash<std::string_view>{}(text); }
  };

  // Source-thread lookup tables.
  std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> m_path_ids;
  std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> m_process_ids;
  std::string m_process_key;                                           // scratch buffer for process lookups
  std::unordered_map<std::uint64_t, std::uint32_t> m_unresolved_keys;  // key -> its current unresolved entry

  // Shared storage, indexed by id; deque so that growth never moves entries.
  mutable std::mutex m_mutex;
  std::deque<std::string> m_paths;
  std::deque<std::uint64_t> m_file_keys;  // per path id: its kernel key, 0 for ordinary paths
  std::deque<ProcessInfo> m_processes;
  std::vector<Resolution> m_resolutions;  // recorded and not yet taken
  std::vector<std::uint32_t> m_learned;   // processes given a command line, not yet taken
};

}  // namespace etwaudit
