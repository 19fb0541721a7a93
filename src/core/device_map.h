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

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etwaudit {

class DeviceMap {
 public:
  // drive is "C:" (a letter and a colon); target is what QueryDosDeviceW
  // returned for it. Throws UsageError for a malformed drive or empty target.
  void add(std::string_view drive, std::string_view target);
  // "\Device\HarddiskVolume3=C:" or "C:=\Device\HarddiskVolume3", as given to --device-map.
  void add_mapping(std::string_view mapping);
  void clear() { m_devices.clear(); }
  bool empty() const { return m_devices.empty(); }

  // The DOS or UNC form of nt_path; nullopt when no rule applies.
  std::optional<std::string> to_dos_path(std::string_view nt_path) const;

 private:
  struct Device {
    std::string drive;   // "C:"
    std::string target;  // "\Device\HarddiskVolume3" (a device, after SUBST resolution)
  };
  std::vector<Device> m_devices;
};

}  // namespace etwaudit
