#pragma once
// What the fanotify source reads from /proc, parsed without touching the
// system, so that the parsing is tested with fixed text.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace etwaudit::linux_proc {

// One line of /proc/self/mountinfo.
struct Mount {
  std::string device;       // "254:0": the filesystem (a superblock) the mount shows
  std::string mount_point;  // octal escapes (\040 for a space) decoded
  std::string fs_type;      // "ext4"
};

// The lines of /proc/self/mountinfo; lines that do not parse are left out.
std::vector<Mount> parse_mountinfo(std::string_view text);
// The filesystem types in /proc/filesystems that need no block device
// ("nodev": proc, tmpfs, cgroup, nfs, ...).
std::set<std::string> nodev_filesystems(std::string_view text);
// The mounts to watch by default: local filesystems on a block device, one
// mount per filesystem (the first listed), pseudo and network ones left out.
std::vector<Mount> default_watch_mounts(const std::vector<Mount>& mounts, const std::set<std::string>& nodev);

// Field 22 of /proc/PID/stat: the start time in clock ticks after boot. The
// command name (field 2) is in parentheses and may itself hold ") ".
std::optional<std::uint64_t> stat_start_ticks(std::string_view stat);
// Field 4 of /proc/PID/stat: the parent's pid.
std::optional<std::uint32_t> stat_parent_pid(std::string_view stat);
// The real uid of /proc/PID/status (the first number of its "Uid:" line).
std::optional<std::uint32_t> status_real_uid(std::string_view status);
// Whether an executable opened by execve is the dynamic loader the kernel
// opens for an ELF program (ld-linux-x86-64.so.2, ld-musl-*.so.1, ld.so.1),
// not the program itself.
bool is_dynamic_loader(std::string_view path);
// "btime" of /proc/stat: boot time in seconds since the epoch.
std::optional<std::int64_t> boot_time_seconds(std::string_view proc_stat);
// /proc/PID/cmdline (NUL-separated arguments) as one line, arguments joined
// by spaces.
std::string command_line(std::string_view cmdline);
// A path from readlink(/proc/self/fd/N) without the " (deleted)" the kernel
// appends when the file has no name any more (deleted: the file's link count is 0).
std::string_view without_deleted_suffix(std::string_view path, bool deleted);

}  // namespace etwaudit::linux_proc
