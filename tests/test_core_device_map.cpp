#include <catch2/catch.hpp>
#include <chrono>
#include <vector>

#include "core/device_map.h"
#include "core/error.h"

using etwaudit::DeviceMap;

namespace {
DeviceMap windows_machine() {
  DeviceMap map;
  map.add("C:", "\\Device\\HarddiskVolume3");
  map.add("D:", "\\Device\\HarddiskVolume10");
  map.add("Q:", "\\??\\C:\\windows");  // a SUBST drive
  map.add("Z:", "\\Device\\LanmanRedirector\\;Z:000000000001a2b3\\nas01\\backup");
  return map;
}
}  // namespace

TEST_CASE("volume paths become drive paths on a component boundary, ignoring case", "[device_map]") {
  DeviceMap map = windows_machine();
  CHECK(map.to_dos_path("\\Device\\HarddiskVolume3\\Users\\ada\\notes.txt") == "C:\\Users\\ada\\notes.txt");
  CHECK(map.to_dos_path("\\Device\\HarddiskVolume10\\Data\\x.mdf") == "D:\\Data\\x.mdf");
  CHECK(map.to_dos_path("\\DEVICE\\harddiskvolume3\\x") == "C:\\x");
  CHECK(map.to_dos_path("\\Device\\HarddiskVolume3") == "C:");
  CHECK_FALSE(map.to_dos_path("\\Device\\HarddiskVolume30\\x"));
}

TEST_CASE("network, alias and shadow-copy paths get their usual forms", "[device_map]") {
  DeviceMap map = windows_machine();
  CHECK(map.to_dos_path("\\Device\\Mup\\nas01\\backup\\a.cbk") == "\\\\nas01\\backup\\a.cbk");
  CHECK(map.to_dos_path("\\Device\\Mup\\;LanmanRedirector\\;Z:000000000001a2b3\\nas01\\backup\\a.cbk") ==
        "\\\\nas01\\backup\\a.cbk");
  CHECK(map.to_dos_path("\\Device\\LanmanRedirector\\nas01\\backup\\a.cbk") == "\\\\nas01\\backup\\a.cbk");
  CHECK(map.to_dos_path("\\??\\C:\\Windows\\win.ini") == "C:\\Windows\\win.ini");
  CHECK(map.to_dos_path("\\DosDevices\\C:\\Windows\\win.ini") == "C:\\Windows\\win.ini");
  CHECK(map.to_dos_path("\\??\\UNC\\nas01\\backup\\a") == "\\\\nas01\\backup\\a");
  CHECK(map.to_dos_path("\\Device\\HarddiskVolumeShadowCopy2\\Users\\x") ==
        "\\\\?\\GLOBALROOT\\Device\\HarddiskVolumeShadowCopy2\\Users\\x");
}

TEST_CASE("a SUBST drive never replaces the drive of its volume", "[device_map]") {
  DeviceMap map = windows_machine();
  CHECK(map.to_dos_path("\\Device\\HarddiskVolume3\\windows\\system32\\x.dll") == "C:\\windows\\system32\\x.dll");
}

TEST_CASE("a volume mounted on a folder gets paths under that folder; a drive letter wins", "[device_map]") {
  DeviceMap map = windows_machine();
  map.add("C:\\mnt\\data\\", "\\Device\\HarddiskVolume7");
  map.add("c:\\mnt\\also-d", "\\Device\\HarddiskVolume10");  // D: was listed first
  CHECK(map.to_dos_path("\\Device\\HarddiskVolume7\\logs\\a.log") == "C:\\mnt\\data\\logs\\a.log");
  CHECK(map.to_dos_path("\\Device\\HarddiskVolume7") == "C:\\mnt\\data");
  CHECK(map.to_dos_path("\\Device\\HarddiskVolume10\\x") == "D:\\x");
  CHECK_FALSE(map.to_dos_path("\\Device\\HarddiskVolume70\\x"));
}

TEST_CASE("a reload takes folder mounts and skips malformed entries", "[device_map]") {
  std::vector<DeviceMap::DriveTarget> drives = {{"C:", "\\Device\\HarddiskVolume3\\"},
                                                {"C:\\mnt\\data\\", "\\Device\\HarddiskVolume7"},
                                                {"mnt\\data", "\\Device\\HarddiskVolume8"},
                                                {"C:data", "\\Device\\HarddiskVolume9"},
                                                {"E:", ""}};
  DeviceMap map;
  map.set_loader([&] { return drives; }, std::chrono::milliseconds(0));
  CHECK(map.to_dos_path("\\Device\\HarddiskVolume3\\x") == "C:\\x");
  CHECK(map.to_dos_path("\\Device\\HarddiskVolume7\\x") == "C:\\mnt\\data\\x");
  // The volume moves to another folder: the next reload says so.
  drives[1].drive = "D:\\archive";
  CHECK(map.refresh());
  CHECK(map.to_dos_path("\\Device\\HarddiskVolume7\\x") == "D:\\archive\\x");
  CHECK_FALSE(map.to_dos_path("\\Device\\HarddiskVolume8\\x"));
  CHECK_FALSE(map.to_dos_path("\\Device\\HarddiskVolume9\\x"));
}

TEST_CASE("paths no rule covers stay as they are", "[device_map]") {
  DeviceMap empty;
  CHECK_FALSE(empty.to_dos_path("\\Device\\HarddiskVolume3\\x"));
  CHECK(empty.to_dos_path("\\Device\\Mup\\s\\share") == "\\\\s\\share");
}

TEST_CASE("device map options are checked", "[device_map]") {
  DeviceMap map;
  map.add_mapping("c:=\\Device\\HarddiskVolume3\\");
  CHECK(map.to_dos_path("\\Device\\HarddiskVolume3\\x") == "C:\\x");
  map.add_mapping("\\Device\\HarddiskVolume7=E:");
  CHECK(map.to_dos_path("\\Device\\HarddiskVolume7\\x") == "E:\\x");
  map.add_mapping("\\Device\\HarddiskVolume8=e:\\mnt\\x");
  map.add_mapping("E:\\mnt\\y\\=\\Device\\HarddiskVolume9");
  CHECK(map.to_dos_path("\\Device\\HarddiskVolume8\\f") == "E:\\mnt\\x\\f");
  CHECK(map.to_dos_path("\\Device\\HarddiskVolume9\\f") == "E:\\mnt\\y\\f");
  CHECK_THROWS_WITH(map.add_mapping("C:\\Device\\HarddiskVolume3"), Catch::Contains("expected DEVICE=DRIVE"));
  CHECK_THROWS_WITH(map.add_mapping("C:data=\\Device\\X"), Catch::Contains("is not a drive"));
  CHECK_THROWS_WITH(map.add_mapping("CC:=\\Device\\X"), Catch::Contains("is not a drive"));
}
