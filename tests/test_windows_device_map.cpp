// The live collector's drive map on a real Windows API (Wine's works):
// QueryDosDeviceW over A-Z through the DeviceMap loader, with drives defined
// for the test by DefineDosDeviceW, as SUBST and `net use` define them.
#include <windows.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <set>
#include <string>
#include <thread>

#include "core/device_map.h"
#include "sources/live/etw_dos_devices.h"

using namespace etwaudit;
using namespace std::chrono_literals;

namespace {

// A drive letter defined for one test and removed after it.
class DosDevice {
 public:
  // flags: 0 for a SUBST-style target (a DOS path), DDD_RAW_TARGET_PATH for an NT path.
  DosDevice(DWORD flags, std::wstring target) : m_flags(flags), m_target(std::move(target)) {
    const DWORD used = GetLogicalDrives();
    for (wchar_t letter = L'M'; letter <= L'Y'; ++letter) {
      if (used & (1u << (letter - L'A'))) continue;
      m_drive = {letter, L':'};
      break;
    }
    REQUIRE(!m_drive.empty());
    REQUIRE(DefineDosDeviceW(m_flags, m_drive.c_str(), m_target.c_str()));
  }
  ~DosDevice() {
    DefineDosDeviceW(m_flags | DDD_REMOVE_DEFINITION | DDD_EXACT_MATCH_ON_REMOVE, m_drive.c_str(), m_target.c_str());
  }
  DosDevice(const DosDevice&) = delete;
  DosDevice& operator=(const DosDevice&) = delete;

  std::string drive() const { return {static_cast<char>(m_drive[0]), ':'}; }

 private:
  DWORD m_flags;
  std::wstring m_target;
  std::wstring m_drive;
};

// What query_dos_devices() says drive stands for, or empty.
std::string target_of(const std::string& drive) {
  for (const auto& entry : query_dos_devices())
    if (entry.drive == drive) return entry.target;
  return {};
}

}  // namespace

TEST_CASE("the loader reports drive C: as a volume device", "[windows][device_map]") {
  const std::string c = target_of("C:");
  INFO("C: -> " << c);
  CHECK(c.rfind("\\Device\\", 0) == 0);

  DeviceMap map;
  map.set_loader(query_dos_devices, 1h);
  CHECK(map.to_dos_path(c + "\\windows\\win.ini") == "C:\\windows\\win.ini");
}

TEST_CASE("the loader lists drive letters first, then only folders of volumes without one", "[windows][device_map]") {
  // Under Wine every volume (C:, Z:) is mounted on a drive root only: the
  // folder part walks them all and adds nothing.
  std::set<std::string> drives, letter_targets;
  bool folders_begun = false;
  for (const auto& entry : query_dos_devices()) {
    INFO(entry.drive << " -> " << entry.target);
    CHECK(drives.insert(entry.drive).second);
    CHECK_FALSE(entry.target.empty());
    const bool letter = entry.drive.size() == 2;
    if (letter) {
      CHECK_FALSE(folders_begun);
      letter_targets.insert(entry.target);
    } else {
      folders_begun = true;
      CHECK(entry.drive.substr(1, 2) == ":\\");
      CHECK(letter_targets.count(entry.target) == 0);
    }
  }
  CHECK(drives.count("C:") == 1);
}

TEST_CASE("a SUBST drive does not replace the drive of its volume", "[windows][device_map]") {
  DosDevice subst(0, L"C:\\windows");
  CHECK(target_of(subst.drive()) == "\\??\\C:\\windows");

  DeviceMap map;
  map.set_loader(query_dos_devices, 1h);
  CHECK(map.to_dos_path(target_of("C:") + "\\windows\\system32\\kernel32.dll") ==
        "C:\\windows\\system32\\kernel32.dll");
}

TEST_CASE("a drive with a raw \\Device\\Mup target gives UNC paths", "[windows][device_map]") {
  DosDevice network(DDD_RAW_TARGET_PATH, L"\\Device\\Mup\\fileserver\\projects");
  CHECK(target_of(network.drive()) == "\\Device\\Mup\\fileserver\\projects");

  DeviceMap map;
  map.set_loader(query_dos_devices, 1h);
  CHECK(map.to_dos_path("\\Device\\Mup\\fileserver\\projects\\plan.docx") == "\\\\fileserver\\projects\\plan.docx");
}

TEST_CASE("a drive defined after the map was loaded is found on a miss", "[windows][device_map]") {
  DeviceMap map;
  map.set_loader(query_dos_devices, 0ms);
  const auto loads = map.load_count();
  DosDevice volume(DDD_RAW_TARGET_PATH, L"\\Device\\EtwauditTestVolume7");
  CHECK(map.to_dos_path("\\Device\\EtwauditTestVolume7\\logs\\a.log") == volume.drive() + "\\logs\\a.log");
  CHECK(map.load_count() == loads + 1);
}

TEST_CASE("misses reload the drives at most once per interval; refresh() reloads at once", "[windows][device_map]") {
  DeviceMap map;
  map.set_loader(query_dos_devices, 1h);
  const auto loads = map.load_count();
  const std::uint32_t drives_before = logical_drive_mask();
  DosDevice volume(DDD_RAW_TARGET_PATH, L"\\Device\\EtwauditTestVolume8");
  CHECK(logical_drive_mask() != drives_before);  // what the collector watches to call refresh()

  CHECK_FALSE(map.to_dos_path("\\Device\\EtwauditTestVolume8\\x"));
  CHECK(map.load_count() == loads);
  CHECK(map.refresh());
  CHECK(map.to_dos_path("\\Device\\EtwauditTestVolume8\\x") == volume.drive() + "\\x");
}

TEST_CASE("lookups and reloads may run on different threads", "[windows][device_map]") {
  DeviceMap map;
  map.set_loader(query_dos_devices, 0ms);
  const std::string c = target_of("C:");
  std::atomic<bool> done{false};
  std::thread reloader([&] {
    while (!done) map.refresh();
  });
  int found = 0;
  for (int i = 0; i < 2000; ++i) found += map.to_dos_path(c + "\\x") == std::optional<std::string>("C:\\x");
  done = true;
  reloader.join();
  CHECK(found == 2000);
}
