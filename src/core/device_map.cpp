#include "core/device_map.h"

#include <cctype>

#include "core/ascii.h"
#include "core/error.h"

namespace etwaudit {
namespace {

// prefix matches text and ends where a path component ends.
bool is_component_prefix(std::string_view text, std::string_view prefix) {
  return starts_with_ignoring_ascii_case(text, prefix) && (text.size() == prefix.size() || text[prefix.size()] == '\\');
}

// prefix followed by rest. (Not `"literal" + std::string(...)`: at -O3 g++ 12
// warns falsely about that, -Wrestrict.)
std::string joined(std::string_view prefix, std::string_view rest) {
  std::string text;
  text.reserve(prefix.size() + rest.size());
  text.append(prefix).append(rest);
  return text;
}

// "\server\share\x" after a redirector prefix, without ";LanmanRedirector" and
// ";Z:0000…" components.
std::string unc_path(std::string_view rest) {
  while (rest.size() > 1 && rest[0] == '\\' && rest[1] == ';') {
    const auto next = rest.find('\\', 1);
    rest = next == std::string_view::npos ? std::string_view() : rest.substr(next);
  }
  return joined("\\", rest);
}

// A drive, "C:", or a folder a volume is mounted on, "C:\mnt\data", with its
// letter in upper case and without a trailing backslash; nullopt for anything else.
std::optional<std::string> drive_or_folder(std::string_view text) {
  while (text.size() > 2 && text.back() == '\\') text.remove_suffix(1);
  if (text.size() < 2 || !std::isalpha(static_cast<unsigned char>(text[0])) || text[1] != ':' ||
      (text.size() > 2 && text[2] != '\\'))
    return std::nullopt;
  std::string drive(text);
  drive[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(drive[0])));
  return drive;
}

std::string_view without_trailing_backslash(std::string_view target) {
  while (target.size() > 1 && target.back() == '\\') target.remove_suffix(1);
  return target;
}

}  // namespace

DeviceMap::DeviceMap(const DeviceMap& other) {
  *this = other;
}

DeviceMap& DeviceMap::operator=(const DeviceMap& other) {
  if (this == &other) return *this;
  std::scoped_lock lock(m_mutex, other.m_mutex);
  m_devices = other.m_devices;
  m_loader = other.m_loader;
  m_miss_interval = other.m_miss_interval;
  m_loaded = other.m_loaded;
  m_load_count = other.m_load_count;
  return *this;
}

void DeviceMap::add(std::string_view drive, std::string_view target) {
  std::lock_guard lock(m_mutex);
  add_locked(drive, target);
}

void DeviceMap::clear() {
  std::lock_guard lock(m_mutex);
  m_devices.clear();
}

bool DeviceMap::empty() const {
  std::lock_guard lock(m_mutex);
  return m_devices.empty();
}

void DeviceMap::set_loader(Loader loader, std::chrono::milliseconds miss_interval) {
  std::vector<Device> devices = devices_of(loader());
  std::lock_guard lock(m_mutex);
  m_loader = std::move(loader);
  m_miss_interval = miss_interval;
  m_devices = std::move(devices);
  m_loaded = std::chrono::steady_clock::now();
  ++m_load_count;
}

bool DeviceMap::refresh() noexcept {
  std::lock_guard lock(m_mutex);
  return reload_locked();
}

std::uint64_t DeviceMap::load_count() const {
  std::lock_guard lock(m_mutex);
  return m_load_count;
}

std::vector<DeviceMap::Device> DeviceMap::devices_of(const std::vector<DriveTarget>& drives) {
  std::vector<Device> devices;
  for (const auto& drive : drives) {
    // The same checks as add(); a malformed entry is skipped, not fatal.
    auto name = drive_or_folder(drive.drive);
    if (name && !drive.target.empty())
      devices.push_back({std::move(*name), std::string(without_trailing_backslash(drive.target))});
  }
  return devices;
}

bool DeviceMap::reload_locked() const noexcept {
  if (!m_loader) return false;
  m_loaded = std::chrono::steady_clock::now();
  try {
    m_devices = devices_of(m_loader());
    ++m_load_count;
    return true;
  } catch (...) {
    return false;
  }
}

void DeviceMap::add_locked(std::string_view drive, std::string_view target) {
  auto name = drive_or_folder(drive);
  if (!name)
    throw UsageError(
        "device map: '" + std::string(drive) +
        "' is not a drive (expected a letter and a colon, e.g. C:, or a folder on one, e.g. C:\\mnt\\data)");
  if (target.empty()) throw UsageError("device map: no target for " + std::string(drive));
  target = without_trailing_backslash(target);
  for (auto& device : m_devices) {
    if (device.drive == *name) {
      device.target = std::string(target);
      return;
    }
  }
  m_devices.push_back({std::move(*name), std::string(target)});
}

void DeviceMap::add_mapping(std::string_view mapping) {
  const auto equals = mapping.find('=');
  if (equals == std::string_view::npos)
    throw UsageError("--device-map '" + std::string(mapping) +
                     "': expected DEVICE=DRIVE or DRIVE=DEVICE, e.g. \\Device\\HarddiskVolume3=C:");
  const std::string_view left = mapping.substr(0, equals), right = mapping.substr(equals + 1);
  // Either order: the side that is a drive (or a folder on one) is the drive.
  if (drive_or_folder(right) && !drive_or_folder(left))
    add(right, left);
  else
    add(left, right);
}

std::optional<std::string> DeviceMap::to_dos_path(std::string_view nt_path) const {
  std::lock_guard lock(m_mutex);
  auto dos = lookup_locked(nt_path);
  // A volume or drive that appeared since the last load: reload, not too often.
  if (!dos && m_loader && starts_with_ignoring_ascii_case(nt_path, "\\Device\\") &&
      std::chrono::steady_clock::now() - m_loaded >= m_miss_interval && reload_locked())
    dos = lookup_locked(nt_path);
  return dos;
}

std::optional<std::string> DeviceMap::lookup_locked(std::string_view nt_path) const {
  for (std::string_view alias : {"\\??\\", "\\DosDevices\\", "\\GLOBAL??\\"}) {
    if (!starts_with_ignoring_ascii_case(nt_path, alias)) continue;
    std::string_view rest = nt_path.substr(alias.size());
    if (starts_with_ignoring_ascii_case(rest, "UNC\\")) return joined("\\", rest.substr(3));
    return std::string(rest);
  }
  for (std::string_view redirector : {"\\Device\\Mup", "\\Device\\LanmanRedirector"}) {
    if (is_component_prefix(nt_path, redirector)) return unc_path(nt_path.substr(redirector.size()));
  }
  const Device* best = nullptr;
  for (const Device& device : m_devices) {
    if (device.target.rfind("\\Device\\", 0) != 0) continue;  // SUBST and the like: not a volume
    if (is_component_prefix(nt_path, device.target) && (!best || device.target.size() > best->target.size()))
      best = &device;
  }
  if (best) return joined(best->drive, nt_path.substr(best->target.size()));
  if (starts_with_ignoring_ascii_case(nt_path, "\\Device\\HarddiskVolumeShadowCopy"))
    return joined("\\\\?\\GLOBALROOT", nt_path);
  return std::nullopt;
}

}  // namespace etwaudit
