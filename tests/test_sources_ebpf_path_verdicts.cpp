#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/glob.h"
#include "sources/live/ebpf/records.h"
#include "sources/live/ebpf_path_verdicts.h"

using namespace etwaudit;

namespace {

// The filter as collect builds it from --include-path and --exclude-path globs.
SourcePathFilter filter(std::vector<std::string> includes, std::vector<std::string> excludes) {
  std::vector<PathGlob> include_globs, exclude_globs;
  for (const auto& pattern : includes) include_globs.push_back(glob_argument("--include-path", pattern));
  for (const auto& pattern : excludes) exclude_globs.push_back(glob_argument("--exclude-path", pattern));
  SourcePathFilter paths;
  paths.keeps = [=](const std::string& path) {
    auto matches = [&](const PathGlob& glob) { return glob.matches(path); };
    if (!include_globs.empty() && std::none_of(include_globs.begin(), include_globs.end(), matches)) return false;
    return std::none_of(exclude_globs.begin(), exclude_globs.end(), matches);
  };
  bool all = true;
  for (const auto& glob : include_globs)
    if (auto prefix = glob.literal_prefix())
      paths.include_prefixes.push_back(*prefix);
    else
      all = false;
  if (!all) paths.include_prefixes.clear();
  for (const auto& glob : exclude_globs)
    if (auto prefix = glob.literal_prefix()) paths.exclude_prefixes.push_back(*prefix);
  return paths;
}

}  // namespace

TEST_CASE("the kernel leaves out at the open what the prefixes decide; the collector writes nothing then",
          "[ebpf][filter]") {
  EbpfPathVerdicts verdicts(filter({}, {"/var/cache/*"}));
  REQUIRE(verdicts.active());
  CHECK(verdicts.kernel_prefixes() == std::vector<std::string>{"/var/cache/"});
  CHECK(verdicts.includes() == 0);
  CHECK(verdicts.kernel_leaves_out("/var/cache/apt/pkgcache.bin"));
  CHECK_FALSE(verdicts.kernel_leaves_out("/var/cached"));
  CHECK_FALSE(verdicts.named(8, 1, 1, 0, "/var/cache/apt/pkgcache.bin"));  // the kernel's verdict stands
  CHECK_FALSE(verdicts.named(8, 2, 2, 1, "/home/ada/notes.txt"));          // kept: nothing to say
}

TEST_CASE("a glob the kernel cannot compare: the collector's verdict for that open", "[ebpf][filter]") {
  EbpfPathVerdicts verdicts(filter({}, {"*.tmp"}));
  CHECK(verdicts.kernel_prefixes().empty());
  const auto verdict = verdicts.named(8, 1, 7, 0, "/home/ada/x.tmp");
  REQUIRE(verdict);
  CHECK(verdict->open_seq == 7);
  CHECK(verdict->left_out);
  CHECK_FALSE(verdicts.named(8, 1, 7, 0, "/home/ada/x.tmp"));  // said once
  // The same file opened again (the same name): a new open, said again.
  const auto again = verdicts.named(8, 1, 9, 0, "/home/ada/x.tmp");
  REQUIRE(again);
  CHECK(again->open_seq == 9);
  // A file open before the collector, named from /proc: the open "0".
  const auto old = verdicts.named(8, 3, 0, 2, "/srv/old.tmp");
  REQUIRE(old);
  CHECK(old->open_seq == 0);
}

TEST_CASE("a rename moves a file into or out of the names left out", "[ebpf][filter]") {
  EbpfPathVerdicts verdicts(filter({}, {"/tmp/skip/*"}));
  CHECK_FALSE(verdicts.named(8, 1, 4, 0, "/tmp/skip/part"));    // the kernel left it out itself
  const auto lifted = verdicts.named(8, 1, 4, 1, "/tmp/done");  // renamed, the same open
  REQUIRE(lifted);
  CHECK(lifted->open_seq == 4);
  CHECK_FALSE(lifted->left_out);
  const auto back = verdicts.named(8, 1, 4, 0, "/tmp/skip/part");
  REQUIRE(back);
  CHECK(back->left_out);
}

TEST_CASE("include prefixes go to the kernel all or none; what does not fit stays with the collector",
          "[ebpf][filter]") {
  SECTION("every include glob a prefix: a path under none is left out at its open") {
    EbpfPathVerdicts verdicts(filter({"/home/*", "/srv/data/*"}, {"/home/ada/.cache/*"}));
    CHECK(verdicts.includes() == 2);
    CHECK(verdicts.kernel_prefixes().size() == 3);
    CHECK(verdicts.kernel_leaves_out("/etc/passwd"));
    CHECK(verdicts.kernel_leaves_out("/home/ada/.cache/x"));
    CHECK_FALSE(verdicts.kernel_leaves_out("/srv/data/a.csv"));
  }
  SECTION("one include glob is not: the kernel decides by the excludes only") {
    EbpfPathVerdicts verdicts(filter({"/home/*", "*.csv"}, {"/home/ada/.cache/*"}));
    CHECK(verdicts.includes() == 0);
    CHECK_FALSE(verdicts.kernel_leaves_out("/etc/passwd"));
    CHECK(verdicts.kernel_leaves_out("/home/ada/.cache/x"));
    // The collector says it for the kernel.
    const auto verdict = verdicts.named(8, 1, 3, 0, "/etc/passwd");
    REQUIRE(verdict);
    CHECK(verdict->left_out);
  }
  SECTION("more excludes than the kernel holds, and one too long") {
    std::vector<std::string> excludes;
    for (int i = 0; i < ETWAUDIT_PREFIXES + 2; ++i) excludes.push_back("/x" + std::to_string(i) + "/*");
    excludes.push_back("/" + std::string(ETWAUDIT_PREFIX_MAX, 'a') + "/*");
    EbpfPathVerdicts verdicts(filter({}, excludes));
    CHECK(verdicts.kernel_prefixes().size() == ETWAUDIT_PREFIXES);
    const auto verdict = verdicts.named(8, 1, 3, 0, "/x9/file");  // the collector's
    REQUIRE(verdict);
    CHECK(verdict->left_out);
  }
}

TEST_CASE("a name with a backslash: the globs ignore case, the kernel does not; the collector lifts it",
          "[ebpf][filter]") {
  EbpfPathVerdicts verdicts(filter({"/data/*"}, {}));
  CHECK(verdicts.kernel_leaves_out("/DATA/a\\b"));
  const auto verdict = verdicts.named(8, 1, 5, 0, "/DATA/a\\b");
  REQUIRE(verdict);
  CHECK_FALSE(verdict->left_out);
}
