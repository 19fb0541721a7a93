#include "sources/live/causal_order.h"

#include <algorithm>
#include <cstddef>
#include <unordered_map>

namespace etwaudit {

std::vector<FileEvent> merge_in_causal_order(const std::vector<FileEvent>& content,
                                             const std::vector<NameEvent>& names) {
  // Where each path's content events lie.
  struct Span {
    std::size_t first, last;
  };
  std::unordered_map<std::uint32_t, Span> spans;
  for (std::size_t i = 0; i < content.size(); ++i) {
    auto [span, added] = spans.try_emplace(content[i].path, Span{i, i});
    if (!added) span->second.last = i;
  }
  // Each name event goes before content[position]: a create as early as the
  // name events of its path before it allow, a delete after the last content
  // event of its path. The new name of a rename stays with its old name,
  // after the content events of both.
  std::vector<std::size_t> position(names.size());
  std::unordered_map<std::uint32_t, std::size_t> path_position;
  for (std::size_t n = 0; n < names.size(); ++n) {
    const FileEvent& event = names[n].event;
    std::size_t at = 0;
    if (auto earlier = path_position.find(event.path); earlier != path_position.end()) at = earlier->second;
    if (names[n].ends) {
      if (auto span = spans.find(event.path); span != spans.end()) at = std::max(at, span->second.last + 1);
    } else if (n > 0 && names[n - 1].ends && event.op == Op::rename && names[n - 1].event.op == Op::rename &&
               names[n - 1].event.process == event.process) {
      // The new name goes with the old, after the content events of the new
      // name too: their path was read after the rename, and a file written
      // and then renamed (a temporary file saved into place) is the common
      // case. The old name moves down with it.
      at = std::max(at, position[n - 1]);
      if (auto span = spans.find(event.path); span != spans.end()) at = std::max(at, span->second.last + 1);
      position[n - 1] = at;
      path_position[names[n - 1].event.path] = at;
    }
    position[n] = at;
    path_position[event.path] = at;
  }
  std::vector<std::size_t> order(names.size());
  for (std::size_t n = 0; n < names.size(); ++n) order[n] = n;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return position[a] < position[b]; });

  std::vector<FileEvent> merged;
  merged.reserve(content.size() + names.size());
  std::size_t next = 0;
  for (std::size_t i = 0; i <= content.size(); ++i) {
    while (next < order.size() && position[order[next]] == i) merged.push_back(names[order[next++]].event);
    if (i < content.size()) merged.push_back(content[i]);
  }
  // Each event happened before the next one on its path: no later than it was read.
  std::unordered_map<std::uint32_t, std::int64_t> next_time;
  for (std::size_t i = merged.size(); i-- > 0;) {
    auto [next, added] = next_time.try_emplace(merged[i].path, merged[i].time);
    if (!added) next->second = merged[i].time = std::min(merged[i].time, next->second);
  }
  return merged;
}

std::uint32_t name_event_process(const std::vector<FileEvent>& content, const std::vector<ExecSwitch>& execs,
                                 std::uint32_t process, std::uint32_t path, bool ends) {
  if (ends) return process;
  for (auto exec = execs.rbegin(); exec != execs.rend(); ++exec) {
    if (exec->after != process) continue;
    for (std::size_t i = 0; i < exec->at && i < content.size(); ++i)
      if (content[i].path == path && content[i].process == exec->before) return exec->before;
    return process;
  }
  return process;
}

}  // namespace etwaudit
