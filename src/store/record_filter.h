#pragma once
// RecordFilter: what the user asked a collector to record
// (collect --include-path, --exclude-path, --include-process,
// --exclude-process, --ops).
//
// An event is kept when its operation is selected, its path matches an
// include glob (when there are any) and no exclude glob, and its process
// likewise, a process pattern being a pid or a glob over the image. A file
// whose name is not known yet cannot be judged by its path and is kept; so
// is a process whose image is unknown, unless a pid pattern says otherwise.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/catalog.h"
#include "core/file_event.h"
#include "core/glob.h"

namespace etwaudit {

struct RecordFilter {
  std::vector<PathGlob> include_paths;
  std::vector<PathGlob> exclude_paths;
  std::vector<ProcessPattern> include_processes;
  std::vector<ProcessPattern> exclude_processes;
  std::vector<Op> ops;  // empty: every operation

  bool empty() const {
    return include_paths.empty() && exclude_paths.empty() && include_processes.empty() && exclude_processes.empty() &&
           ops.empty();
  }
  bool keeps_path(const std::string& path) const;
  bool keeps_process(const ProcessInfo& process) const;
  // op_selected[op]: whether --ops picked it (all true without --ops).
  std::array<bool, op_count> selected_ops() const;
};

}  // namespace etwaudit
