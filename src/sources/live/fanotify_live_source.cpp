// Linux: the live sources are fanotify (the default) and eBPF (when built
// with it).

#include "core/error.h"
#include "sources/live/ebpf_source.h"
#include "sources/live/fanotify_source.h"
#include "sources/live/live_source.h"

namespace etwaudit {

const char* live_source_name() {
  return "fanotify";
}

std::vector<LiveSourceSetting> live_source_settings() {
  return {{"mount", "watch the filesystem holding this path; repeatable (default: every local filesystem)", "", true}};
}

std::vector<std::string> live_source_names() {
  return {"fanotify", "ebpf"};  // ebpf says so when this build has no eBPF source
}

std::unique_ptr<EventSource> make_live_source(const LiveSourceRequest& request) {
  if (request.source == "ebpf") {
    if (request.settings.count("mount"))
      throw UsageError(
          "--mount is fanotify's: --source ebpf records every filesystem (choose paths with "
          "--include-path)");
    EbpfOptions options;
    options.own_pid = request.own_pid;
    auto source = std::make_unique<EbpfSource>(options);
    request.note("watching every regular file's reads, writes, opens and closes with eBPF");
    return source;
  }
  FanotifyOptions options;
  if (auto mounts = request.settings.find("mount"); mounts != request.settings.end()) options.mounts = mounts->second;
  options.ops = request.ops;
  options.own_pid = request.own_pid;
  auto source = std::make_unique<FanotifySource>(std::move(options));
  std::string watched;
  for (const auto& what : source->watched()) watched += (watched.empty() ? "" : ", ") + what;
  request.note("watching " + watched + " with fanotify (Linux gives no offsets or sizes: those columns stay empty)");
  for (const auto& limitation : source->limitations()) request.note("note: " + limitation);
  return source;
}

}  // namespace etwaudit
