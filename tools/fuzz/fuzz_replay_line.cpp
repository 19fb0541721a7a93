// libFuzzer target: the JSONL replay parser (parse_replay_line).
//
// The input is a replay file: it is cut into lines the way ReplaySource::run
// cuts them (a UTF-8 byte order mark before the first line and a '\r' before
// each '\n' dropped, blank lines skipped) and each line is parsed. The seeds
// are tools/sample/events.jsonl and its lines.
//
// A problem is reported as a non-empty message, never as an exception. Also
// checked, from the format in replay_source.h: a parsed line has a path that
// is not empty, an operation from the ops table, and no negative offset or
// size.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "core/file_event.h"
#include "sources/replay_source.h"

namespace {

using namespace etwaudit;

volatile std::size_t g_sink;

[[noreturn]] void violated(std::string_view line, const char* what) {
  std::fprintf(stderr, "fuzz_replay_line: %s, on the line '%.*s'\n", what, static_cast<int>(line.size()), line.data());
  std::abort();
}

void parse_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return;
  ReplayRecord record;
  const std::string problem = parse_replay_line(line, record);
  if (!problem.empty()) {
    g_sink = g_sink + problem.size();
    return;
  }
  if (record.path.empty()) violated(line, "a parsed line has an empty path");
  if (static_cast<int>(record.event.op) >= op_count) violated(line, "a parsed line has an unknown op");
  if (record.event.offset < -1 || record.event.size < -1) violated(line, "a parsed line has a negative offset or size");
  g_sink = g_sink + record.path.size() + record.image.size() + record.command_line.size() +
           static_cast<std::size_t>(record.event.time) + record.pid + record.event.tid;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    parse_line(text.substr(0, newline));
    if (newline == std::string_view::npos) break;
    text.remove_prefix(newline + 1);
  }
  return 0;
}
