#pragma once
// What each drive letter of this machine stands for, as the DeviceMap loader
// of the live collector (core/device_map.h, doc/etw-format.md §6).

#include <cstdint>
#include <vector>

#include "core/device_map.h"

namespace etwaudit {

// QueryDosDeviceW("A:") .. ("Z:"): the current (first) target of each drive
// that has one, e.g. C: -> \Device\HarddiskVolume3, a SUBST drive ->
// \??\C:\windows, a mapped network drive -> \Device\LanmanRedirector\;Z:…\server\share.
// Letters without a target, or whose target cannot be read, are left out.
// Then the folders that volumes are mounted on (FindFirstVolumeW,
// GetVolumePathNamesForVolumeNameW, QueryDosDeviceW("Volume{GUID}")), e.g.
// C:\mnt\data -> \Device\HarddiskVolume7, of the volumes that have no drive
// letter (one that has a letter is known by it).
std::vector<DeviceMap::DriveTarget> query_dos_devices();

// GetLogicalDrives(): one bit per drive letter. It changes when a volume,
// SUBST or network drive comes or goes, which is when to reload the map at
// once (the collector also reloads it now and then for the folder mounts).
std::uint32_t logical_drive_mask() noexcept;

}  // namespace etwaudit
