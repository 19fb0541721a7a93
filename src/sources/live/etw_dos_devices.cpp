#include "sources/live/etw_dos_devices.h"

#include <windows.h>

#include "core/error.h"
#include "sources/live/etw_win32.h"

namespace etwaudit {

std::vector<DeviceMap::DriveTarget> query_dos_devices() {
  std::vector<DeviceMap::DriveTarget> drives;
  std::vector<wchar_t> buffer(1024);
  for (wchar_t letter = L'A'; letter <= L'Z'; ++letter) {
    // No trailing backslash: "C:", not "C:\" (documented as invalid).
    const wchar_t device[] = {letter, L':', L'\0'};
    DWORD length;
    // The answer is a list of strings; a long SUBST or UNC target can need
    // more than the first guess.
    while ((length = QueryDosDeviceW(device, buffer.data(), static_cast<DWORD>(buffer.size()))) == 0 &&
           GetLastError() == ERROR_INSUFFICIENT_BUFFER && buffer.size() < 65536)
      buffer.resize(buffer.size() * 2);
    if (length == 0) {
      const DWORD error = GetLastError();
      if (error == ERROR_FILE_NOT_FOUND || error == ERROR_PATH_NOT_FOUND) continue;  // no such drive
      throw Error("cannot read the target of drive " + to_utf8(device) + ": " +
                  win32_failure("QueryDosDeviceW", error));
    }
    const std::wstring target(buffer.data());  // the first string is the current mapping
    if (!target.empty()) drives.push_back({to_utf8(device), to_utf8(target)});
  }
  return drives;
}

std::uint32_t logical_drive_mask() noexcept {
  return GetLogicalDrives();
}

}  // namespace etwaudit
