#include "core/file_event.h"

#include <array>

#include "core/error.h"

namespace etwaudit {
namespace {

constexpr std::array<std::string_view, op_count> op_names = {
    "read",     "write", "open",      "close",      "cleanup",     "create",    "delete",      "rename",
    "set_info", "flush", "disk_read", "disk_write", "close_write", "overwrite", "paging_read", "paging_write",
};

}  // namespace

std::string_view op_name(Op op) {
  auto index = static_cast<std::size_t>(op);
  return index < op_names.size() ? op_names[index] : std::string_view("unknown");
}

std::optional<Op> op_from_name(std::string_view name) {
  for (std::size_t i = 0; i < op_names.size(); ++i) {
    if (op_names[i] == name) return static_cast<Op>(i);
  }
  return std::nullopt;
}

std::string op_names_list() {
  std::string list;
  for (std::string_view name : op_names) list += (list.empty() ? "" : ", ") + std::string(name);
  return list;
}

Op op_argument(const std::string& option, const std::string& name) {
  if (auto op = op_from_name(name)) return *op;
  throw UsageError(option + " '" + name + "': unknown operation (expected one of: " + op_names_list() + ")");
}

}  // namespace etwaudit
