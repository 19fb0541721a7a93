#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "core/glob.h"

using etwaudit::PathGlob;

namespace {
bool match(const std::string& pattern, const std::string& path) {
  std::string error;
  auto glob = PathGlob::compile(pattern, error);
  REQUIRE(glob);
  return glob->matches(path);
}
}  // namespace

TEST_CASE("a pattern without a separator matches the file name", "[glob]") {
  CHECK(match("*.docx", "C:\\Users\\ada\\Report.docx"));
  CHECK(match("notes.txt", "C:\\Users\\ada\\notes.txt"));
  CHECK_FALSE(match("ada", "C:\\Users\\ada\\notes.txt"));
  CHECK(match("file?.log", "/var/log/file7.log"));
  CHECK(match("file[0-9].log", "/var/log/file7.log"));
  CHECK_FALSE(match("file[!0-9].log", "/var/log/file7.log"));
}

TEST_CASE("a pattern with a separator matches the whole path", "[glob]") {
  CHECK(match("C:\\Users\\*\\notes.txt", "C:\\Users\\ada\\notes.txt"));
  CHECK(match("C:\\Users\\*", "C:\\Users\\ada\\deep\\down\\notes.txt"));
  CHECK_FALSE(match("C:\\Users\\*\\notes.txt", "D:\\Users\\ada\\notes.txt"));
  CHECK(match("/home/*/Notes.txt", "/home/ada/Notes.txt"));
}

TEST_CASE("Windows paths ignore case and the slash direction but POSIX paths do not", "[glob]") {
  CHECK(match("NOTES.TXT", "C:\\Users\\ada\\notes.txt"));
  CHECK(match("c:/users/*/NOTES.txt", "C:\\Users\\ada\\notes.txt"));
  CHECK(match("\\\\nas01\\*", "\\\\NAS01\\backup\\x.cbk"));
  CHECK_FALSE(match("NOTES.TXT", "/home/ada/notes.txt"));
  CHECK(match("notes.txt", "/home/ada/notes.txt"));
}

TEST_CASE("? matches one character, also a non-ASCII one", "[glob]") {
  CHECK(match("?gypten.jpg", "C:\\\xC3\x84gypten.jpg"));
  CHECK_FALSE(match("??gypten.jpg", "C:\\\xC3\x84gypten.jpg"));
}

TEST_CASE("malformed patterns are refused with a reason", "[glob]") {
  std::string error;
  CHECK_FALSE(PathGlob::compile("file[0-9.log", error));
  CHECK(error == "'[' at position 5 is never closed with ']'");
  CHECK_FALSE(PathGlob::compile("", error));
  CHECK(error == "the pattern is empty");
}

TEST_CASE("a POSIX path and a last star is a prefix a kernel filter can compare", "[glob]") {
  auto prefix = [](const char* pattern) { return etwaudit::glob_argument("--exclude-path", pattern).literal_prefix(); };
  CHECK(prefix("/var/log/*") == std::optional<std::string>("/var/log/"));
  CHECK(prefix("/tmp/cache*") == std::optional<std::string>("/tmp/cache"));
  CHECK_FALSE(prefix("/var/log/*.gz"));  // a star inside
  CHECK_FALSE(prefix("/var/*/x*"));
  CHECK_FALSE(prefix("/tmp/[ab]*"));
  CHECK_FALSE(prefix("/tmp/?*"));
  CHECK_FALSE(prefix("*.tmp"));            // a file name, wherever it is
  CHECK_FALSE(prefix("/var/log/syslog"));  // no star: one path
  CHECK_FALSE(prefix("C:\\Windows\\*"));   // Windows paths ignore case
  // What the prefix says agrees with the glob.
  const PathGlob logs = etwaudit::glob_argument("--exclude-path", "/var/log/*");
  for (const char* path : {"/var/log/syslog", "/var/log/", "/var/logs/x", "/var/lo", "/VAR/log/x"})
    CHECK(logs.matches(path) == (std::string_view(path).rfind("/var/log/", 0) == 0));
}
