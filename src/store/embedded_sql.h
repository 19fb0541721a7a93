#pragma once
// The contents of sql/ (migrations and reports), compiled into the binary.

#include <string_view>
#include <vector>

namespace etwaudit {

struct EmbeddedSql {
  std::string_view name;  // path relative to sql/, e.g. "0001_initial.sql"
  std::string_view text;  // the file's contents
};

// Every file, sorted by name.
const std::vector<EmbeddedSql>& embedded_sql_files();

}  // namespace etwaudit
