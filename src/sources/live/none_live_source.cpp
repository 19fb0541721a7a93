// Platforms without a live source: collect needs --source.

#include "core/error.h"
#include "sources/live/live_source.h"

namespace etwaudit {

std::vector<std::string> live_source_names() {
  return {};
}

std::vector<LiveSourceSetting> live_source_settings() {
  return {};
}

std::unique_ptr<EventSource> make_live_source(const LiveSourceRequest&) {
  throw UsageError("no live source exists on this platform: give --source replay:FILE.jsonl");
}

}  // namespace etwaudit
