// Linux: the live source is fanotify.

#include <iostream>

#include "sources/live/fanotify_source.h"
#include "sources/live/live_source.h"

namespace etwaudit {

const char* live_source_name() {
  return "fanotify";
}

void add_live_source_options(cxxopts::Options& options) {
  options.add_options("fanotify")(
      "mount", "watch the filesystem holding this path; repeatable (default: every local filesystem)",
      cxxopts::value<std::vector<std::string>>());
}

std::unique_ptr<EventSource> make_live_source(const cxxopts::ParseResult& args, const LiveSourceContext& context) {
  FanotifyOptions options;
  if (args.count("mount")) options.mounts = args["mount"].as<std::vector<std::string>>();
  options.ops = context.ops;
  options.own_pid = context.own_pid;
  auto source = std::make_unique<FanotifySource>(std::move(options));
  std::string watched;
  for (const auto& what : source->watched()) watched += (watched.empty() ? "" : ", ") + what;
  std::cerr << "etwaudit collect: watching " << watched
            << " with fanotify (Linux gives no offsets or sizes: those columns stay empty)\n";
  for (const auto& limitation : source->limitations()) std::cerr << "etwaudit collect: note: " << limitation << "\n";
  return source;
}

}  // namespace etwaudit
