#include <catch2/catch.hpp>

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
