#include "sources/live/fanotify_source.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/error.h"
#include "core/time_format.h"
#include "sources/live/linux_proc.h"
#include "sources/live/linux_system.h"

namespace etwaudit {
namespace {

using linux_system::errno_text;
using linux_system::kernel_release;
using linux_system::read_file;
using linux_system::read_link;

std::string fd_path(int fd) {
  return read_link("/proc/self/fd/" + std::to_string(fd));
}

constexpr std::int64_t recheck_ns = 250'000'000;  // a pid is not reused faster than this

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool selected(const std::vector<Op>& ops, Op op) {
  return ops.empty() || std::find(ops.begin(), ops.end(), op) != ops.end();
}

// The fanotify bits of the content group for each operation, in the order
// the operations happen, so that one merged event becomes rows in that order.
struct ContentBit {
  std::uint64_t mask;
  Op op;
};
constexpr ContentBit content_bits[] = {{FAN_OPEN, Op::open},
                                       {FAN_ACCESS, Op::read},
                                       {FAN_MODIFY, Op::write},
                                       {FAN_CLOSE_WRITE, Op::close_write},
                                       {FAN_CLOSE_NOWRITE, Op::close}};
constexpr ContentBit name_bits[] = {
    {FAN_CREATE, Op::create}, {FAN_MOVED_FROM, Op::rename}, {FAN_MOVED_TO, Op::rename}, {FAN_DELETE, Op::remove}};

}  // namespace

FanotifySource::FanotifySource(FanotifyOptions options) : m_options(std::move(options)) {
  for (const ContentBit& bit : content_bits)
    if (selected(m_options.ops, bit.op)) m_content_mask |= bit.mask;
  for (const ContentBit& bit : name_bits)
    if (selected(m_options.ops, bit.op)) m_name_mask |= bit.mask;

  if (!m_content_mask && !m_name_mask)
    throw UsageError(
        "--ops: fanotify reports none of these; on Linux it records open, read, write, close, "
        "close_write, create, delete and rename");
  if (m_content_mask) {
    m_content_fd.reset(
        ::fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY | O_LARGEFILE | O_CLOEXEC));
    if (!m_content_fd.valid()) {
      const int error = errno;
      if (error == EPERM) throw Error("etwaudit collect needs root on Linux (fanotify)");
      if (error == ENOSYS)
        throw Error("this kernel has no fanotify (fanotify_init: " + std::string(std::strerror(error)) + ")");
      throw Error(errno_text("fanotify_init", error));
    }
  }
  if (m_name_mask) {
    m_name_fd.reset(
        ::fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_DFID_NAME, O_RDONLY | O_CLOEXEC));
    if (!m_name_fd.valid()) {
      const int error = errno;
      if (error == EPERM) throw Error("etwaudit collect needs root on Linux (fanotify)");
      m_limitations.push_back(
          "creates, deletes and renames are not recorded: Linux " + kernel_release() +
          " cannot report them (fanotify FAN_REPORT_DFID_NAME needs 5.9 or later: " + std::strerror(error) + ")");
    }
  }
  // The kernel opens a descriptor for each event it hands over in one read,
  // and an event whose descriptor cannot be opened is lost: raise our limit
  // as far as allowed and never ask for more events than it leaves room for.
  struct rlimit files {};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0) {
    if (files.rlim_cur < files.rlim_max) {
      files.rlim_cur = std::min<rlim_t>(files.rlim_max, 1 << 16);
      ::setrlimit(RLIMIT_NOFILE, &files);
      ::getrlimit(RLIMIT_NOFILE, &files);
    }
    const std::size_t spare = files.rlim_cur > 256 ? files.rlim_cur - 128 : 64;
    m_read_size = std::min<std::size_t>(m_read_size, spare * sizeof(fanotify_event_metadata));
  }
  m_wake_fd.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!m_wake_fd.valid()) throw Error(errno_text("eventfd", errno));

  if (m_options.mounts.empty()) {
    const auto mounts = linux_proc::default_watch_mounts(linux_proc::parse_mountinfo(read_file("/proc/self/mountinfo")),
                                                         linux_proc::nodev_filesystems(read_file("/proc/filesystems")));
    for (const auto& mount : mounts) mark(mount.mount_point, mount.fs_type, false);
    if (m_watched.empty())
      throw Error("no local filesystem to watch was found in /proc/self/mountinfo; name one with --mount");
  } else {
    for (const auto& path : m_options.mounts) mark(path, "", true);
  }

  const auto boot = linux_proc::boot_time_seconds(read_file("/proc/stat"));
  m_boot_ns = boot ? *boot * ns_per_second : 0;
  m_ticks_per_second = std::max(1L, ::sysconf(_SC_CLK_TCK));
}

FanotifySource::~FanotifySource() = default;

void FanotifySource::mark(const std::string& mount_point, const std::string& fs_type, bool given) {
  struct stat info {};
  if (::stat(mount_point.c_str(), &info) != 0) {
    if (given) throw UsageError("--mount '" + mount_point + "': " + std::strerror(errno));
    return;
  }
  const std::string what = mount_point + (fs_type.empty() ? "" : " (" + fs_type + ")");
  if (m_content_fd.valid()) {
    // The whole filesystem (every mount of it); a mount alone before Linux 4.20.
    // FAN_OPEN_EXEC (Linux 5.0) tells when a process execs another program.
    int result = -1;
    for (const std::uint64_t exec : {std::uint64_t{FAN_OPEN_EXEC}, std::uint64_t{0}}) {
      for (const unsigned int kind : {FAN_MARK_FILESYSTEM, FAN_MARK_MOUNT}) {
        result = ::fanotify_mark(m_content_fd.get(), FAN_MARK_ADD | kind, m_content_mask | exec, AT_FDCWD,
                                 mount_point.c_str());
        if (result == 0 || errno != EINVAL) break;
      }
      if (result == 0) {
        m_sees_exec = m_watched.empty() ? exec != 0 : m_sees_exec && exec != 0;
        break;
      }
      if (errno != EINVAL) break;
    }
    if (result != 0) {
      const std::string message = "cannot watch " + what + ": " + errno_text("fanotify_mark", errno);
      if (given) throw Error(message);
      m_limitations.push_back(message);
      return;
    }
  }
  m_watched.push_back(what);
  if (!m_name_fd.valid()) return;
  // FAN_RENAME (Linux 5.17) reports a rename as one event with both names;
  // before it, the old and the new name come as two unrelated events.
  constexpr std::uint64_t moved = FAN_MOVED_FROM | FAN_MOVED_TO;
  int marked = -1;
  if ((m_name_mask & moved) == moved) {
    marked = ::fanotify_mark(m_name_fd.get(), FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
                             (m_name_mask & ~moved) | FAN_RENAME | FAN_ONDIR, AT_FDCWD, mount_point.c_str());
    if (marked != 0 && errno == EINVAL && !m_rename_halves) {
      m_rename_halves = true;
      m_limitations.push_back("a rename is recorded under each name without the other: Linux " + kernel_release() +
                              " cannot report both (fanotify FAN_RENAME needs 5.17 or later)");
    }
  }
  if (marked != 0)
    marked = ::fanotify_mark(m_name_fd.get(), FAN_MARK_ADD | FAN_MARK_FILESYSTEM, m_name_mask | FAN_ONDIR, AT_FDCWD,
                             mount_point.c_str());
  if (marked != 0) {
    m_limitations.push_back("creates, deletes and renames on " + what +
                            " are not recorded: " + errno_text("fanotify_mark", errno));
    return;
  }
  struct statfs filesystem {};
  UniqueFd mount_fd(::open(mount_point.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!mount_fd.valid() || ::fstatfs(mount_fd.get(), &filesystem) != 0) {
    m_limitations.push_back("names of created, deleted and renamed files on " + what +
                            " stay unknown: " + errno_text("open", errno));
    return;
  }
  Filesystem entry{};
  std::memcpy(entry.fsid, &filesystem.f_fsid, sizeof entry.fsid);
  entry.mount_fd = std::move(mount_fd);
  m_filesystems.push_back(std::move(entry));
}

void FanotifySource::stop() noexcept {
  const std::uint64_t one = 1;
  if (m_wake_fd.valid() && ::write(m_wake_fd.get(), &one, sizeof one) < 0) {
    // Only a full counter fails, and then a wake-up is pending anyway.
  }
}

void FanotifySource::run(BoundedQueue<FileEvent>& queue, Catalog& catalog, RunStats& stats) {
  m_queue = &queue;
  m_catalog = &catalog;
  m_stats = &stats;
  // Large enough for many events per read; fanotify returns whole events only.
  alignas(fanotify_event_metadata) static thread_local char buffer[256 * 1024];
  const std::size_t read_size = std::min(sizeof buffer, m_read_size);
  // Up to 16 reads of the name group, kept until the content events queued
  // meanwhile are decoded (operator new aligns it for the metadata).
  const auto name_bytes = std::make_unique<char[]>(16 * read_size);
  std::vector<NameRead> name_reads;
  pollfd fds[3] = {{m_wake_fd.get(), POLLIN, 0}, {m_content_fd.get(), POLLIN, 0}, {m_name_fd.get(), POLLIN, 0}};
  while (!queue.closed()) {
    // Events wait settle_ns after the round that read them (see flush_settled);
    // content read after the last round's names starts a round at once.
    int timeout_ms = -1;
    if (!m_rounds.empty())
      timeout_ms = static_cast<int>(
          std::max<std::int64_t>(1, (m_rounds.front().read_at + settle_ns - steady_ns()) / 1'000'000 + 1));
    else if (!m_staged_content.empty() || !m_staged_names.empty())
      timeout_ms = 0;
    const int ready = ::poll(fds, 3, timeout_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      m_error = errno_text("poll", errno);
      break;
    }
    if (fds[0].revents) break;
    // The content group first, until it is drained: every content event read
    // happened before the name group is read next, and so did the create of
    // its file (causal_order.h).
    if (m_content_fd.valid() && !drain_content(buffer, read_size)) break;
    name_reads.clear();
    if (m_name_fd.valid() && !drain_names(name_bytes.get(), read_size, name_reads)) break;
    // A process's exec open is in the content group, queued before the
    // creates, deletes and renames it went on to do: the content queued
    // while the names were read is decoded before them, so that they are
    // named by that program. Those content events belong to the next round:
    // the creates of their files may be queued after this round's names.
    const std::size_t content_read = m_staged_content.size();
    if (!name_reads.empty() && m_content_fd.valid() && !drain_content(buffer, read_size)) break;
    for (const NameRead& read : name_reads) read_name_events(name_bytes.get() + read.offset, read.length, read.time);
    if (m_rounds.empty() || m_rounds.back().content != content_read || m_rounds.back().names != m_staged_names.size())
      m_rounds.push_back(Round{steady_ns(), content_read, m_staged_names.size()});
    flush_settled(steady_ns() - settle_ns);
  }
  // The end: everything read goes on.
  m_rounds.push_back(Round{INT64_MIN, m_staged_content.size(), m_staged_names.size()});
  flush_settled(INT64_MAX);
}

bool FanotifySource::drain_names(char* bytes, std::size_t read_size, std::vector<NameRead>& reads) {
  for (std::size_t offset = 0; reads.size() < 16;) {
    const ssize_t length = ::read(m_name_fd.get(), bytes + offset, read_size);
    if (length < 0) {
      if (errno == EAGAIN || errno == EINTR) return true;
      m_error = errno_text("read of the fanotify queue", errno);
      return false;
    }
    if (length == 0) return true;
    reads.push_back(NameRead{offset, length, now_ns()});
    offset += read_size;
    if (static_cast<std::size_t>(length) < read_size / 2) return true;  // drained for now
  }
  return true;
}

void FanotifySource::flush_settled(std::int64_t read_by) {
  std::size_t content = 0, names = 0;
  while (!m_rounds.empty() && m_rounds.front().read_at <= read_by) {
    content = m_rounds.front().content;
    names = m_rounds.front().names;
    m_rounds.pop_front();
  }
  if (content == 0 && names == 0) return;
  const std::vector<FileEvent> settled_content(m_staged_content.begin(),
                                               m_staged_content.begin() + static_cast<long>(content));
  const std::vector<NameEvent> settled_names(m_staged_names.begin(), m_staged_names.begin() + static_cast<long>(names));
  for (const FileEvent& event : merge_in_causal_order(settled_content, settled_names)) {
    m_stats->received += 1;
    m_queue->try_push(event);
  }
  m_staged_content.erase(m_staged_content.begin(), m_staged_content.begin() + static_cast<long>(content));
  std::erase_if(m_execs, [&](const ExecSwitch& exec) { return exec.at < content; });
  for (ExecSwitch& exec : m_execs) exec.at -= content;
  m_staged_names.erase(m_staged_names.begin(), m_staged_names.begin() + static_cast<long>(names));
  for (Round& round : m_rounds) {
    round.content -= content;
    round.names -= names;
  }
}

bool FanotifySource::drain_content(char* buffer, std::size_t read_size) {
  // At most 16 buffers: a flood of content events must not hold the names back for long.
  for (int buffers = 0; buffers < 16; ++buffers) {
    const ssize_t length = ::read(m_content_fd.get(), buffer, read_size);
    if (length < 0) {
      if (errno == EAGAIN || errno == EINTR) return true;
      m_error = errno_text("read of the fanotify queue", errno);
      return false;
    }
    if (length == 0) return true;
    read_content_events(buffer, length);
    if (static_cast<std::size_t>(length) < read_size / 2) return true;  // drained for now
  }
  return true;
}

namespace {
FileEvent file_event(Op op, std::uint32_t process, std::uint32_t path, std::int64_t time) {
  FileEvent event;
  event.time = time;
  event.process = process;
  event.path = path;
  event.op = op;
  return event;
}
}  // namespace

void FanotifySource::stage(Op op, std::uint32_t process, std::uint32_t path, std::int64_t time) {
  m_staged_content.push_back(file_event(op, process, path, time));
}

void FanotifySource::stage_name(Op op, std::uint32_t process, std::uint32_t path, std::int64_t time, bool ends,
                                std::uint32_t renamed_from, std::uint32_t renamed_to) {
  FileEvent event = file_event(op, process, path, time);
  event.renamed_from = renamed_from;
  event.renamed_to = renamed_to;
  m_staged_names.push_back(NameEvent{event, ends});
}

template <typename Visit>
bool FanotifySource::for_each_event(const char* buffer, long length, Visit visit) {
  for (long at = 0; at + static_cast<long>(sizeof(fanotify_event_metadata)) <= length;) {
    // Events with information records are only 4-byte aligned, and the
    // metadata holds a 64-bit mask: copy it out rather than cast.
    fanotify_event_metadata event;
    std::memcpy(&event, buffer + at, sizeof event);
    if (event.event_len < sizeof event || at + static_cast<long>(event.event_len) > length) break;
    if (event.vers != FANOTIFY_METADATA_VERSION) {
      m_error = "fanotify metadata version " + std::to_string(event.vers) + " is not the one this etwaudit knows";
      m_queue->close();
      return false;
    }
    if (event.mask & FAN_Q_OVERFLOW) {
      m_overflows.fetch_add(1, std::memory_order_relaxed);
      m_stats->lost += 1;
    } else if (static_cast<std::uint32_t>(event.pid) == m_options.own_pid) {
      if (event.fd >= 0) ::close(event.fd);
    } else {
      visit(event, buffer + at);
    }
    at += event.event_len;
  }
  return true;
}

namespace {
// The path of an event's descriptor, without the " (deleted)" of a file that
// has no name any more.
std::string event_path(int fd) {
  std::string path = fd_path(fd);
  if (path.size() > 10 && path.compare(path.size() - 10, 10, " (deleted)") == 0) {
    struct stat info {};
    const bool deleted = ::fstat(fd, &info) == 0 && info.st_nlink == 0;
    path = std::string(linux_proc::without_deleted_suffix(path, deleted));
  }
  return path;
}
}  // namespace

void FanotifySource::read_content_events(const char* buffer, long length) {
  const std::int64_t time = now_ns();
  const std::uint64_t buffer_number = ++m_buffers;
  // Processes first, in the order of the events: a short-lived process is
  // still in /proc for a moment, and its exec opens say what it runs. Then
  // the paths: a file can be renamed or deleted at any moment, and its
  // descriptor only tells the name it has now.
  m_pending.clear();
  const bool whole = for_each_event(buffer, length, [&](const fanotify_event_metadata& event, const char*) {
    if (event.fd < 0) return;
    const auto pid = static_cast<std::uint32_t>(event.pid);
    PendingEvent pending{event.fd, 0, 0, event.mask, no_process};
    if (event.mask & FAN_OPEN_EXEC) {
      const std::string path = event_path(event.fd);
      pending.path = m_catalog->intern_path(path);
      const auto before = m_processes.find(pid);
      if (before != m_processes.end()) pending.before_exec = before->second.id;
      pending.process = exec_process(pid, path, event.fd, buffer_number);
      ::close(event.fd);
      pending.fd = -1;
    } else {
      pending.process = process(pid, buffer_number);
    }
    m_pending.push_back(pending);
  });
  for (PendingEvent& pending : m_pending) {
    if (pending.fd < 0) continue;
    pending.path = m_catalog->intern_path(event_path(pending.fd));
    ::close(pending.fd);
  }
  if (!whole) return;
  for (const PendingEvent& pending : m_pending) {
    if (pending.before_exec != no_process && pending.before_exec != pending.process)
      m_execs.push_back(ExecSwitch{pending.before_exec, pending.process, m_staged_content.size()});
    for (const ContentBit& bit : content_bits)
      if (pending.mask & bit.mask) stage(bit.op, pending.process, pending.path, time);
  }
}

void FanotifySource::read_name_events(const char* buffer, long length, std::int64_t time) {
  const std::uint64_t buffer_number = ++m_buffers;
  for_each_event(buffer, length, [&](const fanotify_event_metadata& event, const char* record) {
    if (event.fd >= 0) ::close(event.fd);
    // The information records after the metadata: the directory and name
    // (a FAN_RENAME has two, the old and the new).
    std::string path, old_path, new_path;
    for (std::size_t at = event.metadata_len; at + sizeof(fanotify_event_info_header) <= event.event_len;) {
      const auto* header = reinterpret_cast<const fanotify_event_info_header*>(record + at);
      if (header->len < sizeof *header || at + header->len > event.event_len) break;
      switch (header->info_type) {
        case FAN_EVENT_INFO_TYPE_DFID_NAME: path = record_path(header); break;
        case FAN_EVENT_INFO_TYPE_OLD_DFID_NAME: old_path = record_path(header); break;
        case FAN_EVENT_INFO_TYPE_NEW_DFID_NAME: new_path = record_path(header); break;
        default: break;
      }
      at += header->len;
    }
    const std::uint32_t process_id = process(static_cast<std::uint32_t>(event.pid), buffer_number);
    if (event.mask & FAN_RENAME) {
      // Two rows, one under each name, each naming both: the old name
      // follows what was done to the file, the new one precedes it.
      const std::uint32_t from = m_catalog->intern_path(old_path);
      const std::uint32_t to = m_catalog->intern_path(new_path);
      stage_name(Op::rename, process_id, from, time, true, from, to);
      stage_name(Op::rename, name_event_process(m_staged_content, m_execs, process_id, to, false), to, time, false,
                 from, to);
    }
    // An empty path is a file whose directory is gone: recorded, unnamed.
    const std::uint32_t path_id = m_catalog->intern_path(path);
    // A delete and the old name of a rename follow what was done to the
    // file; a create and the new name precede it.
    for (const ContentBit& bit : name_bits) {
      if (!(event.mask & bit.mask)) continue;
      const bool ends = bit.mask & (FAN_DELETE | FAN_MOVED_FROM);
      stage_name(bit.op, name_event_process(m_staged_content, m_execs, process_id, path_id, ends), path_id, time, ends);
    }
  });
}

std::string FanotifySource::record_path(const fanotify_event_info_header* header) {
  if (header->len <= sizeof(fanotify_event_info_fid) + sizeof(file_handle)) return {};
  const auto* fid = reinterpret_cast<const fanotify_event_info_fid*>(header);
  const auto* handle = reinterpret_cast<const file_handle*>(fid->handle);
  const std::size_t name_offset = sizeof(fanotify_event_info_fid) + sizeof(file_handle) + handle->handle_bytes;
  if (name_offset >= header->len) return {};
  const char* name = reinterpret_cast<const char*>(header) + name_offset;
  const std::size_t name_length = strnlen(name, header->len - name_offset);
  const std::string directory = directory_path(reinterpret_cast<const std::int32_t*>(&fid->fsid), handle);
  if (directory.empty()) return {};
  return directory + (directory == "/" ? "" : "/") + std::string(name, name_length);
}

std::string FanotifySource::directory_path(const std::int32_t fsid[2], const void* handle) {
  for (const Filesystem& filesystem : m_filesystems) {
    if (filesystem.fsid[0] != fsid[0] || filesystem.fsid[1] != fsid[1]) continue;
    // open_by_handle_at wants a writable file_handle; copy it.
    const auto* source = static_cast<const file_handle*>(handle);
    alignas(file_handle) char copy[sizeof(file_handle) + MAX_HANDLE_SZ];
    if (source->handle_bytes > MAX_HANDLE_SZ) return {};
    std::memcpy(copy, source, sizeof(file_handle) + source->handle_bytes);
    const int fd =
        ::open_by_handle_at(filesystem.mount_fd.get(), reinterpret_cast<file_handle*>(copy), O_PATH | O_CLOEXEC);
    if (fd < 0) return {};
    std::string path = fd_path(fd);
    ::close(fd);
    return path;
  }
  return {};
}

std::uint32_t FanotifySource::process(std::uint32_t pid, std::uint64_t buffer) {
  const std::int64_t now = steady_ns();
  auto found = m_processes.find(pid);
  if (found != m_processes.end()) {
    ProcessEntry& entry = found->second;
    if (entry.awaits_command_line && entry.command_line_checked_in != buffer) learn_command_line(pid, entry, buffer);
    // With exec events an identity is good until the pid could have been
    // reused; without them, for this buffer of events only.
    if (m_sees_exec ? now - entry.checked_at < recheck_ns : entry.checked_in == buffer) return entry.id;
  }
  const std::string proc = "/proc/" + std::to_string(pid);
  const std::string stat = read_file(proc + "/stat");
  const auto start_ticks = linux_proc::stat_start_ticks(stat);
  if (found != m_processes.end()) {
    ProcessEntry& entry = found->second;
    // Gone, or exited and not reaped (no exe any more): the last good
    // identity. The same process, unless it exec'd a program we did not see
    // opened (on a filesystem not watched, or without exec events).
    const std::string exe(linux_proc::without_deleted_suffix(read_link(proc + "/exe"), true));
    const bool same = !start_ticks || (*start_ticks == entry.start_ticks && entry.start_ticks != 0);
    if (same && (exe.empty() || entry.exe.empty() || exe == entry.exe)) {
      if (!exe.empty()) entry.exe = exe;
      entry.checked_in = buffer;
      entry.checked_at = now;
      return entry.id;
    }
  }
  return describe(pid, stat, start_ticks, {}, buffer, now, false);
}

std::uint32_t FanotifySource::exec_process(std::uint32_t pid, const std::string& path, int fd, std::uint64_t buffer) {
  const std::int64_t now = steady_ns();
  // The other opens of an execve: the dynamic loader of an ELF program, and
  // the interpreter of a script. The program is the one opened first.
  if (linux_proc::is_dynamic_loader(path)) return process(pid, buffer);
  auto found = m_processes.find(pid);
  if (found != m_processes.end() && found->second.script) {
    found->second.script = false;
    return found->second.id;
  }
  // A new program for pid: execve opens it before the process becomes it,
  // and a short-lived one may be gone before this is read.
  char magic[2] = {};
  const bool script = ::pread(fd, magic, sizeof magic, 0) == 2 && magic[0] == '#' && magic[1] == '!';
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  std::optional<std::uint64_t> start = linux_proc::stat_start_ticks(stat);
  // Gone already: the process we knew under pid, if we saw it a moment ago.
  if (!start && found != m_processes.end() && now - found->second.checked_at < recheck_ns &&
      found->second.start_ticks != 0)
    start = found->second.start_ticks;
  const std::string before = found != m_processes.end() ? m_catalog->process(found->second.id).command_line : "";
  const bool same_program = found != m_processes.end() && found->second.image == path;
  const std::uint32_t id = describe(pid, stat, start, path, buffer, now, script, before, same_program);
  m_processes[pid].exe.clear();  // /proc may still show the program before the exec
  return id;
}

std::uint32_t FanotifySource::describe(std::uint32_t pid, const std::string& stat,
                                       std::optional<std::uint64_t> start_ticks, std::string image,
                                       std::uint64_t buffer, std::int64_t now, bool script,
                                       const std::string& stale_command_line, bool same_program_before) {
  const std::string proc = "/proc/" + std::to_string(pid);
  ProcessInfo info;
  info.pid = pid;
  std::string exe;
  if (start_ticks) {
    info.start_time =
        m_boot_ns ? m_boot_ns + static_cast<std::int64_t>(*start_ticks) * ns_per_second / m_ticks_per_second : 0;
    info.parent_pid = linux_proc::stat_parent_pid(stat).value_or(0);
    info.uid = linux_proc::status_real_uid(read_file(proc + "/status"));
    if (info.uid) info.user = m_user_names(*info.uid);
    exe = std::string(linux_proc::without_deleted_suffix(read_link(proc + "/exe"), true));
    // The command line is the program's once the exec has taken effect (the
    // exe is then the program, or for a script its interpreter).
    if (!exe.empty() && (image.empty() || exe == image || script))
      info.command_line = linux_proc::command_line(read_file(proc + "/cmdline"));
    if (image.empty()) image = exe;
    if (image.empty()) {  // a kernel thread or a zombie: its name, as ps shows it
      std::string name = read_file(proc + "/comm");
      while (!name.empty() && name.back() == '\n') name.pop_back();
      if (!name.empty()) image = "[" + name + "]";
    }
  }
  // A command line that may be the program's before the exec is not taken.
  const bool undecidable = same_program_before && stale_command_line.empty();
  if (undecidable || (!stale_command_line.empty() && info.command_line == stale_command_line))
    info.command_line.clear();
  info.image = image;
  ProcessEntry entry;
  entry.id = m_catalog->intern_process(info);
  entry.start_ticks = start_ticks.value_or(0);
  entry.image = std::move(image);
  entry.exe = exe;
  entry.checked_in = buffer;
  entry.checked_at = now;
  entry.script = script;
  // The exec has not taken effect yet: its command line is the old program's.
  entry.awaits_command_line =
      info.command_line.empty() && start_ticks && !undecidable && !entry.image.empty() && entry.image[0] != '[';
  entry.command_line_checked_in = buffer;
  entry.stale_command_line = stale_command_line;
  m_processes[pid] = entry;
  return entry.id;
}

void FanotifySource::learn_command_line(std::uint32_t pid, ProcessEntry& entry, std::uint64_t buffer) {
  entry.command_line_checked_in = buffer;
  const std::string proc = "/proc/" + std::to_string(pid);
  const std::string exe(linux_proc::without_deleted_suffix(read_link(proc + "/exe"), true));
  if (exe.empty()) {  // gone, or exited: its command line with it
    entry.awaits_command_line = false;
    return;
  }
  if (exe != entry.image && !entry.script) return;  // still the program before the exec
  const std::string command_line = linux_proc::command_line(read_file(proc + "/cmdline"));
  if (!entry.stale_command_line.empty() && command_line == entry.stale_command_line) return;
  entry.awaits_command_line = false;
  m_catalog->learn_command_line(entry.id, command_line);
}

}  // namespace etwaudit
