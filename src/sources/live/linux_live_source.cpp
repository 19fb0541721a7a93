// Linux: the live sources are eBPF (the default where it loads: bytes,
// offsets, processes named at their exec) and fanotify (the default where it
// does not, and with --mount).

#include <unistd.h>

#include "core/error.h"
#include "sources/live/ebpf_source.h"
#include "sources/live/fanotify_source.h"
#include "sources/live/live_source.h"

namespace etwaudit {

std::vector<LiveSourceSetting> live_source_settings() {
  return {{"mount",
           "watch only the filesystem holding this path; repeatable (default: eBPF every filesystem that holds "
           "files, fanotify every local one)",
           "", true, "PATH"}};
}

std::vector<std::string> live_source_names() {
  return {"ebpf", "fanotify"};  // ebpf says so when this build has no eBPF source
}

namespace {

std::unique_ptr<EventSource> ebpf_source(const LiveSourceRequest& request) {
  EbpfOptions options;
  options.own_pid = request.own_pid;
  if (auto mounts = request.settings.find("mount"); mounts != request.settings.end()) options.mounts = mounts->second;
  options.ops = request.ops;
  options.paths = request.paths;
  auto source = std::make_unique<EbpfSource>(std::move(options));
  request.note("watching " + source->watched() + " with eBPF (reads and writes with their bytes and offsets)");
  return source;
}

}  // namespace

std::unique_ptr<EventSource> make_live_source(const LiveSourceRequest& request) {
  if (request.source == "ebpf") return ebpf_source(request);
  // The default: eBPF where it loads, else fanotify, saying why.
  if (request.source.empty() && ::geteuid() == 0) {  // (without root neither loads: fanotify says so)
    try {
      return ebpf_source(request);
    } catch (const Error& e) {
      const std::string why = e.what();
      request.note("eBPF is not available here (" + why.substr(0, why.find('\n')) + "): recording with fanotify");
    }
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
