#pragma once
// The live sources of the platform etwaudit runs on: ETW on Windows
// (sources/live/etw_*), eBPF and fanotify on Linux (linux_live_source.cpp
// picks one of sources/live/ebpf_* and fanotify_*). Each platform compiles
// exactly one implementation of these functions; others get
// none_live_source.cpp, which says that no live source exists there.
//
// `etwaudit collect` without --source calls them: it offers the platform's
// settings as options (buffer sizes, mounts), then make_live_source checks
// privileges and what the OS can do, and throws Error with a message that
// names the failing call when collecting is impossible.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/file_event.h"
#include "sources/event_source.h"

namespace etwaudit {

// One thing the platform's live source can be told (an option of collect).
struct LiveSourceSetting {
  std::string name;                  // "mount", "etw-buffer-size"
  std::string help;                  // one line
  std::string default_value;         // empty: none
  bool repeatable = false;           // may be given several times
  std::string value_help = "VALUE";  // what its value is, in the help: "PATH", "KB"
};

// --include-path, --exclude-path, for a source that can apply them before
// the collector (which applies them again).
struct SourcePathFilter {
  std::function<bool(const std::string& path)> keeps;  // the whole judgment; empty: no path filter
  // The globs a kernel can compare byte for byte (PathGlob::literal_prefix):
  std::vector<std::string> include_prefixes;  // every --include-path's, when each has one; else none
  std::vector<std::string> exclude_prefixes;  // those of the --exclude-path globs that have one
};

struct LiveSourceRequest {
  std::string source;         // which live source (live_source_names()); empty: the default
  std::string database_path;  // the database being written (never recorded)
  std::uint32_t own_pid = 0;  // our own process (never recorded)
  std::vector<Op> ops;        // --ops: the operations wanted (empty: all); a source may ask the OS for these only
  SourcePathFilter paths;     // --include-path, --exclude-path
  // The settings given, each with its values (a default counts as given).
  std::map<std::string, std::vector<std::string>> settings;
  // Told what the source watches and what it cannot do here, a line each.
  std::function<void(const std::string&)> note = [](const std::string&) {};
};

// Every live source of the platform, the default first ({"etw"} on
// Windows; {"ebpf", "fanotify"} on Linux, eBPF where it loads and fanotify
// otherwise, a build without the eBPF source saying so when asked for it;
// none elsewhere); --source NAME picks one.
std::vector<std::string> live_source_names();
// The settings of the platform's live source.
std::vector<LiveSourceSetting> live_source_settings();
// The live source for request. Throws UsageError for a bad setting, Error
// when it cannot collect here: not enough privileges, or the OS lacks the
// interface.
std::unique_ptr<EventSource> make_live_source(const LiveSourceRequest& request);

}  // namespace etwaudit
