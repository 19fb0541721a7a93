#include "sources/live/linux_proc.h"

#include <charconv>

namespace etwaudit::linux_proc {
namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape_octal(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '3' && text[i + 2] >= '0' &&
        text[i + 2] <= '7' && text[i + 3] >= '0' && text[i + 3] <= '7') {
      out += static_cast<char>((text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 + (text[i + 3] - '0'));
      i += 3;
    } else {
      out += text[i];
    }
  }
  return out;
}

template <typename Number>
std::optional<Number> to_number(std::string_view text) {
  Number value{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

}  // namespace

std::vector<Mount> parse_mountinfo(std::string_view text) {
  // 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
  std::vector<Mount> mounts;
  for (std::string_view line : split(text, '\n')) {
    const auto fields = split(line, ' ');
    std::size_t dash = 0;
    for (std::size_t i = 6; i < fields.size(); ++i)
      if (fields[i] == "-") {
        dash = i;
        break;
      }
    if (fields.size() < 10 || dash == 0 || dash + 1 >= fields.size()) continue;
    mounts.push_back(Mount{std::string(fields[2]), unescape_octal(fields[4]), std::string(fields[dash + 1])});
  }
  return mounts;
}

std::set<std::string> nodev_filesystems(std::string_view text) {
  std::set<std::string> nodev;
  for (std::string_view line : split(text, '\n')) {
    if (line.rfind("nodev", 0) != 0) continue;
    line.remove_prefix(5);
    while (!line.empty() && (line.front() == '\t' || line.front() == ' ')) line.remove_prefix(1);
    if (!line.empty()) nodev.emplace(line);
  }
  return nodev;
}

std::vector<Mount> default_watch_mounts(const std::vector<Mount>& mounts, const std::set<std::string>& nodev) {
  std::vector<Mount> picked;
  std::set<std::string> devices;
  for (const Mount& mount : mounts) {
    // fuse (sshfs, ...) is "nodev" too; "fuseblk" (ntfs-3g) has a block device.
    if (nodev.count(mount.fs_type) || mount.fs_type.rfind("fuse.", 0) == 0) continue;
    if (devices.insert(mount.device).second) picked.push_back(mount);
  }
  return picked;
}

namespace {
// Field number (counted from 1, as proc(5) does) of /proc/PID/stat, from 3 on.
template <typename Number>
std::optional<Number> stat_field(std::string_view stat, std::size_t number) {
  // The command name (field 2) is in parentheses and may itself hold ") ".
  const std::size_t name_end = stat.rfind(')');
  if (name_end == std::string_view::npos || name_end + 2 > stat.size()) return std::nullopt;
  const auto fields = split(stat.substr(name_end + 2), ' ');
  if (fields.size() <= number - 3) return std::nullopt;
  return to_number<Number>(fields[number - 3]);
}
}  // namespace

std::optional<std::uint64_t> stat_start_ticks(std::string_view stat) {
  return stat_field<std::uint64_t>(stat, 22);
}

std::optional<std::uint32_t> stat_parent_pid(std::string_view stat) {
  return stat_field<std::uint32_t>(stat, 4);
}

std::optional<std::uint32_t> status_real_uid(std::string_view status) {
  for (std::string_view line : split(status, '\n')) {
    if (line.rfind("Uid:", 0) != 0) continue;
    line.remove_prefix(4);
    while (!line.empty() && (line.front() == '\t' || line.front() == ' ')) line.remove_prefix(1);
    return to_number<std::uint32_t>(line.substr(0, line.find_first_of("\t ")));
  }
  return std::nullopt;
}

bool is_dynamic_loader(std::string_view path) {
  const std::string_view name = path.substr(path.rfind('/') + 1);
  return name.rfind("ld-linux", 0) == 0 || name.rfind("ld-musl", 0) == 0 || name.rfind("ld.so", 0) == 0 ||
         name.rfind("ld64.so", 0) == 0;
}

std::optional<std::int64_t> boot_time_seconds(std::string_view proc_stat) {
  for (std::string_view line : split(proc_stat, '\n'))
    if (line.rfind("btime ", 0) == 0) return to_number<std::int64_t>(line.substr(6));
  return std::nullopt;
}

std::string command_line(std::string_view cmdline) {
  while (!cmdline.empty() && cmdline.back() == '\0') cmdline.remove_suffix(1);
  std::string line(cmdline);
  for (char& c : line)
    if (c == '\0') c = ' ';
  return line;
}

std::string_view without_deleted_suffix(std::string_view path, bool deleted) {
  constexpr std::string_view suffix = " (deleted)";
  if (deleted && path.size() > suffix.size() && path.substr(path.size() - suffix.size()) == suffix)
    path.remove_suffix(suffix.size());
  return path;
}

}  // namespace etwaudit::linux_proc
