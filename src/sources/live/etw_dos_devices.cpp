#include "sources/live/etw_dos_devices.h"

#include <windows.h>

#include <cwchar>
#include <string>
#include <string_view>

#include "platform/win32.h"

namespace etwaudit {

namespace {

// The current (first) target of a DOS device name ("C:", "Volume{GUID}"),
// or empty when it has none or cannot be read: one odd drive must not stop
// the collector, and its paths keep their NT form (files.nt_path).
std::wstring dos_device_target(const wchar_t* device, std::vector<wchar_t>& buffer) {
  DWORD length;
  // The answer is a list of strings; a long SUBST or UNC target can need
  // more than the first guess.
  while ((length = QueryDosDeviceW(device, buffer.data(), static_cast<DWORD>(buffer.size()))) == 0 &&
         GetLastError() == ERROR_INSUFFICIENT_BUFFER && buffer.size() < 65536)
    buffer.resize(buffer.size() * 2);
  if (length == 0) return {};
  return buffer.data();
}

// The folders (not drive roots) volumes are mounted on, with their devices.
void add_folder_mounts(std::vector<DeviceMap::DriveTarget>& drives, std::vector<wchar_t>& buffer) {
  wchar_t volume[MAX_PATH + 1];  // "\\\\?\\Volume{GUID}\\", with the trailing backslash
  const HANDLE search = FindFirstVolumeW(volume, MAX_PATH + 1);
  if (search == INVALID_HANDLE_VALUE) return;  // no volume list: the letters still work
  struct Closer {
    HANDLE search;
    ~Closer() { FindVolumeClose(search); }
  } closer{search};
  std::vector<wchar_t> paths(1024);
  do {
    // GetVolumePathNamesForVolumeNameW takes the name as it is,
    // QueryDosDeviceW wants "Volume{GUID}" alone.
    const std::wstring name(volume);
    if (name.size() < 6 || name.compare(0, 4, L"\\\\?\\") != 0 || name.back() != L'\\') continue;
    DWORD needed = 0;
    bool listed;
    while (!(listed = GetVolumePathNamesForVolumeNameW(name.c_str(), paths.data(), static_cast<DWORD>(paths.size()),
                                                       &needed)) &&
           GetLastError() == ERROR_MORE_DATA && needed > paths.size() && needed <= 65536)
      paths.resize(needed);
    if (!listed || paths[0] == L'\0') continue;  // gone meanwhile, or mounted nowhere
    // A volume with a drive letter is known by its letter: the map would
    // prefer that anyway, since the letters come first.
    std::vector<std::wstring_view> folders;
    bool has_letter = false;
    for (const wchar_t* path = paths.data(); *path; path += std::wcslen(path) + 1) {
      const std::wstring_view mount(path);
      if (mount.size() <= 3)
        has_letter = true;
      else
        folders.push_back(mount);
    }
    if (has_letter || folders.empty()) continue;
    const std::wstring target = dos_device_target(name.substr(4, name.size() - 5).c_str(), buffer);
    if (target.empty()) continue;
    for (const std::wstring_view folder : folders) drives.push_back({to_utf8(folder), to_utf8(target)});
  } while (FindNextVolumeW(search, volume, MAX_PATH + 1));
}

}  // namespace

std::vector<DeviceMap::DriveTarget> query_dos_devices() {
  std::vector<DeviceMap::DriveTarget> drives;
  std::vector<wchar_t> buffer(1024);
  for (wchar_t letter = L'A'; letter <= L'Z'; ++letter) {
    // No trailing backslash: "C:", not "C:\\" (documented as invalid).
    const wchar_t device[] = {letter, L':', L'\0'};
    const std::wstring target = dos_device_target(device, buffer);
    if (!target.empty()) drives.push_back({to_utf8(device), to_utf8(target)});
  }
  add_folder_mounts(drives, buffer);
  return drives;
}

std::uint32_t logical_drive_mask() noexcept {
  return GetLogicalDrives();
}

}  // namespace etwaudit
