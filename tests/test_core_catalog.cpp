#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/catalog.h"

using etwaudit::Catalog;

TEST_CASE("the catalog gives a path the same id every time and the empty path id 0", "[catalog]") {
  Catalog catalog;
  const auto a = catalog.intern_path("C:\\Windows\\notepad.exe");
  const auto b = catalog.intern_path("C:\\Users\\ada\\notes.txt");
  CHECK(a != b);
  CHECK(catalog.intern_path("C:\\Windows\\notepad.exe") == a);
  CHECK(catalog.intern_path("") == 0);
  CHECK(catalog.path(b) == "C:\\Users\\ada\\notes.txt");
  CHECK_THROWS(catalog.path(999));
}

TEST_CASE("a reused pid with another start time or image is another process", "[catalog]") {
  Catalog catalog;
  const auto first = catalog.intern_process(4242, 1000, "C:\\Windows\\notepad.exe", "notepad notes.txt");
  CHECK(catalog.intern_process(4242, 1000, "C:\\Windows\\notepad.exe") == first);
  CHECK(catalog.intern_process(4242, 2000, "C:\\Windows\\notepad.exe") != first);
  CHECK(catalog.intern_process(4242, 1000, "C:\\Windows\\calc.exe") != first);
  const auto info = catalog.process(first);
  CHECK(info.pid == 4242);
  CHECK(info.start_time == 1000);
  CHECK(info.command_line == "notepad notes.txt");
}

TEST_CASE("a file known only by its kernel key gets an unnamed entry until its name arrives", "[catalog]") {
  Catalog catalog;
  const auto entry = catalog.intern_file_key(0xFFFFC0000A0000F0);
  CHECK(entry != 0);
  CHECK(catalog.intern_file_key(0xFFFFC0000A0000F0) == entry);
  CHECK(catalog.intern_file_key(0xFFFFC0000B0000F0) != entry);
  CHECK(catalog.path(entry).empty());
  CHECK(catalog.file_key(entry) == 0xFFFFC0000A0000F0);
  CHECK(catalog.file_key(catalog.intern_path("C:\\a.txt")) == 0);
  CHECK(catalog.file_key(0) == 0);
  CHECK(catalog.intern_file_key(0) == 0);
  CHECK_THROWS(catalog.file_key(999));
  CHECK(catalog.take_resolutions().empty());

  catalog.resolve_file_key(0xFFFFC0000A0000F0, "\\Device\\HarddiskVolume3\\notes.txt");
  CHECK(catalog.path(entry) == "\\Device\\HarddiskVolume3\\notes.txt");
  CHECK(catalog.file_key(entry) == 0xFFFFC0000A0000F0);
  const auto resolutions = catalog.take_resolutions();
  REQUIRE(resolutions.size() == 1);
  CHECK(resolutions[0].path_id == entry);
  CHECK(resolutions[0].name == "\\Device\\HarddiskVolume3\\notes.txt");
  CHECK(catalog.take_resolutions().empty());
  // The named entry is the path's entry from now on.
  CHECK(catalog.intern_path("\\Device\\HarddiskVolume3\\notes.txt") == entry);
  // The key's next unnamed sighting is a new entry; naming it again records a new resolution.
  const auto next = catalog.intern_file_key(0xFFFFC0000A0000F0);
  CHECK(next != entry);
  catalog.resolve_file_key(0xFFFFC0000A0000F0, "\\Device\\HarddiskVolume3\\other.txt");
  CHECK(catalog.take_resolutions().size() == 1);
  CHECK(catalog.path(entry) == "\\Device\\HarddiskVolume3\\notes.txt");
}

TEST_CASE("resolving a key without an unnamed entry, or with an empty name, records nothing", "[catalog]") {
  Catalog catalog;
  catalog.resolve_file_key(0x1234, "C:\\a.txt");
  const auto entry = catalog.intern_file_key(0x5678);
  catalog.resolve_file_key(0x5678, "");
  CHECK(catalog.take_resolutions().empty());
  CHECK(catalog.path(entry).empty());
  // A name that already has an entry keeps it; the key's entry is named too.
  const auto named = catalog.intern_path("C:\\b.txt");
  catalog.resolve_file_key(0x5678, "C:\\b.txt");
  CHECK(catalog.path(entry) == "C:\\b.txt");
  CHECK(catalog.intern_path("C:\\b.txt") == named);
  CHECK(catalog.take_resolutions().size() == 1);
}

TEST_CASE("a forgotten key starts a new entry and leaves the old one unnamed", "[catalog]") {
  Catalog catalog;
  const auto first = catalog.intern_file_key(0xFFFFE0000A000010);
  catalog.forget_file_key(0xFFFFE0000A000010);
  const auto second = catalog.intern_file_key(0xFFFFE0000A000010);
  CHECK(second != first);
  catalog.resolve_file_key(0xFFFFE0000A000010, "C:\\second.txt");
  CHECK(catalog.path(first).empty());
  CHECK(catalog.path(second) == "C:\\second.txt");
  const auto resolutions = catalog.take_resolutions();
  REQUIRE(resolutions.size() == 1);
  CHECK(resolutions[0].path_id == second);
  catalog.forget_file_key(0x9999);  // nothing to forget
  CHECK(catalog.path_count() == 3);
}

TEST_CASE("resolutions can be taken on another thread while the source resolves", "[catalog]") {
  Catalog catalog;
  constexpr std::uint64_t keys = 20000;
  std::vector<std::uint32_t> ids;
  for (std::uint64_t key = 1; key <= keys; ++key) ids.push_back(catalog.intern_file_key(key));
  std::atomic<bool> done{false};
  std::vector<etwaudit::Resolution> taken;
  std::thread collector([&] {
    while (!done) {
      for (auto& resolution : catalog.take_resolutions()) taken.push_back(std::move(resolution));
      for (std::uint32_t id = 1; id < catalog.path_count(); id += 997) (void)catalog.path(id);
    }
    for (auto& resolution : catalog.take_resolutions()) taken.push_back(std::move(resolution));
  });
  for (std::uint64_t key = 1; key <= keys; ++key) catalog.resolve_file_key(key, "C:\\f" + std::to_string(key));
  done = true;
  collector.join();
  REQUIRE(taken.size() == keys);
  for (std::uint64_t i = 0; i < keys; ++i) {
    CHECK(taken[i].path_id == ids[i]);
    CHECK(catalog.path(ids[i]) == "C:\\f" + std::to_string(i + 1));
  }
}
