#include "store/record_filter.h"

#include <algorithm>

namespace etwaudit {

bool RecordFilter::keeps_path(const std::string& path) const {
  if (path.empty()) return true;  // not known yet
  auto matches = [&](const PathGlob& glob) { return glob.matches(path); };
  if (!include_paths.empty() && std::none_of(include_paths.begin(), include_paths.end(), matches)) return false;
  return std::none_of(exclude_paths.begin(), exclude_paths.end(), matches);
}

bool RecordFilter::keeps_process(const ProcessInfo& process) const {
  if (!include_processes.empty()) {
    bool included = false, undecided = false;
    for (const auto& pattern : include_processes) {
      const auto match = pattern.matches(process.pid, process.image);
      included = included || match.value_or(false);
      undecided = undecided || !match;
    }
    if (!included && !undecided) return false;
  }
  for (const auto& pattern : exclude_processes)
    if (pattern.matches(process.pid, process.image).value_or(false)) return false;
  return true;
}

std::array<bool, op_count> RecordFilter::selected_ops() const {
  std::array<bool, op_count> selected{};
  for (int op = 0; op < op_count; ++op)
    selected[op] = ops.empty() || std::find(ops.begin(), ops.end(), static_cast<Op>(op)) != ops.end();
  return selected;
}

}  // namespace etwaudit
