// libFuzzer target: the glob matcher behind --path, --process and the
// include/exclude filters (PathGlob::compile and matches, ProcessPattern).
//
// The input is a pattern, a NUL byte, then a path. The seeds pair the globs of
// the README and the tests with the paths of tools/sample/events.jsonl.
//
// A malformed pattern is refused by compile() with a reason, and by
// ProcessPattern::parse with UsageError, nothing else. Also checked: a pattern
// without wildcards matches the path that is exactly it; "*" matches every
// path; and a pattern matches the same path the same way twice.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/glob.h"

namespace {

using namespace etwaudit;

volatile int g_sink;

[[noreturn]] void violated(std::string_view pattern, std::string_view path, const char* what) {
  std::fprintf(stderr, "fuzz_glob: %s (pattern '%.*s', path '%.*s')\n", what, static_cast<int>(pattern.size()),
               pattern.data(), static_cast<int>(path.size()), path.data());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  const std::string_view pattern = input.substr(0, nul);
  const std::string_view path = nul == std::string_view::npos ? pattern : input.substr(nul + 1);

  std::string why;
  const auto glob = PathGlob::compile(pattern, why);
  if (!glob) {
    if (why.empty()) violated(pattern, path, "a refused pattern comes without a reason");
  } else {
    const bool matched = glob->matches(path);
    if (glob->matches(path) != matched) violated(pattern, path, "the same path matched differently twice");
    if (pattern.find_first_of("*?[") == std::string_view::npos && !glob->matches(pattern))
      violated(pattern, pattern, "a pattern without wildcards does not match itself");
    g_sink = g_sink + matched;
  }
  std::string none;
  if (!PathGlob::compile("*", none)->matches(path)) violated("*", path, "'*' does not match a path");

  try {
    const ProcessPattern process = ProcessPattern::parse("--process", std::string(pattern));
    g_sink = g_sink + process.matches(static_cast<std::uint32_t>(size), path).value_or(false);
  } catch (const UsageError&) {
    if (glob) violated(pattern, path, "ProcessPattern refuses a pattern PathGlob takes");
  }
  return 0;
}
