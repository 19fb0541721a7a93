#pragma once
// DeviceMap: kernel (NT) paths to the paths people know.
//
// ETW names files by NT path: \Device\HarddiskVolume3\Users\ada\notes.txt.
// A DeviceMap holds what each drive letter stands for (as QueryDosDeviceW
// reports it on the machine the events come from) and rewrites such paths:
//
//   \Device\HarddiskVolume3\Users\x         C:\Users\x     longest device prefix that
//                                                          ends at a component boundary,
//                                                          compared without regard to case
//   \Device\Mup\server\share\x              \\server\share\x
//   \Device\Mup\;LanmanRedirector\;Z:0…\server\share\x   (the ;-components are dropped)
//   \Device\LanmanRedirector\server\share\x \\server\share\x
//   \??\C:\x, \DosDevices\C:\x              C:\x
//   \??\UNC\server\share\x                  \\server\share\x
//   \Device\HarddiskVolumeShadowCopy2\x     \\?\GLOBALROOT\Device\HarddiskVolumeShadowCopy2\x
//
// Drive targets that are themselves DOS paths (SUBST drives, \??\C:\windows)
// are resolved through the other drives again; they never replace the drive
// of the volume itself, which stays the canonical name.
//
// A volume mounted on a folder instead of (or besides) a drive letter is an
// entry whose drive is that folder: C:\mnt\data = \Device\HarddiskVolume7.
// Of entries with the same target, the one added first wins, so a loader
// lists the drive letters first.
//
// A live collector gives the map a loader (on Windows, QueryDosDeviceW over
// A-Z and the folder mounts: sources/live/etw_dos_devices.h). The map then
// reloads every drive when refresh() is called (the collector does when the
// set of drives changes, and each minute) and when a \Device\ path matches no
// drive, at most once per interval, so a drive mapped after the start is found
// without a query per event. One thread may call to_dos_path while another
// calls refresh().

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etwaudit {

class DeviceMap {
 public:
  // A drive and what it stands for, as a loader reports them.
  struct DriveTarget {
    std::string drive;   // "C:", or a folder "C:\mnt\data"
    std::string target;  // "\Device\HarddiskVolume3", "\??\C:\windows", ...
  };
  // Reads the drives of this machine. May throw Error.
  using Loader = std::function<std::vector<DriveTarget>()>;

  DeviceMap() = default;
  // Copies take the drives and the loader; the mutex is each map's own.
  DeviceMap(const DeviceMap& other);
  DeviceMap& operator=(const DeviceMap& other);

  // drive is "C:" (a letter and a colon) or a folder a volume is mounted on
  // ("C:\mnt\data"); target is what QueryDosDeviceW returned for it. Throws
  // UsageError for a malformed drive or empty target.
  void add(std::string_view drive, std::string_view target);
  // "\Device\HarddiskVolume3=C:" or "C:=\Device\HarddiskVolume3", as given to
  // --device-map; "C:\mnt\data=\Device\HarddiskVolume7" for a folder mount.
  void add_mapping(std::string_view mapping);
  void clear();
  bool empty() const;

  // Loads the drives from loader now, and again on refresh() and on a miss
  // (at most once per miss_interval); malformed entries are left out. Throws
  // what loader throws.
  void set_loader(Loader loader, std::chrono::milliseconds miss_interval);
  // Reloads the drives from the loader, if there is one. Any thread; a loader
  // that throws leaves the map as it was and returns false.
  bool refresh() noexcept;
  // How many times the drives were loaded (tests, diagnostics).
  std::uint64_t load_count() const;

  // The DOS or UNC form of nt_path; nullopt when no rule applies.
  std::optional<std::string> to_dos_path(std::string_view nt_path) const;

 private:
  struct Device {
    std::string drive;   // "C:", or a folder "C:\mnt\data"
    std::string target;  // "\Device\HarddiskVolume3"; a SUBST target (\??\C:\windows) never matches
  };
  // The entries a loader reported, without the malformed ones.
  static std::vector<Device> devices_of(const std::vector<DriveTarget>& drives);
  void add_locked(std::string_view drive, std::string_view target);
  std::optional<std::string> lookup_locked(std::string_view nt_path) const;
  bool reload_locked() const noexcept;

  // Everything below is guarded by m_mutex. A lookup that misses may reload
  // the drives, so what the loader fills is mutable.
  mutable std::mutex m_mutex;
  mutable std::vector<Device> m_devices;
  Loader m_loader;                                         // empty: the drives never change
  std::chrono::milliseconds m_miss_interval{0};            // least time between reloads on a miss
  mutable std::chrono::steady_clock::time_point m_loaded;  // when the loader last ran
  mutable std::uint64_t m_load_count = 0;                  // loader runs that succeeded
};

}  // namespace etwaudit
