#pragma once
// The live source of the platform etwaudit runs on: ETW on Windows
// (sources/live/etw_*), fanotify on Linux (sources/live/fanotify_*). Each
// platform compiles exactly one implementation of these functions; others get
// none_live_source.cpp, which says that no live source exists there.
//
// `etwaudit collect` without --source calls them: the platform adds its own
// options (buffer sizes, mounts), then make_live_source checks privileges and
// what the OS can do, and throws Error with a message that names the failing
// call when collecting is impossible.

#include <cstdint>
#include <cxxopts.hpp>
#include <memory>
#include <string>
#include <vector>

#include "core/file_event.h"
#include "sources/event_source.h"

namespace etwaudit {

class DeviceMap;

struct LiveSourceContext {
  std::string database_path;  // the database being written (never recorded)
  std::uint32_t own_pid = 0;  // our own process (never recorded)
  std::vector<Op> ops;        // --ops: the operations wanted (empty: all); a source may ask the OS for these only
};

// "etw", "fanotify", or "" when this platform has no live source.
const char* live_source_name();
// Adds the platform's options to `etwaudit collect` (group "live source").
void add_live_source_options(cxxopts::Options& options);
// The live source configured from args. Throws Error (exit 1) when it cannot
// collect here: not enough privileges, or the OS lacks the interface.
std::unique_ptr<EventSource> make_live_source(const cxxopts::ParseResult& args, const LiveSourceContext& context);

}  // namespace etwaudit
