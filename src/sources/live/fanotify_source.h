#pragma once
// FanotifySource: file activity on Linux, live, from fanotify.
//
// Two notification groups watch the chosen filesystems (FAN_MARK_FILESYSTEM,
// or FAN_MARK_MOUNT on kernels before 4.20):
//
//   content  FAN_OPEN, FAN_ACCESS, FAN_MODIFY, FAN_CLOSE_WRITE and
//            FAN_CLOSE_NOWRITE, each event with an open descriptor of the
//            file: its path is readlink(/proc/self/fd/N), " (deleted)" taken
//            off when the file has no name any more.
//   names    FAN_CREATE, FAN_DELETE and FAN_RENAME (Linux 5.17; before it
//            FAN_MOVED_FROM and FAN_MOVED_TO) with FAN_REPORT_DFID_NAME
//            (Linux 5.9): a handle of the directory and the entry's name (a
//            FAN_RENAME has the old and the new); the directory is opened by
//            handle to get its path. Older kernels have no such group, and
//            the source says so.
//
// Operations: open, read, write, close_write, close, create, delete, and
// rename (a rename is two events, under the old name and then the new, each
// naming both; before 5.17 neither knows the other). fanotify
// merges repeated events on a file that are still queued and reports no
// offsets or sizes, so a row on Linux means "at least once around this
// time", and offset and size stay NULL.
//
// Processes are identified by pid and start time (/proc/PID/stat). Their
// program is the one execve opened (FAN_OPEN_EXEC, Linux 5.0): the first
// executable a pid opens for exec is the program, so a process that exits
// at once is still named by its program, whatever /proc says by the time its
// events are read. The dynamic loader execve opens next is not the program;
// for a #! script, the script is the program (its interpreter is the first
// word of its command line; the exec open after the script's is taken for its
// interpreter, so a script whose interpreter lies on a filesystem not watched
// keeps its name over the next program it execs). A process first seen without an exec (started
// before the collector, or a fork) is looked up in /proc: its executable
// (/proc/PID/exe), or its command name ("[cat]") when it has exited but not
// been reaped, or its pid alone when it is gone. Once known, a (pid, start
// time) keeps its identity until it execs again: /proc is asked again at
// most every 250 ms (for every buffer of events without FAN_OPEN_EXEC), in
// case the pid was reused, and only a different start time replaces it.
// The parent pid, the user (the real uid's name) and the command line are
// taken from /proc while the process is there. Events of our own process are
// dropped here, before the queue.
// A kernel queue overflow (FAN_Q_OVERFLOW) is counted as lost.
//
// Each wake-up reads the content group until it is drained, then the name
// group, and 20 ms later hands both on in one order (causal_order.h): a
// file's create before what was done to it, its delete after. An event's
// time is when it was read (lowered to that of the file's events after it):
// no later than a few milliseconds after it happened, never before.

#include <atomic>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/file_event.h"
#include "platform/unique_fd.h"
#include "sources/event_source.h"
#include "sources/live/causal_order.h"
#include "sources/live/linux_system.h"

struct fanotify_event_info_header;

namespace etwaudit {

struct FanotifyOptions {
  std::vector<std::string> mounts;  // paths on the filesystems to watch; empty: every local filesystem
  std::vector<Op> ops;              // operations to ask the kernel for; empty: all it can report
  std::uint32_t own_pid = 0;        // never recorded
};

class FanotifySource final : public EventSource {
 public:
  // Sets up both groups and their marks. Throws Error when fanotify cannot be
  // used: no privilege ("needs root"), no fanotify in the kernel, a --mount
  // that cannot be watched.
  explicit FanotifySource(FanotifyOptions options);
  ~FanotifySource() override;

  std::string description() const override { return "fanotify"; }
  bool is_live() const override { return true; }
  void run(BoundedQueue<FileEvent>& queue, Catalog& catalog, RunStats& stats) override;
  void stop() noexcept override;
  std::string error() const override { return m_error; }

  // What is watched ("/ (ext4)", ...) and what this kernel cannot report, for
  // the note at the start of a run.
  const std::vector<std::string>& watched() const { return m_watched; }
  const std::vector<std::string>& limitations() const { return m_limitations; }
  // Kernel queue overflows seen (each loses an unknown number of events).
  std::uint64_t overflows() const { return m_overflows.load(std::memory_order_relaxed); }

 private:
  struct ProcessEntry {
    std::uint32_t id = 0;           // catalog id
    std::uint64_t start_ticks = 0;  // /proc/PID/stat field 22; 0: unknown
    std::string image;              // the program (from its exec, or /proc/PID/exe)
    std::string exe;                // /proc/PID/exe as last seen; empty: not seen since the exec
    std::uint64_t checked_in = 0;   // the buffer of events it was last checked for
    std::int64_t checked_at = 0;    // and when (steady clock ns)
    bool script = false;            // the exec'd program is a #! script whose interpreter has not been opened yet
    // Its command line was not there yet (execve opens the program before
    // the process becomes it): /proc is asked again at its next events.
    bool awaits_command_line = false;
    std::uint64_t command_line_checked_in = 0;  // the buffer it was last asked for
    // The command line of the program before the exec, which /proc shows until
    // the exec takes effect (a shell that execs a shell has the same exe).
    std::string stale_command_line;
  };
  struct Filesystem {
    std::int32_t fsid[2];
    UniqueFd mount_fd;  // for open_by_handle_at
  };

  void mark(const std::string& mount_point, const std::string& fs_type, bool given);
  // Calls visit(metadata, record) for each event of a buffer read from a
  // group, after what all events share: overflows are counted as lost, our
  // own events dropped. False (error() says why) when the buffer cannot be read.
  template <typename Visit>
  bool for_each_event(const char* buffer, long length, Visit visit);
  void read_content_events(const char* buffer, long length);
  // Reads and decodes the content group's queued events; false (error() says
  // why) when it cannot be read.
  bool drain_content(char* buffer, std::size_t read_size);
  // A read of the name group: where its bytes are, and when it was read.
  struct NameRead {
    std::size_t offset;
    long length;
    std::int64_t time;
  };
  void read_name_events(const char* buffer, long length, std::int64_t time);
  // Reads the name group's queued events into bytes, read_size apart, and
  // says where each read lies in reads; false (error() says why) when it
  // cannot be read.
  bool drain_names(char* bytes, std::size_t read_size, std::vector<NameRead>& reads);
  // Hands the events of the rounds that read them by read_by (steady ns) on,
  // in one causal order.
  void flush_settled(std::int64_t read_by);
  std::string directory_path(const std::int32_t fsid[2], const void* handle);
  // The catalog id of pid's process (buffer: the number of the buffer of
  // events being read).
  std::uint32_t process(std::uint32_t pid, std::uint64_t buffer);
  // The same for an exec open of path (fd: the opened program) by pid.
  std::uint32_t exec_process(std::uint32_t pid, const std::string& path, int fd, std::uint64_t buffer);
  // A new identity for pid from /proc (stat: /proc/PID/stat as just read,
  // empty when gone; image: the program when known, else /proc/PID/exe or
  // the command name); also the entry it is kept in. For an exec: the
  // command line of the program before it (empty: unknown), and whether
  // that was the same program, whose command line /proc would show until
  // the exec takes effect; unknown then, no command line is taken.
  std::uint32_t describe(std::uint32_t pid, const std::string& stat, std::optional<std::uint64_t> start_ticks,
                         std::string image, std::uint64_t buffer, std::int64_t now, bool script,
                         const std::string& stale_command_line = {}, bool same_program_before = false);
  // For a process whose exec had not taken effect when it was described: its
  // command line, once /proc shows the program, given to the catalog.
  void learn_command_line(std::uint32_t pid, ProcessEntry& entry, std::uint64_t buffer);
  void stage(Op op, std::uint32_t process, std::uint32_t path, std::int64_t time);
  void stage_name(Op op, std::uint32_t process, std::uint32_t path, std::int64_t time, bool ends,
                  std::uint32_t renamed_from = 0, std::uint32_t renamed_to = 0);
  // The path a directory-and-name information record names; "" when its
  // directory is gone.
  std::string record_path(const fanotify_event_info_header* header);

  FanotifyOptions m_options;
  UniqueFd m_content_fd;
  UniqueFd m_name_fd;  // none: the kernel cannot report names
  UniqueFd m_wake_fd;  // eventfd written by stop()
  std::uint64_t m_content_mask = 0;
  std::uint64_t m_name_mask = 0;
  std::vector<Filesystem> m_filesystems;
  std::vector<std::string> m_watched;
  std::vector<std::string> m_limitations;
  std::unordered_map<std::uint32_t, ProcessEntry> m_processes;
  linux_system::UserNames m_user_names;
  std::int64_t m_boot_ns = 0;  // boot time, ns since epoch
  long m_ticks_per_second = 100;
  std::atomic<std::uint64_t> m_overflows{0};
  std::uint64_t m_buffers = 0;           // buffers of events read
  bool m_sees_exec = false;              // every mark reports FAN_OPEN_EXEC
  bool m_rename_halves = false;          // a mark could not take FAN_RENAME
  std::size_t m_read_size = 256 * 1024;  // bytes asked for per read (see the constructor)
  std::string m_error;

  struct PendingEvent {
    int fd;                 // the event's descriptor, until its path is read
    std::uint32_t path;     // catalog id, once read
    std::uint32_t process;  // catalog id
    std::uint64_t mask;
    std::uint32_t before_exec;  // an exec open: the process the pid was before (no_process: unknown)
  };
  static constexpr std::uint32_t no_process = UINT32_MAX;
  std::vector<PendingEvent> m_pending;  // one buffer's events, their processes known, waiting for their paths
  // The events read and not yet handed on, each group's in its order, and
  // the rounds of reading that got them: a round's events wait settle_ns, so
  // that the name event that created a file is read before the content
  // events read with it go on, even when the kernel makes it visible a
  // moment later or the round that reads it comes late.
  static constexpr std::int64_t settle_ns = 20'000'000;
  struct Round {
    std::int64_t read_at;        // steady ns at its end
    std::size_t content, names;  // where its events end in the staged lists
  };
  std::vector<FileEvent> m_staged_content;
  std::vector<NameEvent> m_staged_names;
  std::deque<Round> m_rounds;
  // The execs among the staged content events (at: in m_staged_content).
  std::vector<ExecSwitch> m_execs;

  // During run().
  BoundedQueue<FileEvent>* m_queue = nullptr;
  Catalog* m_catalog = nullptr;
  RunStats* m_stats = nullptr;
};

}  // namespace etwaudit
